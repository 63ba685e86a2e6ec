"""One fuzz run as a row: what a Spark task computes for a seed (or a mutated schedule).

Pure Python on the reference model; no Spark here, so the same function serves the Spark
tasks, the plain-loop baseline and the tests.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from reference.common.javalang import JavaRandom

def swarm_config(seed: int, mode: str = "pop") -> ScenarioConfig:
    """The swarm configuration of a seed: actions, faults and sizes drawn within their ranges."""
    return ScenarioConfig.draw(JavaRandom(seed ^ 0x5F3759DF), mode=mode)


def run_row(profile: str, mode: str, seed: int, steps: int, mutant: str | None, round_no: int,
            schedule: list[list] | None = None, parent: int = -1) -> dict[str, Any]:
    """Run one scenario and describe it as a flat, Parquet-friendly row keyed by ``seed``."""
    config = swarm_config(seed if parent < 0 else parent, mode)
    plan = None if schedule is None else [Action.from_json(a) for a in schedule]
    start = time.perf_counter()
    # A mutant keeps its parent's configuration but runs under its own seed: the broker's
    # random choices and the drawn continuation after the mutated prefix are new.
    result = run_scenario(profile, seed, steps, mode=mode, config=config,
                          schedule=plan, mutant=mutant)
    duration_ms = (time.perf_counter() - start) * 1000.0  # statistics only, never fed to the model
    coverage = sorted(result.coverage)
    return {
        "seed": seed, "parent": parent, "profile": profile, "mode": mode,
        "config": json.dumps(config.to_json(), sort_keys=True), "steps": result.steps,
        "violations": json.dumps([v.to_json() for v in result.violations], sort_keys=True),
        "coverage": coverage,
        "coverage_signature": hashlib.sha1("\n".join(coverage).encode()).hexdigest(),
        "schedule": json.dumps([a.to_json() for a in result.schedule]),
        "faults": result.counts.get("faults", 0), "duration_ms": round(duration_ms, 3),
        "mutant": mutant or "", "round": round_no,
    }


def mutate_schedule(schedule: list[list], rng: JavaRandom, extra: list[list]) -> list[list]:
    """One schedule mutation: drop a slice, duplicate a slice, splice in actions, or swap two
    (a shortened schedule is continued by freshly drawn actions up to the run's steps)."""
    s = list(schedule)
    if len(s) < 2:
        return s + extra
    kind = rng.next_int(4)
    i, j = sorted((rng.next_int(len(s)), rng.next_int(len(s))))
    if kind == 0:
        return s[:i] + s[j + 1:] if j + 1 - i < len(s) else s[1:]
    if kind == 1:
        return s[:j] + s[i:j] + s[j:]
    if kind == 2:
        return s[:i] + extra + s[i:]
    s[i], s[j] = s[j], s[i]
    return s
