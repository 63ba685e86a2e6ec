"""The campaign planner: rounds of runs (popverify/fuzz/plan.py), Parquet results keyed by
seed (popverify/fuzz/store.py: resumable, idempotent under retried partitions),
coverage-guided offspring, shrinking of every distinct finding, a summary and a report.

The same plan runs on either executor (popverify/fuzz/executors.py): the plain loop or
Spark. Only the figures that measure time differ between them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from popverify.fuzz import store
from popverify.fuzz.domain import domain_rows
from popverify.fuzz.executors import Executor
from popverify.fuzz.plan import round_jobs, swarm_digest
from popverify.fuzz.rows import RoundTask
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario


def campaign(profile: str, mode: str, runs: int, steps: int, out: Path, executor: Executor,
             rounds: int = 1, time_budget: float | None = None, mutant: str | None = None,
             progress: Callable[[int], None] = lambda _: None, guided: bool = True,
             compare_blind: bool = False, shrink_progress: Callable[[str], None] = lambda _: None,
             confirmer: Any = None, confirm_skip: str = "not requested") -> dict[str, Any]:
    """Run (or resume) a campaign of ``runs`` runs in ``rounds`` rounds under ``out`` on
    ``executor``; returns the summary (also written as ``out/summary.json`` and
    ``out/report.html``).

    ``guided=False`` runs every round on fresh seeds (the blind control); ``compare_blind``
    also runs that control for the same budget under ``out/blind-baseline`` and puts it in
    the summary and the report. ``progress`` gets the number of runs just finished.
    ``confirmer`` (popverify.findings.confirmation.Confirmer) replays each signature's minimal
    counterexample on Java; None marks them ``skipped (confirm_skip)``."""
    out.mkdir(parents=True, exist_ok=True)
    guided_key = guided and rounds > 1
    store.check_manifest(out, {"profile": profile, "mode": mode, "steps": steps, "mutant": mutant,
                               "guided": guided_key, "swarm": swarm_digest(mode)})
    set_aside: list[Path] = []
    store.consolidate_parts(out, profile, mode)
    done = store.load_rows(out, profile, mode, set_aside)
    parts = executor.parts(out)
    executor.warm_up()
    started = time.perf_counter()
    coverage_timeline: list[dict[str, Any]] = []
    first_failure: float | None = None
    per_round = max(1, -(-runs // rounds))
    seen_coverage: set[str] = set()
    for row in done.values():
        seen_coverage.update(row["coverage"])
    for round_no in range(rounds):
        if time_budget is not None and time.perf_counter() - started > time_budget:
            break
        budget = min(per_round, runs - len(done))  # never more rows than --runs, resumed or not
        if budget <= 0:
            break
        jobs = round_jobs(round_no if guided else 0, budget, runs, done)
        task = RoundTask(profile, mode, steps, mutant, round_no)
        rows = executor.run_round(jobs, task, progress, parts)
        if first_failure is None and any(r["violations"] != "[]" for r in rows):
            # resolution is one round: the time at which the first round with a failure finished
            first_failure = round(time.perf_counter() - started, 3)
        store.write_round(out, profile, mode, round_no, rows)
        store.drop_parts(out, profile, mode)
        for row in rows:
            done[row["seed"]] = row
            seen_coverage.update(row["coverage"])
        coverage_timeline.append({"round": round_no, "runs": len(done), "coverage": len(seen_coverage),
                                  "seconds": round(time.perf_counter() - started, 2)})
    seconds = time.perf_counter() - started
    summary = summarize(profile, mode, done, out, seconds, coverage_timeline, mutant, shrink_progress)
    summary["time_to_first_failure_s"] = first_failure
    summary["guided"] = guided_key
    summary["engine"] = executor.engine
    summary["master"] = executor.master
    summary["set_aside"] = [str(p) for p in set_aside]
    from popverify.findings.confirmation import confirm_entries
    summary["confirmation"] = confirm_entries(summary["violations"], confirmer, confirm_skip)
    if compare_blind:
        blind = campaign(profile, mode, runs, steps, out / "blind-baseline", executor, rounds=rounds,
                         time_budget=time_budget, mutant=mutant, guided=False)
        summary["blind_baseline"] = {k: blind[k] for k in ("runs", "coverage", "coverage_timeline", "seconds",
                                                           "violations_by_property", "time_to_first_failure_s")}
    from popverify.fuzz.report import write_report
    write_report(out, summary)
    from popverify.findings.triage import record
    record(out)  # signature history: `popverify findings` marks what is new since the last campaign
    return summary


def validation_of(path: Path) -> dict[str, str]:
    """Trace validation of a minimal push counterexample against PushConsumerOffsets: is the
    failing run a behaviour of the spec (a protocol-level finding the spec shares), or does the
    model leave the spec at some step (a model defect), or is it outside the spec's scope?"""
    from popverify.tlc.trace_validation import ScopeError, validate_trace
    from popverify.tools import ToolError
    try:
        result = validate_trace(path)
    except ScopeError as err:
        return {"verdict": "out of scope", "detail": str(err)}
    except ToolError as err:
        return {"verdict": "unavailable", "detail": str(err)}
    failed = [f"queue {q.queue}: {q.failed_at or q.error}" for q in result.queues if not q.valid]
    return {"verdict": "valid" if result.valid else "not a behaviour", "detail": "; ".join(failed)}


def summarize(profile: str, mode: str, rows: dict[int, dict], out: Path, seconds: float,
              coverage_timeline: list[dict], mutant: str | None,
              progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Group the violating runs by root-cause signature (unexplained first), shrink the
    shortest run of each keeping its signature (traces under ``out/traces``)."""
    from popverify.findings.attribution import Signature, attribute
    from popverify.findings.campaign import Seen, entries

    counts: dict[str, int] = {}
    round_seconds = {t["round"]: t["seconds"] for t in coverage_timeline}
    seen = []
    for seed in sorted(rows):
        row = rows[seed]
        violated = sorted({v["property"] for v in json.loads(row["violations"])})
        for pid in violated:
            counts[pid] = counts.get(pid, 0) + 1  # runs, not violations
        if not violated:
            continue
        config = ScenarioConfig.from_json(json.loads(row["config"]))
        schedule = tuple(Action.from_json(a) for a in json.loads(row["schedule"]))
        if row.get("signatures"):
            sigs = tuple(Signature.parse(k) for k in json.loads(row["signatures"]))
        else:  # a row stored before attribution existed: attribute it now
            sigs = attribute(run_scenario(profile, seed, 0, mode=mode, config=config, schedule=schedule,
                                          mutant=mutant))
        seen.append(Seen(seed, config, schedule, sigs, row["faults"], row["round"], round_seconds.get(row["round"])))
    violations = entries(profile, mode, seen, out / "traces", mutant, progress,
                         extra=lambda path: {"validation": validation_of(path) if mode == "push" else None})
    total_steps = sum(r["steps"] for r in rows.values())
    summary = {
        "profile": profile, "mode": mode, "mutant": mutant, "runs": len(rows), "steps": total_steps,
        "seconds": round(seconds, 2), "runs_per_s": round(len(rows) / seconds, 1) if seconds > 0 else None,
        "steps_per_s": round(total_steps / seconds, 1) if seconds > 0 else None,
        "violations_by_property": counts, "violations": violations, "coverage_timeline": coverage_timeline,
        "violations_by_signature": {v["signature"]: v["runs"] for v in violations},
        # z3 key witnesses (proofs/keys.py) the campaign reached: runs per witness
        "key_witnesses_reached": {w: sum(f"key-witness:{w}" in r["coverage"] for r in rows.values())
                                  for w in ("merge",)},
        "unexplained": [v["signature"] for v in violations if v["unexplained"]],
        "time_to_first_by_signature_s": {v["signature"]: v["time_to_first_s"] for v in violations},
        "coverage": len({c for r in rows.values() for c in r["coverage"]}),
        # per dimension of the input domain: range and boundaries reached (popverify/fuzz/domain.py)
        "domain": domain_rows(mode, (rows[seed] for seed in sorted(rows))),
    }
    return summary
