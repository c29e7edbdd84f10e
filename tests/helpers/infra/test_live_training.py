"""helpers.infra.live_training: the live trainings of lessons 02-04 and 07-08."""
import numpy as np
import pytest

from helpers.infra.live_training import LiveTraining, ScoreTraining


def _run(losses):
    it = iter(losses)
    evals = iter(np.linspace(3.0, 1.0, 100))
    return LiveTraining(lambda: next(it), lambda: float(next(evals)), eval_every=2,
                        baselines={"trigram": 2.0}, name="toy", unit="nats/char")


def test_the_curve_records_every_eval_and_the_end(capsys):
    run = _run([3.0, 2.5, 2.0, 1.5, 1.2]).train(5, progress=False)
    assert run.curve.step == [0, 2, 4, 5]
    assert run.curve.train_loss[1:] == [2.75, 1.75, 1.2]
    assert np.isnan(run.curve.train_loss[0]) and run.steps == 5
    assert "toy after 5 steps" in run.summary() and "above every baseline" in run.summary()
    run.baselines["unigram"] = 3.0
    assert run.summary().endswith("below unigram")


def test_the_steps_run_with_one_blas_thread_and_the_limit_is_lifted_after():
    from threadpoolctl import threadpool_info, threadpool_limits
    def blas():
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):        # as on a 2-core laptop
        before, seen = blas(), []
        if max(before, default=1) < 2:
            pytest.skip("this BLAS runs one thread only")
        run = LiveTraining(lambda: seen.append(blas()) or 1.0, lambda: 1.0, eval_every=1)
        run.train(3, progress=False)
        assert seen == [[1] * len(before)] * 3 and blas() == before
        with pytest.raises(FloatingPointError):                # a failed run lifts the limit too
            LiveTraining(lambda: float("nan"), lambda: 1.0, eval_every=1).train(1, progress=False)
        assert blas() == before


def test_a_non_finite_loss_stops_the_run_with_a_clear_error():
    with pytest.raises(FloatingPointError, match="step 2"):
        _run([3.0, float("nan")]).train(2, progress=False)
    with pytest.raises(ValueError, match="steps"):
        _run([1.0]).train(-1)
    with pytest.raises(TypeError):
        LiveTraining(None, lambda: 1.0, 1)


def test_the_explorer_shows_the_run_first_and_trains_on_only_when_asked():
    run = _run([1.0] * 50).train(2, progress=False)
    ex = run.explorer(more=(4, 1, 10, 1))
    assert run.steps == 2 and ex.renders == 1
    ex.update()                              # the button
    assert run.steps == 6 and "after 6 steps" in ex.summary


def test_a_score_run_plans_its_steps_and_reads_higher_as_better():
    state, planned = {"rho": 0.0}, []

    def step():
        state["rho"] += 0.01
        return 1.0

    run = ScoreTraining(step, lambda: state["rho"], eval_every=5, baselines={"raw rows": 0.02},
                        plan=planned.append)
    run.train(10, progress=False)
    assert planned == [10] and run.scores == pytest.approx([0.0, 0.05, 0.1])
    assert "ρ 0.100" in run.summary()
    assert "a higher ρ than raw rows (point estimates" in run.summary()
