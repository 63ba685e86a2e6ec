"""popverify.tools#maven_lock: Maven fetches of processes side by side (pytest -n workers) take
turns, so no caller reads a classpath file or a jar that another is still writing."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import sys, time
from popverify.tools import maven_lock
with maven_lock():
    print("in", time.monotonic(), flush=True)
    time.sleep(0.5)
    print("out", time.monotonic(), flush=True)
"""


def test_two_processes_never_hold_the_maven_lock_together() -> None:
    procs = [subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    spans = []
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0
        times = dict(line.split() for line in out.splitlines())
        spans.append((float(times["in"]), float(times["out"])))
    (a_in, a_out), (b_in, b_out) = sorted(spans)
    assert a_out - a_in >= 0.5 and b_in >= a_out, spans  # the second waited for the first
