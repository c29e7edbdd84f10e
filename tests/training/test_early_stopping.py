"""training.early_stopping: patience, min_delta, the best state."""
import math

import pytest
import torch

from training.early_stopping import EarlyStopping


def run(values, **kw):
    """Feed ``values`` (evaluations at steps 10, 20, ...) until it says stop."""
    es = EarlyStopping(**kw)
    for i, v in enumerate(values, 1):
        if es.update(v, 10 * i, snapshot=lambda i=i: {"step": 10 * i}):
            break
    return es


def test_stops_after_patience_evaluations_without_improvement_and_keeps_the_best():
    es = run([5.0, 4.0, 3.0, 3.5, 3.2, 3.1, 2.0], patience=3)
    assert es.stopped and es.best == 3.0 and es.best_step == 30 and es.best_state == {"step": 30}
    assert [d["improved"] for d in es.decisions] == [True, True, True, False, False, False]
    assert [d["bad_evals"] for d in es.decisions] == [0, 0, 0, 1, 2, 3]
    assert es.summary() == ("best 3 at step 30; stopped: no improvement larger than 0 in 3 "
                            "evaluations")
    assert run([5.0, 5.5, 5.6, 4.0, 4.5, 4.6, 4.7], patience=3).best_step == 40   # count reset


def test_min_delta_and_max_mode():
    assert run([5.0, 4.99, 4.98, 4.97], patience=3, min_delta=0.05).best_step == 10
    assert run([5.0, 4.99, 4.98, 4.97], patience=3, min_delta=0.0).best_step == 40
    es = run([5.0, 4.94, 4.93, 4.92, 4.91], patience=3, min_delta=0.05)
    assert es.best == 4.94 and es.stopped        # better than the *best* by min_delta, not the last
    es = run([0.5, 0.6, 0.55, 0.58, 0.59], patience=3, mode="max")
    assert es.stopped and es.best == 0.6 and es.best_step == 20
    es = run([5.0, 4.0, 3.0], patience=2)
    assert not es.stopped and "not stopped (0 of 2" in es.summary()


def test_the_best_state_is_a_copy_taken_only_on_improvement():
    w, calls = torch.zeros(3), []
    es = EarlyStopping(patience=2)

    def snapshot():
        calls.append(1)
        return {"w": w}
    es.update(1.0, 1, snapshot)
    w += 5                                    # training goes on in place
    es.update(2.0, 2, snapshot)
    assert len(calls) == 1 and torch.equal(es.best_state["w"], torch.zeros(3))


def test_bad_input_and_misuse():
    with pytest.raises(ValueError, match="patience must be an integer >= 1, got 0"):
        EarlyStopping(patience=0)
    with pytest.raises(ValueError, match="min_delta must be finite and >= 0"):
        EarlyStopping(min_delta=-1)
    with pytest.raises(ValueError, match="mode must be 'min' or 'max'"):
        EarlyStopping(mode="lower")
    with pytest.raises(ValueError, match="metric is nan at step 7; the run has diverged"):
        EarlyStopping().update(math.nan, 7)
    es = run([1.0, 2.0], patience=1)
    with pytest.raises(RuntimeError, match="after early stopping decided to stop"):
        es.update(0.5, 30)
