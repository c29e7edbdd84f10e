"""helpers.infra.artifacts: .npz of named arrays + checksummed JSON."""
import json
import zipfile

import numpy as np
import pytest
import torch

from helpers.infra.artifacts import (
    ArtifactError,
    array_to_strings,
    arrays_to_curves,
    arrays_to_state_dict,
    artifact_paths,
    load_artifact,
    save_artifact,
    sha256_bytes,
    strings_to_array,
    timings_from_meta,
)
from training.loop import timings_to_meta


def sample_arrays():
    rng = np.random.default_rng(0)
    return {"W": rng.standard_normal((7, 3)).astype(np.float32), "b": rng.standard_normal(3),
            "ids": np.arange(5, dtype=np.int64), "mask": np.array([True, False]),
            "empty": np.zeros((0, 4)), "scalar": np.array(2.5),
            "vocab/itos": strings_to_array(["<unk>", "Zürich", "한국어", "a"])}


def test_round_trip_keeps_values_dtypes_and_metadata_and_needs_no_pickle(tmp_path):
    arrays = sample_arrays()
    meta = {"settings": {"lr": 3e-3, "dims": (10, 20)}, "seconds": np.float64(1.25),
            "n": np.int64(3)}
    info = save_artifact(tmp_path / "m", arrays, meta)
    art = load_artifact(tmp_path / "m.npz")
    assert set(art.arrays) == set(arrays)
    for k, a in arrays.items():
        assert art.arrays[k].dtype == a.dtype and np.array_equal(art.arrays[k], a), k
    assert art.meta == {"settings": {"lr": 3e-3, "dims": [10, 20]}, "seconds": 1.25, "n": 3}
    assert info["npz"]["sha256"] == sha256_bytes((tmp_path / "m.npz").read_bytes())
    assert array_to_strings(art.arrays["vocab/itos"]) == ["<unk>", "Zürich", "한국어", "a"]
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:   # a plain NumPy reader
        assert sorted(npz.files) == sorted(arrays) and npz["W"].dtype == np.float32
    on_disk = json.loads((tmp_path / "m.json").read_text(encoding="ascii"))
    assert on_disk["format"] == "nlp-course-artifact/1"
    assert on_disk["arrays"]["W"] == {"dtype": "<f4", "shape": [7, 3]}


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
    assert art.arrays["W"].dtype == np.float32 and art.info["arrays"]["W"]["stored"] == "<f2"
    assert np.array_equal(art.arrays["W"], arrays["W"].astype(np.float16).astype(np.float32))
    assert np.array_equal(art.arrays["b"], arrays["b"])                  # only W was asked for
    assert (tmp_path / "half.npz").stat().st_size < (tmp_path / "full.npz").stat().st_size


@pytest.mark.parametrize("arrays, meta, float16, error, message", [
    (sample_arrays(), {}, ["ids"], TypeError, "only floating arrays can be stored as float16"),
    ({"big": np.array([1e6])}, {}, ["big"], ValueError, "outside float16's range"),
    (sample_arrays(), {}, ["nope"], ValueError, r"not there: \['nope'\]"),
    ({"o": np.array([{"a": 1}], dtype=object)}, {}, (), TypeError, "dtype object"),
    ({"l": [1, 2]}, {}, (), TypeError, "expected a NumPy array"),
    ({}, {"loss": float("nan")}, (), ValueError, r"meta\['loss'\] is nan"),
    ({}, {"f": object()}, (), TypeError, "JSON metadata cannot hold"),
])
def test_refuses_what_it_cannot_store_and_writes_nothing(tmp_path, arrays, meta, float16, error,
                                                         message):
    with pytest.raises(error, match=message):
        save_artifact(tmp_path / "x", arrays, meta, float16=float16)
    assert not list(tmp_path.iterdir())


def flip(path, at):
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_changed_or_missing_arrays_file_fails_with_both_checksums(tmp_path):
    info = save_artifact(tmp_path / "m", sample_arrays())
    npz, _ = artifact_paths(tmp_path / "m")
    for at in (0, npz.stat().st_size // 2, npz.stat().st_size - 1):
        save_artifact(tmp_path / "m", sample_arrays())
        flip(npz, at)
        with pytest.raises(ArtifactError) as e:
            load_artifact(tmp_path / "m")
        assert f"{npz} failed its checksum (expected {info['npz']['sha256']}, got " in str(e.value)
    npz.unlink()
    with pytest.raises(ArtifactError, match="array file .*m.npz is missing"):
        load_artifact(tmp_path / "m")


def test_a_changed_number_or_layout_in_the_metadata_is_caught(tmp_path):
    save_artifact(tmp_path / "m", sample_arrays(), {"valid_ppl": 123.25})
    _, js = artifact_paths(tmp_path / "m")
    text = js.read_text(encoding="ascii")
    for changed, error, message in [
            (text.replace("123.25", "123.26"), ArtifactError, "metadata file .* failed its"),
            (json.dumps(json.loads(text)), ArtifactError, "was modified"),    # same values
            (text[: len(text) // 2], ArtifactError, "not valid JSON")]:
        js.write_text(changed, encoding="ascii")
        with pytest.raises(error, match=message):
            load_artifact(tmp_path / "m")
    js.unlink()
    with pytest.raises(ArtifactError, match="metadata file .* is missing"):
        load_artifact(tmp_path / "m")


def test_strings_state_dict_curves_and_timings_helpers():
    assert array_to_strings(strings_to_array([])) == []
    with pytest.raises(TypeError, match="expected strings, got a int"):
        strings_to_array(["a", 3])
    with pytest.raises(TypeError, match="1-d unicode array"):
        array_to_strings(np.arange(3))
    net = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 2))
    arrays = {f"model/{k}": v.numpy().copy() for k, v in net.state_dict().items()}
    back = arrays_to_state_dict({**arrays, "other": np.zeros(1)}, prefix="model/")
    assert back.keys() == net.state_dict().keys()
    assert all(torch.equal(back[k], v) for k, v in net.state_dict().items())
    with pytest.raises(KeyError, match="no arrays start with 'nope/'"):
        arrays_to_state_dict(arrays, prefix="nope/")
    curves = {"curve/train_loss": np.array([2.5, 2.25]), "W": np.zeros(2)}
    assert arrays_to_curves(curves) == {"train_loss": [2.5, 2.25]}
    timings = {"seconds": np.array([[1.5, np.nan], [2.0, 3.0]])}
    back = timings_from_meta(json.loads(json.dumps(timings_to_meta(timings))))
    assert np.array_equal(back["seconds"], timings["seconds"], equal_nan=True)
