"""helpers.infra.training: the lessons' epoch loop."""
import math

import pytest

from helpers.infra.training import train_loop


def test_train_loop_records_epochs_and_metrics():
    hist = train_loop(lambda b: float(b), lambda epoch: [epoch, epoch + 1], epochs=3,
                      evaluate=lambda: {"valid_loss": 0.5}, progress=False)
    assert hist.step_loss == [1, 2, 2, 3, 3, 4]
    assert [e["train_loss"] for e in hist.epochs] == [1.5, 2.5, 3.5]
    assert [e["valid_loss"] for e in hist.epochs] == [0.5] * 3


def test_a_non_finite_loss_stops_the_loop_naming_where():
    with pytest.raises(FloatingPointError, match="loss became nan at epoch 1, step 2"):
        train_loop(lambda b: b, lambda e: [1.0, math.nan], epochs=1, progress=False)
