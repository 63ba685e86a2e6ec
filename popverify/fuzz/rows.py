"""One fuzz run as a row: what an executor computes for a job (a blind seed or an offspring
of a corpus run).

Pure Python on the reference model; no Spark and no loop here, so the same functions serve
the Spark tasks (spark_fuzz/executor.py), the plain loop (popverify/fuzz/executors.py) and
the tests. A row is a function of its job and its round's task alone: every executor gives
the same rows for the same plan, except the timing statistic ``duration_ms``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from reference.common.javalang import JavaRandom

# Row fields measured, not computed: they differ between two executions of the same job.
TIMING_FIELDS: tuple[str, ...] = ("duration_ms",)


def swarm_config(seed: int, mode: str = "pop") -> ScenarioConfig:
    """The swarm configuration of a seed: actions, faults and sizes drawn within their ranges
    (ScenarioConfig.draw), then the input-domain fields (ScenarioConfig.draw_domain: wide
    queue counts, long start offsets, the opt-in kinds and faults, boundary bias;
    spec/fuzzing.md "Runs and swarm configurations", "The input domain")."""
    rng = JavaRandom(seed ^ 0x5F3759DF)
    # the input-domain fields come last from the same generator: the earlier fields keep the
    # values they had before those fields existed
    return ScenarioConfig.draw(rng, mode=mode).draw_domain(rng, mode)


@attrs.frozen
class Job:
    """One run a round asks for: a blind seed (``parent`` -1, its own swarm configuration), or
    an offspring of corpus run ``parent`` (``schedule``: the JSON prefix it replays first;
    ``config``: the JSON configuration it runs under)."""

    seed: int
    parent: int = -1
    schedule: str | None = None
    config: str | None = None


@attrs.frozen
class RoundTask:
    """What every job of one round shares: the campaign key and the round number."""

    profile: str
    mode: str
    steps: int
    mutant: str | None
    round_no: int

    def run(self, job: Job) -> dict[str, Any]:
        """The row of ``job``."""
        return run_row(self.profile, self.mode, job.seed, self.steps, self.mutant, self.round_no,
                       None if job.schedule is None else json.loads(job.schedule), job.parent, job.config)


def run_partition(task: RoundTask, jobs: Iterable[Job], partition: int, parts: str | None,
                  on_row: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """The rows of one partition of a round (a Spark task, or a slice of the plain loop); with
    ``parts`` (a folder the executor can write) the finished partition's rows are also kept
    there, so a round that fails later loses only its unfinished partitions."""
    rows = []
    for job in jobs:
        rows.append(task.run(job))
        on_row()
    if parts is not None:
        from popverify.fuzz.store import write_part
        write_part(Path(parts), task.profile, task.mode, task.round_no, partition, rows)
    return rows


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
    from popverify.findings.attribution import attribute, consulted
    start = time.perf_counter()
    # An offspring keeps its parent's configuration (or one changed dimension of it) but runs
    # under its own seed: the broker's random choices and the drawn continuation after the
    # replayed prefix are new.
    with consulted() as switches:
        result = run_scenario(profile, seed, steps, mode=mode, config=config,
                              schedule=plan, mutant=mutant)
    duration_ms = (time.perf_counter() - start) * 1000.0  # statistics only (TIMING_FIELDS), never fed to the model
    # root cause per violated property (re-runs, but none for a switch the run never read)
    signatures = [sig.key for sig in attribute(result, consulted=switches)]
    coverage = sorted(result.coverage)
    return {
        "seed": seed, "parent": parent, "profile": profile, "mode": mode,
        "config": json.dumps(config.to_json(), sort_keys=True), "steps": result.steps,
        "violations": json.dumps([v.to_json() for v in result.violations], sort_keys=True),
        "coverage": coverage,
        # the step that first reached each point (same order): where a guided offspring cuts
        "coverage_steps": [result.first_step.get(point, result.steps) for point in coverage],
        "coverage_signature": hashlib.sha1("\n".join(coverage).encode()).hexdigest(),
        "schedule": json.dumps([a.to_json() for a in result.schedule]),
        "faults": result.counts.get("faults", 0), "duration_ms": round(duration_ms, 3),
        "mutant": mutant or "", "round": round_no, "signatures": json.dumps(signatures),
    }


def without_timing(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` without its TIMING_FIELDS: what two executions of the same job agree on."""
    return {k: v for k, v in row.items() if k not in TIMING_FIELDS}
