"""Every number stated in a lesson's prose is printed by that lesson: the decimals and integers of
two or more digits of its markdown (outside LaTeX, code, headings, links, lesson references and
Further reading; years 1900–2099 excepted) appear, as written or rounded, in the same notebook's
outputs or code; a given of the problem goes in ``ALLOWED`` with its reason.
"""
import re
from pathlib import Path

import pytest

from tests.lesson_text import code_cells, load, output_text, source

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# notebook stem -> {number as written: why it need not be printed}
ALLOWED: dict[str, dict[str, str]] = {
    "02_rnn_bptt": {
        "124.7": "published Penn Treebank result (Mikolov et al. 2011), quoted, not measured",
        "929": "the published Penn Treebank training set's size (929k tokens), quoted as such",
        "141": "the Kneser-Ney 5-gram of the same published table",
    },
    "03_lstm_gates": {
        "124.7": "published Penn Treebank result (Mikolov et al. 2011), quoted, not measured",
        "141": "the Kneser-Ney 5-gram of the same published table",
        "82.7": "published Penn Treebank LSTM, medium (Zaremba et al. 2014), quoted as such",
        "78.4": "published Penn Treebank LSTM, large (Zaremba et al. 2014), quoted as such",
    },
    "06_pmi": {
        "50,000": "a hypothetical vocabulary size, for the memory of a dense 50,000 × 50,000 matrix"
    },
    "09_evaluation": {
        "600": "the largest vector size of the word2vec paper's Table 2, quoted as such",
        "783": "the largest corpus of the same published table (783M words)",
        "30,000": "the word2vec paper's frequency restriction of the analogy test, quoted as such",
    },
    "10_contextual": {
        "353": "the name of the WordSim-353 word-similarity set, not a measured number",
    },
}


NUMBER = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?[eE][-+−]?\d+|\d+\.\d+|\d{1,3}(?:,\d{3})+|\d{2,})"
                    r"(?![\w.,]*\d)")
YEAR = re.compile(r"(19|20)\d\d")
STRIP = [
    r"(?m)^## Further reading\b.*?(?=^#{1,2} |\Z)",   # the reference list, up to the next section
    r"\$\$.*?\$\$",                      # display maths
    r"\$[^$\n]*\$",                      # inline maths
    r"```.*?```",                        # fenced code
    r"`[^`]*`",                          # code spans
    r"(?m)^#+ [^\n]*$",                  # headings (section numbers); [^\n], not ., under re.S
    r"\]\([^)]*\)",                      # link targets (file names, URLs)
    r"<[^>]+>",                          # HTML tags
    r"\d+\.\d+\s?[kMB]\b",               # magnitudes such as 1.3M
    r"(?i)\b(sections?|lessons?|cells?|figures?|tables?|exercises?|§)\s*\d+(\.\d+)*"
    r"(\s*(–|-|and|,|to)\s*\d+(\.\d+)*)*",
]


def prose_numbers(markdown: str) -> list[str]:
    """Decimal numbers stated in ``markdown`` outside maths, code, headings and references."""
    for rx in STRIP:
        markdown = re.sub(rx, " ", markdown, flags=re.S)
    return [n for n in NUMBER.findall(markdown) if not YEAR.fullmatch(n)]


def printed_numbers(nb: dict) -> list[str]:
    """Decimal numbers in the code and the text outputs of a notebook."""
    blob = "\n".join(source(c) + "\n" + output_text(c) for c in code_cells(nb))
    return re.findall(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", blob)


def is_backed(number: str, printed: list[str]) -> bool:
    """True if ``number`` is printed as written (thousands separators optional), or is a decimal
    that a more precise printed value rounds to."""
    plain = number.replace(",", "")
    if any(p == number or p.replace(",", "") == plain for p in printed):
        return True
    if "e" in plain.lower():  # scientific notation: same value at the prose's significant digits
        mantissa = plain.lower().split("e")[0]
        sig = len(mantissa.replace(".", "")) - 1
        want = f"{float(plain.replace('−', '-')):.{sig}e}"
        return any(f"{float(p.replace(',', '')):.{sig}e}" == want for p in printed
                   if re.fullmatch(r"[\d.]+(e[-+]?\d+)?", p.replace(",", "").lower()))
    if "." not in number:
        return False
    digits = len(number.split(".")[1])
    value = float(plain)
    for p in printed:
        if "." not in p:
            continue
        p_digits = len(p.split(".")[1])
        rounded = round(float(p.replace(",", "")), digits)
        if p_digits > digits and abs(rounded - value) < 10**-digits / 2 + 1e-12:
            return True
    return False


def unbacked(path: Path) -> list[tuple[int, str]]:
    nb = load(path)
    printed, allowed = printed_numbers(nb), ALLOWED.get(path.stem, {})
    return [(i, n) for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "markdown"
            for n in prose_numbers(source(cell))
            if n not in allowed and not is_backed(n, printed)]


def test_the_extractor_sees_what_it_should():
    md = ("The loss is 2.303 ($-\\log 0.1 = 2.303$), see section 4.2 and `x = 0.5`; "
          "1.3M tokens; ![d](figures/01_a.svg) and 0.75 in lessons 07–08; 15,841 words, "
          "Bengio et al. 2003, 7 seeds.\n## 3.1 · Heading 9.9")
    assert prose_numbers(md) == ["2.303", "0.75", "15,841"]
    assert is_backed("15,841", ["15841"]) and not is_backed("334", ["333"])
    assert prose_numbers("it fell to 5.1e-05 and 2.9e−28") == ["5.1e-05", "2.9e−28"]
    heading = "## 2 · A heading\nThe loss is 4.25.\n### 3 b) Another 7.5"
    assert prose_numbers(heading) == ["4.25"]              # a heading hides only its own line
    # the reference list (volumes, pages) is skipped up to the next section
    md = "It is 2.5.\n## Further reading\n- A (2001). J. 12, 33–45.\n## Closing note\nIt is 3.25."
    assert prose_numbers(md) == ["2.5", "3.25"]
    assert is_backed("5.1e-05", ["5.0891e-05"]) and not is_backed("5.1e-05", ["5.0891e-04"])
    assert is_backed("2.30", ["2.302585"]) and not is_backed("2.31", ["2.302585"])
    assert not is_backed("0.5", ["0.44"]) and is_backed("0.5", ["0.46"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_prose_numbers_are_printed(path):
    missing = unbacked(path)
    assert not missing, (f"{path.name}: numbers in markdown that no code or output of the notebook "
                         f"contains (cell index, number): {missing}; print them from a code cell, "
                         "or add them to ALLOWED in tests/notebooks/test_prose_numbers.py with "
                         "the reason")


