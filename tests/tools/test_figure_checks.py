"""The plot-style checker (``tools/figure_checks.py``) finds each kind of problem it names."""
import numpy as np

from helpers.infra.plotting import new_figure, set_labels
from tools.figure_checks import figure_problems


def test_a_styled_figure_has_no_problem():
    fig, ax = new_figure()
    ax.plot([1, 2], [1, 2])
    set_labels(ax, "a line", "x", "y")
    assert figure_problems(fig) == []


def test_checker_finds_each_kind_of_problem():
    fig, ax = new_figure()
    ax.plot([1, 2], [1, 2], color="tab:red")
    assert any("no title" in p for p in figure_problems(fig))
    assert any("not in the course palette" in p for p in figure_problems(fig))
    assert any("no x label" in p for p in figure_problems(fig))

    fig, ax = new_figure()
    ax.imshow(np.eye(3), cmap="jet")
    set_labels(ax, "t", "x", "y")
    problems = figure_problems(fig)
    assert any("not perceptually uniform" in p for p in problems)
    assert any("without a colour bar" in p for p in problems)

    fig, ax = new_figure()
    ax.set_xticks(range(30), [f"a long tick label {i}" for i in range(30)])
    set_labels(ax, "t", "x", "y")
    assert any("overlap" in p for p in figure_problems(fig))

    fig, ax = new_figure()
    ax.plot([3, 8], [1, 2])
    ax.set_xscale("log")        # matplotlib's own log axis labels minor ticks over < 1 decade
    set_labels(ax, "t", "x", "y")
    assert any("labels minor ticks" in p for p in figure_problems(fig))

    fig, ax = new_figure()
    ax.plot([1, 2], [1, 2])
    ax.set_title("t")
    ax.set_xlabel("h_{t}")
    ax.set_ylabel("y")
    assert any("raw TeX" in p for p in figure_problems(fig))


