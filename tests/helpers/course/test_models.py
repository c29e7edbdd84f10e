"""helpers.course.models: a shipped model is checked before it is loaded, and a damaged or
missing file is an error naming both checksums and the command that rebuilds it."""
import json
import shutil

import pytest

from helpers.course import models
from helpers.course.models import ModelFileError, load_model, model_dir, read_manifest

MANIFEST = read_manifest()
SHIPPED = sorted(MANIFEST["models"])


@pytest.mark.parametrize("name", SHIPPED)
def test_a_modified_or_missing_file_names_the_checksums_and_the_rebuild_command(tmp_path, name):
    for file in ("manifest.json", f"{name}.npz", f"{name}.json"):         # the model, copied
        shutil.copy(model_dir() / file, tmp_path / file)
    path, model_copy = tmp_path / MANIFEST["models"][name]["file"], tmp_path
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError) as e:
        load_model(name, root=model_copy)
    msg = str(e.value)
    assert (f"model file {path} is corrupt or has been modified: expected sha256 "
            f"{MANIFEST['models'][name]['sha256']}") in msg
    assert f"got {models.sha256_of(path)}" in msg
    assert f"make models NAME={name}" in msg and f"python -m training {name}" in msg
    path.unlink()
    with pytest.raises(ModelFileError, match=rf"model file .*{name}.npz is missing .*NAME={name}"):
        load_model(name, root=model_copy)


def test_unknown_and_untrained_models(tmp_path):
    with pytest.raises(KeyError, match="no shipped model named 'gpt'; the course has"):
        load_model("gpt")
    with pytest.raises(ModelFileError, match="manifest.json is missing.*checkout.*NAME=ffnn_lm"):
        load_model("ffnn_lm", root=tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "nlp-course-models/1", "models": {}}',
                                            encoding="utf-8")
    with pytest.raises(ModelFileError, match="not in .*manifest.json .*make models NAME=ffnn_lm"):
        load_model("ffnn_lm", root=tmp_path)


def test_a_broken_or_missing_manifest_names_the_fix(tmp_path):
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFileError, match=r"manifest.json is not valid JSON .*git checkout -- "
                                             r"data/models/manifest.json"):
        load_model("ffnn_lm", tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps([1, 2]), encoding="utf-8")
    with pytest.raises(ModelFileError, match="is not a models manifest"):
        load_model("ffnn_lm", tmp_path)
