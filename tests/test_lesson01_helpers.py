import math

import numpy as np
import pytest
import torch

from helpers.course.bbc_topics import bbc_topic_data
from helpers.infra.widgets import Explorer, dropdown, slider
from helpers.lessons.lesson01 import (
    evaluate,
    featurize,
    mlp_worked_example,
    render_activation,
    render_regularisation,
    train_classifier,
)
from helpers.lib.ngram import KneserNeyLM


def test_kneser_ney_is_a_distribution_and_never_zero():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 12, 400)
    lm = KneserNeyLM(3, vocab_size=15).fit(ids)   # ids 12-14 never occur
    for ctx in [(1, 2), (3, 3), (13, 14), ()]:
        probs = [lm.prob(ctx, w) for w in range(15)]
        assert math.isclose(sum(probs), 1.0, rel_tol=1e-9), ctx
        assert min(probs) > 0
    assert lm.prob((1, 2), 14) < lm.prob((1, 2), int(np.bincount(ids).argmax()))


def test_kneser_ney_worked_bigram():
    # corpus "a b a b a c": c(a b) = 2, c(a .) = 3, two distinct followers of a; D = 0.5
    lm = KneserNeyLM(2, vocab_size=3, discount=0.5).fit(np.array([0, 1, 0, 1, 0, 2]))
    # continuation counts: b follows 1 type (a), a follows 1 type (b), c follows 1 type (a) -> 1/3 each
    p_cont_b = (1 - 0.5) / 3 + 0.5 * 3 / 3 * (1 / 3)
    assert math.isclose(lm.prob((0,), 1), (2 - 0.5) / 3 + 0.5 * 2 / 3 * p_cont_b)
    with pytest.raises(ValueError, match="need at least 3 tokens"):
        KneserNeyLM(3, 5).fit(np.array([1, 2]))


@pytest.fixture(scope="module")
def bbc():
    data = bbc_topic_data(0)
    return data, featurize(data, "counts", 2000)


def test_bbc_splits_and_features(bbc):
    data, (Xtr, Xva, Xte) = bbc
    # 70/15/15 of the 2,225 articles; validation and test without the articles that have a copy in training
    assert (len(data.train), len(data.valid), len(data.test)) == (1558, 299, 302)
    assert len(set(data.train) | set(data.valid) | set(data.test)) == 2225 - (334 - 299) - (333 - 302)
    assert Xtr.shape == (1558, 2000) and Xte.shape == (302, 2000)
    with pytest.raises(ValueError, match="unknown feature kind 'words'"):
        featurize(data, "words")


def test_classifier_learns_the_topics(bbc):
    data, (Xtr, Xva, Xte) = bbc
    net, hist = train_classifier(Xtr, data.labels[data.train], Xva, data.labels[data.valid], epochs=2, progress=False)
    assert hist.epochs[-1]["valid_acc"] > 0.9
    assert evaluate(net, Xte, data.labels[data.test])[1] > 0.9
    with pytest.raises(ValueError, match="unknown optimizer 'Nesterov'"):
        train_classifier(Xtr, data.labels[data.train], Xva, data.labels[data.valid], optimizer="Nesterov")


def test_activation_explorer():
    fig, summary = render_activation(5.0, "sigmoid")
    assert summary == "sigmoid(+5.00) = 0.9933, derivative = 0.0066: saturated (gradient < 0.05)"
    assert render_activation(-1.0, "relu")[1].endswith("dead (no gradient)")
    ex = Explorer(render_activation, {"z": slider(1.0, -6.0, 6.0, 0.5, "z"),
                                      "activation": dropdown(["tanh", "sigmoid", "relu"], "tanh", "f")})
    before = ex.summary
    ex.controls["z"].value = 2.5
    assert ex.renders == 2 and ex.summary != before and ex.summary.startswith("tanh(+2.50)")


def test_regularisation_explorer_trains_on_click():
    ex = Explorer(render_regularisation, {"dropout": slider(0.0, 0.0, 0.8, 0.1, "p"),
                                          "l2": slider(0.0, 0.0, 0.005, 0.0005, "l2")}, run_button="Train")
    first = ex.summary
    assert first.startswith("final training loss")
    ex.controls["dropout"].value = 0.5
    ex.button.click()
    assert ex.renders == 2 and ex.summary != first


# ---------------------------------------------------------------- added with the issue 14-18 rework
def test_kneser_ney_token_nll_matches_prob_and_mean_nll():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 10, 300)
    lm = KneserNeyLM(3, vocab_size=10).fit(ids)
    held = rng.integers(0, 10, 50)
    nll = lm.token_nll(held)
    assert nll.shape == (48,) and math.isclose(nll.mean(), lm.mean_nll(held), rel_tol=1e-12)
    early = lm.token_nll(held, start=1)           # the first target has a one-token context only
    assert early.shape == (49,) and math.isclose(early[0], -math.log(lm.prob((int(held[0]),), int(held[1]))))
    assert np.allclose(early[1:], nll)
    with pytest.raises(ValueError, match="start must be in"):
        lm.token_nll(held, start=50)


def test_adamw_matches_torch_and_differs_from_adam_with_l2():
    from helpers.lib.optim import Adam, AdamW, add_weight_penalty
    theta = np.random.default_rng(0).standard_normal((3, 4))
    coupled = theta.copy()
    t = torch.tensor(theta.copy(), requires_grad=True)
    ours, theirs = AdamW(lr=0.05, weight_decay=0.3), torch.optim.AdamW([t], lr=0.05, weight_decay=0.3)
    adam = Adam(lr=0.05)
    for _ in range(15):                       # minimise sum(sin θ): gradient cos θ
        ours.step([theta], [np.cos(theta)])
        theirs.zero_grad()
        torch.sin(t).sum().backward()
        theirs.step()
        g = np.cos(coupled)
        add_weight_penalty([coupled], [g], l2=0.15)          # 2·λ = weight_decay: "the same" strength
        adam.step([coupled], [g])
    assert np.allclose(theta, t.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert not np.allclose(coupled, theta, atol=1e-3)      # Adam + L2 is another update
    with pytest.raises(ValueError, match="weight_decay"):
        AdamW(weight_decay=-1.0)


def test_init_statistics():
    from helpers.lessons.lesson01 import init_statistics
    he = init_statistics("He", "relu", depth=8, width=64, n=128)
    small = init_statistics("N(0, 0.01²)", "tanh", depth=8, width=64, n=128)
    assert he["act_std"].shape == he["grad_std"].shape == he["saturated"].shape == (8,)
    assert np.all((he["act_std"] > 0.4) & (he["act_std"] < 2.5))
    assert small["act_std"][-1] < 1e-6 * small["act_std"][0]
    with pytest.raises(ValueError, match="unknown scheme"):
        init_statistics("LeCun", "tanh")
    gained = init_statistics("Xavier/Glorot", "tanh", depth=8, width=64, n=128, gain=5 / 3)
    plain = init_statistics("Xavier/Glorot", "tanh", depth=8, width=64, n=128)
    assert gained["act_std"][-1] > plain["act_std"][-1]          # the tanh gain keeps more of the signal


def test_regularisation_runs_keep_each_article_s_loss(bbc):
    from helpers.lessons.lesson01 import article_losses, regularisation_runs
    data, (X_train, X_valid, _) = bbc
    y_train, y_valid = data.labels[data.train], data.labels[data.valid]
    items = {}
    runs = regularisation_runs(X_train, y_train, X_valid, y_valid, {"none": {}}, seeds=(0, 1), n_train=30,
                               item_losses=items, hidden=8, epochs=2)
    assert len(runs["none"]) == 2 and items["none"].shape == (2, len(y_valid))
    for k, hist in enumerate(runs["none"]):        # each seed's per-article losses average to its validation loss
        assert items["none"][k].mean() == pytest.approx(hist.epochs[-1]["valid_loss"], rel=1e-4)
    assert article_losses is not None


def test_paired_block_bootstrap():
    from helpers.lessons.lesson01 import paired_block_bootstrap
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4000) + 0.5
    b = rng.standard_normal(4000)
    mean, lo, hi = paired_block_bootstrap(a, b, block=50)
    assert lo < mean < hi and lo > 0.3 and hi < 0.7
    same = paired_block_bootstrap(b, b)
    assert same == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same length"):
        paired_block_bootstrap(a, b[:10])


def test_proximal_l1_gives_exact_zeros_and_subgradient_does_not(bbc):
    from helpers.lessons.lesson01 import l1_weight_study
    data, (X_train, X_valid, _) = bbc
    y_train, y_valid = data.labels[data.train], data.labels[data.valid]
    w = l1_weight_study(X_train, y_train, X_valid, y_valid, l1=1e-3, n_train=40, hidden=16, lr=1e-2, epochs=5)
    assert np.mean(w["L1 subgradient"] == 0) == 0 and np.mean(w["L1 proximal"] == 0) > 0
    assert np.mean(np.abs(w["L1 subgradient"]) < 1e-3) > 3 * np.mean(np.abs(w["no penalty"]) < 1e-3)


def test_mlp_worked_example_matches_torch_autograd():
    """The tiny network of the MLP graph figure: every value and gradient as autograd gives it."""
    v = mlp_worked_example()
    t = {k: torch.tensor(v[k], requires_grad=True) for k in ("x", "W1", "b1", "W2", "b2")}
    z2 = torch.tanh(t["x"] @ t["W1"] + t["b1"]) @ t["W2"] + t["b2"]
    loss = torch.nn.functional.cross_entropy(z2, torch.tensor([v["y"]]))
    loss.backward()
    assert np.isclose(loss.item(), v["L"])
    for k in ("x", "W1", "b1", "W2", "b2"):
        np.testing.assert_allclose(t[k].grad.numpy(), v["d" + k], rtol=1e-12, atol=1e-15)
