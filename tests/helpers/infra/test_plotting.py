"""helpers.infra.plotting: the course's one plot style, and every plotting function of ``helpers``
(found by its call to ``new_figure``; each needs a case in ``CASES``) drawn on tiny inputs and
checked by :func:`tools.figure_checks.figure_problems`.
"""
import ast
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from helpers.course.char_live import CharSplit
from helpers.course.data import load_wsd_sentences
from helpers.course.models import load_model
from helpers.course.vector_studies import METRICS, ScalingGrid
from helpers.course.word_lms import plot_gradient_flow
from helpers.infra import plotting
from helpers.infra.live_training import LiveTraining, ScoreTraining
from helpers.infra.plotting import (
    COLOURS,
    GREY,
    heatmap,
    log_axis,
    new_figure,
    plot_curves,
    set_labels,
    tex_problem,
)
from helpers.lessons import (
    lesson01,
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
)
from helpers.lib.bert import BertConfig, TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.decoder import NumpyDecoderLM
from helpers.lib.recurrent import NumpyLM
from helpers.lib.text import Vocab
from tests.helpers.lessons.test_lesson06 import corpus as lesson06_corpus
from tests.lesson_text import NOTEBOOKS, code_cells, load, source
from tools.figure_checks import ALLOWED_COLOURS, figure_problems

ROOT = Path(__file__).resolve().parents[3]


# ---------------------------------------------------------------- the helpers
def test_style_colours_and_sizes():
    from tools.diagrams.svg import PALETTE
    okabe_ito = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"}
    assert {c.upper() for c in COLOURS.values()} == okabe_ito and PALETTE is plotting.PALETTE
    assert okabe_ito | {"#F0E442"} <= set(PALETTE.values())          # the diagrams' too
    assert PALETTE["sky_light"] == "#CCE9F8"      # 30 % of #56B4E9 on white, exact integers
    assert GREY.upper() in ALLOWED_COLOURS
    # lines differ in line style too, so that they survive greyscale
    assert len(set(map(str, plotting.LINESTYLES))) == len(COLOURS) == len(set(plotting.MARKERS))
    assert matplotlib.rcParams["image.cmap"] == plotting.SEQUENTIAL_CMAP
    assert not matplotlib.rcParams["text.usetex"]
    one, ax = new_figure()
    for k in range(3):                                   # what unstyled calls get
        ax.plot([0, 1], [k, k + 1])
    assert [line.get_color() for line in ax.get_lines()] == list(COLOURS.values())[:3]
    two, axes = new_figure(ncols=2)
    assert len(axes) == 2
    width, height = plotting.PANEL_WIDTH, plotting.PANEL_HEIGHT
    assert one.get_size_inches() == pytest.approx((width[1], height))
    assert two.get_size_inches() == pytest.approx((2 * width[2], height))
    with pytest.raises(ValueError, match="at least one row"):
        new_figure(ncols=0)


@pytest.mark.parametrize("text, refused", [
    *((t, True) for t in ("h_{t-1}", r"\alpha = 0.75", r"||dL/dh_{T-k}||", "cost in $",
                          r"$\frac{1}{$")),
    *((t, False) for t in ("$h_{t-1}$", r"$\|\partial L/\partial h\|$ (log scale)", "‖A‖_F",
                           "x_max = 100, α", "time (s)"))])
def test_raw_tex_is_refused_and_mathtext_and_unicode_are_fine(text, refused):
    assert (tex_problem(text) is not None) == refused
    _, ax = new_figure()
    if refused:
        with pytest.raises(ValueError):
            set_labels(ax, "title", text, "y")


def test_set_labels_with_units():
    _, ax = new_figure()
    set_labels(ax, "Loss", "time", "loss", x_unit="s", y_unit="nats")
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("Loss", "time (s)", "loss (nats)")


@pytest.mark.parametrize("lo, hi, base",
                         [(20, 600, 10), (1e-9, 1.0, 10), (3.0, 8.0, 10), (16, 512, 2)])
def test_log_axis_labels_major_ticks_only(lo, hi, base):
    fig, ax = new_figure()
    x = np.geomspace(lo, hi, 50)
    ax.plot(x, np.log(x))
    log_axis(ax, "x", base=base)
    set_labels(ax, "a log axis", "x", "log x")
    fig.canvas.draw()
    minor = [t.get_text() for t in ax.xaxis.get_minorticklabels() if t.get_text()]
    major = [t.get_text() for t in ax.xaxis.get_ticklabels() if t.get_text()]
    assert minor == [] and len(major) >= 2, (minor, major)
    assert figure_problems(fig) == []


def test_heatmap_has_a_colour_bar_and_a_uniform_map():
    fig, ax = new_figure()
    im = heatmap(ax, np.arange(6.0).reshape(2, 3), title="t", x="column", y="row",
                 colour_label="value", xticklabels=["a", "b", "c"], yticklabels=["r1", "r2"])
    assert im.get_cmap().name == plotting.SEQUENTIAL_CMAP and im.colorbar is not None
    assert figure_problems(fig) == []
    _, ax = new_figure()
    signed = heatmap(ax, [[-1.0, 2.0]], title="t", x="x", y="y", colour_label="v", signed=True)
    assert signed.get_cmap().name == plotting.DIVERGING_CMAP and signed.get_clim() == (-2.0, 2.0)
    with pytest.raises(ValueError, match="label"):
        heatmap(ax, [[1.0]], title="t", x="x", y="y")
    with pytest.raises(ValueError, match="3 columns"):
        heatmap(ax, np.ones((2, 3)), title="t", x="x", y="y", colour_label="v", xticklabels=["a"])
    with pytest.raises(ValueError, match="2-D"):
        heatmap(ax, np.ones(3), title="t", x="x", y="y", colour_label="v")


def test_plot_curves():
    fig, ax = new_figure()
    plot_curves(ax, {"train": [3, 2, 1.5, 1.2], "valid": [3.1, 2.4, 2.2, 2.3]}, "Loss", "epoch",
                "loss (nats)", logy=True)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["train", "valid"]
    assert lines[0].get_linestyle() != lines[1].get_linestyle()      # greyscale-safe
    assert figure_problems(fig) == []
    with pytest.raises(ValueError, match="no curves"):
        plot_curves(ax, {}, "t", "x", "y")


# ---------------------------------------------------------------- every plotting function
def _case_trained_gradient_flow():
    rng = np.random.default_rng(0)
    flows = {name: 10 ** np.cumsum(-rng.random((8, 12)) * d, axis=1)
             for name, d in (("RNN", 0.5), ("LSTM", 0.1))}
    return plot_gradient_flow(flows, "Gradient reaching k words back")


def _case_live_training_figure():
    losses = iter(np.linspace(4.0, 2.0, 50))
    run = LiveTraining(lambda: next(losses), lambda: 2.5, eval_every=2, name="model",
                       unit="nats/char", baselines={"trigram": 2.0})
    return run.train(6, progress=False).figure("Training a model")


def _char_corpus():
    vocab = Vocab(list(" abcdefghijklmnopqrstuvwxyz.\n"), specials=())
    rng = np.random.default_rng(0)
    ids = lambda n: rng.integers(0, len(vocab), n).astype(np.int64)  # noqa: E731
    return CharSplit(vocab, ids(20_000), ids(10_000), ids(10_000), "a work", "another work")


CHARS = _char_corpus()
DECODER = NumpyDecoderLM(len(CHARS.vocab), d_model=16, n_heads=2, n_layers=1, max_len=32)


def _case_norm_comparison():
    key = (CHARS.valid_work, len(CHARS.train), 0.03, 2, (0,))         # a cached run: nothing trains
    lesson04._NORM_RUNS[key] = {"pre": {"curves": [[3.0, 2.5]], "valid": [2.4]},
                                "post": {"curves": [[3.0, 2.7]], "valid": [2.6]}}
    return lesson04.render_norm_comparison(CHARS, lr=3e-2, steps=2, seeds=(0,))


def _case_reversal():
    rng = np.random.default_rng(0)
    accuracy = {"with attention": rng.random((2, 2)), "without": rng.random((2, 2))}
    return lesson04.plot_reversal([4, 6], accuracy, rng.random((10, 10)), list(range(10)))


def _case_attention_grid():
    rng = np.random.default_rng(0)
    text = "To be, or not to be"
    w = np.tril(rng.random((2, 4, len(text), len(text))))
    return lesson04.plot_attention_grid(w / w.sum(-1, keepdims=True), text)


def _case_lsa():
    vocab = Vocab([f"w{i}" for i in range(12)], specials=())
    rng = np.random.default_rng(0)
    s = np.sort(rng.uniform(1, 5, 6))[::-1]
    return lesson05.render_lsa(3, "w2", singular_values=s, frobenius_sq=float((s ** 2).sum() * 1.5),
                               u=np.linalg.qr(rng.standard_normal((12, 6)))[0], vocab=vocab,
                               n_neighbours=4)


def _case_collocations():
    vocab, ids = lesson06_corpus()
    bigrams = cooccurrence_matrix(ids, len(vocab), window=1, symmetric=False)
    return lesson06.render_collocations(2, "NPMI", bigrams=sp.csr_matrix(bigrams),
                                        itos=vocab.itos, n=5)


def _case_contexts():
    vocab, ids = lesson06_corpus()
    return lesson06.render_contexts(2, "harmonic", False, "new", sentences_ids=ids, vocab=vocab,
                                    n=3)


def _case_w2v_live_training():
    state = {"rho": 0.0}

    def step():
        state["rho"] += 0.02
        return 3.0 - state["rho"]

    run = ScoreTraining(step, lambda: state["rho"], eval_every=5,
                        reference=("shipped", [5, 10], [0.1, 0.2]),
                        baselines={"PPMI-SVD": 0.45, "LSA (lesson 05)": 0.47, "shipped": 0.5})
    run.train(20, progress=False)
    return run.figure()


def _case_dimension_runs():
    class Run:                                    # a stand-in for LiveSkipGram
        def __init__(self, dim):
            self.W, self.corpus, self.t = np.eye(4, dim), None, 0.0

        def step(self):
            self.t += 0.01
            return 1.0

        def validation_rho(self):
            return self.t

        def plan(self, steps):
            pass

    runs = lesson07.DimensionRuns(Run, steps=5)
    runs.results[100] = dict(rho=0.38, ms=3.0, money=["cash"])
    runs.results[25] = dict(rho=0.3, ms=1.2, money=["funds"])
    return runs.render(25)[0]


def _case_pmi_link():
    rng = np.random.default_rng(0)
    x = rng.normal(5, 2, 300)
    p = rng.normal(0, 1, 400)
    return lesson08.plot_pmi_link({"log_x": x, "b": x + rng.normal(0, 1, 300), "pmi": p,
                                   "dot": p + rng.normal(0, 1, 400), "bias_r": 0.9, "dot_r": 0.7},
                                  "a GloVe")


def _case_projection():
    rng = np.random.default_rng(0)
    words = ["france", "germany", "italy", "football", "tennis", "golf", "album", "band", "song"]
    E = rng.standard_normal((len(words), 5))
    groups = {"countries": words[:3], "sport": words[3:6], "music": words[6:]}
    return lesson09.make_projection_render({"toy": (E, words)}, groups)(1, "PCA", "toy")


def _case_grid_and_control():
    rng = np.random.default_rng(0)
    g = ScalingGrid(fractions=(0.25, 0.5, 1.0), dims=(16, 32, 64, 128),
                    tokens=np.array([100_000, 200_000, 400_000]),
                    scores={m: rng.uniform(0.05, 0.4, (3, 3, 4)) for m in METRICS},
                    seconds=np.ones((3, 4)),
                    n_scored={m: 100 for m in METRICS}, n_words=1000, config={"epochs": [5, 5, 5]})
    return lesson09.plot_grid_and_control(g, g, (20, 10, 5), "wordsim353", "WordSim-353 ρ")


def _case_sense_explorer():
    ex = load_wsd_sentences()
    tok = BPETokenizer.train([w for e in ex for w in e.tokens], vocab_size=120)
    torch.manual_seed(0)
    config = BertConfig(len(tok), dim=8, n_layers=1, n_heads=2, ff_dim=16, max_len=32)
    model = TinyBert(config).eval()
    return lesson10.render_sense_explorer(model, tok, ex, sentence=0, word="bank", layer=1)


TIMINGS = [{"vocab_size": v, "softmax": 1e-6 * v, "ns_rows": 6e-4, "ns_dense": 2e-3 + 1e-7 * v,
            "hs": 1e-3, "hs_mean_depth": 8.0} for v in (1_000, 4_000, 16_000, 32_000)]
# function (module:qualified name) -> how to draw it on tiny inputs
CASES = {
    "helpers.lessons.lesson01:render_activation": lambda: lesson01.render_activation(1.0, "tanh"),
    "helpers.lessons.lesson02:render_gradient_flow":
        lambda: lesson02.render_gradient_flow(2.0, steps=12, hidden=8),
    "helpers.course.word_lms:plot_gradient_flow": _case_trained_gradient_flow,
    "helpers.infra.live_training:LiveTraining.figure": _case_live_training_figure,
    "helpers.lessons.lesson03:render_long_range":
        lambda: lesson03.render_long_range(steps=3, keep_bias=1.0, hidden=4),
    "helpers.lessons.lesson03:gate_heatmap": lambda: lesson03.gate_heatmap(
        NumpyLM(5, 4, 6, "lstm"), np.array([0, 1, 2, 3, 0, 4]), "the cat sat on the mat".split(),
        n_units=4),
    "helpers.lessons.lesson04:render_scaling": lambda: lesson04.render_scaling(d_k=8, n_keys=6),
    "helpers.lessons.lesson04:render_attention":
        lambda: lesson04.render_attention(DECODER, CHARS, "to be or not\nto be", head=1, layer=0),
    "helpers.lessons.lesson04:render_temperature":
        lambda: lesson04.render_temperature(DECODER, CHARS, "to be ", 0.8, n_new=10),
    "helpers.lessons.lesson04:render_norm_comparison": _case_norm_comparison,
    "helpers.lessons.lesson04:plot_positional_encoding":
        lambda: lesson04.plot_positional_encoding(T=32, d=16, dims=(0, 4)),
    "helpers.lessons.lesson04:plot_attention_grid": _case_attention_grid,
    "helpers.lessons.lesson04:plot_copy_experiment": lambda: lesson04.plot_copy_experiment({
        "lengths": [4, 8, 16],
        "accuracy": {"Transformer": [1.0, 1.0, 0.99], "LSTM": [0.9, 0.4, 0.07]},
        "params": {"Transformer": 27000, "LSTM": 28000},
        "steps": {"Transformer": 150, "LSTM": 300}}),
    "helpers.lessons.lesson04:plot_reversal": _case_reversal,
    "helpers.lessons.lesson05:render_lsa": _case_lsa,
    "helpers.lessons.lesson06:render_collocations": _case_collocations,
    "helpers.lessons.lesson06:render_contexts": _case_contexts,
    "helpers.infra.live_training:ScoreTraining.figure": _case_w2v_live_training,
    "helpers.lessons.lesson07:DimensionRuns.render": _case_dimension_runs,
    "helpers.lessons.lesson07:plot_output_layer_timings":
        lambda: lesson07.plot_output_layer_timings(TIMINGS),
    "helpers.lessons.lesson08:render_glove_weight": lambda: lesson08.render_glove_weight(
        50.0, 0.6, counts=np.random.default_rng(0).pareto(1.2, 500) + 1),
    "helpers.lessons.lesson08:plot_pmi_link": _case_pmi_link,
    "helpers.lessons.lesson09:make_projection_render.render": _case_projection,
    "helpers.lessons.lesson09:plot_grid_and_control": _case_grid_and_control,
    "helpers.lessons.lesson10:render_sense_explorer": _case_sense_explorer,
    "helpers.lessons.lesson10:plot_finetune":
        lambda: lesson10.plot_finetune(load_model("bert_finetune")),
    # the smallest live run the explorer offers (10 steps, one thread: a few seconds)
    "helpers.lessons.lesson10:render_live_finetune":
        lambda: lesson10.render_live_finetune(10, shipped=load_model("mlm_bert"),
                                              results=load_model("bert_finetune")),
}


@pytest.mark.parametrize("name", sorted(CASES), ids=lambda n: n.split(":", 1)[1])
def test_plotting_function_follows_the_style(name):
    result = CASES[name]()                   # (fig, summary), (fig, data) or an Axes
    problems = figure_problems(result[0] if isinstance(result, tuple) else result.figure)
    assert not problems, f"{name}:\n  " + "\n  ".join(problems)


def _figure_makers(node, prefix: str = ""):
    """Qualified names of the functions under ``node`` that call ``new_figure`` themselves
    (not only through a function nested in them)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{child.name}"
            nested = {id(n) for f in ast.walk(child)
                      if f is not child and isinstance(f, ast.FunctionDef) for n in ast.walk(f)}
            if any(isinstance(c, ast.Call) and id(c) not in nested and "new_figure" in (
                    getattr(c.func, "id", None), getattr(c.func, "attr", None))
                   for c in ast.walk(child)):
                yield name
            yield from _figure_makers(child, f"{name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _figure_makers(child, f"{prefix}{child.name}.")
        else:
            yield from _figure_makers(child, prefix)


def _plotting_functions() -> tuple[set[str], list[str]]:
    """'module:qualified name' of every function in helpers that calls new_figure, and every
    place that bypasses it (plt.subplots / plt.figure / plt.subplot)."""
    found, bypass = set(), []
    skip = {ROOT / "helpers" / "infra" / "plotting.py"}
    for path in sorted((ROOT / "helpers").rglob("*.py")):
        if path in skip or "diagrams" in path.parts:
            continue
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found |= {f"{module}:{name}" for name in _figure_makers(tree)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("subplots", "figure", "subplot")
                    and getattr(node.func.value, "id", None) == "plt"):
                bypass.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found, bypass


def test_every_plotting_function_has_a_case():
    found, bypass = _plotting_functions()
    assert not bypass, f"figures made outside helpers.infra.plotting.new_figure: {bypass}"
    covered = {name.split(" (")[0] for name in CASES}
    missing = sorted(found - covered)
    assert not missing, f"plotting functions without a style case in CASES: {missing}"
    assert covered <= found, f"CASES names functions that no longer draw: {covered - found}"


def test_constrained_figures_are_not_tight_laid_out():
    """``new_figure`` uses the constrained layout: ``tight_layout()`` raises on it once a colour
    bar exists, so no notebook cell calls both."""
    offenders = [f"{path.name} code cell {i}" for path in NOTEBOOKS
                 for i, cell in enumerate(code_cells(load(path)))
                 if "new_figure(" in source(cell) and "tight_layout(" in source(cell)]
    assert not offenders, f"tight_layout on a constrained new_figure figure: {offenders}"
