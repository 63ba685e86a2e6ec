"""Today's non-live conformance harness (popverify/conformance) run under the JaCoCo agent:
every conformance check's random cases exercise RocketMQ's allocation strategies,
ProcessQueue and the POP formats, and the agent records which lines and branches ran."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from popverify.conformance.checks import CHECKS
from popverify.conformance.harness import Harness, build
from popverify.tools import java_executable


class CoveredHarness(Harness):
    """The conformance harness JVM with extra JVM options (the JaCoCo agent) before the main
    class; otherwise the same protocol and life cycle as :class:`Harness` (``close`` ends
    the JVM through end of input, so the agent's shutdown hook writes its data)."""

    def __init__(self, version: str, jvm_args: Sequence[str]) -> None:
        # not super().__init__: that would start a JVM without the agent
        classes, classpath = build(version)
        self.version = version
        self._proc = subprocess.Popen([java_executable(), *jvm_args, "-Xss4m", "-cp", f"{classes}:{classpath}",
                                       "popverify.conformance.Harness"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, encoding="utf-8", bufsize=1)


def classpath_jars(version: str) -> list[Path]:
    """RocketMQ's jars on the conformance harness's classpath for ``version``."""
    _, classpath = build(version)
    return [Path(p) for p in classpath.split(":") if Path(p).name.startswith("rocketmq-") and p.endswith(".jar")]


def run(version: str, profile: str, cases: int, seed: int, jvm_args: Sequence[str],
        progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Every conformance check, ``cases`` random cases each (the seeds of ``popverify
    conformance``), on one harness JVM started with ``jvm_args``. Returns what ran: per check
    its cases and disagreements (coverage is measured whether or not the model agrees)."""
    checks: list[dict[str, Any]] = []
    with CoveredHarness(version, jvm_args) as harness:
        for name, check in CHECKS.items():
            for result in check(harness, random.Random(f"{seed}/{name}"), cases, profile):
                progress(f"{version} {result.name}: {result.cases} cases, {result.disagreements} disagreements")
                checks.append({"name": result.name, "cases": result.cases,
                               "disagreements": result.disagreements, "explained": result.explained})
    return {"harness": "conformance", "checks": checks, "cases": sum(c["cases"] for c in checks)}
