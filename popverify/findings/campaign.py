"""Campaign findings by root-cause signature: group violating runs, keep the shortest
counterexample per signature (shrunk so that it keeps its signature), unexplained first.

The campaign planner (popverify/fuzz/campaign.py, on either executor) describes its
violating runs as ``Seen`` records and calls ``entries``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from popverify.checker.expectations import is_unexpected
from popverify.findings.attribution import Signature, keeps_signature
from popverify.sim.scenario import Action, ScenarioConfig
from popverify.sim.shrink import shrink_to_trace
from popverify.trace.itf import timeline

# Shrink budget per signature (candidate runs; each candidate that still violates costs one
# attribution re-run per checked finding as well).
SHRINK_RUNS = 300


@attrs.frozen
class Seen:
    """One violating run as a campaign saw it."""

    seed: int
    config: ScenarioConfig
    schedule: tuple[Action, ...]
    signatures: tuple[Signature, ...]
    faults: int
    round: int = 0
    seconds: float | None = None   # campaign time at which it was known (time to first counterexample)


def order_key(entry: dict[str, Any]) -> tuple:
    """Unexplained signatures lead, then unexpected ones, then by signature."""
    return (not entry["unexplained"], not entry["unexpected"], entry["signature"])


def entries(profile: str, mode: str, seen: Iterable[Seen], traces: Path, mutant: str | None,
            progress: Callable[[str], None] = lambda _: None,
            extra: Callable[[Path], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One entry per signature: run count, first seen, and its shortest counterexample (the
    violating run with the shortest schedule, earliest seed on ties, shrunk keeping the
    signature and written as an ITF trace under ``traces``)."""
    by_sig: dict[Signature, list[Seen]] = {}
    for s in seen:
        for sig in s.signatures:
            by_sig.setdefault(sig, []).append(s)
    traces.mkdir(parents=True, exist_ok=True)
    out = []
    for sig in sorted(by_sig):
        runs = by_sig[sig]
        first = min(runs, key=lambda s: (s.round, s.seconds if s.seconds is not None else 0.0, s.seed))
        best = min(runs, key=lambda s: (len(s.schedule), s.seed))
        tag = "+".join(sig.findings) or "unexplained"
        path = traces / f"{profile}-{mode}-{sig.property_id}-{tag}-seed{best.seed}.itf.json"
        progress(f"{profile}/{mode}: shrinking {sig.key} (seed {best.seed}, {len(best.schedule)} steps)")
        minimal, replayed = shrink_to_trace(profile, mode, best.seed, best.config, best.schedule, sig.property_id,
                                            path, mutant=mutant, max_runs=SHRINK_RUNS,
                                            keep=keeps_signature(sig))
        assert replayed.trace is not None
        entry = {"property": sig.property_id, "signature": sig.key, "explained_by": list(sig.findings),
                 "unexplained": not sig.explained, "runs": len(runs), "seed": best.seed,
                 "unexpected": any(is_unexpected(profile, sig.property_id, s.faults, sig) for s in runs),
                 "original_steps": len(best.schedule), "minimal_steps": len(minimal), "trace": str(path),
                 "message": next(v.message for v in replayed.violations if v.property_id == sig.property_id),
                 "timeline": timeline(replayed.trace["states"]), "first_seed": first.seed,
                 "first_round": first.round, "time_to_first_s": first.seconds}
        if extra is not None:
            entry.update(extra(path))
        out.append(entry)
    return sorted(out, key=order_key)
