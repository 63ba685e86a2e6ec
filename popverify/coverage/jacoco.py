"""JaCoCo from Maven Central, pinned by version and sha256: the runtime agent attached to the
harness JVMs and the command-line tool that turns an execution-data file into an XML report
against RocketMQ's own class files."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import attrs

from popverify.tools import TOOLS_DIR, ToolError, java_executable, maven_lock, run_child, sha256_of

JACOCO_VERSION = "0.8.12"  # supports class files up to Java 22; our JDK is 17


@attrs.frozen
class _Artifact:
    coordinates: str  # group:artifact:version:packaging:classifier for dependency:copy
    file_name: str
    sha256: str  # as served by Maven Central


AGENT = _Artifact(f"org.jacoco:org.jacoco.agent:{JACOCO_VERSION}:jar:runtime",
                  f"org.jacoco.agent-{JACOCO_VERSION}-runtime.jar",
                  "115e8e6e6593ca3a9892dfef695df4d487c706e59e71e64dc0ab95716ee02622")
CLI = _Artifact(f"org.jacoco:org.jacoco.cli:{JACOCO_VERSION}:jar:nodeps",
                f"org.jacoco.cli-{JACOCO_VERSION}-nodeps.jar",
                "594c01125b84864a7fc5a9efab19b71b7de36b27346863f6d7cd0cd45400ceb0")
# Only RocketMQ's classes are instrumented: our harness and its libraries are not measured,
# nor the lockstep harness's accessor placed in RocketMQ's package (LockstepAccess).
INCLUDES = "org.apache.rocketmq.*"
EXCLUDES = "org.apache.rocketmq.broker.processor.Lockstep*"


def _install(artifact: _Artifact) -> Path:
    with maven_lock():
        return _install_locked(artifact)


def _install_locked(artifact: _Artifact) -> Path:
    target = TOOLS_DIR / artifact.file_name
    if target.is_file() and sha256_of(target) == artifact.sha256:
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ToolError("mvn not found on PATH: Maven is needed to fetch JaCoCo from Maven Central")
    TOOLS_DIR.mkdir(exist_ok=True)
    target.unlink(missing_ok=True)
    proc = run_child([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact.coordinates}",
                           f"-DoutputDirectory={TOOLS_DIR}"])
    if proc.returncode != 0 or not target.is_file():
        raise ToolError(f"could not fetch {artifact.coordinates} with Maven: {(proc.stdout + proc.stderr)[-600:]}")
    actual = sha256_of(target)
    if actual != artifact.sha256:
        target.unlink()
        raise ToolError(f"{artifact.coordinates} has sha256 {actual}, expected {artifact.sha256}; removed it")
    return target


def agent_jar() -> Path:
    """The verified JaCoCo runtime agent, fetched on first use."""
    return _install(AGENT)


def cli_jar() -> Path:
    """The verified JaCoCo command-line tool, fetched on first use."""
    return _install(CLI)


def agent_argument(destfile: Path) -> str:
    """The ``-javaagent:`` option that records RocketMQ's coverage into ``destfile``.

    It must come before any other agent on the java command line (see spec/coverage.md): JaCoCo
    then sees the class files as they are in RocketMQ's jars, so its class ids match the jars
    the report is computed against."""
    return f"-javaagent:{agent_jar()}=destfile={destfile},includes={INCLUDES},excludes={EXCLUDES},append=false"


# jacococli's warning when execution data was recorded for different bytes than the class
# files given to the report (a class transformed before JaCoCo saw it, or other jars).
_MISMATCH = re.compile(r"do not match|does not match", re.IGNORECASE)


def report_xml(exec_files: Sequence[Path], class_files: Sequence[Path], xml_out: Path) -> Path:
    """Run ``jacococli report --xml`` on ``exec_files`` against ``class_files`` (RocketMQ's
    jars). A ToolError when JaCoCo fails or warns that recorded classes do not match the jars:
    those classes would silently read 0 %."""
    missing = [str(p) for p in exec_files if not Path(p).is_file()]
    if missing:
        raise ToolError(f"no JaCoCo execution data at {', '.join(missing)}: the JVM did not exit normally")
    if not class_files:
        raise ToolError("no RocketMQ jars to compute coverage against")
    cmd = [java_executable(), "-jar", str(cli_jar()), "report", *map(str, exec_files)]
    for jar in class_files:
        cmd += ["--classfiles", str(jar)]
    cmd += ["--xml", str(xml_out)]
    proc = run_child(cmd, timeout=600)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0 or not xml_out.is_file():
        raise ToolError(f"jacococli report failed (exit {proc.returncode}): {output[-600:]}")
    if _MISMATCH.search(output):
        lines = [line for line in output.splitlines() if _MISMATCH.search(line)]
        raise ToolError(f"JaCoCo execution data does not match RocketMQ's class files: {lines[0][:300]}")
    return xml_out
