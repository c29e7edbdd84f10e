"""helpers.lessons.lesson01: the studies' classifier (L1 as a proximal step gives exact zeros),
the initialisation statistics, the explorer, token losses and the embeddings' agreement."""
import numpy as np
import pytest

from helpers.course.bbc_topics import bbc_topic_data
from helpers.exercises.lesson01 import INIT_SCHEMES, check_mlp_forward, relu_activation_stds
from helpers.lessons import lesson01 as L


@pytest.fixture(scope="module")
def bbc():
    data = bbc_topic_data(0)
    return data, L.featurize(data, "counts", 2000)


def test_the_features_and_the_classifier(bbc):
    data, (Xtr, Xva, Xte) = bbc
    assert Xtr.shape == (1558, 2000) and Xte.shape == (302, 2000)
    with pytest.raises(ValueError, match="unknown feature kind 'words'"):
        L.featurize(data, "words")
    ytr, yva = data.labels[data.train], data.labels[data.valid]
    net, hist = L.train_classifier(Xtr, ytr, Xva, yva, epochs=2)
    assert hist.epochs[-1]["valid_acc"] > 0.9
    assert L.evaluate(net, Xte, data.labels[data.test])[1] > 0.9
    with pytest.raises(ValueError, match="unknown optimizer 'Nesterov'"):
        L.train_classifier(Xtr, ytr, Xva, yva, optimizer="Nesterov")
    few = np.arange(40)
    weights = {prox: L.train_classifier(Xtr[few], ytr[few], Xva, yva, hidden=16, lr=1e-2, epochs=5,
                                        l1=1e-3, l1_proximal=prox)[0].weights()[0]
               for prox in (False, True)}
    assert np.mean(weights[False] == 0) == 0 and np.mean(weights[True] == 0) > 0


def test_the_initialisation_study_tells_the_checker_s_story():
    for name, std in INIT_SCHEMES.items():        # the figure's layers and the checker's own loop
        theirs = L.init_statistics(std(128), "relu")["act_std"]
        steady = all(0.5 < s < 2 for s in relu_activation_stds(15)[name])
        assert steady == bool(np.all((theirs > 0.5) & (theirs < 2))), name
    small = L.init_statistics(0.01, "tanh", depth=8, width=64, n=128)
    assert small["act_std"][-1] < 1e-6 * small["act_std"][0]
    big = L.init_statistics(1.0, "tanh", depth=8, width=64, n=128)
    assert big["saturated"][-1] > 0.5 and big["grad_std"][0] > 100 * big["grad_std"][-1]


def test_the_activation_explorer():
    summary = L.render_activation(5.0, "sigmoid")[1]
    assert summary == "sigmoid(+5.00) = 0.9933, derivative = 0.0066: saturated (gradient < 0.05)"
    assert L.render_activation(-1.0, "relu")[1].endswith("dead (no gradient)")
    assert L.render_activation(z=2.5, activation="tanh")[1].startswith("tanh(+2.50)")


def test_the_language_model_s_token_losses_and_the_embeddings_agreement():
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s) for s in ((7, 2), (4, 3), (3,), (3, 7), (7,))]
    X, y = rng.integers(0, 7, (10, 2)), rng.integers(0, 7, 10)
    nll = L.lm_token_nll(check_mlp_forward.reference, weights, X, y, batch=3)
    P = check_mlp_forward.reference(weights[0][X].reshape(10, -1), *weights[1:])
    assert np.allclose(nll, -np.log(P[np.arange(10), y]))
    stream = [0]                                  # 0, 1 go to 2 or 3, and 2, 3 back to 0 or 1
    for _ in range(400):
        stream.append(int(rng.integers(0, 2)) + (2 if stream[-1] < 2 else 0))
    E = np.array([[1, 0.1], [1, -0.1], [0.1, 1], [-0.1, 1]])   # 0 beside 1, 2 beside 3
    words = np.arange(4)
    assert L.embedding_agreement(E, np.array(stream), words) > 0.5
    assert L.embedding_agreement(E[[0, 2, 1, 3]], np.array(stream), words) < 0
