"""Real-browser check: every notebook in JupyterLab, in headless Chromium, and its HTML export.

For each notebook (all of notebooks/ by default, or those named on the command line):
  1. open it in JupyterLab (a copy in a temporary folder, so nothing in the repository
     is autosaved over) as a reader who cloned it first sees it: saved outputs, untrusted,
     no kernel state. Every explorer's static fallback (helpers.infra.widgets) must be
     visible there, its image loaded and not blank;
  2. run all cells, wait until the kernel is idle; fail on any error output;
  3. fail on any blank plot: every visible image in the outputs must have loaded and must
     not be a single flat colour (this is the blank-first-plot bug of JupyterLab 4.6 with
     ipykernel 7 that ``interact`` plots show; headless nbval cannot see it);
  4. every explorer widget renders, and its fallback is hidden (no duplicate image: each
     explorer's cell shows exactly one picture per explorer, the live one);
  5. for every explorer widget: move its first slider (or pick another option of its first
     dropdown), press its run button if it has one, and verify that both the printed
     summary and the plot change, and that the new plot is not blank;
  6. export the committed notebook with ``jupyter nbconvert --to html --embed-images``, open
     the HTML in Chromium, and check that every explorer's fallback image is visible and not
     blank, and that no ``VBox(`` or ``0step [00:00`` text is shown.

Opening a notebook must change nothing in it (JupyterLab would autosave the change): the kernel
name and everything else JupyterLab rewrites on opening are as committed.

``make browser-check`` checks two notebooks at a time (``--jobs 2``), as ``make test`` runs two
at a time: one JupyterLab serves both, each notebook gets its own Chromium and workspace.

Run:  make browser-check   (or: python -m tools.browser_check [--jobs N]
notebooks/01_feedforward.ipynb) Needs Debian's chromium at /usr/bin/chromium (apt-get install
chromium); Playwright drives it, no browser is downloaded. Screenshots land in
browser-check-artifacts/: <name>_saved.png (before running), <name>.png (after running and
exercising the explorers), <name>_html_export.png (the whole HTML export),
<name>_explorerK_after.png (plots)."""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "browser-check-artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
RUN_TIMEOUT_S = 900
WIDGET_TIMEOUT_S = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LAB_SETTINGS = {
    # render every cell (no virtualisation), so all outputs are in the page to be checked
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # no "get notified about news?" toast over the notebook
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def start_lab(root_dir: Path, port: int, token: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           f"--ServerApp.token={token}", f"--ServerApp.root_dir={root_dir}",
           "--LabApp.expose_app_in_browser=True",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    settings_dir = root_dir.parent / f"{root_dir.name}-settings"
    for name, value in LAB_SETTINGS.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings_dir),
               JUPYTERLAB_WORKSPACES_DIR=str(root_dir.parent / f"{root_dir.name}-workspaces"))
    log = open(ARTIFACTS / "jupyterlab.log", "w", encoding="utf-8")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited early; see {ARTIFACTS / 'jupyterlab.log'}"
                ) from None
            time.sleep(1)
    proc.terminate()
    raise RuntimeError("JupyterLab did not start within 120 s")


def shutdown_kernels(port: int, token: str, name: str) -> None:
    """Stop the kernels of the notebook ``name`` (another notebook may be running beside it)."""
    base = f"http://127.0.0.1:{port}/api/sessions"
    with urllib.request.urlopen(f"{base}?token={token}") as r:
        sessions = json.load(r)
    for s in sessions:
        if Path(s.get("path", "")).name == name:
            req = urllib.request.Request(f"{base}/{s['id']}?token={token}", method="DELETE")
            urllib.request.urlopen(req)


def image_stats(png: bytes) -> tuple[float, float]:
    """(pixel standard deviation, fraction of pixels differing from the most common colour)."""
    a = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    values, counts = np.unique(a.astype(np.uint8), return_counts=True)
    return float(a.std()), float(1 - counts.max() / a.size)


IMAGE_PIXELS_JS = """(img) => {
    // the decoded image itself, drawn on a canvas: independent of scrolling and paint timing
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, c.width, c.height);
    ctx.drawImage(img, 0, 0);
    return c.toDataURL('image/png').split(',')[1];
}"""


def image_png(page, locator) -> bytes:
    """PNG bytes of what an <img> element shows (after it has loaded)."""
    import base64

    locator.scroll_into_view_if_needed()
    handle = locator.element_handle()
    page.wait_for_function("(el) => el.complete && el.naturalWidth > 0", arg=handle, timeout=30_000)
    return base64.b64decode(page.evaluate(IMAGE_PIXELS_JS, handle))


def assert_not_blank(png: bytes, what: str) -> None:
    std, ink = image_stats(png)
    if std < 2 or ink < 0.005:
        raise AssertionError(f"{what} looks blank (pixel std {std:.2f}, non-background {ink:.2%})")


NOTEBOOK_STATE_JS = """() => {
    const w = window.jupyterapp.shell.currentWidget;
    if (!w || !w.content || !w.content.model) return null;
    const cells = w.content.model.cells, counts = [], errors = [];
    for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type !== 'code') continue;
        counts.push(c.executionCount);
        const outs = c.outputs.toJSON();
        for (const o of outs) {
            if (o.output_type === 'error') errors.push(`cell ${i + 1}: ${o.ename}: ${o.evalue}`);
        }
    }
    const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
    // cells queued or running show "[*]" (all cells are rendered: windowingMode none). The
    // kernel status alone is not enough: with ipykernel 7, widget messages handled on a
    // subshell report "idle" while the main shell is still running a cell.
    const pending = [...w.content.node.querySelectorAll('.jp-InputArea-prompt')]
        .filter(p => p.textContent.includes('*')).length;
    return {counts, errors, pending, status: kernel ? kernel.status : null};
}"""


def wait_until_run(page, nb_name: str) -> None:
    """Wait until every code cell of the notebook model has an execution count and the
    kernel is idle; fail at once when a cell raised. (The model is read rather than the
    DOM, which JupyterLab virtualises for long notebooks.)"""
    deadline = time.time() + RUN_TIMEOUT_S
    last, idle_since, resumes = None, None, 0
    while time.time() < deadline:
        state = page.evaluate(NOTEBOOK_STATE_JS)
        if os.environ.get("BROWSER_CHECK_DEBUG"):
            print("   ", state, flush=True)
        if state:
            if state["errors"]:
                raise AssertionError(
                    f"{nb_name}: a cell raised in the browser: {state['errors'][0]}"
                )
            if (
                state["counts"]
                and all(c is not None for c in state["counts"])
                and state["pending"] == 0
            ):
                return
            # Under heavy load JupyterLab's run-all has been seen to stop after a cell with the
            # kernel idle and no error (a dropped websocket message). Resume from the first cell
            # that has not run, at most twice, and say so.
            if state["pending"] == 0 and state["status"] == "idle" and state["counts"] == last:
                idle_since = idle_since or time.time()
                if time.time() - idle_since > 20 and resumes < 2:
                    first = state["counts"].index(None)
                    print(
                        f"    {nb_name}: run-all stalled before code cell {first + 1}; resuming "
                        "there",
                        flush=True,
                    )
                    page.evaluate(
                        """(k) => { const w = window.jupyterapp.shell.currentWidget;
                        let seen = -1;
                        for (let i = 0; i < w.content.model.cells.length; i++) {
                            if (w.content.model.cells.get(i).type === 'code' && ++seen === k) {
                                w.content.activeCellIndex = i;
                                break;
                            }
                        }
                        window.jupyterapp.commands.execute('notebook:run-all-below'); }""",
                        first,
                    )
                    resumes, idle_since = resumes + 1, None
            else:
                idle_since = None
            last = state["counts"]
        time.sleep(2)
    raise AssertionError(f"{nb_name}: cells still running after {RUN_TIMEOUT_S} s")


def check_outputs(page, nb_name: str) -> int:
    """No error outputs and no blank images; returns the number of images checked."""
    errors = page.evaluate("""() => [...document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
            .map(e => e.textContent).filter(t => /Traceback|Error\\b/.test(t))""")
    if errors:
        raise AssertionError(f"{nb_name}: error output in the browser:\n{errors[0][:2000]}")
    imgs = page.locator(".jp-OutputArea-output img:visible")   # hidden explorer fallbacks excluded
    n = imgs.count()
    for i in range(n):
        assert_not_blank(image_png(page, imgs.nth(i)), f"{nb_name}: image {i + 1} of {n}")
    return n


FALLBACKS_JS = """() => {
    const visible = (el) => el.getClientRects().length > 0
        && getComputedStyle(el).visibility !== 'hidden';
    return [...document.querySelectorAll('.course-explorer-fallback')].map(el => ({
        visible: visible(el), images: el.querySelectorAll('img').length}));
}"""

EXPLORER_CELLS_JS = """() => {
    // per code cell that holds live explorers: how many, and how many images its outputs show
    const visible = (el) => el.getClientRects().length > 0
        && getComputedStyle(el).visibility !== 'hidden';
    const cells = [...document.querySelectorAll('.jp-CodeCell')];
    return cells.filter(c => c.querySelector('.course-explorer')).map(c => ({
        explorers: c.querySelectorAll('.course-explorer').length,
        visible_explorers: [...c.querySelectorAll('.course-explorer')].filter(visible).length,
        visible_images:
            [...c.querySelectorAll('.jp-OutputArea-output img')].filter(visible).length}));
}"""


def saved_fallbacks(path: Path) -> int:
    """How many explorer fallbacks the saved notebook at ``path`` holds."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum("course-explorer-fallback" in "".join(o.get("data", {}).get("text/html", ""))
               for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []))


def check_fallbacks_shown(page, where: str, expected: int) -> None:
    """``expected`` explorer fallbacks are in the page, each visible with a non-blank image."""
    found = page.evaluate(FALLBACKS_JS)
    if len(found) != expected:
        raise AssertionError(
            f"{where}: {len(found)} explorer fallbacks in the page, the notebook holds {expected}"
        )
    hidden = [i + 1 for i, f in enumerate(found) if not f["visible"] or f["images"] != 1]
    if hidden:
        raise AssertionError(
            f"{where}: explorer fallback(s) {hidden} not visible (or without their image)"
        )
    imgs = page.locator(".course-explorer-fallback img")
    for i in range(imgs.count()):
        assert_not_blank(image_png(page, imgs.nth(i)), f"{where}: fallback image {i + 1}")


def check_live_explorers(page, nb_name: str, n_explorers: int) -> None:
    """Every live explorer is visible, and its fallback is not: one picture per explorer."""
    found = page.evaluate(FALLBACKS_JS)
    if len(found) != n_explorers:
        raise AssertionError(
            f"{nb_name}: {n_explorers} live explorers but {len(found)} fallbacks were written"
        )
    shown = [i + 1 for i, f in enumerate(found) if f["visible"]]
    if shown:
        raise AssertionError(
            f"{nb_name}: the static fallback of explorer(s) {shown} is visible beside the live "
            "widget (a duplicate image)"
        )
    for k, cell in enumerate(page.evaluate(EXPLORER_CELLS_JS)):
        if cell["visible_explorers"] != cell["explorers"]:
            raise AssertionError(
                f"{nb_name}: explorer cell {k + 1}: "
                f"{cell['explorers'] - cell['visible_explorers']} live explorer(s) not visible"
            )
        if cell["visible_images"] != cell["explorers"]:
            raise AssertionError(
                f"{nb_name}: explorer cell {k + 1} shows {cell['visible_images']} images for "
                f"{cell['explorers']} explorer(s) (expected one each: the live plot)"
            )


def check_html_export(page, nb: Path) -> str:
    """Export the committed notebook ``nb`` to HTML (plain nbconvert, images embedded), open it,
    check the explorer fallbacks and dead widget text, and screenshot the whole page."""
    from nbconvert import HTMLExporter  # what `jupyter nbconvert --to html --embed-images`
    from traitlets.config import Config  # runs, without starting another interpreter

    out = ARTIFACTS / f"{nb.stem}.html"
    html, _ = HTMLExporter(config=Config({"HTMLExporter": {"embed_images": True}})).from_filename(
        str(nb)
    )
    out.write_text(html, encoding="utf-8")
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / f"{nb.stem}_html_export.png"), full_page=True)
    expected = saved_fallbacks(nb)
    check_fallbacks_shown(page, f"{nb.name} HTML export", expected)
    text = page.evaluate("() => document.body.innerText")
    for dead in ("VBox(", "0step [00:00"):
        if dead in text:
            raise AssertionError(
                f"{nb.name} HTML export shows {dead!r} (a widget or progress bar without a "
                "fallback)"
            )
    return f"HTML export: {expected} explorer images visible and non-blank"


def settled_text(page, text, quiet_s: float = 2.0) -> str:
    """The explorer's summary once its redraws are over: three key presses queue three renders,
    and an image read while the widget swaps in the next one is blank for a moment. Waits until
    the kernel is idle and the summary has not changed for ``quiet_s`` seconds."""
    deadline, last, since = time.time() + WIDGET_TIMEOUT_S, None, time.time()
    while time.time() < deadline:
        current = text.inner_text()
        state = page.evaluate(NOTEBOOK_STATE_JS)
        if current != last:
            last, since = current, time.time()
        elif state and state["status"] == "idle" and time.time() - since >= quiet_s:
            return current
        page.wait_for_timeout(250)
    return last


def exercise_explorer(page, box, nb_name: str, k: int) -> str:
    """Change one control of explorer ``k``, run it, check summary and plot change."""
    text = box.locator(".course-explorer-text")
    plot = box.locator(".course-explorer-plot")
    before_text = text.inner_text()
    before_png = image_png(page, plot)
    assert_not_blank(before_png, f"{nb_name}: explorer {k} plot before interaction")
    sliders = box.locator(".noUi-handle")
    dropdowns = box.locator("select")
    if sliders.count():
        handle = sliders.first
        handle.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        changed = "slider"
    elif dropdowns.count():
        sel = dropdowns.first
        options = sel.locator("option").all_inner_texts()
        # compare labels: an <option>'s value attribute need not be its label (ipywidgets uses
        # indices)
        current = sel.evaluate("el => el.options[el.selectedIndex].text")
        sel.select_option(label=next(o for o in options if o.strip() != current.strip()))
        changed = "dropdown"
    else:
        raise AssertionError(f"{nb_name}: explorer {k} has neither a slider nor a dropdown")
    buttons = box.locator("button")
    if buttons.count():
        page.wait_for_timeout(500)
        buttons.first.click()
    page.wait_for_function(
        "([el, old]) => el.innerText !== old",
        arg=[text.element_handle(), before_text],
        timeout=WIDGET_TIMEOUT_S * 1000,
    )
    after_text = settled_text(page, text)
    if after_text.startswith("error:"):
        raise AssertionError(
            f"{nb_name}: explorer {k} failed after moving its {changed}: {after_text}"
        )
    page.wait_for_timeout(1000)  # let the new image arrive and decode
    for _ in range(5):  # a plot read while the widget swaps in the next one is blank for a moment
        after_png = image_png(page, plot)
        std, ink = image_stats(after_png)
        if std >= 2 and ink >= 0.005:
            break
        page.wait_for_timeout(1000)
    assert_not_blank(after_png, f"{nb_name}: explorer {k} plot after moving its {changed}")
    if hashlib.sha256(after_png).digest() == hashlib.sha256(before_png).digest():
        raise AssertionError(
            f"{nb_name}: explorer {k} plot did not change after moving its {changed}"
        )
    (ARTIFACTS / f"{Path(nb_name).stem}_explorer{k}_after.png").write_bytes(after_png)
    before, after = before_text.strip()[:60], after_text.strip()[:60]
    return f"explorer {k}: {changed} moved, summary {before!r} -> {after!r}"


OPENED_JS = """() => { const w = window.jupyterapp.shell.currentWidget;
    if (!w || !w.context) return null;
    return {dirty: w.context.model.dirty, kernel: w.sessionContext.kernelDisplayName}; }"""


def check_notebook(page, port: int, token: str, nb: Path) -> None:
    t0 = time.time()

    def step(msg):
        print(f"  {nb.name} [{time.time() - t0:5.0f} s] {msg}", flush=True)

    step("opening in JupyterLab")
    # a workspace of its own, so that notebooks checked side by side do not share a layout
    page.goto(f"http://127.0.0.1:{port}/lab/workspaces/{nb.stem}/tree/{nb.name}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function(
        "() => window.jupyterapp && document.querySelector('.jp-Notebook-ExecutionIndicator') && "
        "document.querySelector('.jp-Notebook-ExecutionIndicator').getAttribute('data-status') === "
        "'idle'",
        timeout=120_000,
    )
    page.wait_for_timeout(2000)
    opened = page.evaluate(OPENED_JS)
    if not opened or opened["dirty"]:
        raise AssertionError(
            f"{nb.name}: opening it in JupyterLab changed it ({opened}): JupyterLab "
            "would autosave it; is its kernel name what tools/clean_notebooks.py writes?"
        )
    expected = saved_fallbacks(Path(nb))
    check_fallbacks_shown(page, f"{nb.name} as saved (untrusted)", expected)
    page.screenshot(path=str(ARTIFACTS / f"{nb.stem}_saved.png"), full_page=False)
    step(f"saved view: {expected} explorer fallbacks visible; running all cells")
    # start from empty outputs, so every prompt must become a fresh execution count
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.wait_for_function(
        "() => "
        f"{{ const s = ({NOTEBOOK_STATE_JS})(); return s && s.counts.every(c => c === null); }}",
        timeout=30_000,
    )
    # not awaited: the command's promise settles only when every cell has finished
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_timeout(3000)
    wait_until_run(page, nb.name)
    step("all cells ran; checking outputs")
    n_images = check_outputs(page, nb.name)
    boxes = page.locator(".course-explorer")
    n_explorers = boxes.count()
    if n_explorers == 0:
        raise AssertionError(f"{nb.name}: no explorer widget rendered (expected at least one)")
    check_live_explorers(page, nb.name, n_explorers)
    step(
        f"{n_images} images checked; {n_explorers} live explorers, fallbacks hidden; exercising "
        "them"
    )
    lines = [exercise_explorer(page, boxes.nth(k), nb.name, k + 1) for k in range(n_explorers)]
    check_outputs(page, nb.name)
    page.screenshot(path=str(ARTIFACTS / f"{nb.stem}.png"), full_page=False)
    print(
        f"PASS {nb.name}: {n_images} images non-blank, {n_explorers} explorers, "
        f"{time.time() - t0:.0f} s"
    )
    for line in lines:
        print("     ", line)


def check_notebooks(notebooks: list[Path], port: int, token: str, work: Path) -> list[str]:
    """Check each notebook (its copy in ``work``, served by the JupyterLab at ``port``) in one
    headless Chromium; returns one line per failed notebook."""
    from playwright.sync_api import sync_playwright

    failures = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        for nb in notebooks:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            try:
                check_notebook(page, port, token, work / nb.name)
                print("     ", check_html_export(page, Path(nb).resolve()))
            except Exception as e:  # report every notebook, fail at the end
                page.screenshot(path=str(ARTIFACTS / f"{nb.stem}_FAILED.png"))
                failures.append(f"{nb.name}: {e}")
                print(f"FAIL {nb.name}: {e}")
            finally:
                page.evaluate("() => window.jupyterapp && "
                              "window.jupyterapp.commands.execute('application:close-all')")
                page.close()
                shutdown_kernels(port, token, nb.name)
        browser.close()
    return failures


def check_side_by_side(
    notebooks: list[Path], jobs: int, port: int, token: str, work: Path
) -> list[str]:
    """Check ``jobs`` notebooks at a time, each in a process of its own (its own Chromium) against
    the one JupyterLab; the largest notebooks first. Each one's report is printed when it ends."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    def one(nb: Path) -> tuple[Path, subprocess.CompletedProcess]:
        cmd = [
            sys.executable,
            "-m",
            "tools.browser_check",
            "--lab",
            str(port),
            token,
            str(work),
            str(nb),
        ]
        return nb, subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)

    failures = []
    order = sorted(notebooks, key=lambda nb: -Path(nb).stat().st_size)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for done in as_completed([pool.submit(one, nb) for nb in order]):
            nb, run = done.result()
            print(run.stdout.rstrip("\n").rsplit("\nbrowser check:", 1)[0], flush=True)
            if run.returncode != 0:
                fail = [line[5:] for line in run.stdout.splitlines() if line.startswith("FAIL ")]
                failures += fail or [
                    f"{nb.name}: exit {run.returncode}: {run.stderr.strip()[-500:]}"
                ]
    return failures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.browser_check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every lesson")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks checked at a time")
    parser.add_argument("--lab", nargs=3, metavar=("PORT", "TOKEN", "FOLDER"),
                        help="use this running JupyterLab and its copies (what --jobs runs)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        print("no notebooks to check")
        return 1
    if not Path(CHROMIUM).exists():
        print(
            f"chromium not found at {CHROMIUM}: run `apt-get install chromium` (Debian) or set "
            "CHROMIUM"
        )
        return 1
    ARTIFACTS.mkdir(exist_ok=True)
    if args.lab:
        port, token, work = int(args.lab[0]), args.lab[1], Path(args.lab[2])
        failures = check_notebooks(notebooks, port, token, work)
        print(f"browser check: {len(notebooks) - len(failures)} passed, {len(failures)} failed")
        return 1 if failures else 0
    start = time.time()
    work = Path(tempfile.mkdtemp(prefix="browser-check-"))
    for nb in notebooks:  # copies, so that nothing in the repository is autosaved over
        shutil.copyfile(nb, work / nb.name)
    if (ROOT / "notebooks" / "figures").is_dir():   # the diagrams the markdown shows
        shutil.copytree(ROOT / "notebooks" / "figures", work / "figures")
    port, token = free_port(), hashlib.sha1(os.urandom(16)).hexdigest()
    lab = start_lab(work, port, token)
    try:
        if args.jobs > 1 and len(notebooks) > 1:
            failures = check_side_by_side(notebooks, args.jobs, port, token, work)
        else:
            failures = check_notebooks(notebooks, port, token, work)
    finally:
        lab.terminate()
        lab.wait(timeout=30)
        for d in (
            work,
            work.parent / f"{work.name}-settings",
            work.parent / f"{work.name}-workspaces",
        ):
            shutil.rmtree(d, ignore_errors=True)
    for failure in failures:
        print(f"  failed: {failure}")
    print(f"browser check: {len(notebooks) - len(failures)} passed, {len(failures)} failed "
          f"({time.time() - start:.0f} s, {args.jobs} at a time)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
