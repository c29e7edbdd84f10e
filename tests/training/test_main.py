"""``python -m training`` end to end on a toy model; workers, command line, several trainings."""
import numpy as np
import pytest
import torch

import training.__main__ as train
from helpers.course import models
from helpers.course.models import load_model, read_manifest
from helpers.infra.artifacts import load_artifact
from training.loop import torch_snapshot, train_steps
from training.registry import MODELS, ModelEntry, render_readme, write_manifest
from training.runlog import read_log, step_losses


def toy_train(settings, log, max_steps=None, progress=True):
    """A seeded linear regression with early stopping, trained by the course's loop."""
    g = torch.Generator().manual_seed(settings["seed"])
    X = torch.randn(200, 3, generator=g)
    y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(200, generator=g)
    model = torch.nn.Linear(3, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    opt = torch.optim.SGD(model.parameters(), lr=settings["lr"])

    def step(k):
        loss = ((model(X[:150])[:, 0] - y[:150]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def evaluate(k):
        with torch.no_grad():
            return {"valid_mse": ((model(X[150:])[:, 0] - y[150:]) ** 2).mean().item()}

    snapshot, restore = torch_snapshot(model)
    run = train_steps(step, 500, log, evaluate=evaluate, eval_every=10, metric="valid_mse",
                      patience=2, min_delta=1e-4, snapshot=snapshot, restore=restore,
                      limit=max_steps, progress=progress)
    return {"w": model.weight.detach().numpy()[0]}, {"settings": settings}, {"valid_mse": run.best}


def toy_load(artifact):
    return artifact.arrays["w"]


TOY = ModelEntry("toy", "a toy linear model for the pipeline test", "01", {"lr": 0.1, "seed": 0},
                 toy_train, lambda w: ("w_norm", float(np.linalg.norm(w))))


def test_train_one_writes_artefact_log_and_manifest_record(tmp_path, monkeypatch):
    monkeypatch.setitem(MODELS, "toy", TOY)
    monkeypatch.setitem(models.LOADERS, "toy", "tests.training.test_main:toy_load")
    for v in train.THREAD_VARIABLES:
        monkeypatch.setenv(v, "1")
    record = train.train_one("toy", root=tmp_path, progress=False)
    art = load_artifact(tmp_path / "toy")
    assert art.info["npz"]["sha256"] == record["sha256"]
    assert record["size"] == (tmp_path / "toy.npz").stat().st_size
    norm = float(np.linalg.norm(art.arrays["w"]))
    assert record["subset_metric"] == {"name": "w_norm", "value": norm}
    assert record["command"] == "make models NAME=toy" and record["threads"] == 1
    assert record["steps"] > 10
    assert np.allclose(art.arrays["w"], [1.0, -2.0, 0.5], atol=0.1)
    events = read_log(tmp_path / "logs" / "toy.jsonl.gz")
    assert [e["event"] for e in events][:2] == ["start", "steps"] and events[-1]["event"] == "end"
    assert [e for e in events if e["event"] == "stop"][0]["kept"] == "best"
    assert len(step_losses(events)) == record["steps"]
    write_manifest({"format": models.MANIFEST_FORMAT, "models": {"toy": record}}, root=tmp_path)
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert f"`{record['sha256']}`" in readme and "`make models NAME=toy`" in readme
    assert load_model("toy", root=tmp_path).tolist() == art.arrays["w"].tolist()
    again = train.train_one("toy", root=tmp_path / "again", progress=False)   # same bytes
    assert again["sha256"] == record["sha256"]
    assert not torch.are_deterministic_algorithms_enabled()                    # left as found


def test_a_worker_without_the_thread_variables_is_refused(monkeypatch, tmp_path):
    monkeypatch.setitem(MODELS, "toy", TOY)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with pytest.raises(RuntimeError, match=r"toy trains with 1 thread\(s\), but this process has "
                                           r".*OMP_NUM_THREADS"):
        train.train_one("toy", root=tmp_path)


def test_command_line_errors(capsys):
    with pytest.raises(SystemExit):
        train.main([])
    assert "name the models to train" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["nope"])
    assert "unknown model(s) ['nope']" in capsys.readouterr().err
    assert train.main(["--list"]) == 0
    assert "ffnn_lm" in capsys.readouterr().out


FAKE_WORKER = """
import json, os, sys, time
name, result = sys.argv[1], sys.argv[2]
assert os.environ["OMP_NUM_THREADS"] == "1", os.environ.get("OMP_NUM_THREADS")
time.sleep(0.2)
if name == "bad":
    print("something went wrong in", name)
    sys.exit(3)
record = {"file": name + ".npz", "sha256": "0" * 64, "size": 1, "what": name, "lesson": "01",
          "settings": {}, "metrics": {"m": 1.0}, "subset_metric": {"name": "m", "value": 1.0},
          "train_seconds": 0.2, "cpu_seconds": 0.1, "threads": 1, "deterministic": True, "steps": 5,
          "command": "make models NAME=" + name}
open(result, "w").write(json.dumps(record))
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_schedules_workers_records_each_and_reports_failures(tmp_path, monkeypatch, capsys,
                                                                 jobs):
    for name in ("a", "b", "bad"):
        monkeypatch.setitem(MODELS, name, TOY)
    monkeypatch.setenv("OMP_NUM_THREADS", "4")         # the workers get the entry's 1 all the same
    monkeypatch.setattr(train, "worker_command", lambda name, result, root: [
        train.sys.executable, "-c", FAKE_WORKER, name, str(result)])
    assert train.run(["a", "bad", "b"], jobs=jobs, root=tmp_path) == 1
    out = capsys.readouterr()
    assert f"training 3 model(s), {jobs} at a time" in out.out and "failed: ['bad']" in out.out
    assert "bad: FAILED (exit code 3)" in out.out + out.err
    if jobs > 1:                      # side by side, a worker's output is shown when it fails
        assert "something went wrong in bad" in out.out + out.err
    manifest = read_manifest(tmp_path)
    assert sorted(manifest["models"]) == ["a", "b"]
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == render_readme(manifest)
