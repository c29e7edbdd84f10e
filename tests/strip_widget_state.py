"""Remove saved widget state from notebooks (it bloats them and goes stale).

Usage: python tests/strip_widget_state.py notebooks/*.ipynb
"""
import json
import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    if nb.get("metadata", {}).pop("widgets", None) is not None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"stripped widget state from {path}")
