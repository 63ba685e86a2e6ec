"""A local swarm campaign over the reference model, with each distinct finding shrunk to a
minimal replayable trace. (The Spark campaign of spark_fuzz runs the same scenarios at scale.)"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from popverify.findings.attribution import attribute
from popverify.findings.campaign import Seen, entries
from popverify.findings.confirmation import Confirmer, confirm_entries
from popverify.sim.scenario import FAULTS, PUSH_FAULTS, ScenarioConfig, run_scenario
from reference.common.javalang import JavaRandom


def run_campaign(profile: str, runs: int, steps: int, out_dir: Path,
                 progress: Callable[[str], None] = lambda _: None, mutant: str | None = None,
                 mode: str = "pop", confirmer: Confirmer | None = None,
                 confirm_skip: str = "not requested") -> dict[str, Any]:
    """``runs`` swarm runs (seeds 0..runs-1; faults on in odd seeds); every violation gets its
    root-cause signature (popverify/findings/attribution.py), and per signature the shortest
    violating run is shrunk and saved as an ITF trace under ``out_dir`` (unexplained first),
    then replayed on Java by ``confirmer`` (None: each is ``skipped (confirm_skip)``)."""
    start = time.perf_counter()
    seen: list[Seen] = []
    total_steps = 0
    coverage: set[str] = set()
    witnesses: dict[str, int] = {}  # z3 key witnesses (proofs/keys.py) reached: runs
    for seed in range(runs):
        faults = (PUSH_FAULTS if mode == "push" else FAULTS) if seed % 2 else ()
        config = ScenarioConfig.draw(JavaRandom(seed), faults=faults, mode=mode)
        result = run_scenario(profile, seed, steps, mode=mode, config=config, mutant=mutant)
        total_steps += result.steps
        coverage |= result.coverage
        for point in result.coverage:
            if point.startswith("key-witness:"):
                witnesses[point.removeprefix("key-witness:")] = witnesses.get(point.removeprefix("key-witness:"), 0) + 1
        if result.violations:
            seen.append(Seen(seed, config, result.schedule, attribute(result), result.counts["faults"],
                             seconds=round(time.perf_counter() - start, 3)))
        if seed % 50 == 49:
            progress(f"{profile}/{mode}: {seed + 1}/{runs} runs")
    findings = entries(profile, mode, seen, out_dir, mutant, progress)
    confirmation = confirm_entries(findings, confirmer, confirm_skip)
    seconds = time.perf_counter() - start
    return {"profile": profile, "mode": mode, "engine": "python", "runs": runs, "steps": total_steps, "seconds": round(seconds, 2),
            "coverage": len(coverage), "findings": findings, "key_witnesses_reached": witnesses,
            "confirmation": confirmation}

