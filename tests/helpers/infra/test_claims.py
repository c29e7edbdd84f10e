"""helpers.infra.claims: a claim prints ✓ when it holds and fails loudly, naming itself, when not."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.infra.claims import ClaimFailed, claim, claim_between, claim_close


def test_a_true_claim_prints_its_statement(capsys):
    assert claim(np.bool_(True), "the LSTM beats the trigram", "1.75 < 2.04") is None
    assert capsys.readouterr().out == "✓ the LSTM beats the trigram (1.75 < 2.04)\n"


def test_a_false_claim_raises_an_assertion_error_that_names_it():
    with pytest.raises(ClaimFailed, match="the LSTM beats the trigram") as info:
        claim(False, "the LSTM beats the trigram")
    assert isinstance(info.value, AssertionError)


def test_between_and_close_say_what_was_measured(capsys):
    claim_between(0.5, 0.4, 0.6, "about half")
    claim_close(2.3026, np.log(10), "−log 0.1", rtol=1e-4)
    out = capsys.readouterr().out
    assert "✓ about half (0.5, expected between 0.4 and 0.6)" in out and "✓ −log 0.1" in out
    with pytest.raises(ClaimFailed, match=r"0\.7, expected between 0\.4 and 0\.6"):
        claim_between(0.7, 0.4, 0.6, "about half")
    with pytest.raises(ClaimFailed):
        claim_between(float("nan"), 0, 1, "a number")
    with pytest.raises(ClaimFailed):
        claim_close(1.1, 1.0, "one", rtol=0.05)


def test_bad_claims_are_errors_not_passes():
    with pytest.raises(ValueError, match="statement"):
        claim(True, " ")
    with pytest.raises(TypeError, match="one truth value"):
        claim(np.array([True, False]), "several")
    with pytest.raises(TypeError, match="value must be a number"):
        claim_between("x", 0, 1, "a number")
    with pytest.raises(ValueError, match="low"):
        claim_between(0.5, 1, 0, "reversed")
