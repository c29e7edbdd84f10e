"""helpers.lib.recurrent_tasks: exposure bias measured against a known source (a perfect model shows
no gap), and the source's samples follow its table."""
import numpy as np

from helpers.lib.recurrent_lm import NumpyLM
from helpers.lib.recurrent_tasks import MarkovSource, exposure_gap


def test_exposure_gap_is_zero_for_the_perfect_model_and_positive_error_otherwise():
    source = MarkovSource(V=5, seed=1)
    perfect = exposure_gap(source, None, n=50, horizon=6)
    assert np.all(perfect["gap"] == 0) and np.all(perfect["own_kl"] == 0)
    untrained = exposure_gap(source, NumpyLM(5, 4, 8, "rnn"), n=50, horizon=6)
    assert np.all(untrained["data_kl"] > 0) and untrained["gap"].shape == (6,)


def test_markov_source_samples_follow_its_table():
    source = MarkovSource(V=3, alpha=1.0, seed=0)
    seqs = source.sample(4000, 3, np.random.default_rng(0))
    a, b = seqs[:, 0] == 0, seqs[:, 1] == 1
    freq = np.bincount(seqs[a & b, 2], minlength=3) / (a & b).sum()
    np.testing.assert_allclose(freq, source.table[0, 1], atol=0.08)
