"""Early stopping (helpers.infra.early_stopping) and the training log (helpers.infra.runlog)."""
import math
import subprocess

import numpy as np
import pytest
import torch

from helpers.infra.early_stopping import EarlyStopping
from helpers.infra.runlog import (
    RunLog,
    cpu_description,
    library_versions,
    read_log,
    replay_agrees,
    replays_exactly,
    run_environment,
    step_losses,
    tree_is_dirty,
)


def run(values, **kw):
    """Feed ``values`` (one per evaluation, steps 10, 20, ...) until it says stop; the state is the step."""
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
    assert "best 3 at step 30; stopped: no improvement larger than 0 in 3 evaluations" == es.summary()


def test_an_improvement_resets_the_count():
    es = run([5.0, 5.5, 5.6, 4.0, 4.5, 4.6, 4.7], patience=3)
    assert es.stopped and es.best_step == 40 and len(es.decisions) == 7


def test_min_delta_ignores_tiny_improvements():
    assert run([5.0, 4.99, 4.98, 4.97], patience=3, min_delta=0.05).best_step == 10
    assert run([5.0, 4.99, 4.98, 4.97], patience=3, min_delta=0.0).best_step == 40
    es = run([5.0, 4.94, 4.93, 4.92, 4.91], patience=3, min_delta=0.05)
    assert es.best == 4.94 and es.stopped               # better than the *best* by min_delta, not the last


def test_max_mode_for_accuracies():
    es = run([0.5, 0.6, 0.55, 0.58, 0.59], patience=3, mode="max")
    assert es.stopped and es.best == 0.6 and es.best_step == 20


def test_not_stopped_when_still_improving():
    es = run([5.0, 4.0, 3.0], patience=2)
    assert not es.stopped and es.best_step == 30 and "not stopped (0 of 2" in es.summary()


def test_the_best_state_is_a_copy_taken_only_on_improvement():
    w = torch.zeros(3)
    es, calls = EarlyStopping(patience=2), []

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
    with pytest.raises(ValueError, match="the validation metric is nan at step 7; the run has diverged"):
        EarlyStopping().update(math.nan, 7)
    es = run([1.0, 2.0], patience=1)
    with pytest.raises(RuntimeError, match="after early stopping decided to stop"):
        es.update(0.5, 30)


# ---------------------------------------------------------------- the training log
def test_log_round_trip_groups_steps_and_keeps_every_loss(tmp_path):
    log = RunLog()
    log.event("start", model="toy", settings={"lr": 0.1, "dims": (2, 3)})
    losses = [float(x) for x in np.random.default_rng(0).random(2500)]
    for loss in losses[:1200]:
        log.step(loss)
    log.event("eval", step=1200, valid_nll=np.float64(2.5))
    for loss in losses[1200:]:
        log.step(loss)
    assert log.step_losses() == losses and log.steps == 2500
    log.event("end", wall_seconds=1.5)
    path = log.write(tmp_path / "logs" / "toy.jsonl.gz")
    events = read_log(path)
    assert [e["event"] for e in events] == ["start", "steps", "steps", "eval", "steps", "steps", "end"]
    assert [e["first"] for e in events if e["event"] == "steps"] == [1, 1001, 1201, 2201]
    assert step_losses(events) == losses                       # exactly: floats written with repr
    assert events[0]["settings"] == {"lr": 0.1, "dims": [2, 3]} and events[3]["valid_nll"] == 2.5


def test_log_refuses_what_json_cannot_hold_and_gaps():
    with pytest.raises(ValueError, match="log event 'eval'.*is nan"):
        RunLog().event("eval", loss=float("nan"))
    with pytest.raises(ValueError, match="the log's steps jump from 0 to 5"):
        step_losses([{"event": "steps", "first": 5, "loss": [1.0]}])


def test_a_checkout_is_dirty_for_code_changes_not_for_training_outputs(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)
    (tmp_path / "data" / "models").mkdir(parents=True)
    (tmp_path / "data" / "models" / "manifest.json").write_text("{}", encoding="utf-8")
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "start")
    assert tree_is_dirty(tmp_path) is False
    (tmp_path / "data" / "models" / "manifest.json").write_text('{"a": 1}', encoding="utf-8")     # a model was trained
    assert tree_is_dirty(tmp_path) is False
    (tmp_path / "train.py").write_text("x = 2\n", encoding="utf-8")                            # the code changed
    assert tree_is_dirty(tmp_path) is True
    assert tree_is_dirty(tmp_path.parent / "no-such-checkout") is None


def test_run_environment_names_versions_threads_and_commit(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    env = run_environment()
    assert env["versions"]["numpy"] == np.__version__ and env["versions"]["torch"] == torch.__version__
    assert set(env["versions"]) >= {"python", "numpy", "torch", "scipy", "gensim"}
    assert env["threads"]["OMP_NUM_THREADS"] == "1" and env["threads"]["torch"] == torch.get_num_threads()
    assert env["git"]["commit"] is None or len(env["git"]["commit"]) == 40
    assert env["git"]["dirty"] in (True, False, None)
    assert env["cpu"] == cpu_description() and env["cpu"]["vendor"]
    assert env["cpu"]["torch"] == torch.backends.cpu.get_cpu_capability()


def test_an_exact_replay_is_expected_only_on_the_same_versions_and_processor():
    versions, cpu = library_versions(), cpu_description()
    assert replays_exactly(versions, cpu)
    assert replays_exactly(versions, {"vendor": cpu["vendor"]})         # a record that has only the vendor
    other_vendor = "AuthenticAMD" if cpu["vendor"] == "GenuineIntel" else "GenuineIntel"
    assert not replays_exactly(versions, {**cpu, "vendor": other_vendor})
    assert not replays_exactly(versions, {**cpu, "torch": "some other SIMD level"})
    assert not replays_exactly({**versions, "numpy": "0.0"}, cpu)
    assert not replays_exactly(versions, None)                          # processor not recorded
    assert replays_exactly(versions, {})                                # a run that does not depend on it
    assert not replays_exactly({**versions, "numpy": "0.0"}, {})


def test_a_replay_agrees_exactly_or_to_rounding():
    logged = [2.5, 2.25, 2.125]
    assert replay_agrees(list(logged), logged, exact=True)
    assert not replay_agrees([2.5, 2.25, 2.1250001], logged, exact=True)       # one bit is enough
    assert replay_agrees([2.5, 2.25, 2.1250001], logged, exact=False)          # to rounding
    assert not replay_agrees([2.5, 2.25, 2.2], logged, exact=False)            # another run
    assert not replay_agrees(logged[:2], logged, exact=False)                  # a missing step
