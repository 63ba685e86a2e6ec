"""Benchmark (not a test): Spark campaign throughput on local[1] vs local[2], Spark's overhead
against a plain Python loop over the same seeds, and coverage of guided rounds vs the blind
control of the same budget (4 rounds each).

Usage: .venv/bin/python benchmarks/fuzz_scaling.py [--runs 600] [--steps 400] [--mode pop|push]
All figures come from one invocation, so their ratios are comparable.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spark_fuzz.campaign import campaign, run_round, spark_session, warm_up  # noqa: E402
from spark_fuzz.runs import run_row  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=600)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--mode", choices=("pop", "push"), default="pop")
    args = parser.parse_args()
    jobs = [(s, -1, None) for s in range(args.runs)]
    figures: dict[str, float] = {}

    start = time.perf_counter()
    for seed, _, _ in jobs:
        run_row("v5.5", args.mode, seed, args.steps, None, 0)
    figures["plain_loop_runs_per_s"] = args.runs / (time.perf_counter() - start)

    for cores in (1, 2):
        session = spark_session(f"local[{cores}]")
        warm_up(session, cores * 8)
        start = time.perf_counter()
        run_round(session, jobs, "v5.5", args.mode, args.steps, None, 0, cores * 8)
        figures[f"local{cores}_runs_per_s"] = args.runs / (time.perf_counter() - start)
        session.stop()
    figures["scaling_efficiency_2_cores"] = figures["local2_runs_per_s"] / (2 * figures["local1_runs_per_s"])
    figures["spark_local1_vs_plain_loop"] = figures["local1_runs_per_s"] / figures["plain_loop_runs_per_s"]

    with tempfile.TemporaryDirectory() as folder:
        guided = campaign("v5.5", args.mode, args.runs, args.steps, Path(folder), master="local[2]", rounds=4,
                          compare_blind=True)
    figures["coverage_guided_4_rounds"] = guided["coverage"]
    figures["coverage_blind_same_runs"] = guided["blind_baseline"]["coverage"]
    figures["coverage_guided_vs_blind"] = guided["coverage"] / guided["blind_baseline"]["coverage"]
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}, indent=2))


if __name__ == "__main__":
    main()
