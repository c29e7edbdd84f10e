"""Real-browser check of the course's static site (``make site-check``, after ``make site``).

The site in ``build/site/`` is served from 127.0.0.1 and opened in headless Chromium with every
other request blocked, as on a computer with the network off. On every page:
  1. no request left this computer (each one to another host is blocked and counts as a
     failure), and no request or script failed;
  2. every image loaded (``complete`` and a natural width), every diagram has alt text, and no
     explorer picture or SVG diagram is blank;
  3. every formula is MathML that the browser lays out (``MathMLElement``), ``+=`` is one
     operator (not "+ ="), and no raw TeX is
     left in the text outside code: no ``$…$`` and no ``\\frac``-like command;
  4. every internal link resolves: its page exists, and so does the element its ``#fragment``
     names;
  5. every ``<details>`` block starts folded and opens;
  6. output lines wrap at spaces, never inside a word (the computed style of every output);
  7. a lesson page shows no solution (no cell tagged ``solution``, no ``*_solution``
     definition); the instructors' pages do show theirs;
  8. previous/next links run through the lessons in order, and none leads from a lesson into the
     instructors' pages; the index lists every lesson with its run time and working time; search
     finds a word of the course, and never an instructors' page.
Then the index and one lesson are opened from the disk (``file://``), with their styles and images,
and every lesson on a phone-sized screen (390 × 844): the page is no wider than the screen, a
formula wider than the screen scrolls sideways (not cut off), and a diagram keeps its own size (its
labels stay legible), scrolling sideways where it is wider than the screen.

Run:  make site && make site-check    (or: python -m tools.site_check [SITE_FOLDER])
Needs Debian's chromium at /usr/bin/chromium, driven by Playwright (no browser is downloaded).
Screenshots: browser-check-artifacts/site/.
"""
from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tools.browser_check import CHROMIUM, IMAGE_PIXELS_JS, assert_not_blank, saved_fallbacks

ROOT = Path(__file__).resolve().parents[1]

SITE = ROOT / "build" / "site"
ARTIFACTS = ROOT / "browser-check-artifacts" / "site"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SEARCH_WORD = "perplexity"

# raw TeX: a $...$ pair in one line of text, or a backslash command (\frac, \mathbf, \alpha)
RAW_TEX = re.compile(r"(?<![\\\w])\$[^$\n]{1,300}?\$|\\[A-Za-z]{2,}")
DIAGRAM = re.compile(r"!\[[^\]]*\]\((?:\./)?figures/([^)\s]+\.svg)\)")
SOLUTION_TRACE = re.compile(r"(?im)\bdef \w+_solution\b|\b\w+_solution\s*=|\breference solution\b")


# ------------------------------------------------------------------ what is wrong (no browser
# needed)
def raw_tex(text: str) -> list[str]:
    """The pieces of ``text`` (a page's prose, code removed) that look like unrendered TeX."""
    return [m.group(0) for m in RAW_TEX.finditer(text)]


def solution_traces(text: str) -> list[str]:
    """The pieces of ``text`` that show a reference solution."""
    return [m.group(0) for m in SOLUTION_TRACE.finditer(text)]


def diagrams_of(notebook: Path) -> list[str]:
    """The file names of the SVG diagrams the markdown of ``notebook`` shows (figures/NN_x.svg)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [m.group(1) for c in cells if c["cell_type"] == "markdown"
            for m in DIAGRAM.finditer("".join(c["source"]))]


def searchable_pages(site: Path) -> set[str]:
    """The pages whose words Sphinx's search index holds (``searchindex.js`` of the site)."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    found: set[int] = set()
    for table in ("terms", "titleterms"):
        for docs in index[table].values():
            found |= set(docs) if isinstance(docs, list) else {docs}
    return {index["docnames"][i] for i in found}


def page_of(url: str, root: str) -> tuple[str, str] | None:
    """(the page's path relative to the site, its fragment) for an internal link ``url`` of the
    site served at ``root`` ("http://127.0.0.1:8000/"), or None for an external link."""
    if not url.startswith(root):
        return None
    parts = urlsplit(url)
    path = unquote(parts.path[len(urlsplit(root).path):]) or "index.html"
    if path.endswith("/"):
        path += "index.html"
    return path, unquote(parts.fragment)


def broken_links(links: dict[str, set[str]], ids: dict[str, set[str]], site: Path,
                 root: str) -> list[str]:
    """The broken internal links. ``links`` maps each page to the absolute URLs it links to,
    ``ids`` each visited page to the ids of its elements. A link is broken when its file is not
    in ``site`` or its fragment is no id of that page."""
    broken = []
    for page, urls in sorted(links.items()):
        for url in sorted(urls):
            target = page_of(url, root)
            if target is None:
                continue
            path, fragment = target
            if not (site / path).is_file():
                broken.append(f"{page}: {url} (no such file)")
            elif fragment and path in ids and fragment not in ids[path]:
                broken.append(f"{page}: {url} (no element with id {fragment!r})")
    return broken


# ------------------------------------------------------------------ in the browser
PAGE_FACTS_JS = """() => {
    const article = document.querySelector('article') || document.body;
    const prose = article.cloneNode(true);
    prose.querySelectorAll('pre, code, math, script, style, .highlight').forEach(e => e.remove());
    const inClosedDetails = (e) => { const d = e.closest('details'); return d && !d.open; };
    const maths = [...document.querySelectorAll('math')];
    const outputs = [...document.querySelectorAll('div.cell_output pre')].map(e => {
        const s = getComputedStyle(e);
        return [s.whiteSpace, s.wordBreak, s.overflowWrap].join(' ');
    });
    return {
        text: prose.textContent,
        allText: article.textContent,
        ids: [...document.querySelectorAll('[id]')].map(e => e.id)
             .concat([...document.querySelectorAll('a[name]')].map(e => e.name)),
        links: [...document.querySelectorAll('a[href]')].map(a => a.href),
        images: [...document.querySelectorAll('img')].map(i => ({
            src: i.currentSrc || i.src, loaded: i.complete && i.naturalWidth > 0, alt: i.alt || '',
            explorer: !!i.closest('.course-explorer-fallback'), svg: /\\.svg$/.test(i.src)})),
        maths: maths.length,
        // "+=" written as two operators, which the browser sets apart as "+ ="
        splitUpdates: [...document.querySelectorAll('math mo')].filter(mo => mo.textContent === '='
            && mo.previousElementSibling
            && /^[+\u2212*-]$/.test(mo.previousElementSibling.textContent)).length,
        mathml: maths.filter(m => m instanceof MathMLElement).length,
        mathHidden: maths.filter(m => { const r = m.getBoundingClientRect();
            return !inClosedDetails(m) && (r.width === 0 || r.height === 0); }).length,
        details: document.querySelectorAll('details').length,
        detailsOpen: document.querySelectorAll('details[open]').length,
        solutionCells: document.querySelectorAll('.tag_solution').length,
        outputs,
        prev: (document.querySelector('a.prev-page') || {}).href || null,
        next: (document.querySelector('a.next-page') || {}).href || null,
    };
}"""

GOOD_WRAP = "pre-wrap normal normal"
PHONE = {"width": 390, "height": 844}

PHONE_FACTS_JS = """() => {
    const article = document.querySelector('article') || document.body;
    // a reader can scroll it: a scroll container that moves (overflow: hidden moves too, by script)
    const scrolls = (el) => {
        if (!['auto', 'scroll'].includes(getComputedStyle(el).overflowX)) return false;
        const before = el.scrollLeft;
        el.scrollLeft = 1e6;
        const moved = el.scrollLeft > before;
        el.scrollLeft = before;
        return moved;
    };
    const formulas = [...article.querySelectorAll('div.math-display')]
        .filter(d => d.scrollWidth > d.clientWidth + 1 && !scrolls(d)).length;
    const diagrams = [...article.querySelectorAll('img[src$=".svg"]')].map(i => {
        const box = i.parentElement;
        return {src: i.src.split('/').pop(),
                scale: i.getBoundingClientRect().width / i.naturalWidth,
                cut: box.scrollWidth > box.clientWidth + 1 && !scrolls(box)}; });
    return {pageWidth: document.documentElement.scrollWidth, screen: window.innerWidth,
            formulas, diagrams};
}"""


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A quiet web server of ``site`` on 127.0.0.1 (a free port), in a daemon thread."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class Offline:
    """Blocks every request that is not to this computer, and remembers it and any failure."""

    def __init__(self):
        self.blocked, self.failed, self.errors = [], [], []

    def route(self, route):
        url = route.request.url
        parts = urlsplit(url)
        if (
            parts.scheme in ("data", "blob", "about")
            or (parts.scheme == "file")
            or parts.hostname in LOCAL_HOSTS
        ):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("internetdisconnected")

    def watch(self, page):
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        page.on(
            "response",
            lambda r: r.status >= 400 and self.failed.append(f"{r.url} (HTTP {r.status})"),
        )
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))


def check_page(page, url: str, name: str, problems: list[str]) -> dict:
    """Open ``url`` and check what one page can tell by itself; returns its facts."""
    page.goto(url)
    page.wait_for_load_state("load")
    facts = page.evaluate(PAGE_FACTS_JS)
    for img in facts["images"]:
        if not img["loaded"]:
            problems.append(f"{name}: image did not load: {img['src']}")
        elif img["svg"] and not img["alt"].strip():
            problems.append(f"{name}: diagram without alt text: {img['src']}")
    for k, handle in enumerate(
        page.query_selector_all(".course-explorer-fallback img, img[src$='.svg']")
    ):
        try:
            assert_not_blank(
                base64.b64decode(page.evaluate(IMAGE_PIXELS_JS, handle)), f"{name}: image {k + 1}"
            )
        except AssertionError as e:
            problems.append(str(e))
    if facts["mathml"] != facts["maths"]:
        problems.append(
            f"{name}: {facts['maths'] - facts['mathml']} formulas are not MathML elements"
        )
    if facts["mathHidden"]:
        problems.append(
            f"{name}: {facts['mathHidden']} visible formulas have no size (not laid out)"
        )
    if facts["splitUpdates"]:
        problems.append(
            f"{name}: {facts['splitUpdates']} formulas show '+=' as '+ =' (two operators)"
        )
    for tex in raw_tex(facts["text"]):
        problems.append(f"{name}: raw TeX in the text: {tex[:80]!r}")
    if facts["detailsOpen"]:
        problems.append(
            f"{name}: {facts['detailsOpen']} of {facts['details']} <details> blocks start open"
        )
    if facts["details"]:
        summary = page.locator("details > summary").first
        summary.scroll_into_view_if_needed()
        summary.click()
        if not page.evaluate("() => document.querySelector('details').open"):
            problems.append(
                f"{name}: the first <details> block does not open when its summary is clicked"
            )
    bad_wrap = [w for w in facts["outputs"] if w != GOOD_WRAP]
    if bad_wrap:
        problems.append(
            f"{name}: {len(bad_wrap)} outputs do not wrap at spaces only "
            f"(white-space, word-break, overflow-wrap: {bad_wrap[0]}; expected {GOOD_WRAP})"
        )
    return facts


def check_site(site: Path) -> int:
    from playwright.sync_api import sync_playwright

    if not (site / "index.html").is_file():
        print(f"site check: {site / 'index.html'} is missing: run `make site` first")
        return 1
    if not Path(CHROMIUM).exists():
        print(
            f"chromium not found at {CHROMIUM}: run `apt-get install chromium` (Debian) or set "
            "CHROMIUM"
        )
        return 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lessons = sorted(p.stem for p in (site / "notebooks").glob("[0-9][0-9]_*.html"))
    solutions = sorted(p.stem for p in (site / "solutions").glob("*.html") if p.stem != "index")
    pages = (
        ["index.html", "search.html", "genindex.html"]
        + [f"notebooks/{s}.html" for s in lessons]
        + (["solutions/index.html"] if (site / "solutions" / "index.html").exists() else [])
        + [f"solutions/{s}.html" for s in solutions]
    )
    server, root = serve(site)
    offline, problems, facts = Offline(), [], {}
    start = time.time()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1300, "height": 1000})
            context.route("**/*", offline.route)
            page = context.new_page()
            offline.watch(page)
            for name in pages:
                facts[name] = check_page(page, root + name, name, problems)
                page.screenshot(path=str(ARTIFACTS / f"{name.replace('/', '_')[:-5]}.png"))
            check_lessons(facts, lessons, root, problems)
            check_solutions(facts, solutions, problems)
            check_index(page, root, lessons, problems)
            check_search(page, root, problems)
            check_from_disk(context, site, lessons, problems)
            check_phone(browser, offline, root, lessons, problems)
            browser.close()
    finally:
        server.shutdown()
    broken = broken_links({n: set(f["links"]) for n, f in facts.items()},
                          {n: set(f["ids"]) for n, f in facts.items()}, site, root)
    problems += [f"broken link: {b}" for b in broken]
    problems += [f"search finds the instructors' page {p} (it must stay out of the search index)"
                 for p in sorted(searchable_pages(site)) if p.startswith("solutions/")]
    problems += [
        f"request to another computer (the site must work offline): {u}" for u in offline.blocked
    ]
    problems += [f"request failed: {u}" for u in offline.failed]
    problems += [f"script error: {e}" for e in offline.errors]
    n_links = sum(len(f["links"]) for f in facts.values())
    n_images = sum(len(f["images"]) for f in facts.values())
    n_maths = sum(f["maths"] for f in facts.values())
    problems = list(
        dict.fromkeys(problems)
    )  # a failed image is reported by the request and the console
    for problem in problems:
        print(f"FAIL {problem}")
    print(
        f"site check: {len(pages)} pages, {n_images} images, {n_maths} formulas, {n_links} links, "
        f"{len(offline.blocked)} requests to other computers, {len(problems)} problems "
        f"({time.time() - start:.0f} s); screenshots in {ARTIFACTS.relative_to(ROOT)}/"
    )
    return 1 if problems else 0


def check_lessons(facts: dict, lessons: list[str], root: str, problems: list[str]) -> None:
    """No solution on a lesson page; every diagram and explorer picture of the lesson's notebook
    on its page; previous/next links in lesson order."""
    order = ["index"] + lessons
    for i, stem in enumerate(lessons):
        name = f"notebooks/{stem}.html"
        f = facts[name]
        notebook = ROOT / "notebooks" / f"{stem}.ipynb"
        if notebook.exists():
            shown = [Path(urlsplit(img["src"]).path).name for img in f["images"] if img["svg"]]
            lost = [d for d in diagrams_of(notebook) if d not in shown]
            if lost:
                problems.append(f"{name}: diagrams of the notebook missing from the page: {lost}")
            pictures = sum(img["explorer"] for img in f["images"])
            if pictures != saved_fallbacks(notebook):
                problems.append(
                    f"{name}: {pictures} explorer pictures, the notebook has "
                    f"{saved_fallbacks(notebook)}"
                )
        if f["solutionCells"] or solution_traces(f["allText"]):
            problems.append(f"{name}: shows a solution ({f['solutionCells']} solution cells; "
                            f"{solution_traces(f['allText'])[:3]})")
        prev = page_of(f["prev"] or "", root)
        if not prev or Path(prev[0]).stem != order[i]:
            problems.append(f"{name}: its 'previous' link goes to {f['prev']}, expected {order[i]}")
        nxt = page_of(f["next"] or "", root)
        if i + 1 < len(lessons) and (not nxt or Path(nxt[0]).stem != lessons[i + 1]):
            problems.append(
                f"{name}: its 'next' link goes to {f['next']}, expected {lessons[i + 1]}"
            )
        elif i + 1 == len(lessons) and f["next"]:
            problems.append(f"{name}: the last lesson's 'next' link goes to {f['next']}")


def check_solutions(facts: dict, solutions: list[str], problems: list[str]) -> None:
    """Each instructors' page shows the solutions it holds."""
    for stem in solutions:
        f = facts[f"solutions/{stem}.html"]
        if not f["solutionCells"]:
            problems.append(f"solutions/{stem}.html: shows no cell tagged 'solution'")


def check_index(page, root: str, lessons: list[str], problems: list[str]) -> None:
    """The index's lesson table: one row per lesson, a link to it, its run time and working time."""
    page.goto(root + "index.html")
    rows = page.evaluate("""() => [...document.querySelectorAll('article table tbody tr')].map(r =>
        ({cells: [...r.querySelectorAll('td')].map(td => td.innerText.trim()),
          href: (r.querySelector('a') || {}).href || ''}))""")
    if len(rows) != len(lessons):
        problems.append(
            f"index.html: the lesson table has {len(rows)} rows for {len(lessons)} lessons"
        )
    for row, stem in zip(rows, lessons):
        if not row["href"].endswith(f"notebooks/{stem}.html"):
            problems.append(f"index.html: the row of lesson {stem[:2]} links to {row['href']!r}")
        if len(row["cells"]) != 4 or not all(row["cells"]):
            problems.append(
                f"index.html: the row of lesson {stem[:2]} is not # | lesson | run time | working "
                f"time: {row['cells']}"
            )
        elif "not stated" in " ".join(row["cells"][2:]):
            problems.append(
                f"index.html: lesson {stem[:2]} does not state its times: {row['cells']}"
            )


def check_search(page, root: str, problems: list[str]) -> None:
    """Sphinx's search (its index is a script of the site) finds a word of the course offline."""
    page.goto(f"{root}search.html?q={SEARCH_WORD}")
    try:
        page.wait_for_selector("#search-results li", timeout=30_000)
    except Exception:
        problems.append(f"search.html: searching {SEARCH_WORD!r} found nothing within 30 s")
        return
    hits = page.evaluate(
        "() => [...document.querySelectorAll('#search-results li a')].map(a => a.href)"
    )
    if not any("/notebooks/" in h for h in hits):
        problems.append(f"search.html: no lesson among the results for {SEARCH_WORD!r}: {hits[:5]}")
    if any("/solutions/" in h for h in hits):
        problems.append(
            f"search.html: a result for {SEARCH_WORD!r} leads into the instructors' solutions"
        )
    page.screenshot(path=str(ARTIFACTS / "search_results.png"))


def check_phone(
    browser, offline: Offline, root: str, lessons: list[str], problems: list[str]
) -> None:
    """Every lesson on a phone-sized screen: nothing wider than the screen but what scrolls, no
    formula cut off, every diagram at its own size."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.route("**/*", offline.route)
    page = context.new_page()
    for k, stem in enumerate(lessons):
        name = f"notebooks/{stem}.html"
        page.goto(root + name)
        page.wait_for_load_state("load")
        facts = page.evaluate(PHONE_FACTS_JS)
        if facts["pageWidth"] > facts["screen"] + 1:
            problems.append(f"{name} on a phone: the page is {facts['pageWidth']} px wide on a "
                            f"{facts['screen']} px screen")
        if facts["formulas"]:
            problems.append(f"{name} on a phone: {facts['formulas']} wide formulas are cut off "
                            "(they neither fit nor scroll)")
        for d in facts["diagrams"]:
            if d["scale"] < 0.99 or d["cut"]:
                problems.append(f"{name} on a phone: the diagram {d['src']} is shown at "
                                f"{d['scale']:.0%} of its size" + (", cut off" if d["cut"] else ""))
        if k == 0:
            page.screenshot(path=str(ARTIFACTS / f"phone_{stem}.png"))
    context.close()


def check_from_disk(context, site: Path, lessons: list[str], problems: list[str]) -> None:
    """The index and the first lesson read straight from the disk: styles applied, images loaded."""
    page = context.new_page()
    for rel in ["index.html"] + [f"notebooks/{s}.html" for s in lessons[:1]]:
        page.goto((site / rel).resolve().as_uri())
        page.wait_for_load_state("load")
        state = page.evaluate("""() => ({sheets: document.styleSheets.length,
            themed: getComputedStyle(document.querySelector('.sidebar-drawer') || document.body)
                .display !== 'inline',
            images: [...document.querySelectorAll('img')]
                .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)})""")
        if not state["sheets"] or not state["themed"]:
            problems.append(f"file://{rel}: the page's styles did not load from the disk")
        problems += [f"file://{rel}: image did not load: {src}" for src in state["images"]]
    page.close()


if __name__ == "__main__":
    sys.exit(check_site(Path(sys.argv[1]) if len(sys.argv) > 1 else SITE))
