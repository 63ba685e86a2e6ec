"""A fuzz campaign on Spark: rounds of runs partitioned across tasks, Parquet results keyed
by seed (resumable, idempotent under task retries), coverage-guided schedule mutation,
shrinking of every distinct finding, and a report.

Runs unchanged under spark-submit: ``spark-submit spark_fuzz/main.py --profile v5.0 ...``.
"""

from __future__ import annotations

import atexit
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from reference.common.javalang import JavaRandom
from spark_fuzz import store
from spark_fuzz.runs import mutate_config, mutate_schedule, run_row

MUTATION_SEED_BASE = 1 << 40  # seeds of mutated-schedule runs: never collide with blind seeds


LOCAL_TASK_ATTEMPTS = 4  # Spark's spark.task.maxFailures default, which local masters ignore


def with_task_retries(master: str) -> str:
    """A local master with task retries: ``local[N]`` runs each task once (a dead Python
    worker aborts the job), so it becomes ``local[N,4]``; masters that name their attempts,
    and cluster masters (which honour spark.task.maxFailures), are kept."""
    if master == "local":
        return f"local[1,{LOCAL_TASK_ATTEMPTS}]"
    if master.startswith("local[") and master.endswith("]") and "," not in master:
        return f"{master[:-1]},{LOCAL_TASK_ATTEMPTS}]"
    return master


_STOP_AT_EXIT: list = []


def _stop_at_exit() -> None:
    from pyspark import SparkContext
    if SparkContext._active_spark_context is not None:
        try:
            SparkContext._active_spark_context.stop()
        except Exception:  # the JVM is already gone (py4j errors): nothing left to stop
            pass


class _Py4jInterrupted(logging.Filter):
    """Drops py4j's "... while sending command." records (an interrupted JVM call)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not ("py4j" in record.pathname and "while sending command" in record.getMessage())


def spark_session(master: str | None):
    """A quiet SparkSession on ``master`` (local masters with task retries) whose Python workers
    use this interpreter; ``None`` keeps the master spark-submit (or spark-defaults) chose."""
    if master is not None:
        master = with_task_retries(master)
    # py4j logs a traceback on the root logger when a call to the JVM is interrupted (Ctrl-C,
    # SIGTERM); the CLI reports the interruption itself in one line
    root = logging.getLogger()
    if not any(isinstance(f, _Py4jInterrupted) for f in root.filters):
        root.addFilter(_Py4jInterrupted())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master is None or is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only in local mode
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    builder = SparkSession.builder if master is None else SparkSession.builder.master(master)
    spark = (builder.appName("popverify-fuzz")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.python.worker.reuse", "true").config("spark.ui.showConsoleProgress", "false")
             .config("spark.task.maxFailures", str(LOCAL_TASK_ATTEMPTS))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    gateway_jvm = getattr(spark.sparkContext._gateway, "proc", None)  # None under spark-submit
    if gateway_jvm is not None:
        from popverify.tools import adopt_child
        adopt_child(gateway_jvm)  # ends with popverify on SIGTERM and at exit
        if not _STOP_AT_EXIT:
            # registered after adopt_child, so it runs first: a stopped context has closed its
            # accumulator server, which would otherwise print a traceback when the JVM goes
            _STOP_AT_EXIT.append(spark)
            atexit.register(_stop_at_exit)
    if not is_local(spark.sparkContext.master):
        # executors of a cluster (local-cluster included) do not share the driver's sys.path
        spark.sparkContext.addPyFile(str(store.code_zip()))
    return spark


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: tasks run in the driver's JVM
    (``local-cluster[...]`` starts separate executors and is not local)."""
    return master == "local" or master.startswith("local[")


def _task(profile: str, mode: str, steps: int, mutant: str | None, round_no: int, fail_first_attempt: bool,
          parts: str | None = None):
    def run_partition(items):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        if fail_first_attempt and ctx is not None and ctx.attemptNumber() == 0 and ctx.partitionId() == 0:
            raise RuntimeError("injected executor loss (first attempt of partition 0)")
        rows = [run_row(profile, mode, seed, steps, mutant, round_no,
                        None if schedule is None else json.loads(schedule), parent, *config)
                for seed, parent, schedule, *config in items]
        if parts is not None:  # kept if the round fails later; read back on resume
            from spark_fuzz.store import write_part
            write_part(Path(parts), profile, mode, round_no, ctx.partitionId() if ctx is not None else 0, rows)
        yield from rows
    return run_partition


def run_round(spark, jobs: list[tuple], profile: str, mode: str, steps: int,
              mutant: str | None, round_no: int, partitions: int, fail_first_attempt: bool = False,
              on_progress: Callable[[int], None] = lambda _: None, parts: Path | None = None) -> list[dict[str, Any]]:
    """Run ``jobs`` (seed, parent, schedule json[, config json]) as Spark tasks; every row of every successful
    task attempt comes back exactly once (a failed attempt's rows are discarded by Spark). With
    ``parts`` (a folder the tasks can write: local masters) each finished task also writes its
    rows there, so a round that fails keeps them."""
    if not jobs:
        return []
    slices = max(1, min(partitions, len(jobs)))
    rdd = spark.sparkContext.parallelize(jobs, slices)
    mapped = rdd.mapPartitions(_task(profile, mode, steps, mutant, round_no, fail_first_attempt,
                                     None if parts is None else str(parts.resolve())))
    outcome: dict[str, Any] = {}

    def collect() -> None:
        try:
            outcome["rows"] = mapped.collect()
        except Exception as err:  # re-raised on the driver thread
            outcome["error"] = err

    worker = threading.Thread(target=collect, daemon=True)
    worker.start()
    tracker = spark.sparkContext.statusTracker()
    reported = 0
    while worker.is_alive():
        worker.join(0.25)
        done_tasks = sum(info.numCompletedTasks for sid in tracker.getActiveStageIds()
                         if (info := tracker.getStageInfo(sid)) is not None)
        estimate = min(len(jobs), done_tasks * len(jobs) // slices)
        if estimate > reported:
            on_progress(estimate - reported)
            reported = estimate
    if "error" in outcome:
        raise outcome["error"]
    rows = sorted(outcome["rows"], key=lambda r: r["seed"])
    on_progress(len(rows) - reported)
    return rows


def campaign(profile: str, mode: str, runs: int, steps: int, out: Path, master: str | None = "local[*]",
             rounds: int = 1, time_budget: float | None = None, mutant: str | None = None,
             partitions: int | None = None, fail_first_attempt: bool = False,
             progress: Callable[[int], None] = lambda _: None, guided: bool = True,
             compare_blind: bool = False, confirmer: Any = None,
             confirm_skip: str = "not requested") -> dict[str, Any]:
    """Run (or resume) a campaign of ``runs`` runs in ``rounds`` rounds under ``out``.

    ``guided=False`` runs every round on fresh seeds (the blind control); ``compare_blind``
    also runs that control for the same budget under ``out/blind-baseline`` and puts it in
    the summary and the report. ``master=None`` keeps the master spark-submit chose.
    ``confirmer`` (popverify.findings.confirmation.Confirmer) replays each signature's minimal
    counterexample on Java; None marks them ``skipped (confirm_skip)``."""
    out.mkdir(parents=True, exist_ok=True)
    guided_key = guided and rounds > 1
    store.check_manifest(out, {"profile": profile, "mode": mode, "steps": steps, "mutant": mutant,
                               "guided": guided_key, "swarm": swarm_digest(mode)})
    spark = spark_session(master)
    parallelism = partitions or max(2, spark.sparkContext.defaultParallelism * 4)
    set_aside: list[Path] = []
    store.consolidate_parts(out, profile, mode)
    done = store.load_rows(out, profile, mode, set_aside)
    # tasks of a local master share the driver's file system: finished tasks keep their rows
    parts = store.parts_dir(out) if is_local(spark.sparkContext.master) else None
    warm_up(spark, parallelism)
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
        jobs = _round_jobs(round_no if guided else 0, budget, runs, done)

        try:
            rows = run_round(spark, jobs, profile, mode, steps, mutant, round_no, parallelism, fail_first_attempt,
                             on_progress=progress, parts=parts)
        except Exception as err:  # Py4JJavaError and friends: Spark gave up on a task after its retries
            from popverify.tools import ToolError
            kept = "finished tasks' rows are kept under runs/_parts/; " if parts is not None else ""
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
            raise ToolError(f"round {round_no} failed on Spark ({type(err).__name__}: {first}); {kept}"
                            f"run the same command again to resume") from err
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
    summary = summarize(profile, mode, done, out, seconds, coverage_timeline, mutant)
    summary["time_to_first_failure_s"] = first_failure
    summary["guided"] = guided and rounds > 1
    summary["master"] = spark.sparkContext.master
    summary["set_aside"] = [str(p) for p in set_aside]
    from popverify.findings.confirmation import confirm_entries
    summary["confirmation"] = confirm_entries(summary["violations"], confirmer, confirm_skip)
    if compare_blind:
        blind = campaign(profile, mode, runs, steps, out / "blind-baseline", master=master, rounds=rounds,
                         time_budget=time_budget, mutant=mutant, partitions=partitions, guided=False)
        summary["blind_baseline"] = {k: blind[k] for k in ("runs", "coverage", "coverage_timeline", "seconds",
                                                           "violations_by_property", "time_to_first_failure_s")}
    from spark_fuzz.report import write_report
    write_report(out, summary)
    from popverify.findings.triage import record
    record(out)  # signature history: `popverify findings` marks what is new since the last campaign
    return summary


def swarm_digest(mode: str, seeds: int = 16) -> str:
    """A short digest of the swarm configurations of the first ``seeds`` seeds."""
    import hashlib

    from spark_fuzz.runs import swarm_config
    drawn = [swarm_config(seed, mode).to_json() for seed in range(seeds)]
    return hashlib.sha1(json.dumps(drawn, sort_keys=True).encode()).hexdigest()[:16]


def warm_up(spark, slices: int) -> None:
    """Start the Python workers and import the model in them before the clock starts, so that
    time to first failure and coverage over time measure the search, not Spark's start-up (a
    blind baseline run second in the same session would otherwise start warm)."""
    def load(items):
        importlib.import_module("spark_fuzz.runs")  # the model's modules, as the first task would load them
        yield sum(1 for _ in items)
    spark.sparkContext.parallelize(range(slices), slices).mapPartitions(load).collect()


def _round_jobs(round_no: int, per_round: int, runs: int, done: dict[int, dict]) -> list[tuple]:
    """Round 0 (and any round without a corpus): blind seeds. Later rounds: half mutations of
    corpus schedules (runs that reached coverage no earlier run had), half blind seeds."""
    blind = [s for s in range(runs) if s not in done][:per_round]
    if round_no == 0:
        return [(s, -1, None) for s in blind]
    corpus = _corpus(done)
    if not corpus:
        return [(s, -1, None) for s in blind]
    rng = JavaRandom(round_no * 7919 + len(done))
    n_mut = per_round // 2
    jobs = [(s, -1, None) for s in blind[:per_round - n_mut]]
    frequency = _frequency(done)
    weights = [sum(1.0 / frequency[p] for p in row["coverage"]) for row in corpus]
    total = sum(weights)
    for k in range(n_mut):
        # Parents are picked in proportion to how rare their coverage points are (AFL's
        # "favoured" entries): rare points sit at the frontier worth extending.
        pick = rng.next_double() * total
        index = 0
        while index < len(weights) - 1 and pick >= weights[index]:
            pick -= weights[index]
            index += 1
        parent = corpus[index]
        seed = MUTATION_SEED_BASE + round_no * 1_000_000 + k
        if seed in done:
            continue
        schedule = json.loads(parent["schedule"])
        if schedule and rng.next_int(4) != 0:
            # Go to the frontier, then explore: replay the parent up to the step that first
            # reached its rarest point and let the mutant's own seed draw the rest.
            mutated = schedule[:_frontier_step(parent, frequency, rng) + 1]
        else:
            # spliced-in actions come from the parent's own schedule (valid kinds and arguments)
            fresh = [schedule[rng.next_int(len(schedule))] for _ in range(3)] if schedule else []
            mutated = mutate_schedule(schedule, rng, fresh)
        origin = parent["seed"] if parent["parent"] < 0 else parent["parent"]
        config = ScenarioConfig.from_json(json.loads(parent["config"]))
        if rng.next_boolean():  # half the mutants also change one swarm dimension
            config = mutate_config(config, rng, parent["mode"])
        jobs.append((seed, origin, json.dumps(mutated), json.dumps(config.to_json(), sort_keys=True)))
    return jobs


def _frequency(done: dict[int, dict]) -> dict[str, int]:
    """Per coverage point, how many runs reached it."""
    frequency: dict[str, int] = {}
    for row in done.values():
        for point in row["coverage"]:
            frequency[point] = frequency.get(point, 0) + 1
    return frequency


def _frontier_step(row: dict, frequency: dict[str, int], rng: JavaRandom) -> int:
    """The step at which ``row`` first reached one of its rarest coverage points (a random one
    among ties); rows without step data give their whole schedule."""
    steps = row.get("coverage_steps") or []
    if len(steps) != len(row["coverage"]):
        return row["steps"]
    rarest = min(frequency[p] for p in row["coverage"])
    candidates = [s for p, s in zip(row["coverage"], steps) if frequency[p] == rarest]
    return candidates[rng.next_int(len(candidates))]


def _corpus(done: dict[int, dict]) -> list[dict]:
    """Runs that each added coverage no run before them (in seed order) had."""
    seen: set[str] = set()
    corpus = []
    for seed in sorted(done):
        new = set(done[seed]["coverage"]) - seen
        if new:
            corpus.append(done[seed])
            seen |= new
    return corpus


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
              coverage_timeline: list[dict], mutant: str | None) -> dict[str, Any]:
    """Group the violating runs by root-cause signature (unexplained first), shrink the
    shortest run of each keeping its signature; summary.json and report.html."""
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
    violations = entries(profile, mode, seen, out / "traces", mutant,
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
    }
    return summary

