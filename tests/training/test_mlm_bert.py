"""training/mlm_bert.py and mlm_settings.py: the shipped run's schedule and its record."""
import numpy as np
import pytest

from helpers.course.models import load_model
from training.mlm_settings import curve_section


@pytest.fixture(scope="module")
def shipped():
    return load_model("mlm_bert")


def test_the_rate_is_constant_until_the_plateau_then_decays_linearly(shipped):
    s, m, c = shipped.settings, shipped.metrics, shipped.curve
    step, lr, acc = (np.asarray(c[k], dtype=float) for k in ("step", "lr", "valid_acc"))
    n_const, plateau = m["constant_steps"], m["plateau_step"]
    assert n_const < s["max_constant_steps"], "the constant rate reached its cap, not a plateau"
    assert n_const == plateau + s["patience"] * s["eval_every"]
    constant = step <= n_const
    assert np.all(lr[constant] == s["lr"])
    after = acc[constant][step[constant] > plateau]
    assert len(after) == s["patience"] and np.all(after <= acc[step == plateau] + s["min_delta"])
    k = step[~constant] - n_const
    np.testing.assert_allclose(lr[~constant], s["lr"] * (1 - (k - 1) / m["decay_steps"]))
    assert k[-1] == m["decay_steps"] and m["steps"] == n_const + m["decay_steps"]
    assert m["best_step"] > n_const and acc[step == m["best_step"]] == acc[~constant].max()


def test_the_settings_record_marks_the_plateau_and_the_kept_weights(shipped):
    m = shipped.metrics
    text = "\n".join(curve_section(shipped))
    assert f"| {m['plateau_step']:,} (plateau) | constant |" in text
    assert f"| {m['best_step']:,} (kept) | decay |" in text
    assert "reached its plateau" in text
