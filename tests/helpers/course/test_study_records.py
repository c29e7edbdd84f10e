"""Tests of helpers.course.study_records: the studies' committed records read back whole."""
from types import SimpleNamespace

import numpy as np
import pytest

from helpers.course.models import load_model
from helpers.course.study_records import load_budget, load_count_records, read_log


def test_the_records_are_read_from_data_models_logs():
    assert read_log("wv_settings.json")["best"] in read_log("wv_settings.json")["settings"]
    assert set(load_budget()["chosen"]) >= {"wv_torch_skipgram", "wv_numpy_skipgram"}
    seq = read_log("wv_sequential.json")
    assert len(seq["batched"]) == len(seq["one_pair_at_a_time"]) and seq["settings"]["batch"] == 1024
    recs = load_model("wv_count_records")
    assert set(recs) == {"LSA", "PPMI-SVD"} and recs is load_count_records(SimpleNamespace(meta={"records": recs}))
    with pytest.raises(FileNotFoundError, match="training/"):
        read_log("no_such_study.json")


def test_the_shipped_tricks_study_reads_back_whole():
    shipped = load_model("wv_tricks")
    s = shipped.metadata["settings"]
    S, V, E = len(s["seeds"]), len(s["variants"]), s["epochs"]
    assert shipped.variants == ["shipped", "no_subsampling", "fixed_window"] and (S, V, E) == (3, 3, 10)
    for key, c in shipped.curves.items():
        assert c.shape == (S, V, E) and np.all(np.isfinite(c)), key
    for key, f in shipped.final.items():
        assert f.shape == (S, V) and np.all(np.isfinite(f)), key
    assert np.all(shipped.curves["cpu_seconds"] > 0) and shipped.cpu_seconds().shape == (S, V)
    assert np.array_equal(shipped.final["report/wordsim"], shipped.curves["report/wordsim"][:, :, -1])
    assert np.allclose(shipped.items["analogy"].mean(axis=2), shipped.final["report/analogy"], atol=1e-12)
    with pytest.raises(ValueError, match="unknown variant"):
        shipped.index("nothing")
