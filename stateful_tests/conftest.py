"""Hypothesis settings profiles for the stateful machines.

``ci`` (the default) is bounded so the whole directory runs in a few minutes on 2 cores;
``deep`` is for users hunting rare interleavings: ``pytest stateful_tests --hypothesis-profile=deep``.
Both derandomize nothing by default except CI, where a fixed database-less run keeps results
reproducible.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "deep",
    max_examples=2000,
    stateful_step_count=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
# Mutation testing (`popverify mutate --techniques stateful`) runs the machines once per mutant.
settings.register_profile(
    "mutation",
    max_examples=8,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile("ci")
