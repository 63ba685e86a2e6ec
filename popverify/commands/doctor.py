"""``popverify doctor``: versions of every tool the suite uses; non-zero exit if one is missing."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import re
import subprocess

from popverify import tools


def _java_version() -> str:
    java = tools.java_executable()
    proc = tools.run_child([java, "-version"], timeout=120)
    first = (proc.stderr or proc.stdout).splitlines()[0] if (proc.stderr or proc.stdout) else ""
    match = re.search(r'version "([^"]+)"', first)
    if proc.returncode != 0 or match is None:
        raise tools.ToolError(f"`java -version` failed: {first or proc.returncode}")
    major = int(match.group(1).split(".")[0])
    if major < 17:
        raise tools.ToolError(f"Java {match.group(1)} found; Java 17 or later is needed")
    return match.group(1)


def _tlc_version() -> str:
    jar = tools.tlc_jar()
    proc = tools.run_child([tools.java_executable(), "-cp", str(jar), "tlc2.TLC", "-h"], timeout=120)
    match = re.search(r"Version (\S+) of ([^\n]+)", proc.stdout + proc.stderr)
    if match is None:
        raise tools.ToolError(f"TLC at {jar} did not report a version")
    return f"TLC2 {match.group(1)} of {match.group(2).strip()} ({jar.name}, sha256 ok)"


def _package_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError as err:
        raise tools.ToolError(f"Python package {dist} is not installed: run `bash scripts/setup.sh`") from err


def collect() -> dict[str, dict[str, str]]:
    """Each tool's version, or the error that says why it is unusable."""
    probes = {
        "python": lambda: platform.python_version(),
        "java": _java_version,
        "tlc": _tlc_version,
        "pyspark": lambda: _package_version("pyspark"),
        "z3": lambda: _package_version("z3-solver"),
        "hypothesis": lambda: _package_version("hypothesis"),
        "attrs": lambda: _package_version("attrs"),
        "maven": _maven_version,
    }
    report: dict[str, dict[str, str]] = {}
    for name, probe in probes.items():
        try:
            report[name] = {"status": "ok", "version": probe()}
        except (tools.ToolError, OSError, subprocess.SubprocessError) as err:
            report[name] = {"status": "missing", "error": str(err)}
    return report


def _maven_version() -> str:
    import shutil
    mvn = shutil.which("mvn")
    if mvn is None:
        raise tools.ToolError("mvn not found on PATH (needed to install TLC and for conformance)")
    proc = tools.run_child([mvn, "-v"], timeout=120)
    first = proc.stdout.splitlines()[0] if proc.stdout else ""
    return re.sub(r"\x1b\[[0-9;]*m", "", first).strip()


def run(args: argparse.Namespace) -> int:
    report = collect()
    if args.json:
        print(json.dumps({"tools": report}, indent=2, sort_keys=True))
    else:
        for name, entry in report.items():
            if entry["status"] == "ok":
                print(f"  ok       {name:<11} {entry['version']}")
            else:
                print(f"  MISSING  {name:<11} {entry['error']}")
    return 0 if all(entry["status"] == "ok" for entry in report.values()) else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("doctor", help="check that every tool the suite needs is installed")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)
