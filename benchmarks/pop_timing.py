"""Measure POP timing on swarm runs: ALO-1 violating runs and popTime-to-delivery.

Usage: .venv/bin/python benchmarks/pop_timing.py [--profile v5.0] [--runs 150] [--steps 500] [--no-stall]

Each seed's configuration is the fuzz campaign's own swarm draw (popverify.fuzz.rows.swarm_config,
i.e. ScenarioConfig.draw), so the figures are comparable before and after a model change
with the same seeds. The delivery latency (virtual ms from a response's popTime to the
driver collecting it) is read by wrapping PopWorld.collect; the model is not changed.
``--no-stall`` draws the configurations without the ``stall`` fault, i.e. exactly the
configurations the draw gave before that fault existed (ScenarioConfig.draw draws one
keep/drop per fault before the sizes, so an extra fault shifts every later draw).
"""

from __future__ import annotations

import argparse
import json
import statistics

from popverify.sim import pop_driver, scenario
from popverify.sim.scenario import run_scenario
from popverify.fuzz.rows import swarm_config


def main() -> None:
    """Run the sweep and print one JSON object of figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="v5.0")
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--no-stall", action="store_true", help="draw configurations without the stall fault")
    args = parser.parse_args()
    if args.no_stall:
        scenario.FAULTS = tuple(f for f in scenario.FAULTS if f != "stall")
    if not 1 <= args.runs <= 100_000 or not 1 <= args.steps <= 100_000:
        parser.error("--runs and --steps must be in 1..100000")
    latencies: list[int] = []
    late = [0]
    original = pop_driver.PopWorld.collect

    def collect(self: pop_driver.PopWorld, consumer: pop_driver.Consumer, op: object) -> None:
        result = op.result  # type: ignore[attr-defined]
        now = self.clock.now()
        for _ in result.messages:
            latencies.append(now - result.pop_time)
            if now >= result.pop_time + result.invisible_time:
                late[0] += 1
        original(self, consumer, op)  # type: ignore[arg-type]

    pop_driver.PopWorld.collect = collect  # type: ignore[method-assign]
    violating: dict[str, int] = {}
    alo_runs = 0
    stalls = 0
    for seed in range(args.runs):
        result = run_scenario(args.profile, seed, args.steps, config=swarm_config(seed))
        found = {v.property_id for v in result.violations}
        for pid in sorted(found):
            violating[pid] = violating.get(pid, 0) + 1
        alo_runs += bool(found & {"ALO-1", "ALO-2"})
        stalls += result.counts.get("stalls", 0)  # absent before the stall fault existed
    lat = sorted(latencies)
    print(json.dumps({
        "profile": args.profile, "runs": args.runs, "steps": args.steps,
        "runs_violating": violating, "runs_violating_alo_1_or_2": alo_runs, "deliveries": len(lat),
        "latency_ms_median": statistics.median(lat) if lat else None,
        "latency_ms_p90": lat[int(0.9 * (len(lat) - 1))] if lat else None,
        "latency_ms_max": lat[-1] if lat else None,
        "delivered_past_invisible_time_pct": round(100.0 * late[0] / len(lat), 2) if lat else None,
        "stalls": stalls,
    }, sort_keys=True))


if __name__ == "__main__":
    main()
