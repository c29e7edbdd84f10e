"""training/char_lms.py: the n-gram grid reaches past its best model on both axes, the matched
LSTM has the Transformer's parameter count, and the learning-rate schedule."""
import pytest

from helpers.course.char_live import load_char_ngram
from helpers.course.char_lms import build_char_lm
from training.char_lms import NGRAM_DISCOUNTS, NGRAM_ORDERS, SETTINGS, lr_factor


def test_the_char_ngram_grid_reaches_past_its_best_model_on_both_axes():
    """The stored n-gram baseline is not at the edge of its search grid: a longer order and a larger
    discount were tried and were worse on validation (the grid widened until the loss turned)."""
    stored = load_char_ngram()
    rows = {r["n"]: r for r in stored["rows"]}
    chosen = stored["chosen"]
    assert sorted(rows) == list(NGRAM_ORDERS)
    longer = [n for n in rows if n > chosen["n"]]
    assert longer and all(rows[n]["valid_loss"] > chosen["valid_loss"] for n in longer)
    by_discount = {float(D): v for D, v in chosen["valid_by_discount"].items()}
    assert sorted(by_discount) == sorted(NGRAM_DISCOUNTS)
    larger = [D for D in by_discount if D > chosen["discount"]]
    assert larger and all(by_discount[D] > chosen["valid_loss"] for D in larger)


def test_the_matched_lstm_has_the_transformer_s_parameter_count():
    sizes = {name: sum(p.numel() for p in build_char_lm(SETTINGS[name], 84).parameters())
             for name in ("char_transformer", "char_lstm", "char_lstm_matched")}
    assert abs(sizes["char_lstm_matched"] / sizes["char_transformer"] - 1) < 0.005
    assert sizes["char_lstm"] > 1.4 * sizes["char_transformer"]
    assert SETTINGS["char_lstm_matched"]["max_steps"] > SETTINGS["char_transformer"]["max_steps"]


def test_the_learning_rate_warms_up_then_decays_to_a_tenth():
    assert [lr_factor(k, 4, 20, 0.1) for k in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_factor(4, 4, 20, 0.1) == pytest.approx(1.0)
    assert lr_factor(12, 4, 20, 0.1) == pytest.approx(0.55)
    assert lr_factor(20, 4, 20, 0.1) == lr_factor(99, 4, 20, 0.1) == pytest.approx(0.1)
