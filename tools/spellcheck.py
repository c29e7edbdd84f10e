"""Spell-check the course's prose: notebook markdown cells and the repository's Markdown files.

Two passes over every word, after the project word list ``tools/spelling_words.txt`` (technical
terms, names, symbols), which both accept:

1. **codespell** (from PyPI alone, so it runs on Linux, macOS and Windows): its list of common
   misspellings (``recieve``), and its list of British spellings with their American forms read
   backwards, since the course writes British (``color`` is reported: the course writes
   ``colour``);
2. **Hunspell**'s British English dictionary (``en_GB``, read by the ``chunspell`` package),
   where it is installed (Debian's ``hunspell-en-gb``; CI installs it): every word the
   dictionary does not know, and the American ``-ize`` form (``normalize``) of a word whose
   ``-ise`` form exists (``normalise``). Without the dictionary this pass is skipped, with a
   note saying how to install it.

Before checking, what is not prose is blanked out (line numbers stay right): fenced code blocks,
``inline code``, LaTeX (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``,
``\\begin...\\end``), URLs, link targets, HTML tags and entities, file paths and dotted names
(``helpers.data``), and short italics, which the course uses for words mentioned as words
(*january*, the misspelling *goverment*). Then words with a digit or an underscore
(identifiers), all-capital words (acronyms such as LSTM), single letters and words outside the
Latin script are skipped.

Usage::

    python tools/spellcheck.py              # every notebook and Markdown file of the repository
    python tools/spellcheck.py README.md    # only these files
    python tools/spellcheck.py --unknown    # just the unknown words, one a line (for the word list)

Exit status: 0 when every word is known, 1 when some are not, 2 when codespell is missing.
"""
from __future__ import annotations

import argparse
import importlib.resources
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORD_LIST = ROOT / "tools" / "spelling_words.txt"
LANGUAGE = "en_GB"
# Where Hunspell dictionaries live on Debian/Ubuntu, Fedora, Homebrew and macOS; $DICPATH first.
DICTIONARY_DIRS = ["/usr/share/hunspell", "/usr/share/myspell", "/usr/share/myspell/dicts",
                   "/usr/local/share/hunspell", "/opt/homebrew/share/hunspell",
                   "~/Library/Spelling", "/Library/Spelling"]
HOW_TO_INSTALL_DICTIONARY = (
    "Install it: `sudo apt-get install hunspell-en-gb` (Debian, Ubuntu, WSL), "
    "`sudo dnf install hunspell-en-GB` (Fedora); elsewhere put en_GB.dic and en_GB.aff from "
    "LibreOffice's dictionaries (github.com/LibreOffice/dictionaries, folder en) into a folder "
    "and set DICPATH to that folder."
)

# American forms that are also British words (the verb "license", the noun "practice", a computer
# "program", a "dialog" box, a "story" told): codespell's British list read backwards must not
# report them
_ALSO_BRITISH = {
    "license",
    "licensed",
    "licenses",
    "licensing",
    "practice",
    "practices",
    "program",
    "programs",
    "programmed",
    "programming",
    "dialog",
    "dialogs",
    "judgment",
    "judgments",
    "check",
    "checks",
    "tire",
    "tires",
    "draft",
    "drafts",
    "meter",
    "meters",
    "disk",
    "disks",
    "story",
    "stories",
}

# --- what is not prose: each pattern is blanked out, newlines kept --------------------------
_NOT_PROSE = [
    re.compile(p, flags)
    for p, flags in [
        (r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S),  # fenced code blocks
        (r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S),  # inline code, any number of backticks
        (r"<!--.*?-->", re.S),  # HTML comments
        (
            r"<(code|pre|script|style|cite)\b.*?</\1>",
            re.S | re.I,
        ),  # HTML code elements; <cite> holds a quoted title
        (r"\$\$.+?\$\$", re.S),  # display maths
        (r"\\\[.+?\\\]", re.S),  # \[ ... \]
        (r"\\\(.+?\\\)", re.S),  # \( ... \)
        (r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.S),  # \begin{align} ... \end{align}
        (r"\$(?!\s)(?:[^$\n]|\n(?!\s*\n))+?(?<!\s)\$", 0),  # inline maths, within a paragraph
        (r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)", 0),  # link targets: [text](target "title")
        (r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M),  # reference links: [1]: http://...
        (r"<[^>\n]+>", 0),  # HTML tags and <autolinks>
        (r"&#?\w+;", 0),  # HTML entities
        (r"\b(?:https?|ftp|file)://\S+|\bwww\.\S+|\S+@\S+\.\w+", 0),  # URLs and e-mail addresses
        (r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b", 0),  # dotted names: helpers.data, e.g
        (
            r"\b[\w-]+\.(?:svg|png|ipynb|py|md|txt|gz|tsv|npz|json|jsonl|cfg|toml|ya?ml)\b",
            0,
        ),  # file names
        # short italics are words mentioned as words (*january* ~ *february*, the ending *-ment*,
        # the misspelling *goverment*): corpus tokens, not prose. Bold (**...**) is checked.
        (r"(?<![*\w])\*(?![*\s])[^*\n]{1,40}?(?<!\s)\*(?![*\w])", 0),
        (r"(?<![_\w])_(?![_\s])[^_\n]{1,40}?(?<!\s)_(?![_\w])", 0),
    ]
]
# words, hyphenated compounds kept together (zig-zag): a compound the dictionary or the word list
# knows is accepted whole, otherwise each part is checked
_TOKEN = re.compile(r"[\w'’]+(?:-[\w'’]+)*")
# -ize words whose -ise form is another word, not the British spelling of this one
_IZE_EXCEPTIONS = ("prize", "seize")
_AMERICAN_IZE = re.compile(r"(?i)^(\w+[iy])z(e|es|ed|ing|er|ers|ation|ations|able)$")


_SLASHED = re.compile(r"[^\s()\[\]`'\"*,;:]*/[^\s()\[\]`'\"*,;:]*")
_PATH = re.compile(r"[.~_]\w|^[/~]|/$")   # a slashed chunk is a path when it has one of these


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def prose_only(text: str) -> str:
    """``text`` with everything that is not prose replaced by spaces (newlines kept)."""
    for pattern in _NOT_PROSE:
        text = pattern.sub(_blank, text)
    # paths (data/README.md, notebooks/, ~/.cache) go; word pairs (input/output) stay
    return _SLASHED.sub(lambda m: _blank(m) if _PATH.search(m.group()) else m.group(), text)


def _worth_checking(word: str) -> bool:
    """False for identifiers (a digit or an underscore), acronyms (LSTM, RNNs), single letters
    and words outside the Latin script."""
    return not (len(word) < 2 or "_" in word or any(c.isdigit() for c in word)
                or re.fullmatch(r"[A-Z]{2,}s?", word) or any(ord(c) > 0x24F for c in word))


def words(text: str):
    """Yield (line_number, word) for the words of ``text`` worth checking (1-based lines).

    A hyphenated compound comes as one word (``zig-zag``); :meth:`Checker.problems` splits it
    when it is not known whole.
    """
    text = prose_only(text)
    for line_no, line in enumerate(text.splitlines(), start=1):
        for match in _TOKEN.finditer(line):
            word = re.sub(r"'s$", "", match.group().replace("’", "'").strip("_'"))
            if "-" in word or _worth_checking(word):
                yield line_no, word


@dataclass(frozen=True)
class Text:
    """A piece of prose: its file, the notebook cell it is in (1-based; 0 for a Markdown file)."""

    path: str
    cell: int
    text: str


def texts_of(path: Path) -> list[Text]:
    """The prose of a Markdown file (one Text) or of a notebook (one Text per markdown cell)."""
    rel = (
        path.resolve().relative_to(ROOT).as_posix()
        if path.resolve().is_relative_to(ROOT)
        else str(path)
    )
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return [Text(rel, i, "".join(c["source"]))
                for i, c in enumerate(cells, start=1) if c["cell_type"] == "markdown"]
    return [Text(rel, 0, path.read_text(encoding="utf-8"))]


def course_files() -> list[Path]:
    """Every notebook and Markdown file of the repository (tracked, or new and not ignored)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                              "*.md", "*.ipynb"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        files = [ROOT / line for line in out.splitlines()]
    except (OSError, subprocess.CalledProcessError):   # not a git checkout: walk the tree
        skip = {".venv", ".git", ".cache", "node_modules", ".ipynb_checkpoints", "build"}
        files = [p for p in ROOT.rglob("*") if p.suffix in (".md", ".ipynb")
                 and not skip.intersection(p.relative_to(ROOT).parts)]
    return sorted(p for p in files if p.is_file() and ".ipynb_checkpoints" not in p.parts)


def read_word_list(path: Path = WORD_LIST) -> list[str]:
    """The project's words, one a line; ``#`` starts a comment."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            entries.append(entry)
    return entries


def find_dictionary(language: str = LANGUAGE, required: bool = True) -> Path | None:
    """The folder holding ``<language>.dic`` and ``.aff``. None when there is none and not
    ``required``; otherwise SystemExit(2) naming the fix."""
    dirs = [d for d in os.environ.get("DICPATH", "").split(os.pathsep) if d] + DICTIONARY_DIRS
    for d in dirs:
        folder = Path(d).expanduser()
        if (folder / f"{language}.dic").is_file() and (folder / f"{language}.aff").is_file():
            return folder
    if not required:
        return None
    print(f"spellcheck: the Hunspell dictionary {language} ({language}.dic, {language}.aff) is "
          f"not in any of {dirs}. {HOW_TO_INSTALL_DICTIONARY}", file=sys.stderr)
    raise SystemExit(2)


def _codespell_list(name: str) -> dict[str, list[str]]:
    """codespell's dictionary file ``name`` (``dictionary.txt`` ...): wrong -> its corrections."""
    try:
        text = (importlib.resources.files("codespell_lib") / "data" / name).read_text(
            encoding="utf-8"
        )
    except (ModuleNotFoundError, FileNotFoundError):
        print(
            "spellcheck: the package codespell is missing: `python -m pip install -r "
            "requirements.txt`",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    table = {}
    for line in text.splitlines():
        wrong, sep, right = line.partition("->")
        if sep:
            table[wrong.strip().lower()] = [r.strip() for r in right.split(",") if r.strip()]
    return table


class Codespell:
    """The first pass: codespell's common misspellings, and American spellings of British words."""

    def __init__(self):
        self.misspelt = _codespell_list("dictionary.txt")
        self.american = {}
        for british, americans in _codespell_list("dictionary_en-GB_to_en-US.txt").items():
            for us in americans:
                if us.lower() not in _ALSO_BRITISH:
                    self.american.setdefault(us.lower(), british)

    def problem(self, word: str) -> str | None:
        """None, or what is wrong with ``word`` by codespell's lists."""
        low = word.lower()
        if low in self.misspelt:
            return (
                f"misspelling (codespell): did you mean {' or '.join(self.misspelt[low]) or '?'}?"
            )
        if low in self.american:
            return f"American spelling: the course writes '{self.american[low]}'"
        return None


class Checker:
    """The project word list, codespell's lists, then Hunspell's en_GB dictionary with the
    course's British -ise rule. ``dictionary_dir=None`` looks for the dictionary; when there is
    none, or chunspell is missing, the Hunspell pass is off and ``skipped`` says why."""

    def __init__(self, project_words: list[str], dictionary_dir: Path | None = None):
        self.codespell = Codespell()
        self.project_words = set(project_words)
        self.used: set[str] = set()
        self._suggested: dict[str, str] = {}
        self.hunspell, self.skipped = None, ""
        folder = dictionary_dir or find_dictionary(required=False)
        try:
            import hunspell  # the chunspell package
        except ImportError:
            self.skipped = (
                "the package chunspell is missing (`python -m pip install -r requirements.txt`)"
            )
            return
        if folder is None:
            self.skipped = (
                f"the Hunspell dictionary {LANGUAGE} is not installed. {HOW_TO_INSTALL_DICTIONARY}"
            )
            return
        self.hunspell = hunspell.Hunspell(LANGUAGE, hunspell_data_dir=str(folder))

    def suggestions(self, word: str) -> str:
        """`` (did you mean: a, b?)``, for the first 15 distinct unknown words (Hunspell takes
        about half a second a word)."""
        if word not in self._suggested and len(self._suggested) < 15:
            found = self.hunspell.suggest(word)[:4]
            self._suggested[word] = f" (did you mean: {', '.join(found)}?)" if found else ""
        return self._suggested.get(word, "")

    def in_word_list(self, word: str) -> bool:
        """As a spell checker treats a word list: ``softmax`` also allows ``Softmax``;
        ``PyTorch`` allows only ``PyTorch`` (and all capitals)."""
        for form in (word, word[:1].lower() + word[1:]):
            if form in self.project_words:
                self.used.add(form)
                return True
        return False

    def known(self, word: str) -> bool:
        """True when the word list or (where it runs) Hunspell knows ``word`` as it is."""
        return self.in_word_list(word) or (self.hunspell is not None and self.hunspell.spell(word))

    def problems(self, word: str) -> list[tuple[str, str]]:
        """(word, what is wrong) for ``word``, or for each wrong part of a hyphenated compound."""
        if "-" in word:
            if self.known(word) and not self.codespell.problem(word):
                return []
            return [p for part in word.split("-") if _worth_checking(part)
                    for p in self.problems(part)]
        why = self.problem(word)
        return [(word, why)] if why else []

    def problem(self, word: str) -> str | None:
        """None if ``word`` is correct, else what is wrong with it."""
        if self.in_word_list(word):
            return None
        why = self.codespell.problem(word)
        if why or self.hunspell is None:
            return why
        if not self.hunspell.spell(word):
            return "unknown word" + self.suggestions(word)
        american = _AMERICAN_IZE.match(word)
        if american and not word.lower().startswith(_IZE_EXCEPTIONS):
            british = f"{american.group(1)}s{american.group(2)}"
            if self.hunspell.spell(british):
                return f"American spelling: the course writes '{british}'"
        return None


@dataclass(frozen=True)
class Finding:
    """A wrong word and where it is."""

    path: str
    where: str
    word: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}, {self.where}: '{self.word}': {self.why}"


def check(paths: list[Path], checker: Checker) -> tuple[list[Finding], int]:
    """The wrong words of ``paths`` and the number of words checked."""
    findings, n_words = [], 0
    for path in paths:
        for text in texts_of(path):
            for line_no, word in words(text.text):
                n_words += 1
                for wrong, why in checker.problems(word):
                    where = (
                        f"line {line_no}" if not text.cell else f"cell {text.cell}, line {line_no}"
                    )
                    findings.append(Finding(text.path, where, wrong, why))
    return findings, n_words


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="files to check (default: the course)")
    parser.add_argument("--unknown", action="store_true",
                        help="print only the wrong words, one a line, sorted")
    args = parser.parse_args(argv)
    project_words = read_word_list()
    checker = Checker(project_words)
    paths = args.files or course_files()
    findings, n_words = check(paths, checker)
    if args.unknown:
        print("\n".join(sorted({f.word for f in findings}, key=str.lower)))
        return 1 if findings else 0
    for f in findings:
        print(f)
    if checker.skipped:
        print(f"note: the second pass (Hunspell) was skipped: {checker.skipped} The first pass "
              "(codespell) ran.")
    if not args.files and checker.hunspell is not None:
        unused = sorted(set(project_words) - checker.used, key=str.lower)
        if unused:
            print(
                f"note: {len(unused)} entries of {WORD_LIST.relative_to(ROOT)} are not used by any "
                f"text any more; remove them: {', '.join(unused)}"
            )
    if findings:
        print(
            f"spellcheck: {len(findings)} wrong words in {len(paths)} files ({n_words} words "
            "checked). Correct the spelling; if a word is right (a name, a technical term), add it "
            f"on its own line to {WORD_LIST.relative_to(ROOT)} (alphabetical order), lower-case "
            "unless it is always capitalised."
        )
        return 1
    passes = "codespell" + (
        f" + the {LANGUAGE} dictionary" if checker.hunspell is not None else " only"
    )
    print(f"spellcheck: {n_words} words in {len(paths)} files, all known "
          f"({passes} + {len(project_words)} project words)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
