"""Build and launch command of the Java lockstep harness (conformance/lockstep/): RocketMQ's
broker jars of one release with their whole dependency tree, resolved by Maven from Central,
our sources compiled with the machine's javac into one jar that is both the program
(popverify.lockstep.Lockstep) and its virtual-time agent (popverify.lockstep.TimeAgent).

The protocol spoken over stdin/stdout is spec/conformance.md "Lockstep protocol"; the client
lives in popverify/conformance/lockstep.py.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from popverify.tools import PROJECT_ROOT, ToolError, maven_lock, require_tool, run_child

LOCKSTEP_DIR = PROJECT_ROOT / "conformance" / "lockstep"
SOURCE_DIR = LOCKSTEP_DIR / "src" / "main" / "java"
LOGBACK_XML = LOCKSTEP_DIR / "src" / "main" / "resources" / "lockstep-logback.xml"
MAIN_CLASS = "popverify.lockstep.Lockstep"
AGENT_CLASS = "popverify.lockstep.TimeAgent"
# The releases the harness is built for. The agent argument names the PopMessageProcessor
# method holding `long popTime = System.currentTimeMillis();` (the pop interleave hook).
POP_TIME_METHOD: dict[str, str] = {
    "5.0.0": "processRequest",
    "5.5.0": "processRequest",
}
# Maven and javac get this long, in seconds, before the build is declared failed.
BUILD_TIMEOUT_S = 600


def _require(tool: str) -> str:
    return require_tool(tool, "the lockstep harness needs a JDK 17 (java, javac, jar) and Maven")


def _check_version(version: str) -> None:
    if version not in POP_TIME_METHOD:
        raise ValueError(f"no lockstep harness for RocketMQ {version!r}; known: {', '.join(sorted(POP_TIME_METHOD))}")


def _sources() -> list[Path]:
    return sorted(SOURCE_DIR.rglob("*.java"))


def _newest_input() -> float:
    inputs = [*_sources(), LOCKSTEP_DIR / "pom.xml", Path(__file__)]
    return max(p.stat().st_mtime for p in inputs)


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    try:
        proc = run_child(cmd, cwd=cwd, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{what} took longer than {BUILD_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise ToolError(f"{what} failed: {(proc.stdout + proc.stderr)[-800:]}")


def build(version: str) -> tuple[Path, str]:
    """The harness jar and the RocketMQ classpath for ``version``, built when a source, the pom
    or this file is newer than the jar. Concurrent callers (several test processes) wait on a
    lock file; the jar is replaced atomically."""
    _check_version(version)
    target = LOCKSTEP_DIR / "target" / version
    jar = target / "lockstep.jar"
    cp_file = target / "classpath.txt"
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fresh = jar.is_file() and cp_file.is_file() and jar.stat().st_mtime >= _newest_input()
        if not fresh:
            mvn, javac, jar_tool = _require("mvn"), _require("javac"), _require("jar")
            tmp_cp = target / "classpath.txt.tmp"
            resolve = [mvn, "-q", "-B", f"-Drocketmq.version={version}", "dependency:build-classpath",
                       f"-Dmdep.outputFile={tmp_cp}"]
            with maven_lock():
                try:
                    _run([*resolve[:3], "-o", *resolve[3:]], LOCKSTEP_DIR,
                         f"Maven (offline) resolving RocketMQ {version}")
                except ToolError:
                    # a fresh local repository: nothing fetched these jars yet (the offline try
                    # spares Central a metadata check on every rebuild)
                    _run(resolve, LOCKSTEP_DIR, f"Maven resolving RocketMQ {version}")
            if not tmp_cp.is_file():
                raise ToolError(f"Maven wrote no classpath for RocketMQ {version}")
            classpath = tmp_cp.read_text().strip()
            with tempfile.TemporaryDirectory(dir=target) as work:
                classes = Path(work) / "classes"
                classes.mkdir()
                _run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp", classpath,
                      *map(str, _sources())], LOCKSTEP_DIR, f"javac on the lockstep harness for RocketMQ {version}")
                manifest = Path(work) / "MANIFEST.MF"
                manifest.write_text(f"Premain-Class: {AGENT_CLASS}\n")
                new_jar = Path(work) / "lockstep.jar"
                _run([jar_tool, "cfm", str(new_jar), str(manifest), "-C", str(classes), "."], LOCKSTEP_DIR,
                     "jar on the lockstep harness")
                os.replace(new_jar, jar)
            os.replace(tmp_cp, cp_file)
    return jar, cp_file.read_text().strip()


def java_command(version: str, jvm_args: Sequence[str] = (), full_jit: bool = False) -> list[str]:
    """The command that starts the harness for ``version``: ``java``, the caller's JVM
    arguments (e.g. a JaCoCo agent, which must come before ours), the virtual-time agent,
    logging to stderr at ERROR, the classpath and the main class.

    The JVM compiles with C1 only (fast start, for short runs and tests) unless ``full_jit``:
    a JVM that runs hundreds of schedules gains from C2 on the loops every broker start runs
    (TimerWheel#checkPhyPos over its 1.2 million slots)."""
    jar, classpath = build(version)
    java = _require("java")
    return [java, *jvm_args, f"-javaagent:{jar}={POP_TIME_METHOD[version]}",
            f"-Dlogback.configurationFile={LOGBACK_XML}", f"-Drmq.logback.configurationFile={LOGBACK_XML}",
            # RocketMQ unmaps its files through sun.nio.ch.DirectBuffer (store shutdown, restart)
            "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "-XX:+UseSerialGC", *(() if full_jit else ("-XX:TieredStopAtLevel=1",)), "-Xss4m",
            "-cp", f"{jar}:{classpath}", MAIN_CLASS]
