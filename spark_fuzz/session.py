"""The SparkSession of a campaign: a quiet session on a master (local masters with task
retries), whose JVM ends with popverify, and whose executors on a real cluster get our code.

Runs unchanged under spark-submit: ``spark-submit spark_fuzz/main.py --profile v5.0 ...``.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import tempfile
import zipfile
from pathlib import Path

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


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: tasks run in the driver's JVM
    (``local-cluster[...]`` starts separate executors and is not local)."""
    return master == "local" or master.startswith("local[")


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
        spark.sparkContext.addPyFile(str(code_zip()))
    return spark


def code_zip() -> Path:
    """A zip of our Python packages for executors of a real cluster (SparkContext.addPyFile)."""
    root = Path(__file__).resolve().parent.parent
    target = Path(tempfile.gettempdir()) / "popverify-code.zip"
    with zipfile.ZipFile(target, "w") as zf:
        for package in ("popverify", "reference", "spark_fuzz"):
            for path in sorted((root / package).rglob("*.py")):
                zf.write(path, path.relative_to(root))
        zf.write(root / "spec" / "expectations.json", "spec/expectations.json")
    return target
