"""Real RocketMQ 5.5.0 (namesrv, broker, proxy from Maven Central) on loopback: a short
session with a test-only broken consumer, and an interrupted session. Both must leave no JVM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

RELEASE = "5.5.0"


def _jvms_of(workdir: str) -> list[int]:
    """Processes whose command line mentions ``workdir`` (every JVM the session started does)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if workdir in cmdline and "java" in cmdline:
            pids.append(int(entry.name))
    return pids


def test_session_with_a_broken_consumer_is_caught_and_stops_everything(tmp_path: Path) -> None:
    from popverify.live.run import LiveConfig, run_live
    from popverify.live.workload import Behaviour

    config = LiveConfig(release=RELEASE, duration_s=12, clients=2, seed=3, drain_s=90, out=tmp_path,
                        broken=Behaviour(drop=0, change=0, fake_acks=3))
    result = run_live(config, progress=lambda m: None)
    assert result.leftover_pids == () and _jvms_of(str(result.workdir)) == []
    ops = [line for line in (tmp_path / "history.jsonl").read_text().splitlines() if line]
    assert ops and (tmp_path / "report.md").is_file() and (tmp_path / "summary.json").is_file()
    t = result.verdict.totals
    assert t.consistent() and t.acknowledged_sends > 30 and t.deliveries >= t.acknowledged_sends
    # The broken consumer (consumer-0.1) claimed three acks it never sent, then crashed: the real
    # broker redelivers those messages after their invisible time, which NSR-1 flags -- and
    # nothing else is flagged.
    import json
    faked = {json.loads(line)["key"] for line in ops
             if '"consumer-0.1"' in line and '"ok"' in line and '"ack"' in line}
    assert len(faked) == 3
    nsr = [v for v in result.verdict.violations if v.property_id == "NSR-1"]
    assert nsr and {re.search(r"message (k-\d+)", v.message).group(1) for v in nsr} <= faked  # type: ignore[union-attr]
    # RED-1 flags the same redeliveries (a delivery after a clean ack is never paid for by an
    # abandoned one); nothing else is flagged
    assert {v.property_id for v in result.verdict.violations} == {"NSR-1", "RED-1"}
    assert t.lost == 0
    # Each POP consumer is a process of its own; the broken one SIGKILLed itself after its
    # last fake ack (a real crash: its client never shut down) and is gone.
    records = [json.loads(line) for line in ops]
    pid = next(r["value"]["pid"] for r in records if r["f"] == "start" and r["process"] == "consumer-0.1"
               and isinstance(r.get("value"), dict) and "pid" in r["value"])
    assert pid != os.getpid() and not _pid_alive(pid)
    assert any(r["f"] == "crash" and r["process"] == "consumer-0.1" for r in records)


def test_sigterm_stops_every_jvm(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "popverify", "live", "--release", RELEASE, "--duration", "600",
                             "--out", str(tmp_path)], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    workdir = None
    deadline = time.monotonic() + 180
    for line in proc.stderr:
        m = re.search(r" in (\S+popverify-live-\S+)", line)
        if m:
            workdir = m.group(1)
        if "workload for" in line or time.monotonic() > deadline:
            break
    assert workdir is not None
    time.sleep(3)
    assert _jvms_of(workdir), "the session should be running its JVMs now"
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=90)
    assert proc.returncode != 0
    assert _jvms_of(workdir) == []


def test_sigkill_of_popverify_takes_its_jvm_along(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: even a SIGKILL'd popverify leaves no NameServer behind."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from popverify.live.cluster import Cluster, classpath, _require\n"
        f"c = Cluster({RELEASE!r}, Path(sys.argv[1]))\n"
        "c._java, c._cp = _require('java'), classpath(c.release)\n"
        "c.workdir.mkdir(parents=True, exist_ok=True)\n"
        "c._write_configs()\n"
        "c.start_component('namesrv')\n"
        "print('up', flush=True)\n"
        "time.sleep(600)\n")
    workdir = str(tmp_path / "cluster")
    proc = subprocess.Popen([sys.executable, "-c", script, workdir], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "up"
    assert _jvms_of(workdir)
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _jvms_of(workdir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _jvms_of(workdir) == []


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_push_session_catches_a_client_that_acks_before_processing_and_survives_a_consumer_kill(
        tmp_path: Path) -> None:
    """--mode push on the real 5.5.0: RocketMQ's own DefaultMQPushConsumer in two JVMs. The
    first (test-only broken) answers CONSUME_SUCCESS for three messages it never processes: the
    client commits past them (OFF-3) and, with nobody to redeliver them, they are never consumed
    (ALO-3) -- only those keys are flagged. A consumer fault SIGKILLs the other JVM (seed 5:
    target 1) and a new one takes over."""
    import json

    from popverify.live.run import LiveConfig, run_live
    from popverify.live.workload import Behaviour

    config = LiveConfig(release=RELEASE, duration_s=20, clients=2, seed=5, drain_s=60, out=tmp_path, mode="push",
                        faults=("consumer",), broken=Behaviour(skip_processing=3))
    result = run_live(config, progress=lambda m: None)
    assert result.leftover_pids == () and _jvms_of(str(result.workdir)) == []
    ops = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines() if line]
    skipped = {op["key"] for op in ops if op["f"] == "skip"}
    assert len(skipped) == 3 and all(op["process"] == "consumer-0.1" for op in ops if op["f"] == "skip")
    # The consumer fault was a SIGKILL of consumer-1.2's JVM, and it is gone.
    crash = [op for op in ops if op["f"] == "crash"]
    assert [op["process"] for op in crash] == ["consumer-1.2"] and crash[0]["value"] == {"signal": "SIGKILL"}
    pid = next(op["value"]["pid"] for op in ops if op["f"] == "start" and op["process"] == "consumer-1.2"
               and isinstance(op.get("value"), dict) and "pid" in op["value"])
    assert not _pid_alive(pid)
    # Its replacement's consumer started (whether it got queues before the run ended depends on
    # the machine's load: a rebalance may leave it nothing new to consume).
    assert any(op["f"] == "start" and op["process"] == "consumer-1.3" and isinstance(op.get("value"), dict)
               and op["value"].get("instance") == "consumer-1.3" for op in ops), "the replacement started"
    t = result.verdict.totals
    assert t.consistent() and t.acknowledged_sends > 30 and t.consumer_kills == 1 and t.skipped == 3
    v = result.verdict.violations
    flagged = {re.search(r"message (k-\d+)", x.message).group(1) for x in v  # type: ignore[union-attr]
               if x.property_id in ("OFF-3", "ALO-3")}
    assert "OFF-3" in {x.property_id for x in v} and flagged <= skipped and flagged
    assert {x.property_id for x in v} <= {"OFF-3", "ALO-3"}
    assert t.lost == len({x.message for x in v if x.property_id == "ALO-3"})
