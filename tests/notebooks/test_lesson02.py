"""Lesson 02's claims that are not cells of the lesson: the rise of the trained RNN's gradient
near the window start comes from the zero state, which the lesson's warmed-up windows avoid."""
from helpers.course.models import load_model
from helpers.course.word_lms import flow_at, lm_data, trained_gradient_flow


def test_the_rise_near_the_window_start_is_the_zero_state():
    model, test = load_model("rnn_lm").model, lm_data(3000).test
    cold = trained_gradient_flow(model, test, warm_up=0)
    warm = trained_gradient_flow(model, test)
    assert cold.mean(0)[53] > 10 * cold.mean(0)[45]                 # the rise, from zero states
    typical = [flow_at(warm, k).estimate for k in range(0, 60, 5)]
    assert all(a > b for a, b in zip(typical, typical[1:]))          # gone: a steady fall
    assert flow_at(warm, 30).high < 1e-3
