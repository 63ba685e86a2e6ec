"""Lockstep differential with store put failures forced: every schedule's configuration draws the
faults restart, store_put_fail and scan_stall (spec/conformance.md "Store put failures and scan
stalls"), replayed on the model and on RocketMQ's real broker classes.

Usage: .venv/bin/python benchmarks/lockstep_put_failures.py [--profiles v5.0,v5.5] [--cases 100]
       [--steps 100] [--seed 7] [--out FILE]

`lockstep_differential.py --late-faults` draws each fault in 30 % of the cases, so a pending
failure seldom meets a revive retry; here every case may refuse puts. Case k's configuration
and run seed come from ``JavaRandom(seed * 1000003 + k)`` only. Printed (and written to --out
as JSON): per profile, agree / diverge / out of scope, the store_put_fail and scan_stall steps
drawn, the puts refused per site, and each divergence class with its cases.

Bounds: --cases 1..10000, --steps 1..500. Exit 0 when nothing diverges, 1 when something does,
2 on bad arguments.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lockstep_differential import _bounded  # noqa: E402

from popverify.conformance.confirm import MAX_STATEFUL_STEPS, divergence_class, drawn_schedule_lockstep  # noqa: E402
from popverify.conformance.lockstep import RELEASES, LockstepClient  # noqa: E402
from popverify.sim.scenario import ScenarioConfig  # noqa: E402
from reference.common.javalang import JavaRandom  # noqa: E402

FAULTS = ("restart", "store_put_fail", "scan_stall")


def run_profile(profile: str, cases: int, steps: int, seed: int, progress: bool) -> dict[str, Any]:
    """The forced-fault differential of one profile."""
    counts: collections.Counter[str] = collections.Counter()
    refused: collections.Counter[str] = collections.Counter()
    classes: dict[str, list[dict[str, Any]]] = {}
    t0 = time.perf_counter()
    with LockstepClient(RELEASES[profile], full_jit=True) as client:
        for case in range(cases):
            rng = JavaRandom(seed * 1_000_003 + case)
            config = ScenarioConfig.draw(rng, faults=FAULTS)
            run_seed = rng.next_int(1 << 30)
            verdict, schedule = drawn_schedule_lockstep(profile, run_seed, config, steps, client)
            counts[verdict.status] += 1
            counts["store_put_fail steps"] += sum(1 for a in schedule if a.kind == "store_put_fail")
            counts["scan_stall steps"] += sum(1 for a in schedule if a.kind == "scan_stall")
            refused.update(verdict.put_failures)
            if verdict.status == "diverges":
                classes.setdefault(divergence_class(verdict), []).append(
                    {"case": case, "seed": run_seed, "step": verdict.step})
            if progress:
                print(f"{profile} case {case}: {verdict.headline()} {list(verdict.put_failures)}", file=sys.stderr,
                      flush=True)
    return {"profile": profile, "release": RELEASES[profile], "cases": cases, "steps": steps,
            "counts": dict(sorted(counts.items())), "refused": dict(sorted(refused.items())),
            "classes": classes, "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    """Run each profile; print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default=",".join(RELEASES))
    parser.add_argument("--cases", type=_bounded(1, 10_000), default=100)
    parser.add_argument("--steps", type=_bounded(1, MAX_STATEFUL_STEPS), default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    profiles = [p for p in args.profiles.split(",") if p]
    unknown = [p for p in profiles if p not in RELEASES]
    if unknown or not profiles:
        parser.error(f"unknown profile(s) {unknown}; known: {', '.join(RELEASES)}")
    results = {}
    for profile in profiles:
        r = results[profile] = run_profile(profile, args.cases, args.steps, args.seed, args.progress)
        print(f"{r['release']} ({profile}): {r['cases']} schedules of {r['steps']} steps: {r['counts']}; "
              f"refused {r['refused']}; {r['seconds']} s")
        for cls, entries in sorted(r["classes"].items()):
            print(f"    {len(entries)} x {cls}: cases {[e['case'] for e in entries]}")
        if args.out is not None:
            args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 1 if any(r["counts"].get("diverges") for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
