"""Build and talk to the Java conformance harness (conformance/): RocketMQ's own jars from
Maven Central, our small Harness class compiled with the machine's javac, one long-lived JVM
per RocketMQ version speaking JSON lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from popverify.tools import PROJECT_ROOT, ToolError, maven_lock, require_tool, run_child
from reference.common.profile import RELEASES

CONFORMANCE_DIR = PROJECT_ROOT / "conformance"
HARNESS_SOURCE = CONFORMANCE_DIR / "harness" / "src" / "main" / "java" / "popverify" / "conformance" / "Harness.java"
# RocketMQ release -> model profile, the inverse of reference.common.profile.RELEASES: 5.0.0 is
# the seed-era tag; 5.5.0 the newest release complete on Central, what `v5.5` stands for.
VERSIONS: dict[str, str] = {release: profile for profile, release in RELEASES.items()}


def _require(tool: str) -> str:
    return require_tool(tool, "the conformance harness needs a JDK (javac, java) and Maven")


def build(version: str) -> tuple[Path, str]:
    """The compiled harness folder and the classpath for ``version``, building them when the
    harness source is newer than the build or the classpath is missing."""
    target = CONFORMANCE_DIR / "target" / version
    with maven_lock():  # concurrent callers: one builds, the others reuse
        return _build_locked(version, target)


def _build_locked(version: str, target: Path) -> tuple[Path, str]:
    classes = target / "classes"
    cp_file = target / "classpath.txt"
    stamp = classes / "popverify" / "conformance" / "Harness.class"
    fresh = cp_file.is_file() and stamp.is_file() and stamp.stat().st_mtime >= HARNESS_SOURCE.stat().st_mtime \
        and cp_file.stat().st_mtime >= (CONFORMANCE_DIR / "pom.xml").stat().st_mtime
    if not fresh:
        mvn, javac = _require("mvn"), _require("javac")
        target.mkdir(parents=True, exist_ok=True)
        proc = run_child([mvn, "-q", "-B", f"-Drocketmq.version={version}", "dependency:build-classpath",
                               f"-Dmdep.outputFile={cp_file}"], cwd=CONFORMANCE_DIR)
        if proc.returncode != 0 or not cp_file.is_file():
            raise ToolError(f"Maven could not resolve RocketMQ {version}: {(proc.stdout + proc.stderr)[-800:]}")
        classes.mkdir(parents=True, exist_ok=True)
        proc = run_child([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp",
                               cp_file.read_text().strip(), str(HARNESS_SOURCE)])
        if proc.returncode != 0:
            raise ToolError(f"javac failed on the harness for RocketMQ {version}: {proc.stderr[-800:]}")
    return classes, cp_file.read_text().strip()


class Harness:
    """One running harness JVM; ``call`` sends a request and returns ("ok", value) or
    ("error", Java exception simple name)."""

    def __init__(self, version: str) -> None:
        classes, classpath = build(version)
        java = _require("java")
        self.version = version
        self._proc = subprocess.Popen([java, "-Xss4m", "-cp", f"{classes}:{classpath}", "popverify.conformance.Harness"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, encoding="utf-8", bufsize=1)

    def call(self, request: dict[str, Any]) -> tuple[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise ToolError(f"the RocketMQ {self.version} harness exited (java {self._proc.poll()})")
        answer = json.loads(line)
        return ("ok", answer["ok"]) if "ok" in answer else ("error", answer["error"])

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()

    def __enter__(self) -> "Harness":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
