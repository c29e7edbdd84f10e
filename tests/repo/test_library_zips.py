"""No zip in helpers/lib truncates silently: each says strict=True, or strict=False with a comment
on its line saying why the lengths may differ."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_zip_in_the_library_says_whether_lengths_must_agree():
    problems = []
    for path in sorted((ROOT / "helpers" / "lib").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "zip":
                strict = next((k.value for k in node.keywords if k.arg == "strict"), None)
                line = lines[node.lineno - 1]
                if strict is None or (isinstance(strict, ast.Constant) and strict.value is False
                                      and "#" not in line):
                    problems.append(f"helpers/lib/{path.name}:{node.lineno}: {line.strip()}")
    assert not problems, "zip() calls that may truncate silently:\n" + "\n".join(problems)
