"""POP consumers of live mode, each in its own Python process, so that the ``consumer`` fault is
a real process kill (SIGKILL), not a thread told to stop.

The child (``python -m popverify.live.pop_process ...``) runs one ``workload.Consumer`` (the
official client's SimpleConsumer) and writes every history record as a JSON line on stdout,
stamped with its own wall clock; the parent's reader thread appends them to the history
(``History.record``). Commands go on the child's stdin: ``drain``, ``timeout on``, ``timeout off``,
``stop``. The test-only broken client (``Behaviour.fake_acks``) SIGKILLs its own process after
its last fake ack.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import attrs

from popverify.live.consumer_process import ConsumerProcess
from popverify.live.history import History, Op
from popverify.live.workload import Behaviour
from popverify.tools import PROJECT_ROOT


class _StreamHistory(History):
    """The child's history: every record goes to stdout at once (nothing is kept)."""

    def add(self, type_: str, f: str, process: str, **fields: Any) -> Op:
        now = time.time_ns() // 1_000_000
        op = Op(0, type_, f, process, now, 0, **fields)
        line = json.dumps(op.to_json(), sort_keys=True)
        with self._lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        return op


@attrs.define
class _RemoteFlag:
    """``set``/``clear`` of a flag in the child (the thread Consumer's Events, over stdin)."""

    owner: "PopConsumerProcess"
    on: str
    off: str = ""
    value: bool = False

    def set(self) -> None:
        self.value = True
        self.owner.command(self.on)

    def clear(self) -> None:
        self.value = False
        if self.off:
            self.owner.command(self.off)

    def is_set(self) -> bool:
        return self.value


@attrs.define
class PopConsumerProcess(ConsumerProcess):
    """One POP consumer process; ``crash`` SIGKILLs it. Same surface as workload.Consumer."""

    name: str
    endpoint: str
    history: History
    seed: int
    behaviour: Behaviour
    workdir: Path
    tls: bool = False
    proc: subprocess.Popen[str] | None = None
    reader: threading.Thread | None = None
    draining: _RemoteFlag = attrs.field(init=False)
    timeout_window: _RemoteFlag = attrs.field(init=False)
    stopping: _RemoteFlag = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.draining = _RemoteFlag(self, "drain")
        self.timeout_window = _RemoteFlag(self, "timeout on", "timeout off")
        self.stopping = _RemoteFlag(self, "stop")

    def start(self) -> None:
        """Start the child process (``python -m popverify.live.pop_process``)."""
        cmd = [sys.executable, "-m", "popverify.live.pop_process", self.endpoint, self.name, str(self.seed),
               json.dumps(attrs.asdict(self.behaviour)), "tls" if self.tls else "plain"]
        self._spawn(cmd, self.workdir / f"{self.name}.err", PROJECT_ROOT)

    def _on_record(self, raw: dict[str, Any]) -> None:
        raw.pop("index", None)
        raw.pop("rel_ms", None)
        self.history.record(int(raw.pop("time_ms")), raw.pop("type"), raw.pop("f"), raw.pop("process"), **raw)

    def join(self, timeout: float) -> None:
        """Ask the child to stop (it shuts its client down), SIGKILL it after ``timeout``."""
        self.stopping.value = True
        self._stop_child(timeout)


def _child(argv: list[str]) -> None:
    """The consumer process: one workload.Consumer, commands on stdin."""
    import random

    from popverify.live.workload import Consumer

    endpoint, name, seed, behaviour, tls = argv
    history = _StreamHistory()
    consumer = Consumer(name, endpoint, history, random.Random(int(seed)), Behaviour(**json.loads(behaviour)),
                        tls=tls == "tls")
    consumer.start()

    def commands() -> None:
        for line in sys.stdin:
            text = line.strip()
            if text == "drain":
                consumer.draining.set()
            elif text == "timeout on":
                consumer.timeout_window.set()
            elif text == "timeout off":
                consumer.timeout_window.clear()
            elif text == "stop":
                break
        consumer.stopping.set()

    threading.Thread(target=commands, name="commands", daemon=True).start()
    while not consumer.stopping.is_set():
        if consumer.crashed.is_set():
            # The test-only broken client crashed itself: a real crash, nothing shut down.
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.05)
    consumer.join(10)


if __name__ == "__main__":
    _child(sys.argv[1:])
