"""helpers.infra.claims: ✓ when a claim holds, a loud error naming it when not."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.infra.claims import ClaimFailed, claim, claim_between, claim_close


def test_claims_print_what_holds_and_fail_naming_what_does_not(capsys):
    assert claim(np.bool_(True), "the LSTM beats the trigram", "1.75 < 2.04") is None
    claim_between(0.5, 0.4, 0.6, "about half")
    claim_close(2.3026, np.log(10), "−log 0.1", rtol=1e-4)
    assert capsys.readouterr().out == ("✓ the LSTM beats the trigram (1.75 < 2.04)\n"
                                       "✓ about half (0.5, expected between 0.4 and 0.6)\n"
                                       "✓ −log 0.1 (2.3026 vs 2.30259)\n")
    with pytest.raises(AssertionError, match="the LSTM beats the trigram"):
        claim(False, "the LSTM beats the trigram")
    with pytest.raises(ClaimFailed, match=r"0\.7, expected between 0\.4 and 0\.6"):
        claim_between(0.7, 0.4, 0.6, "about half")
    with pytest.raises(ClaimFailed):
        claim_between(float("nan"), 0, 1, "a number")
    with pytest.raises(ClaimFailed, match="1.1 vs 1"):
        claim_close(1.1, 1.0, "one", rtol=0.05)


@pytest.mark.parametrize("call, error, message", [
    (lambda: claim(True, " "), ValueError, "statement"),
    (lambda: claim(np.array([True, False]), "several"), TypeError, "one truth value"),
    (lambda: claim_between("x", 0, 1, "a number"), TypeError, "value must be a number"),
    (lambda: claim_between(0.5, 1, 0, "reversed"), ValueError, "low"),
    (lambda: claim_close(1.0, 1.0, "one", rtol=-1), ValueError, "tolerances must be ≥ 0")])
def test_bad_claims_are_errors_not_passes(call, error, message):
    with pytest.raises(error, match=message):
        call()
