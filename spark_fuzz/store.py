"""Campaign results on disk: one Parquet file per (profile, mode, round), written atomically
by the driver, read back deduplicated by seed (so resuming or a retried task never counts a
run twice)."""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

def _schema():
    import pyarrow as pa
    return pa.schema([("seed", pa.int64()), ("parent", pa.int64()), ("profile", pa.string()), ("mode", pa.string()),
                      ("config", pa.string()), ("steps", pa.int64()), ("violations", pa.string()),
                      ("coverage", pa.list_(pa.string())), ("coverage_steps", pa.list_(pa.int64())),
                      ("coverage_signature", pa.string()),
                      ("schedule", pa.string()), ("faults", pa.int64()), ("duration_ms", pa.float64()),
                      ("mutant", pa.string()), ("round", pa.int64()),
                      ("signatures", pa.string())])


def runs_dir(out: Path) -> Path:
    return out / "runs"


def write_round(out: Path, profile: str, mode: str, round_no: int, rows: list[dict[str, Any]]) -> Path | None:
    """Write a round's rows as Parquet (tmp file + rename: a crash leaves no partial file)."""
    if not rows:
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq
    directory = runs_dir(out)
    directory.mkdir(parents=True, exist_ok=True)
    existing = sorted(directory.glob(f"{profile}-{mode}-*.parquet"))
    final = directory / f"{profile}-{mode}-{len(existing):05d}-round{round_no}.parquet"
    table = pa.Table.from_pylist(sorted(rows, key=lambda r: r["seed"]), schema=_schema())
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    os.close(fd)
    pq.write_table(table, tmp)
    os.replace(tmp, final)
    return final


def load_rows(out: Path, profile: str, mode: str) -> dict[int, dict[str, Any]]:
    """Every finished run of (profile, mode) under ``out``, one per seed."""
    import pyarrow.parquet as pq
    rows: dict[int, dict[str, Any]] = {}
    for path in sorted(runs_dir(out).glob(f"{profile}-{mode}-*.parquet")):
        for row in pq.read_table(path).to_pylist():
            rows.setdefault(row["seed"], row)
    return rows


def code_zip() -> Path:
    """A zip of our Python packages for executors of a real cluster (SparkContext.addPyFile)."""
    root = Path(__file__).resolve().parent.parent
    target = Path(tempfile.gettempdir()) / "popverify-code.zip"
    with zipfile.ZipFile(target, "w") as zf:
        for package in ("popverify", "reference", "spark_fuzz"):
            for path in sorted((root / package).rglob("*.py")):
                zf.write(path, path.relative_to(root))
        zf.write(root / "spec" / "expectations.json", "spec/expectations.json")
    return target
