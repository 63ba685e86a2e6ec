"""Conformance of the reference model to RocketMQ's Java code (issue 8): differential checks
through a Java harness built from RocketMQ's Maven Central jars."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from popverify.conformance.checks import CHECKS, CheckResult
from popverify.conformance.harness import VERSIONS, Harness

DEFAULT_CASES = 300


def run_checks(cases: int = DEFAULT_CASES, seed: int = 0, versions: Sequence[str] = tuple(VERSIONS),
               names: Sequence[str] = tuple(CHECKS),
               progress: Callable[[str], None] = lambda _: None) -> list[CheckResult]:
    """Every check in ``names`` against every RocketMQ version, ``cases`` random cases each
    (the same cases for every version: one seeded generator per check)."""
    results: list[CheckResult] = []
    for version in versions:
        profile = VERSIONS[version]
        with Harness(version) as harness:
            for name in names:
                rnd = random.Random(f"{seed}/{name}")
                found = CHECKS[name](harness, rnd, cases, profile)
                for r in found:
                    progress(f"{version} {r.name}: {r.cases} cases, {r.disagreements} disagreements")
                results.extend(found)
    return results
