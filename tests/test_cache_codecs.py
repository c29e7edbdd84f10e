"""Every value the course caches goes through the artefact format (no pickle) and comes back
equal: the result dataclasses' to_arrays/from_arrays and the course's codecs, on small values."""
import numpy as np
import pytest

from helpers.course.scaling_grid import ScalingGrid
from helpers.course.word_vectors import CountVectorsCodec
from helpers.infra.artifacts import TreeCodec, load_artifact, save_artifact
from helpers.lib.glove import GloVeVectors
from helpers.lib.text import Vocab
from helpers.lib.word2vec import TrainedVectors

RNG = np.random.default_rng(0)
VOCAB = Vocab(["<pad>", "<unk>", "the", "Zürich", "café"], [0, 0, 9, 3, 2])


def through_files(tmp_path, value, codec):
    """value -> arrays + meta -> .npz + .json -> read back with checks -> value."""
    arrays, meta = codec.to_arrays(value)
    save_artifact(tmp_path / "v", arrays, meta)
    art = load_artifact(tmp_path / "v")
    return codec.from_arrays(art.arrays, art.meta)


def test_vocab(tmp_path):
    back = through_files(tmp_path, VOCAB, Vocab)
    assert back.itos == VOCAB.itos and back.counts.tolist() == VOCAB.counts.tolist() and back.specials == VOCAB.specials
    assert back.encode(["café", "nope"]).tolist() == [4, 1]


def test_word2vec_vectors(tmp_path):
    tv = TrainedVectors(RNG.standard_normal((5, 3)).astype(np.float32), RNG.standard_normal((5, 3)).astype(np.float32),
                        VOCAB, 12.5, 1e5, [4.1, 3.2], {"dim": 3, "sample": 1e-3, "model": "skipgram"})
    back = through_files(tmp_path, tv, TrainedVectors)
    assert np.array_equal(back.W, tv.W) and back.W.dtype == np.float32 and np.array_equal(back.C, tv.C)
    assert back.vocab.itos == VOCAB.itos and (back.seconds, back.words_per_second) == (12.5, 1e5)
    assert back.epoch_loss == [4.1, 3.2] and back.config == tv.config


@pytest.mark.parametrize("vocab", [VOCAB, ["a", "b", "c", "d", "e"], None], ids=["Vocab", "list", "none"])
def test_glove_vectors(tmp_path, vocab):
    g = GloVeVectors(*(RNG.standard_normal(s).astype(np.float32) for s in [(5, 3), (5, 3), (5,), (5,)]),
                     vocab=vocab, seconds=3.0, epoch_loss=[0.5, 0.25], config={"x_max": 100.0},
                     epoch_metrics=[{"wordsim353": 0.25}])
    back = through_files(tmp_path, g, GloVeVectors)
    assert np.array_equal(back.vectors(), g.vectors()) and back.epoch_metrics == g.epoch_metrics
    assert (back.vocab.itos if isinstance(vocab, Vocab) else back.vocab) == (VOCAB.itos if isinstance(vocab, Vocab) else vocab)


def test_scaling_grid(tmp_path):
    grid = ScalingGrid((0.5, 1.0), (10, 20), np.array([100, 200]), {"analogy": np.array([[0.1, np.nan], [0.2, 0.3]])},
                       np.ones((2, 2)), {"analogy": np.int64(40)}, 321, {"model": "cbow", "sample": 1e-3})
    back = through_files(tmp_path, grid, ScalingGrid)
    assert back.fractions == (0.5, 1.0) and back.dims == (10, 20) and back.n_words == 321
    assert np.array_equal(back.scores["analogy"], grid.scores["analogy"], equal_nan=True)
    assert back.n_scored == {"analogy": 40} and back.config == grid.config


def test_count_based_vectors_share_one_vocabulary(tmp_path):
    value = {"LSA": (RNG.standard_normal((5, 2)).astype(np.float32), VOCAB, 1.5),
             "PPMI-SVD": (RNG.standard_normal((5, 2)).astype(np.float32), VOCAB, 2.5)}
    arrays, _ = CountVectorsCodec.to_arrays(value)
    assert sum(k.startswith("vocab/") for k in arrays) == 2          # itos and counts, once
    back = through_files(tmp_path, value, CountVectorsCodec)
    assert list(back) == ["LSA", "PPMI-SVD"] and back["LSA"][1] is back["PPMI-SVD"][1]
    assert all(np.array_equal(back[k][0], value[k][0]) and back[k][2] == value[k][2] for k in value)


def test_recurrent_lm_result_through_the_default_codec(tmp_path):
    result = {"kind": "lstm", "seconds_budget": None, "steps": 152, "train_seconds": 40.5,
              "curve": [(50, 300.5), (100, 250.25), (152, 220.125)], "step_loss": [6.5 - i / 100 for i in range(152)],
              "valid_ppl": 220.0, "test_ppl": 230.0, "n_params": 1000,
              "state_dict": {"emb.weight": RNG.standard_normal((4, 2)).astype(np.float32)}}
    back = through_files(tmp_path, result, TreeCodec)
    assert back["curve"] == result["curve"] and back["step_loss"] == result["step_loss"]
    assert np.array_equal(back["state_dict"]["emb.weight"], result["state_dict"]["emb.weight"])
    assert {k: v for k, v in back.items() if k != "state_dict"} == {k: v for k, v in result.items() if k != "state_dict"}
