"""The shipped models (data/models/) against their registry (training/registry.py): manifest and
registry agree; each file's sha256 matches, it loads and reproduces its recorded held-out metric;
each deterministic trainer's ``replay_steps`` reproduce the logged losses; the README is generated
from the manifest; all files together stay under 40 MB.
"""
import math

import numpy as np
import pytest
import torch

from helpers.course.models import load_model, model_dir, read_manifest
from helpers.infra.artifacts import load_artifact
from training.registry import (
    MODELS,
    SIZE_LIMIT_BYTES,
    render_readme,
    replays_exactly_here,
    write_manifest,
)
from training.runlog import (
    REPLAY_RTOL,
    RunLog,
    cpu_description,
    library_versions,
    read_log,
    step_losses,
)

MANIFEST = read_manifest()
SHIPPED = sorted(MANIFEST["models"])


def test_every_registered_model_is_shipped_and_nothing_else():
    missing = sorted(set(MODELS) - set(SHIPPED))
    assert not missing, f"registered but not trained: {missing}; run `make models NAME=...`"
    extra = sorted(set(SHIPPED) - set(MODELS))
    assert not extra, f"in the manifest but not registered: {extra}"


def test_the_readme_is_generated_from_the_manifest():
    readme = (model_dir() / "README.md").read_text(encoding="utf-8")
    assert readme == render_readme(MANIFEST), ("data/models/README.md differs from the manifest: "
                                               "regenerate it (`make models` does) instead of "
                                               "editing it")


def test_total_size_under_the_limit():
    files = sorted(model_dir().glob("*.npz"))
    assert {p.name for p in files} == {r["file"] for r in MANIFEST["models"].values()}, \
        "stray or missing .npz files"
    for name, r in MANIFEST["models"].items():
        assert (model_dir() / r["file"]).stat().st_size == r["size"], name
    # the limit is for everything under data/models: metadata, logs and baselines included
    everything = sum(p.stat().st_size for p in model_dir().rglob("*") if p.is_file())
    assert everything <= SIZE_LIMIT_BYTES, f"data/models/ holds {everything:,} bytes"


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_file_loads_and_reproduces_its_recorded_metric(name):
    record = MANIFEST["models"][name]
    metric, value = MODELS[name].subset_metric(load_model(name))       # checks the sha256 first
    assert metric == record["subset_metric"]["name"]
    # recorded at training time from the stored file by the same code; a tolerance only for
    # another machine's floating-point library summing in another order
    assert math.isclose(value, record["subset_metric"]["value"], rel_tol=1e-6), (
        f"{name}: {metric} is {value}, the manifest records {record['subset_metric']['value']}")
    art = load_artifact(model_dir() / name)
    assert art.meta["model"] == name and art.info["npz"]["sha256"] == record["sha256"]
    assert art.meta["settings"] == record["settings"] == MODELS[name].settings, (
        f"{name}: the registry's settings changed since it was trained; retrain it")


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
    sub = record["subset_metric"]
    assert end["subset_metric"] == {sub["name"]: sub["value"]}


@pytest.mark.parametrize("name", [n for n in SHIPPED if MODELS[n].deterministic])
def test_the_first_steps_from_scratch_reproduce_the_logged_losses(name):
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
        assert replay == logged, (f"{name}: the first {e.replay_steps} losses differ from the log, "
                                  f"e.g. step 1 {replay[0]} vs {logged[0]}")
    else:       # another processor or library version may sum in another order: to rounding
        assert len(replay) == len(logged)
        np.testing.assert_allclose(replay, logged, rtol=REPLAY_RTOL,
                                   err_msg=f"{name}: trained with {record['versions']} on "
                                           f"{record.get('cpu')}, replayed with "
                                           f"{library_versions()} on {cpu_description()}")


def test_only_a_processor_independent_model_must_replay_exactly_on_another_processor(tmp_path):
    manifest = read_manifest()
    for record in manifest["models"].values():        # this environment, another kind of processor
        record["versions"] = library_versions()
        record["cpu"] = {"vendor": "SomeOtherVendor", "model": "X"}
    write_manifest(manifest, tmp_path)
    exact = {name: replays_exactly_here(name, tmp_path) for name in SHIPPED}
    assert exact["wv_gensim_skipgram"] and exact["wv_gensim_fasttext"]     # gensim: any processor
    assert not exact["wv_torch_skipgram"] and not exact["char_transformer"]
    assert exact == {name: MODELS[name].any_processor and MANIFEST["models"][name]["deterministic"]
                     for name in SHIPPED}
