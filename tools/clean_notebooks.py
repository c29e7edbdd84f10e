"""Clean executed notebooks before they are committed (``make execute`` runs this).

Usage: python tools/clean_notebooks.py notebooks/*.ipynb   (add --check to only report)

In place: names the kernel the course's environment registers (:data:`KERNELSPEC`), so that
JupyterLab finds nothing to change on opening; removes saved widget state and per-cell execution
timestamps; merges consecutive stream outputs of one name keeping what a terminal shows (text
overwritten by a carriage return or erased by a backspace is dropped, so a progress bar leaves its
final line), and removes a stream left blank. ``clean(nb)`` does the same to a loaded notebook and
returns what it changed.
"""
import json
import re
import sys

#: the kernel ``ipykernel`` registers in the course's environment, as JupyterLab records it
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
_BACKSPACE = re.compile(r"[^\n]\x08")
_CARRIAGE_RETURN = re.compile(r"^.*\r(?=[^\n])", re.MULTILINE)


def terminal_text(text: str) -> str:
    """``text`` as a terminal shows it: ``\\r`` returns to the line start, ``\\b`` erases a
    character."""
    old = None
    while old != text:
        old, text = text, _BACKSPACE.sub("", text)
    text = _CARRIAGE_RETURN.sub("", text.replace("\r\n", "\n"))
    return text.replace("\r", "")


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def clean_outputs(outputs: list[dict]) -> list[dict]:
    """Consecutive streams of one name merged, overwritten text dropped, blank streams removed."""
    merged: list[dict] = []
    for out in outputs:
        previous = merged[-1] if merged else {}
        if (out.get("output_type") == "stream" and previous.get("output_type") == "stream"
                and previous["name"] == out["name"]):
            merged[-1] = {**merged[-1], "text": _text(merged[-1]["text"]) + _text(out["text"])}
        else:
            merged.append(out)
    cleaned = []
    for out in merged:
        if out.get("output_type") == "stream":
            text = terminal_text(_text(out["text"]))
            if not text.strip():
                continue
            out = {**out, "text": text.splitlines(keepends=True)}
        cleaned.append(out)
    return cleaned


def clean(nb: dict) -> list[str]:
    """Clean ``nb`` in place; returns a description of each change (empty: it was clean)."""
    changes = []
    if nb.setdefault("metadata", {}).get("kernelspec") != KERNELSPEC:
        nb["metadata"]["kernelspec"] = dict(KERNELSPEC)
        changes.append("kernel name")
    if nb["metadata"].pop("widgets", None) is not None:
        changes.append("widget state")
    timestamps = 0
    for cell in nb.get("cells", []):
        if cell.get("metadata", {}).pop("execution", None) is not None:
            timestamps += 1
        if cell.get("cell_type") == "code":
            before = cell.get("outputs", [])
            after = clean_outputs(before)
            if json.dumps(after) != json.dumps(before):
                changes.append(f"streams of code cell {cell.get('execution_count')}")
                cell["outputs"] = after
    if timestamps:
        changes.append(f"execution timestamps of {timestamps} cells")
    return changes


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    dirty = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        changes = clean(nb)
        if not changes:
            continue
        dirty += 1
        if check:
            print(f"{path}: would clean {', '.join(changes)}")
            continue
        with open(path, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"{path}: cleaned {', '.join(changes)}")
    return 1 if check and dirty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
