"""helpers.lessons.lesson04: statistics, losses, copy problems and scorer, views and norm runs."""
import numpy as np
import pytest

from helpers.course.char_live import CharSplit
from helpers.lessons import lesson04 as L
from helpers.lib.decoder import NumpyDecoderLM
from helpers.lib.layers import softmax
from helpers.lib.text import Vocab
from helpers.lib.transformer import DecoderLM, TransformerConfig, evaluate_lm


def _toy_split(n=6000):
    vocab = Vocab(list(" abcdefgh\n"), specials=())
    rng = np.random.default_rng(0)
    ids = lambda k: rng.integers(0, len(vocab), k).astype(np.int64)  # noqa: E731
    return CharSplit(vocab, ids(n), ids(2000), ids(2000), "valid-work", "test-work")


def test_scaling_statistics_and_the_softmax_jacobian_norm():
    small, big = (L.dot_product_statistics(d, 16, np.random.default_rng(0)) for d in (4, 256))
    assert abs(big["var_raw"] / 256 - 1) < 0.1 and abs(small["var_raw"] / 4 - 1) < 0.1
    assert abs(big["var_scaled"] - 1) < 0.1
    assert big["max_weight_raw"] > 0.85 > big["max_weight_scaled"]
    assert big["jacobian_raw"] < 0.5 * big["jacobian_scaled"]
    for p in (softmax(np.arange(6.0)), softmax(10 * np.arange(6.0)), np.full(4, 0.25)):
        assert np.isclose(L.softmax_jacobian_norm(p), np.linalg.norm(np.diag(p) - np.outer(p, p)))
    assert L.softmax_jacobian_norm(np.array([0.0, 1.0, 0.0])) == 0.0


def test_char_nlls_average_to_evaluate_lm():
    split = _toy_split()
    model = DecoderLM(TransformerConfig(split.V, d_model=16, n_heads=2, n_layers=1, max_len=32))
    nll = L.char_nlls(model, split.test, 32, 640)
    assert nll.shape == (640,)
    mean = evaluate_lm(model, split.test, seq_len=32, max_tokens=640)
    assert nll.mean() == pytest.approx(mean, rel=1e-6)


def test_copy_problems_and_the_challenge_score(capsys):
    x, y = L.copy_problems(np.random.default_rng(0), 3, 5, 7)
    assert x.shape == y.shape == (3, 10) and (x[:, 5] == 0).all()
    np.testing.assert_array_equal(y[:, 5:], x[:, :5])
    assert x[:, :5].min() >= 1 and x.max() <= 7 and np.array_equal(y[:, :-1], x[:, 1:])

    class Copier:                               # looks n + 1 back: a perfect copy model
        def forward(self, ids):
            n = ids.shape[1] // 2
            logits = np.zeros(ids.shape + (17,))
            logits[:, n:][np.arange(len(ids))[:, None], np.arange(n), ids[:, :n]] = 1
            return logits

    score = L.score_copy_challenge(Copier(), cpu_seconds=10)
    assert score["within_budget"] and all(a == 1 for a in score["accuracy"].values())
    assert "your score: 1.00 at 64" in capsys.readouterr().out
    assert not L.score_copy_challenge(Copier(), cpu_seconds=1e6)["within_budget"]
    with pytest.raises(ValueError, match="cpu_seconds"):
        L.score_copy_challenge(Copier(), cpu_seconds=float("nan"))
    with pytest.raises(TypeError, match="forward"):
        L.score_copy_challenge(object(), cpu_seconds=1)


def test_word_start_scores_on_known_maps():
    text = "ab cde"                         # letters inside a word after its first: d (4), e (5)
    T = len(text)
    to_space = np.zeros((T, T))
    to_space[np.arange(T), np.arange(T)] = 1
    to_space[4:, 2] = 1
    to_space[4:, 4:] = 0
    scores = L.word_start_scores(np.stack([np.stack([to_space, np.eye(T)])]), text)
    assert scores.shape == (1, 2) and scores[0, 0] == 1 and scores[0, 1] == 0


def test_the_norm_runs_are_deterministic_cached_and_drawn():
    split = _toy_split()
    first = L.norm_comparison(split, 1e-2, 3, (0, 1))
    L._NORM_RUNS.clear()
    again = L.norm_comparison(split, 1e-2, 3, (0, 1))
    assert first == again and len(first["pre"]["valid"]) == 2
    assert first["pre"]["curves"][0] != first["post"]["curves"][0]
    assert L.norm_comparison(split, 1e-2, 3, (0, 1)) is again             # computed once
    _, summary = L.render_norm_comparison(split, lr=1e-2, steps=3, seeds=(0, 1))
    assert "pre-LN" in summary and "post-LN" in summary


def test_the_attention_and_temperature_views_follow_their_controls():
    split = _toy_split()
    model = NumpyDecoderLM(split.V, d_model=16, n_heads=4, n_layers=2, max_len=32, seed=0)
    maps = L.attention_maps(model, split.encode("abc defg"))
    assert maps.shape == (2, 4, 8, 8) and np.allclose(np.triu(maps, 1), 0)
    assert np.allclose(maps.sum(-1), 1)
    _, head0 = L.render_attention(model, split, "abc defg", head=0)
    _, head3 = L.render_attention(model, split, "abc defg", head=3, layer=1)
    assert head0 != head3 and "layer 1, head 3" in head3
    _, t2 = L.render_temperature(model, split, "abc", 2.0, n_new=5)
    assert "T=2.00" in t2
