"""Delta debugging over a schedule: the shortest schedule (1-minimal by removal of chunks)
that still violates a given property."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from popverify.sim.scenario import Action, RunResult, ScenarioConfig, run_scenario


def violates(profile: str, mode: str, seed: int, config: ScenarioConfig, schedule: Sequence[Action],
             property_id: str, mutant: str | None, keep: Callable[[RunResult], bool] | None = None) -> RunResult | None:
    """The run of ``schedule`` if it violates ``property_id`` (and satisfies ``keep``, e.g. keeps
    its root-cause signature: popverify/findings/attribution.py), else None."""
    result = run_scenario(profile, seed, 0, mode=mode, config=config, schedule=schedule, mutant=mutant)
    if not any(v.property_id == property_id for v in result.violations):
        return None
    return result if keep is None or keep(result) else None


def shrink(profile: str, mode: str, seed: int, config: ScenarioConfig, schedule: Sequence[Action],
           property_id: str, mutant: str | None = None, max_runs: int = 2000,
           keep: Callable[[RunResult], bool] | None = None) -> tuple[Action, ...]:
    """ddmin-style reduction: remove chunks (halving their size) while the violation stays.

    The result still violates ``property_id`` and removing any single action from it does
    not (unless ``max_runs`` ran out first). ValueError if the input does not violate it.
    """
    current = list(schedule)
    first = violates(profile, mode, seed, config, current, property_id, mutant, keep)
    if first is None:
        raise ValueError(f"the schedule does not violate {property_id}")
    runs = 1
    # The run is deterministic: up to the step where the property first failed, the prefix
    # runs exactly as the whole schedule did, so it fails there too (its drain then follows
    # sooner). Kept only if it also keeps ``keep`` (a signature can hinge on later steps).
    # A violation found in the final drain (step == len) leaves nothing to cut.
    step = min(v.step for v in first.violations if v.property_id == property_id)
    if step + 1 < len(current):
        runs += 1
        prefix = current[:step + 1]
        if violates(profile, mode, seed, config, prefix, property_id, mutant, keep) is not None:
            current = prefix
    chunk = max(1, len(current) // 2)
    while chunk >= 1 and runs < max_runs:
        removed = False
        start = 0
        while start < len(current) and runs < max_runs:
            candidate = current[:start] + current[start + chunk:]
            runs += 1
            if candidate and violates(profile, mode, seed, config, candidate, property_id, mutant, keep) is not None:
                current = candidate
                removed = True
            else:
                start += chunk
        if not removed:
            chunk //= 2
    return tuple(current)


def shrink_to_trace(profile: str, mode: str, seed: int, config: ScenarioConfig, schedule: Sequence[Action],
                    property_id: str, path: Path, mutant: str | None = None,
                    max_runs: int = 2000, keep: Callable[[RunResult], bool] | None = None
                    ) -> tuple[tuple[Action, ...], RunResult]:
    """Shrink, re-run the minimal schedule with its trace recorded, and write the ITF trace to
    ``path``; returns the minimal schedule and that run."""
    from popverify.trace.itf import write_trace

    minimal = shrink(profile, mode, seed, config, schedule, property_id, mutant=mutant, max_runs=max_runs,
                     keep=keep)
    replayed = run_scenario(profile, seed, 0, mode=mode, config=config, schedule=minimal, mutant=mutant,
                            record_trace=True)
    assert replayed.trace is not None
    write_trace(path, replayed.trace)
    return minimal, replayed
