"""Lockstep differential at scale: N random schedules per profile on the model and on RocketMQ's
real broker classes (spec/conformance.md "Lockstep replay"), with the harness's costs.

Usage: .venv/bin/python benchmarks/lockstep_differential.py [--cases 1000] [--steps 50]
       [--profiles v5.0,v5.5] [--seed 1] [--chunk 25] [--out FILE] [--progress] [--late-faults]
       [--extra-faults expire,expire_commit_log,clean_consume_queue,delete_recreate]
       [--mode pop|push]

``--mode push`` replays push swarm schedules instead (popverify/conformance/push_lockstep.py:
every PULL_MESSAGE, consumer-offset, heartbeat, lock, send-back and offset request on the real
processors).

Per profile, one harness JVM (C1 + C2: it runs for minutes) replays the cases of
``popverify conformance --stateful`` (same seed, same cases: case k is drawn from the seed and k
only) in chunks of ``--chunk``; after every chunk the figures so far are written to ``--out``
(JSON), so a run ended by a time-out still leaves its figures. Printed and written:

- ``init_ms``: JVM start + first ``init`` (a fresh broker in a new JVM), wall clock;
  ``reset_ms``: median of 10 ``reset``\\ s (a fresh broker in the running JVM), with the
  harness's own split into shutting the old broker down and building the new one;
- schedules/s in lockstep (model + Java + comparison) and on the model alone (the same
  schedules through run_scenario);
- agree / diverge / out of scope, and the count of every divergence class with its first
  example (seed, configuration, schedule up to the diverging step). (The buffer scan order on
  shifted clocks, once re-run here with harness-spelled keys, is fixed in the model: it hashes
  popTime on the broker's epoch, reference/common/clock.py.)

Bounds: --cases 1..100000, --steps 1..500, --chunk 1..1000. Exit 0 when every schedule agrees
or is out of scope, 1 when one diverges, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from popverify.conformance.confirm import (LOCKSTEP_FAULTS, MAX_STATEFUL_STEPS, OPT_IN_FAULTS, StatefulReport,
                                           stateful_differential)
from popverify.conformance.lockstep import RELEASES, LockstepClient


def _bounded(lo: int, hi: int):  # type: ignore[no-untyped-def]
    def parse(text: str) -> int:
        value = int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be in {lo}..{hi}")
        return value
    return parse


def harness_costs(client: LockstepClient, release: str, resets: int = 10) -> dict[str, Any]:
    """Median wall-clock ms of ``reset`` (and the harness's close/create split) after one put."""
    total, close, create = [], [], []
    for i in range(resets):
        client.ok({"op": "put", "queueId": 0, "uniqKey": f"cost-{i}"})
        t0 = time.perf_counter()
        client.ok({"op": "reset"})
        total.append((time.perf_counter() - t0) * 1000)
        jvm = client.ok({"op": "jvm"})
        close.append(jvm["lastCloseMs"])
        create.append(jvm["lastCreateMs"])
    return {"reset_ms": round(statistics.median(total), 1), "reset_close_ms": statistics.median(close),
            "reset_create_ms": statistics.median(create), "threads": client.ok({"op": "jvm"})["count"]}


def merge(into: StatefulReport, part: StatefulReport) -> None:
    """Adds a chunk's counts to the profile's report (first example of a class kept)."""
    into.cases += part.cases
    into.agree += part.agree
    into.diverge += part.diverge
    into.out_of_scope += part.out_of_scope
    into.steps += part.steps
    into.seconds += part.seconds
    into.model_seconds += part.model_seconds
    for cls, entry in part.classes.items():
        mine = into.classes.setdefault(cls, {"count": 0, "example": entry["example"]})
        mine["count"] += entry["count"]
    for site, n in part.put_failures.items():
        into.put_failures[site] = into.put_failures.get(site, 0) + n
    for reason, n in part.out_of_scope_reasons.items():
        into.out_of_scope_reasons[reason] = into.out_of_scope_reasons.get(reason, 0) + n


def figures(report: StatefulReport, costs: dict[str, Any]) -> dict[str, Any]:
    """The JSON figures of one profile so far."""
    return {"profile": report.profile, "release": report.release, "cases": report.cases, "agree": report.agree,
            "diverge": report.diverge, "out_of_scope": report.out_of_scope, "steps": report.steps,
            "lockstep_seconds": round(report.seconds, 1), "model_seconds": round(report.model_seconds, 2),
            "schedules_per_s_lockstep": round(report.cases / report.seconds, 3) if report.seconds else None,
            "schedules_per_s_model": round(report.cases / report.model_seconds, 1) if report.model_seconds else None,
            **costs,
            "classes": {cls: e["count"] for cls, e in sorted(report.classes.items())},
            "out_of_scope_reasons": dict(sorted(report.out_of_scope_reasons.items())),
            "put_failures": dict(sorted(report.put_failures.items())),
            "examples": {cls: e["example"] for cls, e in sorted(report.classes.items())}}


def main(argv: list[str] | None = None) -> int:
    """Run the differential per profile; print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=_bounded(1, 100_000), default=1000)
    parser.add_argument("--steps", type=_bounded(1, MAX_STATEFUL_STEPS), default=50)
    parser.add_argument("--profiles", default=",".join(RELEASES))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chunk", type=_bounded(1, 1000), default=25)
    parser.add_argument("--first-case", type=_bounded(0, 100_000), default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--late-faults", action="store_true",
                        help="also draw the faults store_put_fail and scan_stall (the harness's refusePuts and scanStall ops)")
    # faults every case gets besides its drawn ones (e.g. expire,expire_commit_log,clean_consume_queue,
    # delete_recreate: RETENTION_FAULTS), names checked against the POP mode's faults
    parser.add_argument("--extra-faults", default="")
    parser.add_argument("--mode", choices=("pop", "push"), default="pop",
                        help="pop: POP swarm schedules (default); push: push swarm schedules "
                             "(popverify/conformance/push_lockstep.py)")
    args = parser.parse_args(argv)
    faults = LOCKSTEP_FAULTS + (OPT_IN_FAULTS if args.late_faults else ())
    profiles = [p for p in args.profiles.split(",") if p]
    unknown = [p for p in profiles if p not in RELEASES]
    if unknown or not profiles:
        parser.error(f"unknown profile(s) {unknown}; known: {', '.join(RELEASES)}")
    extra = tuple(f for f in args.extra_faults.split(",") if f)
    from popverify.sim.scenario import ALL_POP_FAULTS
    if any(f not in ALL_POP_FAULTS for f in extra):
        parser.error(f"unknown fault(s) in --extra-faults: {[f for f in extra if f not in ALL_POP_FAULTS]}")
    results: dict[str, Any] = {"seed": args.seed, "steps": args.steps, "faults": list(faults),
                               "extra_faults": list(extra), "mode": args.mode,
                               "profiles": {}}
    diverged = False
    for profile in profiles:
        release = RELEASES[profile]
        t0 = time.perf_counter()
        with LockstepClient(release, full_jit=True) as client:
            client.ok({"op": "init", "version": release})
            costs: dict[str, Any] = {"init_ms": round((time.perf_counter() - t0) * 1000, 1)}
            costs.update(harness_costs(client, release))
            report = StatefulReport(profile, release)
            done = 0
            while done < args.cases:
                n = min(args.chunk, args.cases - done)

                def progress(m: str) -> None:
                    if args.progress:
                        print(m, file=sys.stderr, flush=True)
                if args.mode == "push":
                    from popverify.conformance.push_lockstep import push_differential

                    part = push_differential(profile, n, args.seed, args.steps, client, clock=time.perf_counter,
                                             first_case=args.first_case + done, progress=progress)
                else:
                    part = stateful_differential(profile, n, args.seed, args.steps, client, clock=time.perf_counter,
                                                 first_case=args.first_case + done, progress=progress,
                                                 faults=faults, extra_faults=extra)
                merge(report, part)
                done += n
                results["profiles"][profile] = figures(report, costs)
                if args.out is not None:
                    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        f = results["profiles"][profile]
        diverged = diverged or report.diverge > 0
        print(f"{release} ({profile}): {f['cases']} schedules of {args.steps} steps: {f['agree']} agree, "
              f"{f['diverge']} diverge, {f['out_of_scope']} out of scope; {f['schedules_per_s_lockstep']} schedules/s "
              f"in lockstep, {f['schedules_per_s_model']} on the model alone; JVM + init {f['init_ms']} ms, "
              f"reset {f['reset_ms']} ms (close {f['reset_close_ms']}, create {f['reset_create_ms']})")
        for cls, n in f["classes"].items():
            print(f"    {n:5} x {cls}")
        for reason, n in f["out_of_scope_reasons"].items():
            print(f"    {n:5} x out of scope: {reason}")
    return 1 if diverged else 0


if __name__ == "__main__":
    sys.exit(main())
