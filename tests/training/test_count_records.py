"""Tests of training.count_records: the shipped records of LSA and PPMI-SVD belong to the vectors
the lessons rebuild. tests/training/test_registry.py recomputes LSA's report-half ρ from them."""
from helpers.course import word_vectors
from helpers.course.models import load_model
from training.count_records import SETTINGS


def test_the_records_are_of_the_validated_settings_the_lessons_rebuild():
    recs = load_model("wv_count_records")
    assert list(recs) == SETTINGS["methods"]
    for name, rec in recs.items():
        assert rec["settings"] == word_vectors.VALIDATED_COUNT_SETTINGS[name], name
        assert rec["report_intervals"]["wordsim"][0] == rec["report"]["wordsim"], name
    module, function = SETTINGS["source"].rsplit(".", 1)
    assert module == word_vectors.__name__ and callable(getattr(word_vectors, function))
