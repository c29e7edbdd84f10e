"""helpers.exercises.lesson03 beyond what test_hints.py checks of every exercise:
the forget-bias experiment trusts no measurement it is given, and its answer is the measured one."""
from helpers.exercises import lesson03 as X


def test_the_forget_bias_checker_measures_for_itself(capsys):
    assert not X.check_forget_bias(0.0, accuracy_by_bias={0.0: 0.95})
    assert "could not measure" in capsys.readouterr().out
    assert X.smallest_forget_bias() == 2.0 and X.check_forget_bias(2.0)
    assert not X.check_forget_bias(3.0)
