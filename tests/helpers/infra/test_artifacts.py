"""The artefact format (helpers.infra.artifacts): .npz of named arrays + checksummed JSON."""
import json
import zipfile

import numpy as np
import pytest
import torch

from helpers.infra.artifacts import (
    ArtifactError,
    ChecksumError,
    TreeCodec,
    array_to_strings,
    arrays_to_curves,
    arrays_to_state_dict,
    artifact_paths,
    curves_to_arrays,
    load_artifact,
    save_artifact,
    sha256_bytes,
    state_dict_to_arrays,
    strings_to_array,
)
from helpers.lib.text import Vocab


def sample_arrays():
    rng = np.random.default_rng(0)
    return {"W": rng.standard_normal((7, 3)).astype(np.float32), "b": rng.standard_normal(3),
            "ids": np.arange(5, dtype=np.int64), "mask": np.array([True, False]), "empty": np.zeros((0, 4)),
            "scalar": np.array(2.5), "vocab/itos": strings_to_array(["<unk>", "Zürich", "한국어", "a"])}


def test_round_trip_keeps_values_dtypes_and_metadata(tmp_path):
    arrays = sample_arrays()
    meta = {"settings": {"lr": 3e-3, "dims": (10, 20), "name": "ffnn"}, "seconds": np.float64(1.25), "n": np.int64(3)}
    info = save_artifact(tmp_path / "m", arrays, meta)
    art = load_artifact(tmp_path / "m.npz")
    assert set(art.arrays) == set(arrays)
    for k, a in arrays.items():
        assert art.arrays[k].dtype == a.dtype and np.array_equal(art.arrays[k], a), k
    assert art.meta == {"settings": {"lr": 3e-3, "dims": [10, 20], "name": "ffnn"}, "seconds": 1.25, "n": 3}
    assert info["npz"]["sha256"] == sha256_bytes((tmp_path / "m.npz").read_bytes())
    assert array_to_strings(art.arrays["vocab/itos"]) == ["<unk>", "Zürich", "한국어", "a"]


def test_a_plain_numpy_reader_without_pickle_can_read_it(tmp_path):
    save_artifact(tmp_path / "m", sample_arrays())
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:
        assert sorted(npz.files) == sorted(sample_arrays())
        assert npz["W"].dtype == np.float32
    info = json.loads((tmp_path / "m.json").read_text(encoding="ascii"))
    assert info["format"] == "nlp-course-artifact/1" and info["arrays"]["W"] == {"dtype": "<f4", "shape": [7, 3]}


def test_same_arrays_same_bytes(tmp_path):
    a = save_artifact(tmp_path / "one", sample_arrays(), {"run": 1})
    b = save_artifact(tmp_path / "two", dict(reversed(list(sample_arrays().items()))), {"run": 2})
    assert a["npz"]["sha256"] == b["npz"]["sha256"]
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    names = zipfile.ZipFile(tmp_path / "one.npz").namelist()
    assert names == sorted(names)


def test_float16_storage_is_asked_for_and_cast_back(tmp_path):
    arrays = sample_arrays()
    save_artifact(tmp_path / "half", arrays, float16=["W"])
    save_artifact(tmp_path / "full", arrays)
    art = load_artifact(tmp_path / "half")
    assert art.arrays["W"].dtype == np.float32
    assert np.array_equal(art.arrays["W"], arrays["W"].astype(np.float16).astype(np.float32))
    assert art.info["arrays"]["W"]["stored"] == "<f2"
    assert np.array_equal(art.arrays["b"], arrays["b"])                       # only W was asked for
    assert (tmp_path / "half.npz").stat().st_size < (tmp_path / "full.npz").stat().st_size
    with pytest.raises(TypeError, match="only floating arrays can be stored as float16"):
        save_artifact(tmp_path / "x", arrays, float16=["ids"])
    with pytest.raises(ValueError, match="outside float16's range"):
        save_artifact(tmp_path / "x", {"big": np.array([1e6])}, float16=True)
    with pytest.raises(ValueError, match=r"not there: \['nope'\]"):
        save_artifact(tmp_path / "x", arrays, float16=["nope"])


def test_refuses_what_needs_pickle_or_is_not_json(tmp_path):
    with pytest.raises(TypeError, match="dtype object"):
        save_artifact(tmp_path / "x", {"o": np.array([{"a": 1}], dtype=object)})
    with pytest.raises(TypeError, match="expected a NumPy array"):
        save_artifact(tmp_path / "x", {"l": [1, 2]})
    with pytest.raises(ValueError, match=r"meta\['loss'\] is nan"):
        save_artifact(tmp_path / "x", {}, {"loss": float("nan")})
    with pytest.raises(TypeError, match="JSON metadata cannot hold"):
        save_artifact(tmp_path / "x", {}, {"f": object()})
    assert not list(tmp_path.iterdir())                      # nothing half-written


def flip(path, at, bit=0x01):
    data = bytearray(path.read_bytes())
    data[at] ^= bit
    path.write_bytes(bytes(data))


def test_a_changed_byte_in_the_arrays_fails_the_checksum(tmp_path):
    info = save_artifact(tmp_path / "m", sample_arrays())
    npz, _ = artifact_paths(tmp_path / "m")
    for at in (0, npz.stat().st_size // 2, npz.stat().st_size - 1):
        save_artifact(tmp_path / "m", sample_arrays())
        flip(npz, at)
        with pytest.raises(ChecksumError) as e:
            load_artifact(tmp_path / "m")
        assert f"failed its checksum (expected {info['npz']['sha256']}, got " in str(e.value)
        assert str(npz) in str(e.value)


def test_a_changed_number_or_layout_in_the_metadata_is_caught(tmp_path):
    save_artifact(tmp_path / "m", sample_arrays(), {"valid_ppl": 123.25})
    _, js = artifact_paths(tmp_path / "m")
    text = js.read_text(encoding="ascii")
    js.write_text(text.replace("123.25", "123.26"), encoding="ascii")    # valid JSON, another value
    with pytest.raises(ChecksumError, match="metadata file .* failed its checksum"):
        load_artifact(tmp_path / "m")
    js.write_text(json.dumps(json.loads(text)), encoding="ascii")         # same values, other layout
    with pytest.raises(ChecksumError, match="was modified"):
        load_artifact(tmp_path / "m")
    js.write_text(text[: len(text) // 2], encoding="ascii")
    with pytest.raises(ArtifactError, match="not valid JSON"):
        load_artifact(tmp_path / "m")
    js.unlink()
    with pytest.raises(ArtifactError, match="metadata file .* is missing"):
        load_artifact(tmp_path / "m")


def test_missing_arrays_file(tmp_path):
    save_artifact(tmp_path / "m", sample_arrays())
    (tmp_path / "m.npz").unlink()
    with pytest.raises(ArtifactError, match="array file .*m.npz is missing"):
        load_artifact(tmp_path / "m")


def test_strings_state_dict_and_curves_helpers():
    assert array_to_strings(strings_to_array([])) == []
    with pytest.raises(TypeError, match="expected strings, got a int"):
        strings_to_array(["a", 3])
    with pytest.raises(TypeError, match="1-d unicode array"):
        array_to_strings(np.arange(3))
    net = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 2))
    arrays = state_dict_to_arrays(net.state_dict(), prefix="model/")
    assert sorted(arrays) == ["model/0.weight", "model/1.bias", "model/1.weight"]
    back = arrays_to_state_dict({**arrays, "other": np.zeros(1)}, prefix="model/")
    net2 = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 2))
    net2.load_state_dict(back)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), net2.state_dict().values()))
    curves = {"train_loss": [2.5, 2.25, 2.0], "valid_ppl": [90.5, 80.25]}
    assert arrays_to_curves(curves_to_arrays(curves)) == curves


def test_tree_codec_round_trips_nested_values_exactly(tmp_path):
    value = {"state_dict": {"w": torch.arange(6.0).reshape(2, 3)}, "curve": [(1, 2.5), (2, 2.25)],
             "step_loss": [float(x) for x in np.linspace(3, 1, 20)], "ids": list(range(10)),
             "kind": "lstm", "n": 3, "nan": float("nan"), "none": None, "flag": True,
             "np_scalar": np.float32(0.5), "pair": (np.zeros(2), "x"), "empty": []}
    arrays, meta = TreeCodec.to_arrays(value)
    assert "value/step_loss" in arrays and "value/state_dict/w" in arrays   # long float lists go to the npz
    save_artifact(tmp_path / "t", arrays, meta)
    art = load_artifact(tmp_path / "t")
    back = TreeCodec.from_arrays(art.arrays, art.meta)
    assert torch.equal(back["state_dict"]["w"], value["state_dict"]["w"])
    assert back["curve"] == [(1, 2.5), (2, 2.25)] and isinstance(back["curve"][0], tuple)
    assert back["step_loss"] == value["step_loss"] and back["ids"] == value["ids"]
    assert np.isnan(back["nan"]) and back["none"] is None and back["flag"] is True and back["empty"] == []
    assert back["np_scalar"] == np.float32(0.5) and back["np_scalar"].dtype == np.float32
    assert isinstance(back["pair"], tuple) and back["pair"][1] == "x"


def test_tree_codec_names_what_it_cannot_store():
    class Model:
        pass
    with pytest.raises(TypeError, match=r"cannot store value/model: a .*Model is not a plain value"):
        TreeCodec.to_arrays({"model": Model()})
    with pytest.raises(TypeError, match="keys must be strings not starting with '\\$'"):
        TreeCodec.to_arrays({"$tuple": 1})
    with pytest.raises(ValueError, match="two values would be stored under the name 'value/a/b'"):
        TreeCodec.to_arrays({"a/b": np.zeros(1), "a": {"b": np.ones(1)}})


VOCAB = Vocab(["<pad>", "<unk>", "the", "Zürich", "café"], [0, 0, 9, 3, 2])
RNG = np.random.default_rng(0)


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
