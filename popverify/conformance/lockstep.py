"""Client of the Java lockstep harness (conformance/lockstep/, spec/conformance.md "Lockstep
protocol"): one JVM per RocketMQ release running the broker's real classes, driven by JSON
lines.

This module owns the three things every lockstep user needs in one place:
- ``RELEASES``: which RocketMQ release stands for which model profile;
- the time mapping between the model's VirtualClock and the harness's virtual clock;
- the JVM's lifetime: it runs in its own process group and dies with its parent (closed
  stdin, ``atexit``, SIGTERM/SIGINT/SIGHUP handlers, and PR_SET_PDEATHSIG on Linux for a
  parent killed outright).
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Sequence
from typing import Any

from popverify.tools import ToolError
from reference.common.clock import EPOCH_OFFSET_MS, START_MS
from reference.common.profile import RELEASES


# Time. The model's VirtualClock starts at START_MS; RocketMQ's timer store, revive windows and
# file names want a realistic epoch, so the harness runs on the epoch the model's times stand for
# (reference/common/clock.py: EPOCH_OFFSET_MS, which also orders the model's time-keyed hash
# tables) and every absolute time crossing the boundary (popTime in receipt handles and CK/ACK
# bodies, deliver times, `now`) is shifted by TIME_OFFSET -- here and nowhere else.
MODEL_START_MS = START_MS
TIME_OFFSET = EPOCH_OFFSET_MS
JAVA_START_MS = MODEL_START_MS + TIME_OFFSET


def to_java_time(model_ms: int) -> int:
    """A model time as the harness's virtual epoch milliseconds."""
    return model_ms + TIME_OFFSET


def to_model_time(java_ms: int) -> int:
    """A harness time as the model's VirtualClock milliseconds."""
    return java_ms - TIME_OFFSET


class LockstepError(ToolError):
    """The harness JVM could not be built or started, or died (exit 1: a missing tool)."""


_LIVE: "weakref.WeakSet[LockstepClient]" = weakref.WeakSet()
_HANDLERS_SET = False


def _kill_all() -> None:
    for client in list(_LIVE):
        client.kill()


def _on_signal(signum: int, _frame: Any) -> None:
    _kill_all()
    # Re-raise with the default action so the parent still dies of the signal it got.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_handlers() -> None:
    global _HANDLERS_SET
    if _HANDLERS_SET:
        return
    _HANDLERS_SET = True
    atexit.register(_kill_all)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)
        except ValueError:  # not the main thread: atexit and PDEATHSIG still apply
            pass


def _child_setup() -> None:
    """In the child before exec: own process group; SIGKILL when the parent dies (Linux)."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass


class LockstepClient:
    """One running lockstep harness JVM for a RocketMQ release.

    ``call(request)`` returns ("ok", answer dict) or ("error", "<Exception>: message"); a
    dead JVM raises LockstepError. ``jvm_args`` go right after ``java`` (e.g. a coverage agent).
    ``full_jit``: C2 as well as C1 (slower start, faster over hundreds of schedules).
    """

    def __init__(self, version: str, jvm_args: Sequence[str] = (), full_jit: bool = False) -> None:
        from popverify.conformance import lockstep_build

        if version not in RELEASES.values():
            raise LockstepError(f"no lockstep harness for RocketMQ {version}; known: {', '.join(RELEASES.values())}")
        self.version = version
        # The JVM's store folders go in a folder of its own (tmpfs when there is one: a broker's
        # store files are created and deleted on every init/reset); removed when the JVM ends.
        self._store_dir: str | None = tempfile.mkdtemp(prefix="popverify-lockstep-jvm-", dir=store_base())
        command = _java_command(lockstep_build, version, [*jvm_args, f"-Dpopverify.lockstep.dir={self._store_dir}"],
                                full_jit)
        _install_handlers()
        try:
            self._proc: subprocess.Popen[str] | None = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                encoding="utf-8", bufsize=1, preexec_fn=_child_setup)
        except OSError as err:
            self._remove_store_dir()
            raise LockstepError(f"cannot start the lockstep harness for RocketMQ {version}: {err}") from err
        _LIVE.add(self)

    @property
    def pid(self) -> int | None:
        """The JVM's process id (None once closed)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """Whether the JVM still runs (a caller keeping one JVM for many replays checks this)."""
        return self._proc is not None and self._proc.poll() is None

    def call(self, request: dict[str, Any]) -> tuple[str, Any]:
        """Send one request, read its answer."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise LockstepError(f"the RocketMQ {self.version} lockstep harness is closed")
        try:
            proc.stdin.write(json.dumps(request, sort_keys=True) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError) as err:
            raise LockstepError(f"the RocketMQ {self.version} lockstep harness died: {err}") from err
        if not line:
            code = proc.poll()
            raise LockstepError(f"the RocketMQ {self.version} lockstep harness exited (java {code}) "
                                f"on {request.get('op')}")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as err:
            raise LockstepError(f"the lockstep harness wrote a non-JSON line: {line[:200]!r}") from err
        if "ok" in answer:
            return "ok", answer["ok"]
        return "error", str(answer.get("error"))

    def ok(self, request: dict[str, Any]) -> dict[str, Any]:
        """``call`` that expects success; LockstepError names the failed request otherwise."""
        status, value = self.call(request)
        if status != "ok":
            raise LockstepError(f"RocketMQ {self.version} harness failed {request.get('op')}: {value}")
        return value

    def close(self) -> None:
        """Close stdin and let the JVM exit on its own (so shutdown hooks run); kill after 20 s."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=20)
        except (subprocess.TimeoutExpired, OSError):
            _killpg(proc)
        finally:
            if proc.stdout is not None:
                proc.stdout.close()
            self._remove_store_dir()
        _LIVE.discard(self)

    def _remove_store_dir(self) -> None:
        store_dir, self._store_dir = self._store_dir, None
        if store_dir is not None:
            shutil.rmtree(store_dir, ignore_errors=True)

    def kill(self) -> None:
        """Kill the JVM's process group at once (parent exiting or signalled)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _killpg(proc)
        self._remove_store_dir()

    def __enter__(self) -> "LockstepClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def store_base() -> str:
    """Where harness JVMs keep their store folders: $POPVERIFY_LOCKSTEP_DIR, else /dev/shm when
    it is a writable folder (tmpfs: creating, mapping and deleting a broker's files costs no disk
    I/O), else the system's temp folder."""
    chosen = os.environ.get("POPVERIFY_LOCKSTEP_DIR")
    if chosen:
        os.makedirs(chosen, exist_ok=True)
        return chosen
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return tempfile.gettempdir()


def _java_command(lockstep_build: Any, version: str, jvm_args: Sequence[str], full_jit: bool = False) -> list[str]:
    """The harness's command line (lockstep_build builds the jar and its classpath)."""
    if hasattr(lockstep_build, "java_command"):
        return list(lockstep_build.java_command(version, tuple(jvm_args), full_jit))
    java = shutil.which("java")
    if java is None:
        raise LockstepError("java is not installed: the lockstep harness needs a JDK")
    jar, classpath = lockstep_build.build(version)
    return [java, *jvm_args, f"-javaagent:{jar}", "-cp", f"{jar}:{classpath}", "popverify.lockstep.Lockstep"]


def _killpg(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
