"""The package's layers: every import in ``helpers/`` goes down, never up.

    infra (0)  ->  lib (1)  ->  course (2)  ->  lessons (3);  exercises -> infra, lib, course

No lesson module imports another; nothing imports ``training``, ``tools``, ``tests`` or
``benchmarks``; no private ``_name`` crosses modules; no import cycles; an import inside a
function only for a heavy optional package, with a reason comment. ``layering_violations(root)``
runs on the real tree and on small trees that break each rule.
"""
import ast
import graphlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"infra": 0, "lib": 1, "course": 2, "lessons": 3}
PACKAGES = set(LAYERS) | {"exercises"}
OUTSIDE = ("training", "tools", "tests", "benchmarks")  # they import helpers, never the reverse
HEAVY_OPTIONAL = ("gensim", "sklearn.manifold")          # may be imported inside a function
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def module_name(path: Path, root: Path) -> str:
    """'helpers/lib/metrics.py' -> 'helpers.lib.metrics'; a package's __init__.py -> the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def kind(module: str) -> str:
    """'infra', 'lib', 'course', 'lessons', 'exercises' or 'root'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


def _imports(node, in_function=False):
    """(import node, inside a function) for every import statement under ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        yield from _imports(child, in_function or isinstance(child, FUNCTIONS))


def _targets(node, module: str, is_package: bool, modules: set[str]):
    """[(imported module, imported name or None)] of one import statement, relative imports and
    ``from pkg import submodule`` resolved."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    source = node.module
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    return [(f"{source}.{a.name}", None) if f"{source}.{a.name}" in modules else (source, a.name)
            for a in node.names]


def _has_reason(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line or a comment line just above it."""
    return "#" in lines[lineno - 1] or (lineno > 1 and lines[lineno - 2].strip().startswith("#"))


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a closed path, starting at its smallest module), or None."""
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as e:
        path = e.args[1][::-1][:-1]          # graphlib lists it against the import direction
        i = path.index(min(path))
        return path[i:] + path[:i] + [path[i]]
    return None


def _outside_import(target, in_function, my_kind, lines, lineno) -> list[str]:
    """The problems of importing a module from outside helpers."""
    top = target.split(".")[0]
    if top in OUTSIDE:
        return [f"helpers imports nothing from {top}/ ({target}): {top} imports helpers"]
    problems = []
    if in_function:
        if not any(target == h or target.startswith(h + ".") for h in HEAVY_OPTIONAL):
            problems.append(f"imports {target} inside a function; import it at the top (only "
                            f"{', '.join(HEAVY_OPTIONAL)} may be imported late)")
        elif not _has_reason(lines, lineno):
            problems.append(f"imports {target} inside a function without a one-line reason "
                            "comment beside it")
    if my_kind == "root" and target != "__future__":
        problems.append(f"helpers/__init__.py must stay import-free, imports {target}")
    return problems


def _helpers_import(me, target, in_function) -> list[str]:
    """The problems of one import between two helpers modules."""
    edge, my_kind, their = f"{me} -> {target}", kind(me), kind(target)
    problems = []
    if in_function:
        problems.append(f"imports {target} inside a function ({edge}); "
                        "import helpers modules at the top")
    if my_kind == "root":
        problems.append(f"helpers/__init__.py must stay import-free ({edge})")
    elif my_kind == "exercises":
        framework = target == "helpers.exercises" or (
            target.startswith("helpers.exercises.")
            and not re.fullmatch(r"helpers\.exercises\.lesson\d\d", target))
        if their not in ("infra", "lib", "course") and not framework:
            problems.append(f"an exercise checker imports only infra, lib and course ({edge})")
    elif my_kind in LAYERS:
        if their not in LAYERS or LAYERS[their] > LAYERS[my_kind]:
            problems.append(f"upward import from layer {my_kind} ({LAYERS[my_kind]}) "
                            f"to {their} ({LAYERS.get(their, '-')}) ({edge})")
        elif my_kind == their == "lessons" and target != "helpers.lessons":
            problems.append(f"a lesson module imports another lesson module ({edge}); "
                            "move what they share down to course or lib")
    return problems


def layering_violations(root: Path) -> list[str]:
    """Every violation of this file's rules in ``root/helpers``, as "file:line: message"."""
    pkg = root / "helpers"
    files = sorted(pkg.rglob("*.py"))
    modules = {module_name(p, root) for p in files}
    problems = [f"helpers/{sub}/: the layer's package is missing"
                for sub in LAYERS if not (pkg / sub / "__init__.py").is_file()]
    for p in sorted(pkg.iterdir()):
        if p.suffix == ".py" and p.name != "__init__.py":
            problems.append(f"helpers/{p.name}: no module belongs at the top level of helpers/ "
                            f"(put it in one of {sorted(LAYERS)})")
        if p.is_dir() and p.name not in PACKAGES and p.name != "__pycache__":
            problems.append(f"helpers/{p.name}/: not one of the package's folders "
                            f"{sorted(PACKAGES)}")
    edges = {}
    for p in files:
        rel, me = p.relative_to(root).as_posix(), module_name(p, root)
        text = p.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node, in_function in _imports(ast.parse(text, rel)):
            seen = set()
            for target, name in _targets(node, me, p.name == "__init__.py", modules):
                found = []
                if name and name.startswith("_") and not name.startswith("__"):
                    found.append(f"imports the private name {name!r} from {target}")
                if target not in seen and target != me:
                    seen.add(target)
                    if target.split(".")[0] != "helpers":
                        found += _outside_import(target, in_function, kind(me), lines, node.lineno)
                    else:
                        found += _helpers_import(me, target, in_function)
                        if target in modules:
                            edges.setdefault(me, set()).add(target)
                problems += [f"{rel}:{node.lineno}: {f}" for f in found]
    cycle = _cycle(edges)
    if cycle:
        problems.append(f"import cycle: {' -> '.join(cycle)}")
    return problems


# ---------------------------------------------------------------- the real tree
def test_the_package_is_layered():
    problems = layering_violations(ROOT)
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_every_layer_has_modules():
    helpers = ROOT / "helpers"
    for sub in LAYERS:
        assert list((helpers / sub).glob("*.py")) != [helpers / sub / "__init__.py"], sub
    lessons = sorted(p.stem for p in (helpers / "lessons").glob("lesson*.py"))
    exercises = sorted(p.stem for p in (helpers / "exercises").glob("lesson*.py"))
    notebooks = sorted(f"lesson{p.name[:2]}"
                       for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert set(lessons) <= set(notebooks), f"lesson modules {lessons} without a notebook"
    assert exercises == notebooks, f"one exercise module per lesson: {exercises} vs {notebooks}"


# ---------------------------------------------------------------- the checker, on small trees
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    base = {f"helpers/{sub}/__init__.py": "" for sub in LAYERS}
    for rel, text in (base | {"helpers/__init__.py": '"""doc"""\n'} | files).items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_clean_tree_passes_and_a_missing_layer_is_reported(tmp_path):
    root = _tree(tmp_path, {
        "helpers/infra/plot.py": "import numpy\n",
        "helpers/lib/a.py": "from helpers.infra.plot import numpy\n",
        "helpers/lib/b.py": "from . import a\nfrom .a import numpy\n",
        "helpers/course/c.py": "from helpers.lib import b\n",
        "helpers/lessons/lesson01.py": "from helpers.course.c import b\n\ndef f():\n"
                                       "    from gensim.models import Word2Vec  # heavy\n",
        "helpers/exercises/__init__.py": "",
        "helpers/exercises/lesson01.py": "from helpers.exercises import x\n"
                                         "from helpers.lib.a import numpy\n",
    })
    assert layering_violations(root) == []
    (root / "helpers" / "course" / "c.py").unlink()
    (root / "helpers" / "course" / "__init__.py").unlink()
    (root / "helpers" / "course").rmdir()
    assert "helpers/course/: the layer's package is missing" in layering_violations(root)


LIB_B = {"helpers/lib/b.py": "def g(): pass\n"}


@pytest.mark.parametrize("files, expected", [
    ({"helpers/lib/a.py": "from helpers.course.c import x\n", "helpers/course/c.py": "x = 1\n"},
     "helpers/lib/a.py:1: upward import from layer lib (1) to course (2) "
     "(helpers.lib.a -> helpers.course.c)"),
    ({"helpers/infra/a.py": "def f():\n    from ..lib import b\n", **LIB_B},
     "helpers/infra/a.py:2: upward import from layer infra (0) to lib (1)"),
    ({"helpers/lessons/lesson01.py": "from helpers.lessons.lesson02 import f\n",
      "helpers/lessons/lesson02.py": "def f(): pass\n"},
     "helpers/lessons/lesson01.py:1: a lesson module imports another lesson module"),
    ({"helpers/exercises/__init__.py": "", "helpers/lessons/lesson01.py": "",
      "helpers/exercises/lesson01.py": "import helpers.lessons.lesson01\n"},
     "helpers/exercises/lesson01.py:1: an exercise checker imports only infra, lib and course"),
    ({"helpers/lib/a.py": "from helpers.lib.b import _hidden\n",
      "helpers/lib/b.py": "_hidden = 1\n"},
     "helpers/lib/a.py:1: imports the private name '_hidden' from helpers.lib.b"),
    ({"helpers/lib/a.py": "def f():\n    from helpers.lib.b import g\n", **LIB_B},
     "helpers/lib/a.py:2: imports helpers.lib.b inside a function"),
    ({"helpers/lib/a.py": "def f():\n    from gensim.models import Word2Vec\n"},
     "helpers/lib/a.py:2: imports gensim.models inside a function without a one-line reason"),
    ({"helpers/lib/a.py": "def f():\n    import scipy  # fast enough\n"},
     "helpers/lib/a.py:2: imports scipy inside a function; import it at the top"),
    ({"helpers/lib/a.py": "from helpers.lib import b\n",
      "helpers/lib/b.py": "from helpers.lib import c\n",
      "helpers/lib/c.py": "def f():\n    import helpers.lib.a  # late\n"},
     "import cycle: helpers.lib.a -> helpers.lib.b -> helpers.lib.c -> helpers.lib.a"),
    ({"helpers/stray.py": ""}, "helpers/stray.py: no module belongs at the top level of helpers/"),
    ({"helpers/course/c.py": "from training.registry import MODELS\n"},
     "helpers/course/c.py:1: helpers imports nothing from training/"),
    ({"helpers/lib/a.py": "def f():\n    import tools.diagrams  # late\n"},
     "helpers/lib/a.py:2: helpers imports nothing from tools/"),
    ({"helpers/infra/a.py": "from tests.props import given\n"},
     "helpers/infra/a.py:1: helpers imports nothing from tests/"),
    ({"helpers/lessons/lesson01.py": "import benchmarks.bench_x\n"},
     "helpers/lessons/lesson01.py:1: helpers imports nothing from benchmarks/"),
    ({"helpers/diagrams/__init__.py": ""}, "helpers/diagrams/: not one of the package's folders"),
    ({"helpers/__init__.py": "import numpy\n"},
     "helpers/__init__.py:1: helpers/__init__.py must stay import-free"),
])
def test_each_rule_catches_its_violation(tmp_path, files, expected):
    problems = layering_violations(_tree(tmp_path, files))
    assert any(p.startswith(expected) for p in problems), f"expected {expected!r} among {problems}"
