"""The Spark executor of a campaign's rounds: the jobs of a round as an RDD, one
``mapPartitions`` task per slice running popverify.fuzz.rows.run_partition, rows collected
on the driver. No planning here: which jobs a round runs is popverify/fuzz/plan.py's.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from popverify.fuzz.rows import Job, RoundTask, run_partition
from popverify.fuzz.store import parts_dir
from spark_fuzz.session import is_local


def _task(task: RoundTask, fail_first_attempt: bool, parts: str | None):
    def run(items):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        if fail_first_attempt and ctx is not None and ctx.attemptNumber() == 0 and ctx.partitionId() == 0:
            raise RuntimeError("injected executor loss (first attempt of partition 0)")
        yield from run_partition(task, items, ctx.partitionId() if ctx is not None else 0, parts)
    return run


class SparkExecutor:
    """Runs each round as Spark tasks on ``spark`` (a SparkSession), ``partitions`` slices per
    round (default four per core)."""

    def __init__(self, spark, partitions: int | None = None, fail_first_attempt: bool = False,
                 asked: str | None = None) -> None:
        self.spark = spark
        self.asked = asked  # the master as the user named it (local[2] runs as local[2,4])
        self.partitions = partitions or max(2, spark.sparkContext.defaultParallelism * 4)
        self.fail_first_attempt = fail_first_attempt  # tests: the first attempt of partition 0 dies

    @property
    def master(self) -> str:
        """The master the session runs on."""
        return self.spark.sparkContext.master

    @property
    def engine(self) -> str:
        """``spark MASTER``, the master as asked (spark-submit's when none was)."""
        return f"spark {self.asked or self.master}"

    def parts(self, out: Path) -> Path | None:
        """``runs/_parts`` under a local master (tasks share the driver's file system); None on
        a cluster."""
        return parts_dir(out) if is_local(self.master) else None

    def warm_up(self) -> None:
        """Start the Python workers and import the model in them before the clock starts, so
        that time to first failure and coverage over time measure the search, not Spark's
        start-up (a blind baseline run second in the same session would otherwise start warm)."""
        def load(items):
            importlib.import_module("popverify.fuzz.rows")  # the model's modules, as the first task loads them
            yield sum(1 for _ in items)
        self.spark.sparkContext.parallelize(range(self.partitions), self.partitions).mapPartitions(load).collect()

    def run_round(self, jobs: Sequence[Job], task: RoundTask, on_progress: Callable[[int], None] = lambda _: None,
                  parts: Path | None = None) -> list[dict[str, Any]]:
        """Run ``jobs`` as Spark tasks; every row of every successful task attempt comes back
        exactly once (a failed attempt's rows are discarded by Spark). With ``parts`` (a folder
        the tasks can write: local masters) each finished task also writes its rows there, so
        a round that fails keeps them. A round Spark gives up on is a ToolError (one line)."""
        if not jobs:
            return []
        slices = max(1, min(self.partitions, len(jobs)))
        rdd = self.spark.sparkContext.parallelize(list(jobs), slices)
        mapped = rdd.mapPartitions(_task(task, self.fail_first_attempt,
                                         None if parts is None else str(parts.resolve())))
        outcome: dict[str, Any] = {}

        def collect() -> None:
            try:
                outcome["rows"] = mapped.collect()
            except Exception as err:  # Py4JJavaError and friends: re-raised on the driver thread
                outcome["error"] = err

        worker = threading.Thread(target=collect, daemon=True)
        worker.start()
        tracker = self.spark.sparkContext.statusTracker()
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
            from popverify.tools import ToolError
            err = outcome["error"]
            kept = "finished tasks' rows are kept under runs/_parts/; " if parts is not None else ""
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
            raise ToolError(f"round {task.round_no} failed on Spark ({type(err).__name__}: {first}); {kept}"
                            f"run the same command again to resume") from err
        rows = sorted(outcome["rows"], key=lambda r: r["seed"])
        on_progress(len(rows) - reported)
        return rows
