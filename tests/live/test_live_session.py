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
