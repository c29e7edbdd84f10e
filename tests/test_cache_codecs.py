"""Every value the course caches goes through the artefact format (no pickle) and comes back
equal: the result dataclasses' to_arrays/from_arrays and the course's codecs, on small values."""
import numpy as np

from helpers.infra.artifacts import TreeCodec, load_artifact, save_artifact
from helpers.lib.text import Vocab

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


def test_recurrent_lm_result_through_the_default_codec(tmp_path):
    result = {"kind": "lstm", "seconds_budget": None, "steps": 152, "train_seconds": 40.5,
              "curve": [(50, 300.5), (100, 250.25), (152, 220.125)], "step_loss": [6.5 - i / 100 for i in range(152)],
              "valid_ppl": 220.0, "test_ppl": 230.0, "n_params": 1000,
              "state_dict": {"emb.weight": RNG.standard_normal((4, 2)).astype(np.float32)}}
    back = through_files(tmp_path, result, TreeCodec)
    assert back["curve"] == result["curve"] and back["step_loss"] == result["step_loss"]
    assert np.array_equal(back["state_dict"]["emb.weight"], result["state_dict"]["emb.weight"])
    assert {k: v for k, v in back.items() if k != "state_dict"} == {k: v for k, v in result.items() if k != "state_dict"}
