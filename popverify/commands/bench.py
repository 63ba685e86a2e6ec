"""``popverify bench``: simulated steps per second per core, checker on and off."""

from __future__ import annotations

import argparse
import json
import platform
import time

from popverify.args import bounded_int, profile_name
from reference.common.profile import LATEST_PROFILE
from popverify.errors import UsageError
from popverify.sim.scenario import ScenarioConfig, run_scenario


MAX_STEPS = 1_000_000  # README "Bounds"
MAX_RUNS = 1_000


def measure(steps: int, runs: int, check: bool, profile: str) -> float:
    """Steps per second of ``runs`` POP runs of ``steps`` steps (drain excluded), one core."""
    config = ScenarioConfig(drain=False)
    total = 0
    start = time.perf_counter()
    for seed in range(runs):
        total += run_scenario(profile, seed, steps, config=config, check=check).steps
    return total / (time.perf_counter() - start)


def run(args: argparse.Namespace) -> int:
    measure(200, 1, True, args.profile)  # warm-up: imports and first-call costs out of the figures
    checked = measure(args.steps, args.runs, True, args.profile)
    unchecked = measure(args.steps, args.runs, False, args.profile)
    report = {"profile": args.profile, "steps_per_run": args.steps, "runs": args.runs,
              "steps_per_s_checked": round(checked), "steps_per_s_unchecked": round(unchecked),
              "checker_overhead_ratio": round(unchecked / checked, 3), "python": platform.python_version()}
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(f"POP model, profile {args.profile}, one core: {report['steps_per_s_checked']:,} steps/s with the "
              f"checker, {report['steps_per_s_unchecked']:,} without (ratio {report['checker_overhead_ratio']})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bench", help="measure simulated steps per second per core")
    parser.add_argument("--profile", default=LATEST_PROFILE, type=profile_name,
                        help="v5.0 or v5.5 (develop is an alias of v5.5)")
    parser.add_argument("--steps", type=bounded_int(1, MAX_STEPS), default=5000, help=f"steps per run (1..{MAX_STEPS:,})")
    parser.add_argument("--runs", type=bounded_int(1, MAX_RUNS), default=5, help=f"runs per measurement (1..{MAX_RUNS})")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
