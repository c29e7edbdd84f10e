"""The set-up files agree with each other and with the README."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _requirement_lines():
    lines = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        spec = line.split("#", 1)[0].strip()
        if spec:
            lines.append(spec)
    return lines


def test_every_requirement_has_a_comment_and_a_range():
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert "#" in line, f"requirements.txt line without a comment naming its lessons: {line!r}"
            spec = line.split("#")[0].strip()
            assert re.search(r"[<>=]=?", spec), f"requirement without a version range: {spec!r}"


def test_environment_yml_pip_section_mirrors_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["name"] == "nlp-from-scratch"
    deps = env["dependencies"]
    assert any(str(d).startswith("python=3.11") for d in deps) and "pip" in deps
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert pip_section == _requirement_lines()


def test_torch_stays_on_the_cpu_build():
    torch_line = next(r for r in _requirement_lines() if r.startswith("torch"))
    assert "<2.14" in torch_line


def test_readme_names_the_make_commands_and_they_exist():
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ["lab", "test", "browser-check", "bench"]:
        assert f"make {target}" in readme, f"README does not mention `make {target}`"
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"Makefile has no target {target}"
    assert "make test" in (ROOT / ".ci" / "run").read_text()
