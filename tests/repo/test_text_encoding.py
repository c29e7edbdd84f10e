"""Every text file the course's code opens names its encoding (the locale's fails on Windows)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("helpers", "training", "tests", "benchmarks", "data/build", "tools")

# Modules whose open() reads bytes unless the mode asks for text ("rt", "wt").
BINARY_BY_DEFAULT = {"gzip", "bz2", "lzma"}
# Receivers whose .open() is not a text file (zf: a ZipFile, whose members are binary).
NOT_TEXT_FILES = {"os", "Image", "webbrowser", "tarfile", "zipfile", "ZipFile", "zf"}


def _constant(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _argument(call: ast.Call, name: str, position: int):
    """The argument ``name`` of ``call``, given by keyword or at ``position``; None if absent."""
    value = _keyword(call, name)
    if value is None and len(call.args) > position:
        value = call.args[position]
    return value


def text_io_without_encoding(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each call in ``tree`` that opens a text file without ``encoding=``."""
    found = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        f = call.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        receiver = (f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                    else None)
        if name in ("read_text", "write_text") and isinstance(f, ast.Attribute):
            if _argument(call, "encoding", 0 if name == "read_text" else 1) is None:
                found.append((call.lineno, f".{name}()"))
            continue
        if name != "open" or receiver in NOT_TEXT_FILES:
            continue
        # open(file, mode, buffering, encoding), gzip.open(file, mode, level, encoding),
        # Path.open(mode, buffering, encoding)
        builtin = isinstance(f, ast.Name) or receiver == "io" or receiver in BINARY_BY_DEFAULT
        mode = _argument(call, "mode", 1 if builtin else 0)
        encoding = _argument(call, "encoding", 3 if builtin else 2)
        default = "rb" if receiver in BINARY_BY_DEFAULT else "r"
        mode_text = default if mode is None else _constant(mode)
        binary = mode_text is not None and "b" in mode_text and "t" not in mode_text
        if not binary and encoding is None:
            found.append((call.lineno, f"{ast.unparse(f)}() in mode {mode_text or '?'!r}"))
    return found


def _python_files():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_every_text_file_is_opened_with_an_explicit_encoding():
    problems = []
    for path in _python_files():
        rel = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for line, what in sorted(text_io_without_encoding(ast.parse(source, filename=rel))):
            problems.append(f"{rel}:{line}: {what} without encoding=: {lines[line - 1].strip()}")
    assert not problems, ("text files opened without an explicit encoding (add "
                          "encoding=\"utf-8\"):\n" + "\n".join(problems))


def test_the_checker_finds_each_form_and_accepts_the_right_ones():
    bad = '''
open(p)
open(p, "w")
open(p, mode="a")
io.open(p)
path.open()
path.open("w")
path.read_text()
path.write_text(s)
gzip.open(p, "rt")
'''
    good = '''
open(p, "rb")
open(p, "wb")
open(p, encoding="utf-8")
open(p, "w", encoding="utf-8")
path.open("rb")
path.open(encoding="utf-8")
path.read_text(encoding="utf-8")
path.read_text("utf-8")
path.write_text(s, encoding="utf-8")
path.read_bytes()
gzip.open(p)
gzip.open(p, "rb")
gzip.open(p, "rt", encoding="utf-8")
os.open(p, os.O_RDONLY)
Image.open(buffer)
'''
    assert [line for line, _ in text_io_without_encoding(ast.parse(bad))] == list(range(2, 11))
    assert text_io_without_encoding(ast.parse(good)) == []
