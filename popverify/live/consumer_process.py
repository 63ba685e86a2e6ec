"""ConsumerProcess: what the POP consumer processes and the push consumer JVMs of live mode share.

Each consumer runs in a child process of its own process group (``spawn_client``), prints one
JSON object per history record on stdout, stamped with its own wall clock, and takes one-line
commands on stdin. The parent starts it, reads its records on a thread into the History, sends
it commands, and for the ``consumer`` fault SIGKILLs its group (a real crash: whatever it held
is abandoned mid-request). How a record becomes a history entry, the command vocabulary and the
graceful stop differ per kind (popverify/live/pop_process.py, popverify/live/push.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from popverify.live.cluster import spawn_client
from popverify.live.history import History

# How long the parent waits for a SIGKILLed group's leader to be reaped, and for its reader
# thread to see the end of stdout (both immediate in practice).
KILL_WAIT_S = 30
READER_JOIN_S = 5


class ConsumerProcess:
    """A live consumer in a child process (the subclasses are attrs records that declare the
    fields ``name``, ``history``, ``proc`` and ``reader``)."""

    name: str
    history: History
    proc: subprocess.Popen[str] | None
    reader: threading.Thread | None

    def _spawn(self, cmd: list[str], err_log: Path, cwd: Path, env: dict[str, str] | None = None) -> None:
        """Start the child, record its pid in the history and start the reader thread."""
        self.proc = spawn_client(cmd, err_log, cwd, env=env)
        self.history.add("info", "start", self.name, value={"pid": self.proc.pid})
        self.reader = threading.Thread(target=self._read, name=f"{self.name}-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        """The reader thread: every JSON object line of the child's stdout to ``_on_record``."""
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue  # a client's own log line, if one reaches stdout
            try:
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by SIGKILL
            self._on_record(raw)

    def _on_record(self, raw: dict[str, Any]) -> None:
        """One record the child printed (subclasses turn it into a history entry)."""
        raise NotImplementedError

    def command(self, text: str) -> bool:
        """Send one command line to the child; False when it is gone (nothing to tell it)."""
        if self.proc is None or self.proc.poll() is not None or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False  # the child died between the poll and the write
        return True

    def alive(self) -> bool:
        """The child runs."""
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int | None:
        """The child's pid while it runs, else None."""
        return self.proc.pid if self.alive() else None  # type: ignore[union-attr]

    def _kill(self) -> None:
        """SIGKILL the child's process group and reap it."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=KILL_WAIT_S)

    def crash(self) -> None:
        """SIGKILL the consumer's process group: it abandons every message it holds, mid-request."""
        if self.alive():
            self._kill()
        self.history.add("info", "crash", self.name, value={"signal": "SIGKILL"})

    def _stop_child(self, timeout: float) -> None:
        """Send ``stop`` (the child shuts its client down), SIGKILL it if it has not exited
        after ``timeout`` seconds, then let the reader finish."""
        if self.proc is None:
            return
        if self.command("stop"):
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            self._kill()
        if self.reader is not None:
            self.reader.join(READER_JOIN_S)
