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

from popverify.fuzz.campaign import campaign  # noqa: E402
from popverify.fuzz.executors import LoopExecutor  # noqa: E402
from popverify.fuzz.rows import Job, RoundTask  # noqa: E402
from spark_fuzz.executor import SparkExecutor  # noqa: E402
from spark_fuzz.session import spark_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=600)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--mode", choices=("pop", "push"), default="pop")
    args = parser.parse_args()
    jobs = [Job(s) for s in range(args.runs)]
    task = RoundTask("v5.5", args.mode, args.steps, None, 0)
    figures: dict[str, float] = {}

    start = time.perf_counter()
    LoopExecutor().run_round(jobs, task, lambda _: None, None)
    figures["plain_loop_runs_per_s"] = args.runs / (time.perf_counter() - start)

    for cores in (1, 2):
        session = spark_session(f"local[{cores}]")
        spark = SparkExecutor(session, partitions=cores * 8)
        spark.warm_up()
        start = time.perf_counter()
        spark.run_round(jobs, task)
        figures[f"local{cores}_runs_per_s"] = args.runs / (time.perf_counter() - start)
        session.stop()
    figures["scaling_efficiency_2_cores"] = figures["local2_runs_per_s"] / (2 * figures["local1_runs_per_s"])
    figures["spark_local1_vs_plain_loop"] = figures["local1_runs_per_s"] / figures["plain_loop_runs_per_s"]

    with tempfile.TemporaryDirectory() as folder:
        spark = SparkExecutor(spark_session("local[2]"))
        guided = campaign("v5.5", args.mode, args.runs, args.steps, Path(folder), spark, rounds=4,
                          compare_blind=True)
    figures["coverage_guided_4_rounds"] = guided["coverage"]
    figures["coverage_blind_same_runs"] = guided["blind_baseline"]["coverage"]
    figures["coverage_guided_vs_blind"] = guided["coverage"] / guided["blind_baseline"]["coverage"]
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}, indent=2))


if __name__ == "__main__":
    main()
