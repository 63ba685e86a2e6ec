"""The model's schedules replayed on the lockstep harness (RocketMQ's real broker classes,
popverify/conformance/lockstep.py and confirm.py) for coverage: a fuzz campaign's corpus
(the Parquet runs `popverify fuzz --out DIR` writes), or, without one, a short blind
campaign computed here exactly as a campaign's first round computes it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from popverify.errors import UsageError
from popverify.sim.scenario import Action, ScenarioConfig


@attrs.frozen
class Schedule:
    """One run of a campaign: what the model ran, to be replayed on Java."""

    seed: int
    config: ScenarioConfig
    actions: tuple[Action, ...]
    mutant: str | None = None
    source: str = "corpus"  # "corpus" | the ITF trace file it came from


def load_corpus(corpus: Path, profile: str, limit: int) -> list[Schedule]:
    """The POP runs of ``profile`` in a campaign folder, by seed, at most ``limit``. A
    UsageError when the folder holds none (a typo'd path must not measure nothing)."""
    from spark_fuzz import store

    if not store.runs_dir(corpus).is_dir():
        raise UsageError(f"{corpus} is not a fuzz campaign folder (no runs/ with Parquet from `popverify fuzz --out`)")
    rows = store.load_rows(corpus, profile, "pop")
    if not rows:
        raise UsageError(f"{corpus} has no POP runs of profile {profile}")
    return [Schedule(row["seed"], ScenarioConfig.from_json(json.loads(row["config"])),
                     tuple(Action.from_json(a) for a in json.loads(row["schedule"])))
            for _, row in sorted(rows.items())[:limit]]


def load_traces(paths: Sequence[Path], profile: str) -> list[Schedule]:
    """The POP schedules of ``profile`` among popverify ITF traces (``simulate --trace``, a
    campaign's minimal counterexamples under ``traces/``); traces of another profile are
    left for that profile's run. A UsageError for a file that is not a popverify trace (a TLC
    counterexample is a behaviour of a spec, not a model schedule) or a push trace."""
    from popverify.trace.itf import TraceError, read_trace, run_spec

    out = []
    for path in paths:
        try:
            spec = run_spec(read_trace(path))
        except TraceError as err:
            raise UsageError(f"{path}: {err} (coverage replays popverify's own POP traces)") from err
        if spec["mode"] != "pop":
            raise UsageError(f"{path} is a {spec['mode']} trace; the lockstep harness replays POP schedules only")
        if spec["profile"] == profile:
            out.append(Schedule(spec["seed"], spec["config"], spec["schedule"], spec["mutant"], str(path)))
    return out


def campaign_traces(corpus: Path, profile: str) -> list[Path]:
    """A campaign folder's minimal POP counterexamples of ``profile`` (``DIR/traces``)."""
    return sorted((corpus / "traces").glob(f"{profile}-pop-*.itf.json"))


def short_campaign(out: Path, profile: str, runs: int, steps: int) -> Path:
    """A blind campaign of ``runs`` POP runs under ``out`` (the rows a Spark campaign's round 0
    writes, computed in this process by the same ``run_row``: no Spark start-up for a handful
    of runs). Returns ``out``, a corpus folder ``load_corpus`` reads."""
    from spark_fuzz import store
    from spark_fuzz.runs import run_row

    existing = store.load_rows(out, profile, "pop") if store.runs_dir(out).is_dir() else {}
    missing = [seed for seed in range(runs) if seed not in existing]
    if missing:
        store.write_round(out, profile, "pop", 0, [run_row(profile, "pop", seed, steps, None, 0) for seed in missing])
    return out


def replay(release: str, profile: str, jvm_args: Sequence[str], schedules: Sequence[Schedule],
           progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Replay ``schedules`` on one lockstep JVM of ``release`` started with ``jvm_args``.
    Coverage counts what Java ran whether or not it agreed with the model; the verdicts
    (agrees / diverges / out of scope) are counted beside it."""
    from popverify.conformance.lockstep import LockstepClient, LockstepError
    try:
        from popverify.conformance.confirm import run_lockstep
    except ImportError as err:  # confirm (issue 15) not in this build: the lockstep source fails loudly
        raise LockstepError(f"lockstep replay is not available: {err}") from err

    statuses: dict[str, int] = {}
    steps = compared = 0
    traces = sum(1 for s in schedules if s.source != "corpus")
    with LockstepClient(release, jvm_args) as client:
        for i, schedule in enumerate(schedules):
            # every replay begins with the harness's init: one JVM serves the whole corpus
            verdict = run_lockstep(profile, schedule.seed, schedule.config, schedule.actions, client,
                                   schedule.mutant)
            statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
            steps += len(schedule.actions)
            compared += verdict.steps
            if i % 10 == 9:
                progress(f"{release}: {i + 1}/{len(schedules)} schedules replayed")
    # A replay stops at its first divergence or out-of-scope step: Java ran (and JaCoCo counted)
    # the steps compared, not the whole schedule.
    return {"harness": "lockstep", "schedules": len(schedules), "traces": traces, "steps": steps,
            "steps_compared": compared,
            "verdicts": dict(sorted(statuses.items()))}
