"""The shipped models (data/models/) and the pipeline that makes them (training).

- every registered model is in the manifest, and every manifest entry is a registered model;
- each file's sha256 matches the manifest, it loads, and it reproduces the held-out metric
  recorded at training time on its fixed subset;
- each deterministic trainer's first steps (12, or its replay_steps: 10 for the character LMs) from scratch reproduce the logged losses;
- a modified or missing file gives an error naming both checksums and the rebuild command;
- the README is generated from the manifest; all files together stay under 40 MB;
- the pipeline (artefact, log, manifest record) works end to end on a toy model.
"""
import math
import shutil

import numpy as np
import pytest
import torch

import training.__main__ as train
from helpers.course import models
from helpers.course.models import ModelFileError, load_model, model_dir, read_manifest
from helpers.infra.artifacts import load_artifact
from helpers.infra.runlog import (
    REPLAY_RTOL,
    RunLog,
    cpu_description,
    library_versions,
    read_log,
    step_losses,
)
from training.registry import (
    MODELS,
    SIZE_LIMIT_BYTES,
    ModelEntry,
    render_readme,
    replays_exactly_here,
    write_manifest,
)

MANIFEST = read_manifest()
SHIPPED = sorted(MANIFEST["models"])


def test_every_registered_model_is_shipped_and_nothing_else():
    missing = sorted(set(MODELS) - set(SHIPPED))
    assert not missing, f"registered but not trained: {missing}; run `make models NAME={missing[0]}`"
    assert not set(SHIPPED) - set(MODELS), f"in the manifest but not registered: {sorted(set(SHIPPED) - set(MODELS))}"


def test_the_readme_is_generated_from_the_manifest():
    readme = (model_dir() / "README.md").read_text(encoding="utf-8")
    assert readme == render_readme(MANIFEST), ("data/models/README.md differs from the manifest: regenerate it "
                                               "(`make models` does) instead of editing it")


def test_total_size_under_the_limit():
    files = sorted(model_dir().glob("*.npz"))
    assert {p.name for p in files} == {r["file"] for r in MANIFEST["models"].values()}, "stray or missing .npz files"
    total = sum(p.stat().st_size for p in files)
    assert total <= SIZE_LIMIT_BYTES, f"data/models/*.npz take {total:,} bytes, over the {SIZE_LIMIT_BYTES:,} limit"
    for name, r in MANIFEST["models"].items():
        assert (model_dir() / r["file"]).stat().st_size == r["size"], name
    # the limit is for everything shipped under data/models: metadata, logs and baselines included
    everything = sum(p.stat().st_size for p in model_dir().rglob("*") if p.is_file())
    assert everything <= SIZE_LIMIT_BYTES, f"data/models/ holds {everything:,} bytes, over the {SIZE_LIMIT_BYTES:,} limit"


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_file_loads_and_reproduces_its_recorded_metric(name):
    record = MANIFEST["models"][name]
    loaded = load_model(name)                                 # checks the sha256 first
    metric, value = MODELS[name].subset_metric(loaded)
    assert metric == record["subset_metric"]["name"]
    # recorded at training time from the stored file by the same code; a tolerance only for
    # another machine's floating-point library summing in another order
    assert math.isclose(value, record["subset_metric"]["value"], rel_tol=1e-6), (
        f"{name}: {metric} is {value}, the manifest records {record['subset_metric']['value']}")
    art = load_artifact(model_dir() / name)
    assert art.meta["model"] == name and art.info["npz"]["sha256"] == record["sha256"]
    assert art.meta["settings"] == record["settings"] == MODELS[name].settings, (
        f"{name}: the registry's settings changed since it was trained; retrain with `make models NAME={name}`")


@pytest.mark.parametrize("name", SHIPPED)
def test_the_log_records_the_run(name):
    record = MANIFEST["models"][name]
    events = read_log(model_dir() / record["log"])
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and "stop" in kinds and "eval" in kinds
    start, end = events[0], events[-1]
    assert start["settings"] == record["settings"] and start["model"] == name
    assert start["environment"]["versions"] == record["versions"] and record["versions"]["torch"]
    if "cpu" in start["environment"]:          # logs written since the processor is recorded
        assert start["environment"]["cpu"] == record["cpu"]
    assert record["cpu"]["vendor"]
    assert start["environment"]["threads"]["OMP_NUM_THREADS"] == str(record["threads"])
    assert start["environment"]["threads"]["torch"] == record["threads"]
    assert record["git"]["commit"] is None or len(record["git"]["commit"]) == 40
    assert len(step_losses(events)) == record["steps"] >= MODELS[name].replay_steps
    assert end["sha256"] == record["sha256"] and end["wall_seconds"] == record["train_seconds"]
    assert end["subset_metric"] == {record["subset_metric"]["name"]: record["subset_metric"]["value"]}


DETERMINISTIC = [n for n in SHIPPED if MODELS[n].deterministic]


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_the_first_steps_from_scratch_reproduce_the_logged_losses(name):
    """The first ``replay_steps`` steps (12 by default; whole epochs for the word vectors)."""
    e, record = MODELS[name], MANIFEST["models"][name]
    logged = step_losses(read_log(model_dir() / record["log"]))[:e.replay_steps]
    log = RunLog()
    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(e.threads)
    torch.use_deterministic_algorithms(True)
    try:
        e.train(dict(e.settings), log, max_steps=e.replay_steps, progress=False)
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1])
    replay = log.step_losses()
    if replays_exactly_here(name):
        assert replay == logged, f"{name}: the first {e.replay_steps} losses differ from the log, e.g. step 1 {replay[0]} vs {logged[0]}"
    else:
        # other library versions, or another kind of processor, may order floating-point sums
        # differently: the same run, to rounding
        assert len(replay) == len(logged)
        np.testing.assert_allclose(replay, logged, rtol=REPLAY_RTOL, err_msg=f"{name}: trained with {record['versions']} on "
                                   f"{record.get('cpu')}, replayed with {library_versions()} on {cpu_description()}")


# ---------------------------------------------------------------- damaged files
@pytest.fixture
def model_copy(tmp_path):
    root = tmp_path / "models"
    shutil.copytree(model_dir(), root)
    return root


def test_only_a_processor_independent_model_must_replay_exactly_on_another_processor(model_copy):
    manifest = read_manifest(model_copy)
    for record in manifest["models"].values():        # this environment, another kind of processor
        record["versions"], record["cpu"] = library_versions(), {"vendor": "SomeOtherVendor", "model": "X"}
    write_manifest(manifest, model_copy)
    exact = {name: replays_exactly_here(name, model_copy) for name in SHIPPED}
    assert exact["wv_gensim_skipgram"] and exact["wv_gensim_fasttext"]         # gensim: any processor
    assert not exact["wv_torch_skipgram"] and not exact["char_transformer"]
    assert exact == {name: MODELS[name].any_processor and MANIFEST["models"][name]["deterministic"] for name in SHIPPED}


@pytest.mark.parametrize("name", SHIPPED)
def test_a_modified_file_names_both_checksums_and_the_rebuild_command(model_copy, name):
    path = model_copy / MANIFEST["models"][name]["file"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError) as e:
        load_model(name, root=model_copy)
    msg = str(e.value)
    assert f"model file {path} is corrupt or has been modified: expected sha256 {MANIFEST['models'][name]['sha256']}" in msg
    assert f"got {models.sha256_of(path)}" in msg
    assert f"make models NAME={name}" in msg and f"python -m training {name}" in msg


@pytest.mark.parametrize("name", SHIPPED)
def test_a_missing_file_names_the_rebuild_command(model_copy, name):
    (model_copy / MANIFEST["models"][name]["file"]).unlink()
    with pytest.raises(ModelFileError, match=rf"model file .*{name}.npz is missing .*make models NAME={name}"):
        load_model(name, root=model_copy)


def test_unknown_and_untrained_models(tmp_path):
    with pytest.raises(KeyError, match="no shipped model named 'gpt'; the course has"):
        load_model("gpt")
    with pytest.raises(ModelFileError, match="manifest.json is missing.*git checkout.*make models NAME=ffnn_lm"):
        load_model("ffnn_lm", root=tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "nlp-course-models/1", "models": {}}', encoding="utf-8")
    with pytest.raises(ModelFileError, match="not in .*manifest.json .*make models NAME=ffnn_lm"):
        load_model("ffnn_lm", root=tmp_path)


# ---------------------------------------------------------------- the pipeline on a toy model
def toy_train(settings, log, max_steps=None, progress=True):
    """A seeded linear regression with early stopping, logged like a real trainer."""
    from helpers.infra.early_stopping import EarlyStopping
    g = torch.Generator().manual_seed(settings["seed"])
    X = torch.randn(200, 3, generator=g)
    y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(200, generator=g)
    w = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=settings["lr"])
    stopper = EarlyStopping(patience=2, min_delta=1e-4)
    for step in range(1, (max_steps or 500) + 1):
        loss = ((X[:150] @ w - y[:150]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.step(loss.item())
        if step % 10 == 0:
            valid = ((X[150:] @ w - y[150:]) ** 2).mean().item()
            stop = stopper.update(valid, step, lambda: w.detach().clone())
            log.event("eval", valid_mse=valid, **stopper.decisions[-1])
            if stop:
                break
    log.event("stop", reason=stopper.summary())
    return {"w": stopper.best_state.numpy()}, {"settings": settings}, {"valid_mse": stopper.best}


def toy_load(artifact):
    return artifact.arrays["w"]


TOY = ModelEntry("toy", "a toy linear model for the pipeline test", "01", {"lr": 0.1, "seed": 0}, toy_train,
                 lambda w: ("w_norm", float(np.linalg.norm(w))))


def test_train_one_writes_artefact_log_and_manifest_record(tmp_path, monkeypatch):
    monkeypatch.setitem(MODELS, "toy", TOY)
    monkeypatch.setitem(models.LOADERS, "toy", "tests.test_models:toy_load")
    for v in train.THREAD_VARIABLES:
        monkeypatch.setenv(v, "1")
    record = train.train_one("toy", root=tmp_path, progress=False)
    art = load_artifact(tmp_path / "toy")
    assert art.info["npz"]["sha256"] == record["sha256"] and record["size"] == (tmp_path / "toy.npz").stat().st_size
    assert record["subset_metric"] == {"name": "w_norm", "value": float(np.linalg.norm(art.arrays["w"]))}
    assert record["command"] == "make models NAME=toy" and record["threads"] == 1 and record["steps"] > 10
    assert np.allclose(art.arrays["w"], [1.0, -2.0, 0.5], atol=0.1)
    events = read_log(tmp_path / "logs" / "toy.jsonl.gz")
    assert [e["event"] for e in events][:2] == ["start", "steps"] and events[-1]["event"] == "end"
    assert len(step_losses(events)) == record["steps"]
    write_manifest({"format": models.MANIFEST_FORMAT, "models": {"toy": record}}, root=tmp_path)
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert f"`{record['sha256']}`" in readme and "`make models NAME=toy`" in readme and "`lr=0.1`" in readme
    assert load_model("toy", root=tmp_path).tolist() == art.arrays["w"].tolist()
    # same settings, same bytes
    again = train.train_one("toy", root=tmp_path / "again", progress=False)
    assert again["sha256"] == record["sha256"]
    assert torch.get_num_threads() >= 1 and not torch.are_deterministic_algorithms_enabled()   # left as found


def test_a_worker_without_the_thread_variables_is_refused(monkeypatch, tmp_path):
    monkeypatch.setitem(MODELS, "toy", TOY)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with pytest.raises(RuntimeError, match=r"toy trains with 1 thread\(s\), but this process has .*OMP_NUM_THREADS"):
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
record = {"file": name + ".npz", "sha256": "0" * 64, "size": 1, "what": name, "lesson": "01", "settings": {},
          "metrics": {"m": 1.0}, "subset_metric": {"name": "m", "value": 1.0}, "train_seconds": 0.2,
          "cpu_seconds": 0.1, "threads": 1, "deterministic": True, "steps": 5, "command": "make models NAME=" + name}
open(result, "w").write(json.dumps(record))
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_schedules_workers_records_each_and_reports_failures(tmp_path, monkeypatch, capsys, jobs):
    for name in ("a", "b", "bad"):
        monkeypatch.setitem(MODELS, name, TOY)
    monkeypatch.setenv("OMP_NUM_THREADS", "4")       # the workers get the entry's 1, whatever is set here
    monkeypatch.setattr(train, "worker_command",
                        lambda name, result, root: [train.sys.executable, "-c", FAKE_WORKER, name, str(result)])
    assert train.run(["a", "bad", "b"], jobs=jobs, root=tmp_path) == 1
    out = capsys.readouterr()
    assert "training 3 model(s), " + str(jobs) + " at a time" in out.out and "failed: ['bad']" in out.out
    assert "bad: FAILED (exit code 3)" in out.out + out.err
    if jobs > 1:                      # side by side, a worker's output is shown when it fails
        assert "something went wrong in bad" in out.out + out.err
    manifest = read_manifest(tmp_path)
    assert sorted(manifest["models"]) == ["a", "b"]
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == render_readme(manifest)
