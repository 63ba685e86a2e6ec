"""A local swarm campaign over the reference model, with each distinct finding shrunk to a
minimal replayable trace. (The Spark campaign of spark_fuzz runs the same scenarios at scale.)"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from popverify.checker.expectations import is_unexpected
from popverify.sim.scenario import FAULTS, PUSH_FAULTS, ScenarioConfig, run_scenario
from popverify.sim.shrink import shrink_to_trace
from popverify.trace.itf import timeline
from reference.common.javalang import JavaRandom


def run_campaign(profile: str, runs: int, steps: int, out_dir: Path,
                 progress: Callable[[str], None] = lambda _: None, mutant: str | None = None,
                 mode: str = "pop") -> dict[str, Any]:
    """``runs`` swarm runs (seeds 0..runs-1; faults on in odd seeds); per violated property,
    the first run showing it is shrunk and saved as an ITF trace under ``out_dir``."""
    start = time.perf_counter()
    by_property: dict[str, dict[str, Any]] = {}
    total_steps = 0
    coverage: set[str] = set()
    for seed in range(runs):
        faults = (PUSH_FAULTS if mode == "push" else FAULTS) if seed % 2 else ()
        config = ScenarioConfig.draw(JavaRandom(seed), faults=faults, mode=mode)
        result = run_scenario(profile, seed, steps, mode=mode, config=config, mutant=mutant)
        total_steps += result.steps
        coverage |= result.coverage
        for v in result.violations:
            entry = by_property.setdefault(v.property_id, {"runs": set(), "unexpected": False, "first": None})
            entry["runs"].add(seed)
            entry["unexpected"] |= is_unexpected(profile, v.property_id, result.counts["faults"])
            if entry["first"] is None:
                entry["first"] = (seed, config, result.schedule)
        if seed % 50 == 49:
            progress(f"{profile}/{mode}: {seed + 1}/{runs} runs")
    findings = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for pid in sorted(by_property):
        entry = by_property[pid]
        seed, config, schedule = entry["first"]
        progress(f"{profile}/{mode}: shrinking the {pid} counterexample of seed {seed} ({len(schedule)} steps)")
        path = out_dir / f"{profile}-{mode}-{pid}-seed{seed}.itf.json"
        minimal, replayed = shrink_to_trace(profile, mode, seed, config, schedule, pid, path, mutant=mutant,
                                            max_runs=600)
        assert replayed.trace is not None
        message = next(v.message for v in replayed.violations if v.property_id == pid)
        findings.append({"property": pid, "runs": len(entry["runs"]), "unexpected": entry["unexpected"],
                         "seed": seed, "original_steps": len(schedule), "minimal_steps": len(minimal),
                         "trace": str(path), "message": message,
                         "timeline": timeline(replayed.trace["states"])})
    seconds = time.perf_counter() - start
    return {"profile": profile, "mode": mode, "engine": "python", "runs": runs, "steps": total_steps, "seconds": round(seconds, 2),
            "coverage": len(coverage), "findings": findings}

