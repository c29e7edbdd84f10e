"""The package's layers: every import in ``helpers/`` (inside functions too) goes down, never up.

    infra (0)  ->  lib (1)  ->  course (2)  ->  lessons (3)

A module imports only from its own layer or the layers below; a lesson module imports no other
lesson module; exercise checkers import only ``infra``, ``lib`` and their own framework
(``helpers.exercises``). Nothing in ``helpers`` imports the repository's other top-level packages
(``training``, ``tools``, ``tests``, ``benchmarks``), at the top or inside a function: they import
``helpers``, never the other way round. No module imports a private ``_name`` from another
module, no two modules import each other in a cycle, and an import inside a function is allowed
only for a heavy optional package (gensim, sklearn.manifold), with a one-line reason comment
beside it.

``layering_violations(root)`` returns every violation as "file:line: message"; the tests below
run it on the real tree and on small synthetic trees that break each rule.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"infra": 0, "lib": 1, "course": 2, "lessons": 3}
PACKAGES = set(LAYERS) | {"exercises"}
TOP_LEVEL_MODULES = {"__init__.py"}
OUTSIDE = ("training", "tools", "tests", "benchmarks")  # they import helpers, never the reverse
HEAVY_OPTIONAL = ("gensim", "sklearn.manifold")          # may be imported inside a function


def module_name(path: Path, root: Path) -> str:
    """'helpers/lib/metrics.py' -> 'helpers.lib.metrics'; a package's __init__.py -> the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def kind(module: str) -> str:
    """'infra', 'lib', 'course', 'lessons', 'exercises' or 'root'."""
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    return parts[1]


def _imports(tree: ast.Module):
    """(node, inside_a_function) for every import statement of a module."""
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append((child, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def _targets(node, module: str, is_package: bool, modules: set[str]) -> list[tuple[str, str | None]]:
    """[(imported module, imported name or None)] of one import statement; relative imports
    resolved, ``from pkg import submodule`` resolved to the submodule."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module
    out = []
    for a in node.names:
        sub = f"{source}.{a.name}"
        out.append((sub, None) if sub in modules else (source, a.name))
    return out


def _has_reason(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line or a comment line just above it."""
    return "#" in lines[lineno - 1] or (lineno > 1 and lines[lineno - 2].strip().startswith("#"))


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles: the strongly connected components with more than one module (Tarjan),
    each as (a closed path through the component, all its modules)."""
    index, low, stack, on_stack, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(edges):
        if v not in index:
            strong(v)
    cycles = []
    for comp in comps:                     # one closed path through each component
        members, start = set(comp), min(comp)
        path = _path_back(edges, members, start, [start])
        cycles.append((path + [start], sorted(members)))
    return cycles


def _path_back(edges, members, start, path):
    """A path start -> ... -> (an edge back to start) inside ``members`` (depth first)."""
    for w in sorted(edges.get(path[-1], ())):
        if w == start and len(path) > 1:
            return path
        if w in members and w not in path:
            found = _path_back(edges, members, start, path + [w])
            if found:
                return found
    return None


def layering_violations(root: Path) -> list[str]:
    """Every violation of the rules in this file's docstring in the package at ``root/helpers``."""
    pkg = root / "helpers"
    files = sorted(pkg.rglob("*.py"))
    modules = {module_name(p, root) for p in files}
    problems, edges = [], {}
    for sub in LAYERS:
        if not (pkg / sub / "__init__.py").is_file():
            problems.append(f"helpers/{sub}/: the layer's package is missing")
    for p in sorted(pkg.iterdir()):
        if p.suffix == ".py" and p.name not in TOP_LEVEL_MODULES:
            problems.append(f"helpers/{p.name}: no module belongs at the top level of helpers/ "
                            f"(put it in one of {sorted(LAYERS)})")
        if p.is_dir() and p.name not in PACKAGES and p.name != "__pycache__":
            problems.append(f"helpers/{p.name}/: not one of the package's folders {sorted(PACKAGES)}")
    for p in files:
        rel = p.relative_to(root).as_posix()
        me = module_name(p, root)
        my_kind = kind(me)
        text = p.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node, in_function in _imports(ast.parse(text, rel)):
            where = f"{rel}:{node.lineno}"
            seen = set()
            for target, name in _targets(node, me, p.name == "__init__.py", modules):
                if name and name.startswith("_") and not name.startswith("__"):
                    problems.append(f"{where}: imports the private name {name!r} from {target}")
                if target in seen:                   # one verdict per imported module and statement
                    continue
                seen.add(target)
                if target.split(".")[0] in OUTSIDE:
                    problems.append(f"{where}: helpers imports nothing from {target.split('.')[0]}/ "
                                    f"({me} -> {target}): {target.split('.')[0]} imports helpers")
                    continue
                if target.split(".")[0] != "helpers":
                    if in_function:
                        heavy = any(target == h or target.startswith(h + ".") for h in HEAVY_OPTIONAL)
                        if not heavy:
                            problems.append(f"{where}: imports {target} inside a function; import it at the "
                                            f"top (only {', '.join(HEAVY_OPTIONAL)} may be imported late)")
                        elif not _has_reason(lines, node.lineno):
                            problems.append(f"{where}: imports {target} inside a function without a "
                                            "one-line reason comment beside it")
                    if my_kind == "root" and target != "__future__":
                        problems.append(f"{where}: helpers/__init__.py must stay import-free, imports {target}")
                    continue
                if target == me:
                    continue
                edge = f"{me} -> {target}"
                if in_function:
                    problems.append(f"{where}: imports {target} inside a function ({edge}); "
                                    "import helpers modules at the top")
                their = kind(target)
                if my_kind == "root":
                    problems.append(f"{where}: helpers/__init__.py must stay import-free ({edge})")
                elif my_kind == "exercises":
                    framework = target == "helpers.exercises" or (
                        target.startswith("helpers.exercises.") and not re.fullmatch(r"helpers\.exercises\.lesson\d\d", target))
                    if their not in ("infra", "lib") and not framework:
                        problems.append(f"{where}: an exercise checker imports only infra and lib ({edge})")
                elif my_kind in LAYERS:
                    if their not in LAYERS or LAYERS[their] > LAYERS[my_kind]:
                        problems.append(f"{where}: upward import from layer {my_kind} ({LAYERS[my_kind]}) "
                                        f"to {their} ({LAYERS.get(their, '-')}) ({edge})")
                    elif my_kind == their == "lessons" and target != "helpers.lessons":
                        problems.append(f"{where}: a lesson module imports another lesson module ({edge}); "
                                        "move what they share down to course or lib")
                if target in modules:
                    edges.setdefault(me, set()).add(target)
    for cycle, members in _cycles(edges):
        problems.append(f"import cycle: {' -> '.join(cycle)}"
                        + (f" (the cycle joins {len(members)} modules: {', '.join(members)})"
                           if len(members) > len(cycle) - 1 else ""))
    return problems


# ---------------------------------------------------------------- the real tree
def test_the_package_is_layered():
    problems = layering_violations(ROOT)
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_every_layer_has_modules():
    for sub in LAYERS:
        assert list((ROOT / "helpers" / sub).glob("*.py")) != [ROOT / "helpers" / sub / "__init__.py"], sub
    lessons = sorted(p.stem for p in (ROOT / "helpers" / "lessons").glob("lesson*.py"))
    exercises = sorted(p.stem for p in (ROOT / "helpers" / "exercises").glob("lesson*.py"))
    notebooks = sorted(f"lesson{p.name[:2]}" for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert set(lessons) <= set(notebooks), f"lesson modules {lessons} without a notebook ({notebooks})"
    assert exercises == notebooks, f"one exercise module per lesson: {exercises} vs {notebooks}"


# ---------------------------------------------------------------- the checker itself, on synthetic trees
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    base = {f"helpers/{sub}/__init__.py": "" for sub in LAYERS} | {"helpers/__init__.py": '"""doc"""\n'}
    for rel, text in (base | files).items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_clean_synthetic_tree_passes(tmp_path):
    root = _tree(tmp_path, {
        "helpers/infra/plot.py": "import numpy\n",
        "helpers/lib/a.py": "from helpers.infra.plot import numpy\n",
        "helpers/lib/b.py": "from . import a\nfrom .a import numpy\n",
        "helpers/course/c.py": "from helpers.lib import b\n",
        "helpers/lessons/lesson01.py": "from helpers.course.c import b\n\ndef f():\n"
                                       "    from gensim.models import Word2Vec  # heavy: only when asked for\n",
        "helpers/exercises/__init__.py": "",
        "helpers/exercises/lesson01.py": "from helpers.exercises import x\nfrom helpers.lib.a import numpy\n",
    })
    assert layering_violations(root) == []


@pytest.mark.parametrize("files, expected", [
    ({"helpers/lib/a.py": "from helpers.course.c import x\n", "helpers/course/c.py": "x = 1\n"},
     "helpers/lib/a.py:1: upward import from layer lib (1) to course (2) (helpers.lib.a -> helpers.course.c)"),
    ({"helpers/infra/a.py": "def f():\n    from ..lib import b\n", "helpers/lib/b.py": ""},
     "helpers/infra/a.py:2: upward import from layer infra (0) to lib (1)"),
    ({"helpers/lessons/lesson01.py": "from helpers.lessons.lesson02 import f\n",
      "helpers/lessons/lesson02.py": "def f(): pass\n"},
     "helpers/lessons/lesson01.py:1: a lesson module imports another lesson module"),
    ({"helpers/exercises/__init__.py": "", "helpers/exercises/lesson01.py": "import helpers.course.c\n",
      "helpers/course/c.py": ""},
     "helpers/exercises/lesson01.py:1: an exercise checker imports only infra and lib"),
    ({"helpers/lib/a.py": "from helpers.lib.b import _hidden\n", "helpers/lib/b.py": "_hidden = 1\n"},
     "helpers/lib/a.py:1: imports the private name '_hidden' from helpers.lib.b"),
    ({"helpers/lib/a.py": "def f():\n    from helpers.lib.b import g\n", "helpers/lib/b.py": "def g(): pass\n"},
     "helpers/lib/a.py:2: imports helpers.lib.b inside a function"),
    ({"helpers/lib/a.py": "def f():\n    from gensim.models import Word2Vec\n"},
     "helpers/lib/a.py:2: imports gensim.models inside a function without a one-line reason comment"),
    ({"helpers/lib/a.py": "def f():\n    import scipy  # fast enough\n"},
     "helpers/lib/a.py:2: imports scipy inside a function; import it at the top"),
    ({"helpers/lib/a.py": "from helpers.lib import b\n", "helpers/lib/b.py": "from helpers.lib import c\n",
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
    ({"helpers/__init__.py": "import numpy\n"}, "helpers/__init__.py:1: helpers/__init__.py must stay import-free"),
])
def test_each_rule_catches_its_violation(tmp_path, files, expected):
    problems = layering_violations(_tree(tmp_path, files))
    assert any(p.startswith(expected) for p in problems), f"expected {expected!r} among {problems}"


def test_a_missing_layer_is_reported(tmp_path):
    root = _tree(tmp_path, {})
    (root / "helpers" / "course" / "__init__.py").unlink()
    (root / "helpers" / "course").rmdir()
    assert "helpers/course/: the layer's package is missing" in layering_violations(root)
