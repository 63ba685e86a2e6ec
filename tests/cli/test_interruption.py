"""Faults and interruption of real processes (slow: real TLC, real Spark).

- SIGTERM / SIGINT to ``popverify tlc`` ends TLC's JVM and removes its scratch folder.
- SIGTERM to ``popverify fuzz`` ends Spark's JVM and its Python workers.
- kill -9 of a Spark Python worker in the middle of a campaign under the default master loses
  and duplicates no row; with task retries switched off (``local[2,1]``) the round fails with
  one clear line, the finished tasks' rows are kept, and the next run completes the campaign
  from them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _cpu_ticks(pid: int) -> int:
    """User plus system CPU time of ``pid`` in clock ticks (-1 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return -1
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of proc(5)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _default_sigint() -> None:
    # A process started in the background by a non-interactive shell (`cmd &`, as a CI script or a
    # nohup'd pytest may be) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt
    # handler: the child would rightly ignore the test's SIGINT. Give it the disposition a
    # terminal's Ctrl-C meets.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "popverify", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_default_sigint)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_tlc_ends_the_jvm_and_removes_the_scratch_folder(signum: int, tmp_path: Path) -> None:
    proc = _start("tlc", "MCPopConsumption_deep", "--workers", "1", "--timeout", "600", "--out", str(tmp_path))
    try:
        java = _wait_for(lambda: [p for p in _children(proc.pid) if "tlc2.TLC" in _cmdline(p)], 60, "TLC's JVM")[0]
        scratch = Path(os.readlink(f"/proc/{java}/cwd"))
        assert scratch.name.startswith("popverify-tlc-") and scratch.is_dir()
        time.sleep(1.0)  # TLC is checking
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signum, err[-500:]
        assert "Traceback" not in err
        _wait_for(lambda: not _alive(java), 10, "the JVM to end")
        assert not scratch.exists(), f"scratch folder {scratch} left behind"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_sigterm_to_fuzz_ends_spark(tmp_path: Path) -> None:
    proc = _start("fuzz", "--profile", "v5.5", "--runs", "400", "--steps", "600", "--out", str(tmp_path),
                  "--no-progress")
    try:
        # the JVM, the pyspark daemon and its forked workers (the first java may be Spark's launcher)
        _wait_for(lambda: [p for p in _children(proc.pid) if "pyspark.daemon" in _cmdline(p)], 240,
                  "a Python worker")
        family = _children(proc.pid)
        assert any("java" in _cmdline(p) for p in family)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        at = err.find("Traceback")
        assert proc.returncode == 128 + signal.SIGTERM and at < 0, err[max(0, at - 1500):at + 1500] if at >= 0 else err[-1500:]
        _wait_for(lambda: not any(_alive(p) for p in family), 30, "Spark's JVM and workers to end")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


# 24 runs of 400 steps: 8 tasks of 3 runs under local[2]; the first finishes while others still run
RUNS, STEPS = 24, "400"


def _fuzz_with_a_worker_killed(out: Path, *extra: str) -> tuple[subprocess.CompletedProcess, int]:
    """Run a campaign; once its first task has finished (a part file exists), kill -9 a busy
    Python worker. Returns the finished process and the killed pid."""
    proc = _start("fuzz", "--profile", "v5.5", "--runs", str(RUNS), "--steps", STEPS, "--out", str(out),
                  "--no-progress", "--no-confirm", *extra)  # about Spark's retries, not the lockstep replay
    try:
        parts = out / "runs" / "_parts"
        _wait_for(lambda: parts.is_dir() and any(parts.glob("*.parquet")), 300, "the first finished task")

        def busy_worker() -> int | None:
            # forked workers are children of the pyspark daemon, itself a child of the JVM; Spark
            # reuses workers, so a forked one may sit idle between tasks and killing it fails no
            # task: the victim is one whose CPU time grows while we watch (it runs a task)
            daemons = [p for p in _children(proc.pid) if "pyspark.daemon" in _cmdline(p)]
            workers = [c for d in daemons for c in _children(d)]
            before = {w: _cpu_ticks(w) for w in workers}
            time.sleep(0.5)
            grew = [w for w in workers if _cpu_ticks(w) > before[w] >= 0]
            return grew[0] if grew else None

        victim = _wait_for(busy_worker, 120, "a Python worker")
        os.kill(victim, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=300)
        return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), victim
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _rows(out: Path) -> list[int]:
    import pyarrow.parquet as pq
    seeds: list[int] = []
    for path in sorted((out / "runs").glob("v5.5-pop-*.parquet")):
        seeds += pq.read_table(path).column("seed").to_pylist()
    return seeds


def _campaign_exit(out: Path) -> int:
    """The exit fuzz owes for the campaign's findings: 1 when a signature is unexpected (the
    swarm's faults can reach ones no finding explains; these tests are about Spark, not them)."""
    summary = json.loads((out / "summary.json").read_text())
    return 1 if any(v["unexpected"] for v in summary["violations"]) else 0


def test_kill_9_of_a_worker_under_the_default_master_loses_and_duplicates_no_row(tmp_path: Path) -> None:
    done, victim = _fuzz_with_a_worker_killed(tmp_path)
    assert not _alive(victim)
    assert done.returncode == _campaign_exit(tmp_path) and "Traceback" not in done.stderr, done.stderr[-800:]
    seeds = _rows(tmp_path)
    assert sorted(seeds) == list(range(RUNS)), "a row was lost or duplicated"
    assert not list((tmp_path / "runs" / "_parts").glob("*.parquet"))  # folded into the round file


def test_without_retries_the_round_fails_cleanly_and_keeps_finished_tasks(tmp_path: Path) -> None:
    failed, _ = _fuzz_with_a_worker_killed(tmp_path, "--master", "local[2,1]")
    lines = [line for line in failed.stderr.splitlines() if line.startswith("popverify")]
    # no traceback of ours; Spark's Python daemon may print its own BrokenPipeError traceback
    # (pyspark/daemon.py) when the killed worker's pipe closes: that one is Spark's log, not ours
    ours = [line for line in failed.stderr.splitlines() if line.strip().startswith("File ") and "pyspark" not in line]
    assert failed.returncode == 1 and not ours, failed.stderr[-800:]
    assert len(lines) == 1 and "round 0 failed on Spark" in lines[0] and "kept" in lines[0]
    import pyarrow.parquet as pq
    kept = {s for p in (tmp_path / "runs" / "_parts").glob("*.parquet") for s in pq.read_table(p).column("seed").to_pylist()}
    assert kept, "no finished task's rows were kept"
    resumed = subprocess.run([sys.executable, "-m", "popverify", "fuzz", "--profile", "v5.5", "--runs", str(RUNS),
                              "--steps", STEPS, "--out", str(tmp_path), "--no-progress", "--no-confirm"], cwd=ROOT,
                             capture_output=True, text=True, timeout=300, check=False)
    assert resumed.returncode == _campaign_exit(tmp_path), resumed.stderr[-800:]
    seeds = _rows(tmp_path)
    assert sorted(seeds) == list(range(RUNS)), "a row was lost or duplicated"
    # the kept rows are not run again: the resumed round ran only the others
    last = sorted((tmp_path / "runs").glob("v5.5-pop-*.parquet"))[-1]
    assert not kept & set(pq.read_table(last).column("seed").to_pylist())


def test_sigterm_to_a_loop_campaign_keeps_its_finished_partitions(tmp_path: Path) -> None:
    # the plain loop (fuzz --engine python) keeps each finished partition of 8 runs, as Spark
    # keeps finished tasks: the resumed campaign runs only the rest, each seed exactly once
    argv = ("fuzz", "--engine", "python", "--profile", "v5.5", "--runs", "24", "--steps", "300",
            "--out", str(tmp_path), "--no-progress")
    proc = _start(*argv)
    try:
        parts = tmp_path / "runs" / "_parts"
        _wait_for(lambda: parts.is_dir() and any(parts.glob("*.parquet")), 300, "the first finished partition")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err[-800:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    import pyarrow.parquet as pq
    kept = {s for p in parts.glob("*.parquet") for s in pq.read_table(p).column("seed").to_pylist()}
    assert kept and len(kept) % 8 == 0 and len(kept) < 24
    resumed = subprocess.run([sys.executable, "-m", "popverify", *argv], cwd=ROOT, capture_output=True, text=True,
                             timeout=600, check=False)
    assert resumed.returncode in (0, 1) and "Traceback" not in resumed.stderr, resumed.stderr[-800:]
    assert sorted(_rows(tmp_path)) == list(range(24)), "a row was lost or duplicated"
    last = sorted((tmp_path / "runs").glob("v5.5-pop-*.parquet"))[-1]
    assert not kept & set(pq.read_table(last).column("seed").to_pylist())  # kept rows did not run again
