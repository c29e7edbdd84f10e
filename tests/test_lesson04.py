"""Lesson 04's helpers: LayerNorm (NumPy), the character split, per-character losses, the block
bootstrap, the Pre-LN / Post-LN experiment and the timing of parallel vs sequential passes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.course.char_live import CharSplit
from helpers.lessons.lesson04 import (
    ReverseSeq2Seq,
    block_bootstrap,
    char_nlls,
    norm_comparison,
    render_norm_comparison,
    reversal_experiment,
    time_parallel_vs_sequential,
)
from helpers.lib.gradcheck import check_layer
from helpers.lib.layers import LayerNorm
from helpers.lib.text import Vocab
from helpers.lib.transformer import DecoderLM, TransformerConfig, evaluate_lm


def _toy_split(n=6000):
    vocab = Vocab(list(" abcdefgh\n"), specials=())
    rng = np.random.default_rng(0)
    ids = lambda k: rng.integers(0, len(vocab), k).astype(np.int64)  # noqa: E731
    return CharSplit(vocab, ids(n), ids(2000), ids(2000), "valid-work", "test-work")


def test_layer_norm_gradients_and_torch():
    rng = np.random.default_rng(0)
    ln = LayerNorm(7)
    ln.params[0][...], ln.params[1][...] = rng.standard_normal(7), rng.standard_normal(7)
    x = 2 * rng.standard_normal((3, 4, 7)) + 0.5
    assert check_layer(ln, x).ok
    t = torch.nn.LayerNorm(7).double()
    with torch.no_grad():
        t.weight.copy_(torch.tensor(ln.params[0]))
        t.bias.copy_(torch.tensor(ln.params[1]))
    np.testing.assert_allclose(ln.forward(x), t(torch.tensor(x)).detach().numpy(), atol=1e-12)


def test_layer_norm_rejects_the_wrong_width():
    with pytest.raises(ValueError, match=r"expects input \(\.\.\., 5\), got \(2, 4\)"):
        LayerNorm(5).forward(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="d >= 1"):
        LayerNorm(0)


def test_char_nlls_average_to_evaluate_lm():
    split = _toy_split()
    model = DecoderLM(TransformerConfig(split.V, d_model=16, n_heads=2, n_layers=1, max_len=32), seed=0)
    nll = char_nlls(model, split.test, 32, 640)
    assert nll.shape == (640,)
    assert nll.mean() == pytest.approx(evaluate_lm(model, split.test, seq_len=32, max_tokens=640), rel=1e-6)


def test_block_bootstrap_pairs_and_intervals():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(4000) + 2.0
    b = a + 0.5                                   # always 0.5 worse: the paired difference has no spread
    ci = block_bootstrap({"a": a, "b": b}, block=100)
    assert ci["a"][1] < ci["a"][0] < ci["a"][2]
    assert ci["a − b"][0] == pytest.approx(-0.5) and ci["a − b"][2] - ci["a − b"][1] < 1e-9
    with pytest.raises(ValueError, match="divisible"):
        block_bootstrap({"a": a[:150]}, block=100)


def test_norm_comparison_is_deterministic_and_renders():
    split = _toy_split()
    r1 = norm_comparison(split, seeds=(0, 1), steps=3, d_model=16, n_layers=2, ctx=16, eval_tokens=256)
    r2 = norm_comparison(split, seeds=(0, 1), steps=3, d_model=16, n_layers=2, ctx=16, eval_tokens=256)
    assert r1 == r2 and set(r1) == {"pre", "post"} and len(r1["pre"]["valid"]) == 2
    assert r1["pre"]["curves"][0] != r1["post"]["curves"][0]
    fig, summary = render_norm_comparison(split, lr=1e-2, steps=2, seeds=(0,))
    assert "pre-LN" in summary and "post-LN" in summary


def test_the_attention_and_temperature_renders_follow_their_controls():
    from helpers.lessons.lesson04 import render_attention, render_temperature
    split = _toy_split()
    model = DecoderLM(TransformerConfig(split.V, d_model=16, n_heads=4, n_layers=2, max_len=32), seed=0)
    _, head0 = render_attention(model, split, "abc defg", head=0)
    _, head3 = render_attention(model, split, "abc defg", head=3)
    assert head0 != head3 and "head 3" in head3
    with pytest.raises(ValueError, match="head in"):
        render_attention(model, split, "abc", head=4)
    _, t2 = render_temperature(model, split, "abc", 2.0)
    assert "T=2.00" in t2


def test_parallel_vs_sequential_timing():
    model = DecoderLM(TransformerConfig(10, d_model=16, n_heads=2, n_layers=1, max_len=16), seed=0)
    t = time_parallel_vs_sequential(model, T=8, repeats=2)
    assert all(t[k] > 0 for k in ("parallel_s", "sequential_s", "one_token_s"))
    assert t["ratio"] == pytest.approx(t["sequential_s"] / t["parallel_s"])


def test_reversal_model_shapes_and_experiment():
    x = torch.randint(10, (3, 5))
    for attention in (True, False):
        m = ReverseSeq2Seq(10, 8, attention, seed=0)
        assert m(x, x.flip(1)).shape == (3, 5, 10) and m(x).shape == (3, 5, 10)
        assert (m.last_weights is not None) == attention
    r = reversal_experiment(seeds=(0, 1), steps=2, lengths=(3, 4), hidden=8, n_test=5)
    assert r["with"].shape == r["without"].shape == (2, 2) and r["weights"].shape == (10, 10)
    assert np.allclose(r["weights"].sum(1), 1, atol=1e-5)


@pytest.mark.parametrize("order", [9, 10])
def test_kneser_ney_codes_for_long_orders_of_84_characters(order):
    """84**10 > 2**63: order 10 needs the unsigned codes; both long orders equal the dictionary model."""
    from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls

    rng = np.random.default_rng(order)
    base = rng.integers(0, 84, 300)
    train = np.concatenate([base[s:s + 12] for s in rng.integers(0, 288, 300)] + [rng.integers(0, 84, 1000)])
    ev = np.concatenate([train[:400], rng.integers(0, 84, 100)])
    kn = KneserNeyLM(order, 84, 0.9).fit(train)
    want = [-np.log(kn.prob(tuple(ev[i - order + 1:i]), ev[i])) for i in range(order - 1, len(ev))]
    np.testing.assert_allclose(kneser_ney_nlls(train, ev, order, 84, 0.9), want, rtol=1e-12)
    with pytest.raises(ValueError, match="int64"):
        kneser_ney_nlls(train, ev, 11, 84)


# ---------------------------------------------------------------- the NumPy decoder of section 8
# ---------------------------------------------------------------- the comparisons of sections 10-11
def test_copy_batches_and_a_tiny_copy_experiment():
    from helpers.course.copy_task import copy_batch, copy_experiment

    x, y = copy_batch(3, 5, 7, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (3, 10)
    assert (y[:, :5] == -100).all() and (x[:, 5] == 0).all()
    assert torch.equal(y[:, 5:], x[:, :5]) and int(x[:, :5].min()) >= 1 and int(x.max()) <= 7
    r = copy_experiment(lengths=(2, 3), steps={"Transformer": 2, "LSTM": 2}, n_test=10)
    assert set(r["accuracy"]) == {"Transformer", "LSTM"} and all(len(a) == 2 for a in r["accuracy"].values())
    assert all(0 <= a <= 1 for acc in r["accuracy"].values() for a in acc) and r["chance"] == pytest.approx(1 / 16)
    assert abs(r["params"]["LSTM"] / r["params"]["Transformer"] - 1) < 0.1


def test_head_statistics_on_known_maps():
    from helpers.lessons.lesson04 import head_statistics

    text = "ab cd"
    T = len(text)
    previous = np.zeros((T, T))
    previous[0, 0] = 1
    previous[np.arange(1, T), np.arange(T - 1)] = 1           # every row attends to the character before
    maps = np.stack([np.stack([previous, np.eye(T)])])         # (1 layer, 2 heads, T, T)
    rows = head_statistics(maps, text)
    assert rows[0]["previous"] == pytest.approx(1) and rows[0]["self"] == pytest.approx(0.2)
    assert rows[1]["self"] == pytest.approx(1) and rows[1]["mean_distance"] == 0
    # the last space before the previous character: positions 3 and 4 (after "ab ") see the space at 2
    assert rows[0]["word_start"] == pytest.approx(0.5)


def test_score_challenge_ranks_a_model_among_the_yardsticks(capsys):
    from helpers.lessons.lesson04 import challenge_standings, score_challenge

    rows = challenge_standings()
    assert set(rows) >= {"Kneser-Ney trigram", "Kneser-Ney 4-gram", "shipped Transformer (PyTorch)"}
    assert rows["Kneser-Ney 4-gram"] < rows["Kneser-Ney trigram"]
    uniform = lambda x, y: float(np.log(84))                     # noqa: E731  (a model that knows nothing)
    r = score_challenge(uniform, 64, cpu_seconds=10)
    out = capsys.readouterr().out
    assert r["loss"] == pytest.approx(np.log(84)) and r["beaten"] == [] and r["within_budget"]
    assert "above every yardstick" in out and r["table"][-1][0] == "your model"
    assert not score_challenge(uniform, 64, cpu_seconds=1e6)["within_budget"]
    with pytest.raises(ValueError, match="cpu_seconds"):
        score_challenge(uniform, 64, cpu_seconds=float("nan"))


# ---------------------------------------------------------------- the lesson itself (issue 30)
def _lesson_cells():
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "04_self_attention.ipynb").read_text(encoding="utf-8"))
    return [("".join(c["source"]), c["cell_type"], c.get("metadata", {}).get("tags", [])) for c in nb["cells"]]


def test_no_course_version_is_shown_before_the_exercise_that_asks_for_it():
    """The derivation comes first, the student writes the code, the course's version after: no cell
    before an exercise prints the source of what that exercise asks for."""
    import re

    cells = _lesson_cells()
    asks = {"check_causal_mask": ("causal_mask",), "check_split_heads": ("split_heads", "MultiHeadAttention"),
            "check_layer_norm_backward": ("LayerNorm", "layer_norm_backward"),
            "check_clip_adam_step": ("Adam", "clip_global_norm", "clip_adam_step")}
    for checker, names in asks.items():
        at = next(i for i, (src, kind, tags) in enumerate(cells) if "exercise" in tags and f"{checker}(" in src)
        for src, kind, _ in cells[:at]:
            if kind != "code":
                continue
            for name in names:
                assert not re.search(rf"(show_source|getsource)\(\s*{name}\b", src), \
                    f"the source of {name} is shown before the exercise {checker} asks for it"


def test_the_live_model_is_the_lesson_s_code_with_the_student_s_functions_inside():
    text = "\n".join(src for src, kind, _ in _lesson_cells() if kind == "code")
    for shown in ("show_source(DecoderBlock)", "show_source(NumpyDecoderLM.forward)",
                  "show_source(NumpyDecoderLM.backward)", "show_source(CausalSelfAttention.forward)",
                  "show_source(DecoderLM.forward)"):
        assert shown in text, f"the lesson shows {shown[12:-1]}"
    assert "your_or_reference(layer_norm_result, my_layer_norm_backward" in text
    assert "your_or_reference(clip_adam_result, my_clip_adam" in text
    assert "layer_norm=YourLayerNorm" in text and "update(model.params, model.grads" in text
    assert "LiveTraining(train_step" in text and "NumpyDecoderLM.from_torch(big.model" in text
    assert "score_challenge(" in text


def test_the_pre_post_ln_figure_is_drawn_once_by_its_explorer_and_the_positional_figure_by_a_checked_helper():
    code = [src for src, kind, _ in _lesson_cells() if kind == "code"]
    assert sum("plot_norm_comparison(" in src for src in code) == 0          # not a static copy above it
    assert sum("render_norm_comparison" in src and "Explorer(" in src for src in code) == 1
    assert any("plot_positional_encoding(" in src for src in code)            # figure_problems-checked (test_plot_style)
    assert not any("imshow(" in src or "colorbar(" in src for src in code)     # no figure drawn by hand in a cell


# ---------------------------------------------------------------- the committed outputs (issues 30, 31)
MAX_LINE = 105


def _stdout_by_cell():
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "04_self_attention.ipynb")
                    .read_text(encoding="utf-8"))
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] != "code":
            continue
        text = "".join("".join(o["text"]) for o in c.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stdout")
        yield i, c.get("metadata", {}).get("tags", []), text


def test_no_printed_line_is_longer_than_an_export_shows():
    """An HTML export wraps a printed line of more than about 100 characters mid-word (issue 31). The
    exercise cells are left out: their line is the checker framework's "not attempted yet", which names
    the student's function."""
    long = [(i, len(line), line[:60]) for i, tags, text in _stdout_by_cell() if "exercise" not in tags
            for line in text.splitlines() if len(line) > MAX_LINE]
    assert not long, f"printed lines over {MAX_LINE} characters (cell, length, start): {long}"


def test_the_committed_outputs_show_the_live_model_working_and_the_shipped_weights_agreeing():
    import re

    text = "\n".join(t for _, _, t in _stdout_by_cell())
    live = re.search(r"your Transformer ([\d.]+) nats/char, Kneser-Ney trigram ([\d.]+), 4-gram ([\d.]+)", text)
    assert live, "the lesson prints the live model's test loss beside the n-grams"
    ours, trigram, fourgram = map(float, live.groups())
    assert ours < trigram and fourgram < trigram
    steps = re.search(r"([\d,]+) steps in (\d+) CPU-seconds", text)
    assert steps and int(steps.group(1).replace(",", "")) == 1500
    shipped = re.search(r"PyTorch ([\d.]+), your NumPy decoder ([\d.]+) nats/char", text)
    assert shipped and shipped.group(1) == shipped.group(2), "the shipped weights give the same loss in NumPy"
    assert "the lesson goes on with the course's LayerNorm backward" in text      # your_or_reference, untouched stubs
