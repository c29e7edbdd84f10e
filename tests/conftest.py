"""Shared pytest set-up: the hypothesis profiles of the property-based tests (``@given``).

``HYPOTHESIS_PROFILE`` chooses one (default ``ci``):

- ``ci``: what ``make test`` and CI run: a small fixed budget, derandomised (the same examples on
  every run and every machine, so a failure reproduces), no deadline (a busy 2-core machine must
  not turn slowness into failures), no example database written into the checkout;
- ``fuzz``: what ``make fuzz`` runs for maintainers: 50 times the examples, fresh random ones each
  run; a failure prints the falsifying example and the ``@reproduce_failure`` line to replay it.

Each property scales the profile's ``max_examples`` by a weight (see ``tests/props.py``), so the
expensive ones (training a model) draw fewer examples than the cheap ones.
"""
import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=40, derandomize=True, **_COMMON)
settings.register_profile("fuzz", max_examples=2000, derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
