"""verify's fuzz campaign of one mode and profile: the campaign planner
(popverify/fuzz/campaign.py) on the plain loop or on Spark, reduced to the figures and
findings verify's report shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from popverify.fuzz.campaign import campaign
from popverify.fuzz.executors import Executor, LoopExecutor


def run_campaign(profile: str, runs: int, steps: int, out_dir: Path,
                 progress: Callable[[str], None] = lambda _: None, mutant: str | None = None,
                 mode: str = "pop", executor: Executor | None = None, confirmer: Any = None,
                 confirm_skip: str = "not requested") -> dict[str, Any]:
    """One blind round of ``runs`` runs (seeds 0..runs-1, each under its swarm
    configuration) in the campaign folder ``out_dir`` (rows under ``runs/``, resumed when
    there; minimal traces under ``traces/``) on ``executor`` (default the plain loop);
    every violation gets its root-cause signature, and per signature the shortest violating
    run is shrunk and saved as an ITF trace (unexplained first), then replayed on Java by
    ``confirmer`` (popverify.findings.confirmation.Confirmer; None: each is
    ``skipped (confirm_skip)``)."""
    runner = executor or LoopExecutor()
    done = 0

    def ran(n: int) -> None:
        nonlocal done
        before, done = done, done + n
        if before // 50 != done // 50:
            progress(f"{profile}/{mode}: {done}/{runs} runs")

    summary = campaign(profile, mode, runs, steps, out_dir, runner, mutant=mutant, progress=ran,
                       shrink_progress=progress, confirmer=confirmer, confirm_skip=confirm_skip)
    return {"profile": profile, "mode": mode, "engine": summary["engine"], "runs": summary["runs"],
            "steps": summary["steps"], "seconds": summary["seconds"], "coverage": summary["coverage"],
            "findings": summary["violations"], "key_witnesses_reached": summary["key_witnesses_reached"],
            "confirmation": summary["confirmation"], "domain": summary["domain"]}
