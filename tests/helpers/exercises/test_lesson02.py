"""helpers.exercises.lesson02 beyond what test_hints.py checks of every exercise:
the experiment gives a verdict, naming the explorer's sizes, for a size it does not measure."""
from helpers.exercises import lesson02 as X


def test_the_explosion_checker_says_which_settings_it_measures(capsys):
    for hidden in (0, 7, None):
        assert X.check_explosion_scale(2.0, hidden=hidden).status == "failed"
        assert "32, 64, 128" in capsys.readouterr().out
    assert X.check_explosion_scale(X.first_scale_exceeding(30, 64), hidden=64)
