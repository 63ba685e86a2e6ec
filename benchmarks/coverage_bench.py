"""Benchmark (not a test): how long a coverage run takes, and what the JaCoCo agent costs.

The same work (the conformance checks, and the lockstep replay of a short blind campaign
when --harness includes it) runs once without the agent and once under it; the second also
pays for ``jacococli report`` against the release's jars, timed separately.

Usage: .venv/bin/python benchmarks/coverage_bench.py [--profile v5.0] [--cases 300]
       [--harness conformance|lockstep|all] [--schedules 10] [--steps 200] [--corpus DIR]
All figures come from one invocation (one run each), so their ratio is comparable.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from popverify.coverage import jacoco, nonlive, replay  # noqa: E402
from popverify.coverage.measure import measure_profile  # noqa: E402
from popverify.args import profile_name  # noqa: E402
from popverify.coverage.targets import RELEASES  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", type=profile_name, default="v5.0")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--harness", choices=("conformance", "lockstep", "all"), default="conformance")
    parser.add_argument("--schedules", type=int, default=10)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--corpus", default=None, help="a fuzz campaign folder instead of a short blind campaign")
    args = parser.parse_args()
    release = RELEASES[args.profile]
    jacoco.agent_jar(), jacoco.cli_jar(), nonlive.classpath_jars(release)  # fetched and built before timing
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        lockstep = None
        if args.harness != "conformance":
            corpus = Path(args.corpus) if args.corpus else replay.short_campaign(out / "corpus", args.profile,
                                                                                  args.schedules, args.steps)
            schedules = replay.load_corpus(corpus, args.profile, args.schedules)
            lockstep = functools.partial(replay.replay, schedules=schedules)
        conformance = args.harness != "lockstep"
        figures: dict[str, object] = {"profile": args.profile, "release": release, "harness": args.harness,
                                      "cases": args.cases, "schedules": args.schedules if lockstep else 0}
        start = time.perf_counter()
        plain = measure_profile(args.profile, out / "plain", args.cases, 0, lockstep=lockstep,
                                conformance=conformance, use_agent=False)
        figures["without_agent_s"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        result = measure_profile(args.profile, out / "agent", args.cases, 0, lockstep=lockstep,
                                 conformance=conformance)
        figures["with_agent_s"] = round(time.perf_counter() - start, 2)
        # the report step alone, on the data just recorded
        start = time.perf_counter()
        jacoco.report_xml(sorted((out / "agent").glob("*.exec")), nonlive.classpath_jars(release), out / "again.xml")
        figures["jacococli_report_s"] = round(time.perf_counter() - start, 2)
        figures["agent_run_s"] = round(figures["with_agent_s"] - figures["jacococli_report_s"], 2)  # type: ignore[operator]
        figures["ratio_with_over_without"] = round(figures["with_agent_s"] / figures["without_agent_s"], 2)  # type: ignore[operator]
        figures["ratio_agent_run_over_without"] = round(figures["agent_run_s"] / figures["without_agent_s"], 2)  # type: ignore[operator]
        # the agent must not change what the harness does: same checks, same verdicts, same steps
        figures["same_results_with_and_without_agent"] = plain["sources"] == result["sources"]
        figures["sources"] = {name: {k: v for k, v in source.items() if k != "checks"}
                              for name, source in result["sources"].items()}
    print(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
