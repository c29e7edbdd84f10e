"""helpers.lib.batching: index batches, n-gram windows, random windows, BPTT streams and padding
are their formulas, and bad input is named."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import batching as BA
from tests.props import budget, dims, raises_naming


@budget()
@given(n=st.integers(0, 30), bs=dims(1, 8), drop=st.booleans(), shuffle=st.booleans())
def test_index_batches_cover_every_index_once(n, bs, drop, shuffle):
    rng = np.random.default_rng(n) if shuffle else None
    batches = list(BA.minibatch_indices(n, bs, rng, drop_last=drop))
    seen = np.concatenate(batches) if batches else np.array([], int)
    assert len(set(seen.tolist())) == len(seen)
    if drop:
        assert len(seen) == n - n % bs
    else:
        assert sorted(seen.tolist()) == list(range(n))
    assert all(len(b) == bs for b in batches[:-1])
    raises_naming(lambda: list(BA.minibatch_indices(n, 0)), "batch_size", ValueError)
    raises_naming(lambda: list(BA.minibatch_indices(float(n), bs)), "n", TypeError)


@budget()
@given(st.data())
def test_windows_streams_and_padding_are_their_formulas(data):
    ids = np.array(data.draw(st.lists(st.integers(0, 9), min_size=2, max_size=20)))
    c = data.draw(st.integers(1, len(ids) - 1))
    X, y = BA.ngram_windows(ids, c)
    assert all(list(X[i]) == list(ids[i:i + c]) and y[i] == ids[i + c] for i in range(len(y)))
    raises_naming(lambda: BA.ngram_windows(ids.astype(float), c), "ids", TypeError)
    raises_naming(lambda: BA.ngram_windows(ids, len(ids)), "tokens", ValueError)
    bs, seq = data.draw(st.integers(1, max(1, (len(ids) - 1)))), data.draw(dims(1, 5))
    pairs = list(BA.bptt_batches(ids, bs, seq))
    n_cols = (len(ids) - 1) // bs
    np.testing.assert_array_equal(np.concatenate([x for x, _ in pairs], axis=1),
                                  ids[:n_cols * bs].reshape(bs, n_cols))   # row b continues row b
    np.testing.assert_array_equal(np.concatenate([y for _, y in pairs], axis=1),
                                  ids[1:n_cols * bs + 1].reshape(bs, n_cols))
    raises_naming(lambda: list(BA.bptt_batches(ids.astype(float), bs, seq)), "ids", TypeError)
    raises_naming(lambda: list(BA.bptt_batches(ids, len(ids), seq)), "batch_size", ValueError)
    seqs = [list(ids[: data.draw(st.integers(0, len(ids)))]) for _ in range(3)]
    if any(seqs):
        padded, mask = BA.pad_sequences(seqs, pad_id=99)
        assert mask.sum(1).tolist() == [len(s) for s in seqs] and np.all(padded[~mask] == 99)
        assert all(list(padded[i, :len(s)]) == s for i, s in enumerate(seqs))
    raises_naming(lambda: BA.pad_sequences([[1.5, 2.0]], 0), "sequence 0", TypeError)
    raises_naming(lambda: BA.pad_sequences([[1]], 0.5), "pad_id", TypeError)
    with pytest.raises(ValueError, match="empty list"):
        BA.pad_sequences([], 0)
    with pytest.raises(ValueError, match="every sequence is empty"):
        BA.pad_sequences([[], []], pad_id=0)


def test_every_random_window_start_is_drawn_the_last_one_included():
    x, y = BA.random_windows(np.arange(10), 2000, 7, np.random.default_rng(0))
    assert x.shape == y.shape == (2000, 7) and x.dtype == y.dtype == np.int64
    assert np.array_equal(y, x + 1)
    counts = np.bincount(x[:, 0])                # the valid starts: 0 .. len(ids) - seq_len - 1
    assert len(counts) == 3 and counts.min() > 550
    x, y = BA.random_windows(np.array([5, 6, 7, 8]), 3, 3, np.random.default_rng(0))
    assert x.tolist() == [[5, 6, 7]] * 3 and y.tolist() == [[6, 7, 8]] * 3
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="needs 4 tokens, the stream has 3"):
        BA.random_windows(np.arange(3), 1, 3, rng)
    with pytest.raises(TypeError, match="1-D integer array"):
        BA.random_windows(np.zeros(10), 1, 3, rng)
    with pytest.raises(ValueError, match="batch_size and seq_len must be >= 1"):
        BA.random_windows(np.arange(10), 0, 3, rng)
