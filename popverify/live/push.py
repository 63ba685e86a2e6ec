"""Push consumers of live mode: RocketMQ's own DefaultMQPushConsumer, one JVM per consumer.

Each consumer is ``conformance/live/src/popverify/live/PushClient.java`` (compiled per release
against the release's rocketmq-client) in its own process group. It prints one JSON object per
event on stdout (consume, skip, update, persist, max, held, ...), stamped with its own wall
clock; a reader thread appends them to the history (``History.record``). Commands go on stdin:
``drain``, ``report``, ``stop``. The ``consumer`` fault is a SIGKILL of that JVM: whatever it
held in its ProcessQueues and had not persisted is lost with it, as with a real crash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import attrs

from popverify.live.cluster import TARGET_DIR, Cluster
from popverify.live.consumer_process import ConsumerProcess
from popverify.live.history import History
from popverify.tools import PROJECT_ROOT, ToolError, run_child

PUSH_SOURCE = PROJECT_ROOT / "conformance" / "live" / "src" / "popverify" / "live" / "PushClient.java"
PUSH_GROUP = "PopVerifyPushGroup"
# Share of deliveries answered RECONSUME_LATER outside the drain (the message goes to
# %RETRY%group and comes back after delay level 3 + reconsumeTimes, 10 s the first time).
RECONSUME_LATER_PERCENT = 8
# The drain is quiet when nothing was consumed for longer than the first retry delay (10 s)
# plus two persist periods (persistConsumerOffsetInterval, 5 s).
PUSH_QUIET_S = 22
REPORT_TIMEOUT_S = 30.0


def build_push_client(cluster: Cluster) -> Path:
    """Compile PushClient.java against the cluster release's rocketmq-client (cached)."""
    classes = TARGET_DIR / f"live-{cluster.release}" / "pushclasses"
    stamp = classes / "popverify" / "live" / "PushClient.class"
    if stamp.is_file() and stamp.stat().st_mtime >= PUSH_SOURCE.stat().st_mtime:
        return classes
    javac = shutil.which("javac")
    if javac is None:
        raise ToolError("javac is not installed: live push mode needs a JDK")
    classes.mkdir(parents=True, exist_ok=True)
    proc = run_child([javac, "-nowarn", "-d", str(classes), "-cp", cluster.classpath_text(), str(PUSH_SOURCE)])
    if proc.returncode != 0:
        raise ToolError(f"javac failed on PushClient for RocketMQ {cluster.release}: {proc.stderr[-600:]}")
    return classes


@attrs.define
class PushConsumer(ConsumerProcess):
    """One PushClient JVM; ``crash`` SIGKILLs it."""

    name: str
    cluster: Cluster
    history: History
    classes: Path
    seed: int
    later_percent: int = RECONSUME_LATER_PERCENT
    skip: int = 0                 # test-only broken client: CONSUME_SUCCESS for this many messages never processed
    proc: subprocess.Popen[str] | None = None
    reader: threading.Thread | None = None
    reported: threading.Event = attrs.Factory(threading.Event)
    crashed: bool = False

    def start(self) -> None:
        """Start the PushClient JVM."""
        cmd = self.cluster.java_command(
            "push", f"{self.classes}:{self.cluster.classpath_text()}", "popverify.live.PushClient",
            [self.cluster.namesrv_addr, PUSH_GROUP, _topic(), self.name, str(self.seed), str(self.later_percent),
             str(self.skip)])
        self._spawn(cmd, self.cluster.workdir / f"{self.name}.err", self.cluster.workdir,
                    env=dict(os.environ, ROCKETMQ_HOME=str(self.cluster.workdir)))

    def _on_record(self, raw: dict[str, Any]) -> None:
        f = raw.pop("f")
        if f == "reported":
            self.reported.set()
            return
        fields = {k: raw.pop(k) for k in ("key", "topic", "queue", "offset") if k in raw}
        time_ms, type_ = int(raw.pop("time_ms")), raw.pop("type")
        self.history.record(time_ms, type_, f, self.name, value=raw or None, **fields)

    def drain(self) -> None:
        self.command("drain")

    def report(self) -> bool:
        """Ask for max offsets and the offset table; True when the answer came."""
        self.reported.clear()
        return self.command("report") and self.reported.wait(REPORT_TIMEOUT_S)

    def crash(self) -> None:
        """SIGKILL the consumer's JVM (process group): a consumer process kill."""
        self.crashed = True
        super().crash()

    def stop(self, timeout: float = 20.0) -> None:
        """Ask the client to shut down (it persists its offsets); SIGKILL it if it does not."""
        self._stop_child(timeout)


def _topic() -> str:
    from popverify.live.workload import TOPIC
    return TOPIC


def wait_quiet_push(history: History, seconds: float) -> bool:
    """Wait up to ``seconds`` until every acknowledged send was consumed with CONSUME_SUCCESS and
    nothing was consumed for PUSH_QUIET_S; True when that happened."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if push_quiet(history):
            return True
        time.sleep(0.5)
    return False


def push_quiet(history: History) -> bool:
    """Every acknowledged send consumed successfully (or claimed so by the test-only broken
    client's ``skip``) and no consumption for PUSH_QUIET_S."""
    sent: set[str] = set()
    done: set[str] = set()
    last = 0
    for op in history.snapshot():
        if op.f == "send" and op.type == "ok" and op.key is not None:
            sent.add(op.key)
        elif op.f in ("consume", "skip"):
            last = max(last, op.time_ms)
            if isinstance(op.value, dict) and op.value.get("status") == "CONSUME_SUCCESS":
                done.add(str(op.key))
    now = time.time_ns() // 1_000_000
    return bool(sent) and sent <= done and now - last >= PUSH_QUIET_S * 1000
