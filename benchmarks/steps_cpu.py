"""Steps per CPU second of ``popverify bench``'s workload, checker on and off.

Usage: .venv/bin/python benchmarks/steps_cpu.py [STEPS] [RUNS]   (defaults 3000 3; each 1..100000)

``popverify bench`` divides by wall time, which a loaded machine stretches; this divides by
the process's CPU time (time.process_time), so two commits can be compared on a shared
machine: run it alternately from each checkout (old one first on PYTHONPATH) and compare
the medians. Same workload as bench: POP, develop, default configuration without the drain,
seeds 0..RUNS-1.
"""

from __future__ import annotations

import json
import sys
import time

from popverify.sim.scenario import ScenarioConfig, run_scenario


def main(argv: list[str]) -> int:
    try:
        steps, runs = (int(a) for a in (argv + ["3000", "3"][len(argv):])[:2])
    except ValueError:
        print("usage: steps_cpu.py [STEPS] [RUNS] (integers)", file=sys.stderr)
        return 2
    if not 1 <= steps <= 100_000 or not 1 <= runs <= 100_000:
        print("STEPS and RUNS must be in 1..100000", file=sys.stderr)
        return 2
    config = ScenarioConfig(drain=False)
    run_scenario("v5.5", 0, 200, config=config)  # warm-up: imports and first-call costs
    out = {}
    for check in (True, False):
        total = 0
        start = time.process_time()
        for seed in range(runs):
            total += run_scenario("v5.5", seed, steps, config=config, check=check).steps
        out["checked" if check else "unchecked"] = round(total / (time.process_time() - start))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
