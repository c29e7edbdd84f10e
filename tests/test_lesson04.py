"""Lesson 04's helpers: LayerNorm (NumPy), the character split, per-character losses, the block
bootstrap, the Pre-LN / Post-LN experiment and the timing of parallel vs sequential passes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.course.shakespeare import CharSplit, char_split
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


def test_char_split_is_by_work():
    s = char_split()
    assert s.V == 84 and s.valid_work == "othello" and s.test_work == "hamlet"
    assert len(s.train) > 4_000_000 and len(s.valid) > 100_000 and len(s.test) > 100_000
    assert s.decode(s.encode("To be, or not")) == "To be, or not"
    with pytest.raises(KeyError, match="two different works"):
        char_split("hamlet", "hamlet")


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


def test_the_stored_char_ngram_reproduces_its_test_losses():
    from helpers.course.char_lms import load_char_ngram
    from helpers.lib.ngram import kneser_ney_nlls

    stored, split = load_char_ngram(), char_split()
    n, D = stored["chosen"]["n"], stored["chosen"]["discount"]
    assert stored["chosen"]["valid_loss"] == min(r["valid_loss"] for r in stored["rows"])   # chosen on validation
    head = kneser_ney_nlls(split.train, split.test[:2001], n, split.V, D)     # scores test[n - 1 .. 2000]
    np.testing.assert_allclose(stored["test_nll"][n - 2:2000], head, rtol=1e-6)
    assert np.isnan(stored["test_nll"][:n - 2]).all()


def test_the_char_ngram_grid_reaches_past_its_best_model_on_both_axes():
    """The stored n-gram baseline is not at the edge of its search grid: a longer order and a larger
    discount were tried and were worse on validation (the grid widened until the loss turned)."""
    from helpers.course.char_lms import NGRAM_DISCOUNTS, NGRAM_ORDERS, load_char_ngram

    stored = load_char_ngram()
    rows = {r["n"]: r for r in stored["rows"]}
    chosen = stored["chosen"]
    assert sorted(rows) == list(NGRAM_ORDERS)
    longer = [n for n in rows if n > chosen["n"]]
    assert longer and all(rows[n]["valid_loss"] > chosen["valid_loss"] for n in longer)
    by_discount = {float(D): v for D, v in chosen["valid_by_discount"].items()}
    assert sorted(by_discount) == sorted(NGRAM_DISCOUNTS)
    larger = [D for D in by_discount if D > chosen["discount"]]
    assert larger and all(by_discount[D] > chosen["valid_loss"] for D in larger)


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
