"""helpers.course.study_records: the studies' committed JSON records."""
import pytest

from helpers.course.study_records import load_budget, read_log


def test_the_records_are_read_from_data_models_logs():
    assert read_log("wv_settings.json")["best"] in read_log("wv_settings.json")["settings"]
    assert set(load_budget()["chosen"]) >= {"wv_torch_skipgram", "wv_numpy_skipgram"}
    seq = read_log("wv_sequential.json")
    assert len(seq["batched"]) == len(seq["one_pair_at_a_time"])
    assert seq["settings"]["batch"] == 1024
    with pytest.raises(FileNotFoundError, match="training/"):
        read_log("no_such_study.json")
