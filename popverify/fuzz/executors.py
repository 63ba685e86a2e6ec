"""Executors of a campaign's rounds: a plain Python loop in this process, or Spark
(spark_fuzz/, mapPartitions). The planner (popverify/fuzz/campaign.py) hands an executor the
jobs of one round and the round's task and gets one row per job back; it never asks which
executor it has. This module is the only place popverify reaches spark_fuzz.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from popverify.fuzz import ENGINES, store
from popverify.fuzz.rows import Job, RoundTask, run_partition

# Runs per partition of the plain loop: after each, its rows are kept under runs/_parts/, so an
# interrupted round loses at most this many runs (Spark keeps one part per finished task).
LOOP_PARTITION_RUNS = 8


class Executor(Protocol):
    """Runs the jobs of one round."""

    @property
    def engine(self) -> str:
        """``python``, or ``spark MASTER``: how the campaign's figures say it ran."""

    @property
    def master(self) -> str | None:
        """The Spark master (None for the plain loop)."""

    def warm_up(self) -> None:
        """Start whatever runs the jobs before the campaign's clock starts."""

    def parts(self, out: Path) -> Path | None:
        """Where finished partitions keep their rows (a folder every worker can write), or None."""

    def run_round(self, jobs: Sequence[Job], task: RoundTask, on_progress: Callable[[int], None],
                  parts: Path | None) -> list[dict[str, Any]]:
        """One row per job, sorted by seed, each exactly once."""


class LoopExecutor:
    """The plain loop: every job in this process, in seed order, partitions of
    LOOP_PARTITION_RUNS runs."""

    engine = "python"
    master = None

    def warm_up(self) -> None:
        """Nothing to start."""

    def parts(self, out: Path) -> Path | None:
        """Always ``runs/_parts``: this process writes it."""
        return store.parts_dir(out)

    def run_round(self, jobs: Sequence[Job], task: RoundTask, on_progress: Callable[[int], None],
                  parts: Path | None) -> list[dict[str, Any]]:
        """The rows of ``jobs``, one partition after the other."""
        rows: list[dict[str, Any]] = []
        target = None if parts is None else str(parts.resolve())
        for partition, start in enumerate(range(0, len(jobs), LOOP_PARTITION_RUNS)):
            rows += run_partition(task, jobs[start:start + LOOP_PARTITION_RUNS], partition, target,
                                  on_row=lambda: on_progress(1))
        return sorted(rows, key=lambda r: r["seed"])


def spark_executor(master: str | None, partitions: int | None = None) -> Executor:
    """A Spark executor on ``master`` (None: the master spark-submit chose); starts the
    SparkSession, so a Spark that cannot start raises here."""
    from spark_fuzz.executor import SparkExecutor
    from spark_fuzz.session import spark_session
    return SparkExecutor(spark_session(master), partitions=partitions, asked=master)


def executor(engine: str, master: str | None = "local[*]", partitions: int | None = None) -> Executor:
    """The executor of ``engine`` (one of ENGINES); ``master`` and ``partitions`` concern Spark."""
    if engine == "python":
        return LoopExecutor()
    if engine == "spark":
        return spark_executor(master, partitions)
    raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
