"""Every public object of helpers.lib is covered by a property-based test (tests/test_prop_*.py).

A new public function or class fails this test until a property declares it with
``@covers("module.Name")`` (tests/props.py); a name that is covered but no longer exists fails too."""
import importlib
from pathlib import Path

from tests import props

HERE = Path(__file__).resolve().parent
PROPERTY_MODULES = sorted(p.stem for p in HERE.glob("test_prop_*.py") if p.stem != "test_prop_registry")


def covered() -> dict[str, list[str]]:
    for name in PROPERTY_MODULES:
        importlib.import_module(f"tests.{name}")
    return props.COVERED


def test_every_public_object_of_the_library_has_a_property():
    public, have = props.public_objects(), covered()
    missing = sorted(public - set(have))
    assert len(public) > 200, "the enumeration of public objects found too few: is helpers/lib where it was?"
    assert not missing, (f"{len(missing)} of {len(public)} public objects of helpers.lib have no property-based test "
                         "(declare one with @covers in tests/test_prop_*.py): " + ", ".join(missing))


def test_every_covered_name_is_a_public_object():
    stale = sorted(set(covered()) - props.public_objects())
    assert not stale, f"@covers names objects that do not exist (or are private): {stale}"


def test_the_registry_would_notice_a_new_public_object(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "shiny.py").write_text("def new_function():\n    pass\n\n\ndef _private():\n    pass\n", encoding="utf-8")
    monkeypatch.setattr(props, "LIB", lib)
    assert props.public_objects() == {"shiny.new_function"}
    assert "shiny.new_function" not in covered()
