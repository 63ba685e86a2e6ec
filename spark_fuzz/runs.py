"""One fuzz run as a row: what a Spark task computes for a seed (or a mutated schedule).

Pure Python on the reference model; no Spark here, so the same function serves the Spark
tasks, the plain-loop baseline and the tests.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import attrs

from popverify.sim.scenario import (FAULTS, POP_ACTIONS, POP_ALWAYS, PUSH_ACTIONS, PUSH_ALWAYS, PUSH_FAULTS,
                                    Action, ScenarioConfig, run_scenario)
from reference.common.javalang import JavaRandom

def swarm_config(seed: int, mode: str = "pop") -> ScenarioConfig:
    """The swarm configuration of a seed: actions, faults and sizes drawn within their ranges."""
    return ScenarioConfig.draw(JavaRandom(seed ^ 0x5F3759DF), mode=mode)


def run_row(profile: str, mode: str, seed: int, steps: int, mutant: str | None, round_no: int,
            schedule: list[list] | None = None, parent: int = -1,
            config_json: str | None = None) -> dict[str, Any]:
    """Run one scenario and describe it as a flat, Parquet-friendly row keyed by ``seed``
    (``config_json``: a mutated configuration instead of the seed's or parent's swarm draw)."""
    if config_json is not None:
        config = ScenarioConfig.from_json(json.loads(config_json))
    else:
        config = swarm_config(seed if parent < 0 else parent, mode)
    plan = None if schedule is None else [Action.from_json(a) for a in schedule]
    start = time.perf_counter()
    # A mutant keeps its parent's configuration (or one mutated dimension of it) but runs under
    # its own seed: the broker's random choices and the drawn continuation after the mutated
    # prefix are new.
    result = run_scenario(profile, seed, steps, mode=mode, config=config,
                          schedule=plan, mutant=mutant)
    duration_ms = (time.perf_counter() - start) * 1000.0  # statistics only, never fed to the model
    from popverify.findings.attribution import attribute
    signatures = [sig.key for sig in attribute(result)]  # root cause per violated property (re-runs)
    coverage = sorted(result.coverage)
    return {
        "seed": seed, "parent": parent, "profile": profile, "mode": mode,
        "config": json.dumps(config.to_json(), sort_keys=True), "steps": result.steps,
        "violations": json.dumps([v.to_json() for v in result.violations], sort_keys=True),
        "coverage": coverage,
        # the step that first reached each point (same order): where a guided mutant cuts
        "coverage_steps": [result.first_step.get(point, result.steps) for point in coverage],
        "coverage_signature": hashlib.sha1("\n".join(coverage).encode()).hexdigest(),
        "schedule": json.dumps([a.to_json() for a in result.schedule]),
        "faults": result.counts.get("faults", 0), "duration_ms": round(duration_ms, 3),
        "mutant": mutant or "", "round": round_no, "signatures": json.dumps(signatures),
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


def mutate_config(config: ScenarioConfig, rng: JavaRandom, mode: str) -> ScenarioConfig:
    """Swarm-aware mutation: one dimension of a parent's configuration changes -- one optional
    action kind or one fault toggled, or one size or switch re-drawn within its range."""
    push = mode == "push"
    dims = ["action", "fault", "queues", "consumers"]
    dims += ["consume_orderly", "consume_fail_percent"] if push else \
        ["invisible_time", "max_msg_nums", "enable_pop_buffer_merge", "services_on_period"]
    dim = dims[rng.next_int(len(dims))]
    if dim in ("action", "fault"):
        field = "actions" if dim == "action" else "faults"
        pool = [k for k in (PUSH_ACTIONS if push else POP_ACTIONS) if k not in (PUSH_ALWAYS if push else POP_ALWAYS)] \
            if dim == "action" else list(PUSH_FAULTS if push else FAULTS)
        kind = pool[rng.next_int(len(pool))]
        current = getattr(config, field)
        order = list(PUSH_ACTIONS if push else POP_ACTIONS) if dim == "action" else pool
        toggled = set(current) ^ {kind}
        return attrs.evolve(config, **{field: tuple(k for k in order if k in toggled)})
    fresh = ScenarioConfig.draw(rng, mode=mode)
    return attrs.evolve(config, **{dim: getattr(fresh, dim)})
