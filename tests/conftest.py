"""The test session's settings: figures drawn off-screen and closed after each test, and the
hypothesis profiles of the property-based tests, chosen by ``HYPOTHESIS_PROFILE``: ``ci`` (the
default; ``make test`` and CI: 40 examples, derandomised, no deadline, no database) and ``fuzz``
(``make fuzz``: 2,000 fresh examples a run). ``tests/props.py`` weights each property.
"""
import os

import matplotlib.pyplot as plt
import pytest
from hypothesis import HealthCheck, settings

plt.switch_backend("Agg")
_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=40, derandomize=True, **_COMMON)
settings.register_profile("fuzz", max_examples=2000, derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")
