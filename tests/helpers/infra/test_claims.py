"""helpers.infra.claims: ✓ when a claim holds, a loud error naming it when not."""
import numpy as np
import pytest

from helpers.infra.claims import ClaimFailed, claim, claim_close


def test_claims_print_what_holds_and_fail_naming_what_does_not(capsys):
    assert claim(np.bool_(True), "the LSTM beats the trigram", "1.75 < 2.04") is None
    claim_close(2.3026, np.log(10), "−log 0.1", rtol=1e-4)
    assert capsys.readouterr().out == ("✓ the LSTM beats the trigram (1.75 < 2.04)\n"
                                       "✓ −log 0.1 (2.3026 vs 2.30259)\n")
    with pytest.raises(ClaimFailed, match="the LSTM beats the trigram"):
        claim(False, "the LSTM beats the trigram")
    with pytest.raises(ClaimFailed, match="1.1 vs 1"):
        claim_close(1.1, 1.0, "one", rtol=0.05)
    with pytest.raises(ClaimFailed):
        claim_close(float("nan"), 1.0, "a number")


@pytest.mark.parametrize("call, error, message", [
    (lambda: claim(True, " "), ValueError, "statement"),
    (lambda: claim(np.array([True, False]), "several"), TypeError, "one truth value"),
    (lambda: claim_close("x", 0, "a number"), TypeError, "value must be a number"),
    (lambda: claim_close(1.0, 1.0, "one", rtol=-1), ValueError, "tolerances must be ≥ 0")])
def test_bad_claims_are_errors_not_passes(call, error, message):
    with pytest.raises(error, match=message):
        call()
