"""helpers.lib.recurrent_tasks: the Markov source and exposure bias (a perfect model shows no
gap), and the long-range task: seeded, and what lesson 03 states holds from other random starts."""
import numpy as np
import pytest

from helpers.lib import recurrent_tasks as RT
from helpers.lib.recurrent import NumpyLM
from tests.props import raises_naming


def test_the_markov_source_samples_its_table_and_a_perfect_model_shows_no_exposure_bias():
    source = RT.MarkovSource(V=3, alpha=1.0, seed=0)
    np.testing.assert_allclose(source.table.sum(axis=2), 1.0)
    seqs = source.sample(4000, 3, np.random.default_rng(0))
    context = (seqs[:, 0] == 0) & (seqs[:, 1] == 1)
    np.testing.assert_allclose(np.bincount(seqs[context, 2], minlength=3) / context.sum(),
                               source.table[0, 1], atol=0.08)
    perfect = RT.exposure_gap(source, None, n=50, horizon=6)
    assert all(np.array_equal(perfect[k], np.zeros(6)) for k in ("data_kl", "own_kl", "gap"))
    untrained = RT.exposure_gap(source, NumpyLM(3, 4, 8, "rnn"), n=50, horizon=6)
    assert np.all(untrained["data_kl"] > 0)
    assert np.allclose(untrained["gap"], untrained["own_kl"] - untrained["data_kl"])
    trained = RT.train_on_source(source, steps=40, hidden=8, length=500, lr=3e-2)
    again = RT.train_on_source(source, steps=40, hidden=8, length=500, lr=3e-2)
    assert all(np.array_equal(a, b) for a, b in zip(trained.params, again.params))
    test = source.sample(8, 21, np.random.default_rng(99))
    untrained = NumpyLM(3, 16, 8, "rnn")
    assert trained.loss(test[:, :-1], test[:, 1:]) < untrained.loss(test[:, :-1], test[:, 1:])
    raises_naming(lambda: RT.MarkovSource(1), "V", ValueError)
    raises_naming(lambda: source.probs(np.array([-1]), np.array([0])), "a", ValueError)


def test_the_long_range_batches_and_the_trainer_s_errors():
    ids, labels = RT.long_range_batch(50, 7, np.random.default_rng(0))
    assert ids.shape == (50, 8) and np.array_equal(ids[:, 0], labels) and ids[:, 1:].min() >= 2
    raises_naming(lambda: RT.long_range_batch(5, 0, np.random.default_rng(0)), "distance",
                  ValueError)
    raises_naming(lambda: RT.train_long_range("transformer", 3), "kind", ValueError)
    raises_naming(lambda: RT.train_long_range("lstm", 3, identity_start=True), "identity_start",
                  ValueError)


@pytest.mark.parametrize("seed", [1, 2])
def test_what_lesson_03_states_holds_from_other_random_starts(seed):
    """The RNN is at chance at distance 30, the identity-started RNN at 60; the LSTM and the GRU
    with a keep-gate bias of 3 hold the cue at 60; the LSTM needs a forget bias of 2 at 30."""
    assert RT.train_long_range("rnn", 30, seed=seed) < 0.6
    assert RT.train_long_range("rnn", 60, identity_start=True, seed=seed) < 0.6
    assert RT.train_long_range("lstm", 60, forget_bias=3.0, seed=seed) >= 0.95
    assert RT.train_long_range("gru", 60, forget_bias=3.0, seed=seed) >= 0.95
    assert RT.train_long_range("lstm", 30, forget_bias=1.0, seed=seed) < 0.6
    assert RT.train_long_range("lstm", 30, forget_bias=2.0, seed=seed) >= 0.9


def test_at_the_lesson_s_own_start_a_forget_bias_of_1_leaves_the_lstm_at_chance():
    """Seed 0 is the lesson's run: its claims (notebook 03) and its forget-bias checker pin the
    rest of the statements above; this one they pin only as below 0.9."""
    assert RT.train_long_range("lstm", 30, forget_bias=1.0, seed=0) < 0.6
