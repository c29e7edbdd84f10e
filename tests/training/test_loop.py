"""training/loop.py: the one training loop of ``make models`` (the stop rules, the weights kept,
the learning-rate decay, the curve and the log) and its small helpers."""
import math

import numpy as np
import pytest
import torch

from helpers.lib.text import Vocab
from training.loop import model_arrays, round_to_float16, torch_snapshot, train_steps
from training.runlog import RunLog


def scripted(losses, valid):
    """A step function returning ``losses`` in turn, an evaluation returning ``valid`` in turn,
    and a 'weight' that is the number of the last step (to see which state is kept)."""
    state = {"w": 0, "valid": iter(valid)}

    def step(k):
        state["w"] = k
        return losses[k - 1]

    def evaluate(k):
        return {"valid_loss": next(state["valid"]), "epoch": k / 10}
    return state, step, evaluate


def test_early_stopping_ends_the_run_and_keeps_the_best_weights():
    state, step, evaluate = scripted([1.0] * 100, [5.0, 4.0, 4.5, 4.2])
    log = RunLog()
    run = train_steps(step, 100, log, evaluate=evaluate, eval_every=10, metric="valid_loss",
                      patience=2, snapshot=lambda: state["w"], restore=lambda w: state.update(w=w),
                      curve=("step", "valid_loss", "train_loss"), log_fields={"arm": "a"},
                      progress=False)
    assert run.steps == 40 and run.best == 4.0 and run.best_step == 20 and run.kept == "best"
    assert state["w"] == 20                                         # restored
    assert run.stopped_by.startswith("early stopping: best 4 at step 20")
    assert run.curve == {"step": [10, 20, 30, 40], "valid_loss": [5.0, 4.0, 4.5, 4.2],
                         "train_loss": [1.0] * 4}
    evals = [e for e in log.events if e["event"] == "eval"]
    assert [e["improved"] for e in evals] == [True, True, False, False]
    assert evals[0]["arm"] == "a" and evals[0]["epoch"] == 1.0 and evals[-1]["stop"]
    stop = log.events[-1]
    assert stop["event"] == "stop" and stop["steps"] == 40 and stop["kept"] == "best"
    assert log.step_losses() == [1.0] * 40


def test_a_limited_run_keeps_the_last_weights_and_says_why_it_stopped():
    state, step, evaluate = scripted([1.0] * 100, [5.0, 6.0])
    run = train_steps(step, 100, RunLog(), evaluate=evaluate, eval_every=10, metric="valid_loss",
                      patience=5, snapshot=lambda: state["w"], restore=lambda w: state.update(w=w),
                      limit=12, progress=False)
    assert run.steps == 12 and state["w"] == 12 and run.kept == "last"
    assert run.stopped_by == "max_steps=12"
    full = train_steps(lambda k: 1.0, 30, RunLog(), cap_reason="the limit of 3 epochs",
                       progress=False)
    assert full.stopped_by == "the limit of 3 epochs" and full.best is None and full.kept == "last"


def test_the_train_loss_is_the_mean_since_the_last_evaluation_and_the_last_step_is_evaluated():
    state, step, evaluate = scripted([float(k) for k in range(1, 26)], [3.0, 2.0, 1.0])
    run = train_steps(step, 25, RunLog(), evaluate=evaluate, eval_every=10, eval_at_end=True,
                      metric="valid_loss", mode="max", patience=3, snapshot=lambda: state["w"],
                      restore=lambda w: state.update(w=w), curve=("step", "train_loss"),
                      progress=False)
    assert run.curve == {"step": [10, 20, 25], "train_loss": [5.5, 15.5, 23.0]}
    assert run.best == 3.0 and state["w"] == 10                    # mode max: the first was best


def test_an_evaluation_without_improvement_decays_the_learning_rate():
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    state, step, evaluate = scripted([1.0] * 40, [5.0, 6.0, 4.0, 7.0])
    log = RunLog()
    train_steps(step, 40, log, evaluate=evaluate, eval_every=10, metric="valid_loss", patience=3,
                snapshot=lambda: 0, restore=lambda w: None, optimizer=opt, lr_decay=0.5,
                progress=False)
    decays = [(e["step"], e["lr"]) for e in log.events if e["event"] == "lr"]
    assert decays == [(20, 0.5), (40, 0.25)]
    assert opt.param_groups[0]["lr"] == 0.25


def test_a_non_finite_loss_is_an_error_naming_the_step():
    with pytest.raises(FloatingPointError, match="the training loss is nan at step 3"):
        train_steps(lambda k: math.nan if k == 3 else 1.0, 10, RunLog(), progress=False)


def test_the_helpers_copy_restore_pack_and_round_a_torch_model():
    model = torch.nn.Linear(2, 3)
    snapshot, restore = torch_snapshot(model)
    saved = snapshot()
    with torch.no_grad():
        model.weight.add_(1.0)
    restore(saved)
    assert torch.equal(model.weight, saved["weight"])
    vocab = Vocab.build(["a", "b", "a"], specials=())
    arrays = model_arrays(model, {"step": [1, 2]}, vocab)
    assert {"model/weight", "model/bias", "curve/step"} <= set(arrays)
    assert any(k.startswith("vocab/") for k in arrays)
    round_to_float16(model.parameters())
    assert torch.equal(model.weight, model.weight.half().float())
    assert np.array_equal(arrays["curve/step"], [1.0, 2.0])
