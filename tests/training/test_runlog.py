"""training.runlog: the training log, the environment it records, when a replay is exact."""
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import training
from training.runlog import (
    RunLog,
    cpu_description,
    library_versions,
    read_log,
    replays_exactly,
    run_environment,
    step_losses,
    tree_is_dirty,
)


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
    events = read_log(log.write(tmp_path / "logs" / "toy.jsonl.gz"))
    kinds = ["start", "steps", "steps", "eval", "steps", "steps", "end"]
    assert [e["event"] for e in events] == kinds
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
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                       check=True, capture_output=True)
    (tmp_path / "data" / "models").mkdir(parents=True)
    (tmp_path / "data" / "models" / "manifest.json").write_text("{}", encoding="utf-8")
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "start")
    assert tree_is_dirty(tmp_path) is False
    (tmp_path / "data" / "models" / "manifest.json").write_text('{"a": 1}', encoding="utf-8")
    assert tree_is_dirty(tmp_path) is False                    # a model was trained
    (tmp_path / "train.py").write_text("x = 2\n", encoding="utf-8")
    assert tree_is_dirty(tmp_path) is True                     # the code changed
    assert tree_is_dirty(tmp_path.parent / "no-such-checkout") is None


def test_run_environment_names_versions_threads_and_commit(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    env = run_environment()
    assert env["versions"]["numpy"] == np.__version__
    assert env["versions"]["torch"] == torch.__version__
    assert set(env["versions"]) >= {"python", "numpy", "torch", "scipy", "gensim"}
    assert env["threads"]["OMP_NUM_THREADS"] == "1"
    assert env["threads"]["torch"] == torch.get_num_threads()
    checkout = Path(training.__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True,
                          text=True)
    if head.returncode == 0:                  # a git checkout: the log names its commit
        assert env["git"]["commit"] == head.stdout.strip()
    else:
        assert env["git"]["commit"] is None
    assert env["git"]["dirty"] in (True, False, None)
    assert env["cpu"] == cpu_description() and env["cpu"]["vendor"]
    assert env["cpu"]["torch"] == torch.backends.cpu.get_cpu_capability()


def test_an_exact_replay_is_expected_only_on_the_same_versions_and_processor():
    versions, cpu = library_versions(), cpu_description()
    assert replays_exactly(versions, cpu)
    assert replays_exactly(versions, {"vendor": cpu["vendor"]})    # a record with only the vendor
    other_vendor = "AuthenticAMD" if cpu["vendor"] == "GenuineIntel" else "GenuineIntel"
    assert not replays_exactly(versions, {**cpu, "vendor": other_vendor})
    assert not replays_exactly(versions, {**cpu, "torch": "some other SIMD level"})
    assert not replays_exactly({**versions, "numpy": "0.0"}, cpu)
    assert not replays_exactly(versions, None)                     # processor not recorded
    assert replays_exactly(versions, {})                           # a run independent of it
    assert not replays_exactly({**versions, "numpy": "0.0"}, {})
