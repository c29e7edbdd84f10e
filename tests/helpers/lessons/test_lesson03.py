"""helpers.lessons.lesson03: the forget gate over a text, its block-bootstrap contrast, the
agreement test, the windows of the live comparison, and the long-range explorer."""
import numpy as np
import pytest

from helpers.course.char_live import heldout_loss, live_split
from helpers.infra.widgets import Explorer, slider
from helpers.lessons import lesson03 as L
from helpers.lib.recurrent import NumpyLM
from helpers.lib.text import UNK, Vocab

WORDS = sorted({w for pair in L.AGREEMENT_NOUNS + L.AGREEMENT_VERBS for w in pair}
               | {w for f in L.AGREEMENT_FRAMES.values() for w in f.split() if w not in "SABC"})


def test_forget_gates_are_the_lstm_s_and_carry_the_state_across_chunks():
    model = NumpyLM(20, 6, 5, "lstm", dtype=np.float64)
    ids = np.random.default_rng(0).integers(0, 20, 2 * 37)
    f, tokens = L.forget_gates(model, ids, rows=2, chunk=8)             # chunks of 8: the state must carry
    model.states(ids.reshape(2, -1))
    np.testing.assert_allclose(f, L.lstm_gates(model)[1].mean(-1).reshape(-1), rtol=1e-12)
    assert np.array_equal(tokens, ids)


def test_the_forget_gate_contrast_finds_a_planted_difference():
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, 10, 20_000)
    f0 = 0.8 + 0.01 * rng.standard_normal(20_000)
    planted = L.forget_gate_contrast(f0 + 0.05 * (tokens == 3), tokens, [3])
    assert 0.045 < planted.low < planted.estimate < planted.high < 0.055
    null = L.forget_gate_contrast(f0, tokens, [4])
    assert null.low < 0 < null.high
    with pytest.raises(ValueError, match="both kinds"):
        L.forget_gate_contrast(f0, tokens, [99])


def test_the_agreement_items_and_scores():
    vocab = Vocab.build(WORDS + ["cat"], specials=(UNK, "<eos>"))
    items = L.agreement_items(vocab, per_subject=2)
    plural = {p[1] for p in L.AGREEMENT_NOUNS}
    for it in items:
        frame = L.AGREEMENT_FRAMES[it.distance].split()
        assert len(it.words) == len(frame) == it.distance + 2 and (it.words[1] in plural) == (it.number == "pl")
        nouns = [w for w, slot in zip(it.words, frame) if slot in "ABC"]
        assert all((w in plural) == ((it.number == "pl") == (it.attractors == "same")) for w in nouns)
    assert len(items) == 2 * 16 + 4 * (2 * 16 * 2 * 2)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        L.agreement_items(Vocab.build(["the", "man"], specials=(UNK, "<eos>")))
    model = NumpyLM(len(vocab), 6, 5, "lstm", dtype=np.float64)
    scores = L.agreement_scores(model, vocab, items[:40])
    for it, s in zip(items[:5], scores[:5]):                            # one prefix at a time, by hand
        logits = model.forward(vocab.encode(["<eos>", *it.words])[None])[0, -1]
        right = [(logits[vocab.index(sg)] > logits[vocab.index(pl)]) == (it.number == "sg")
                 for sg, pl in L.AGREEMENT_VERBS]
        assert s == pytest.approx(np.mean(right))


def test_window_losses_average_to_the_held_out_loss():
    split = live_split()
    model = NumpyLM(split.V, 8, 8, "lstm")
    w = L.window_losses(model, split.test, 64, 1024)
    assert w.shape == (16,) and np.isclose(w.mean(), heldout_loss(model.loss, split.test, 64, 1024), rtol=1e-5)


def test_the_long_range_explorer_trains_on_the_button():
    ex = Explorer(L.render_long_range, {"steps": slider(4, 2, 8, 2, "steps"),
                                        "keep_bias": slider(3.0, 0.0, 4.0, 1.0, "bias")}, run_button="Train")
    first = ex.summary
    ex.controls["steps"].value = 6
    assert ex.renders == 1                # nothing trains until the button is pressed
    ex.button.click()
    assert ex.renders == 2 and ex.summary != first and "GRU: d=5" in ex.summary
    fig, summary = L.render_forget_bias_flow(4.0, steps=20)
    assert "19 steps back" in summary
