"""The set-up files agree with each other, the code and the docs: each imported package is in
the requirements of whoever runs the code; environment.yml and constraints.txt follow them."""
import ast
import importlib.metadata
import json
import re
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from tools.doctor import requirement_lines, requires_python

ROOT = Path(__file__).resolve().parents[2]
FILES = ("requirements.txt", "requirements-dev.txt")
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", FILES)
def test_every_requirement_has_a_comment_and_a_range(name):
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith(("#", "-r ")):
            assert "#" in line, f"{name} line without a comment naming who imports it: {line!r}"
            spec = line.split("#")[0].strip()
            assert re.search(r"[<>=]=?", spec), f"requirement without a version range: {spec!r}"


def test_the_maintainers_file_adds_to_the_students_and_repeats_nothing():
    text = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    assert "-r requirements.txt" in text.splitlines()
    student = {canonicalize_name(Requirement(r).name) for r in requirement_lines()}
    dev = [canonicalize_name(Requirement(r).name)
           for r in requirement_lines(ROOT / "requirements-dev.txt")]
    assert not student & set(dev) and len(dev) == len(set(dev))


def _third_party_imports(paths) -> dict[str, set[str]]:
    """top-level third-party module -> the .py and .ipynb files of ``paths`` that import it."""
    found: dict[str, set[str]] = {}
    for path in paths:
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            sources = ["\n".join(line for line in "".join(c["source"]).splitlines()
                                  if not line.lstrip().startswith(("%", "!")))
                       for c in cells if c["cell_type"] == "code"]
        else:
            sources = [path.read_text(encoding="utf-8")]
        for source in sources:
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module]
                else:
                    continue
                for top in {n.split(".")[0] for n in names}:
                    if top not in sys.stdlib_module_names:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def _files(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern)
                  if "__pycache__" not in p.parts)


# the repository's own packages, and the scripts of benchmarks/ and tools/ that import each other
OWN = {"helpers", "training", "tools", "tests", "benchmarks"} | {
    p.stem for folder in ("benchmarks", "tools") for p in (ROOT / folder).glob("*.py")}
STUDENT_CODE = ("helpers/**/*.py", "notebooks/*.ipynb", "solutions/*.ipynb", "tools/doctor.py",
                "tools/make_student.py", "tools/install_torch.py")
ALL_CODE = STUDENT_CODE + ("training/**/*.py", "tools/**/*.py", "tests/**/*.py", "benchmarks/*.py")


@pytest.mark.parametrize("who, patterns, files", [
    ("students", STUDENT_CODE, FILES[:1]), ("maintainers", ALL_CODE, FILES)],
    ids=["student", "dev"])
def test_every_imported_package_is_listed(who, patterns, files):
    listed = {canonicalize_name(Requirement(r).name)
              for f in files for r in requirement_lines(ROOT / f)}
    distributions = importlib.metadata.packages_distributions()
    missing = []
    for module, users in sorted(_third_party_imports(_files(*patterns)).items()):
        if module in OWN:
            continue
        names = {canonicalize_name(d) for d in distributions.get(module, [module])}
        if not names & listed:
            missing.append(f"{module} ({sorted(names)}), imported by {sorted(users)[:3]}")
    assert not missing, (f"imported by code {who} run, but not in {' + '.join(files)}:\n"
                         + "\n".join(missing))


def test_environment_yml_pip_section_mirrors_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert env["name"] == "nlp-from-scratch"
    deps = env["dependencies"]
    assert any(str(d).startswith("python=3.11") for d in deps) and "pip" in deps
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert pip_section == requirement_lines()


def test_readme_python_range_is_requires_python():
    match = re.search(r"Python 3\.(\d+)[–-]3\.(\d+)", README)
    assert match, "the README does not state the Python range as 'Python 3.X–3.Y'"
    stated = set(range(int(match.group(1)), int(match.group(2)) + 1))
    spec = requires_python()
    allowed = {m for m in range(0, 30) if SpecifierSet(spec).contains(f"3.{m}.0")}
    assert allowed == stated, \
        f"README says Python 3.{min(stated)}-3.{max(stated)}, pyproject.toml {spec}"


def _constraints() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version.strip() == version and "+" not in version, \
                f"constraints.txt: {line!r} is not a plain name==version pin"
            assert canonicalize_name(name) not in pins, f"constraints.txt pins {name} twice"
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_constraints_pin_every_requirement_inside_its_range():
    pins = _constraints()
    for line in requirement_lines() + requirement_lines(ROOT / "requirements-dev.txt"):
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt does not pin {req.name} (run `make constraints`)"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"constraints.txt pins {req.name}=={pins[name]}, outside requirements.txt's {req}"


def test_constraints_header_says_when_how_and_how_to_use():
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert re.search(r"on \d{4}-\d{2}-\d{2} with Python 3\.\d+\.\d+", header)
    for words in ["make constraints", "pip freeze", "make setup CONSTRAINTS=1",
                  "pip install -r requirements.txt -c constraints.txt"]:
        assert words in header, f"constraints.txt's header does not mention {words!r}"
    assert "make setup CONSTRAINTS=1" in README and "constraints.txt" in README


def test_make_lab_installs_the_students_requirements_and_make_test_the_maintainers():
    """(That each make target the docs name exists: tests/repo/test_docs.py.)"""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    setup = makefile.split("\n$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "-r requirements.txt" in setup and "requirements-dev.txt" not in setup
    assert re.search(r"(?m)^lab: setup\b", makefile) and re.search(r"(?m)^test: dev\b", makefile)
    dev = makefile.split("\n$(DEV_STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "-r requirements-dev.txt" in dev


def test_contributing_names_the_hypothesis_profiles_that_conftest_registers():
    conftest = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    row = next(line for line in CONTRIBUTING.splitlines() if line.startswith("| `make fuzz` |"))
    for profile in ("ci", "fuzz"):
        assert f"`{profile}` profile" in row and f'register_profile("{profile}"' in conftest
    assert "HYPOTHESIS_PROFILE=ci" in row
    assert 'os.environ.get("HYPOTHESIS_PROFILE", "ci")' in conftest
    examples = re.search(r'register_profile\("ci", max_examples=(\d+)', conftest).group(1)
    assert f"{examples} examples per property, the same ones on every run" in row
    assert "derandomize=True" in conftest


def test_readme_reporting_a_problem_points_to_make_doctor():
    section = README[README.index("## When something does not work"):]
    section = section[:section.find("\n## ", 1)]
    assert "make doctor" in section and "python tools/doctor.py" in section
    assert "### Windows" in README and "### macOS" in README
