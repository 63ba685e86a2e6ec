"""Campaign results on disk: one Parquet file per (profile, mode, round), written atomically
by the planner, read back deduplicated by seed (so resuming or a retried task never counts a
run twice). Both executors (the plain loop and Spark) read and write the same files: a
campaign started on one engine resumes on the other.

Also under ``runs/``: ``_{profile}-{mode}.campaign.json`` (the leading "_" keeps it out of a Parquet read of the folder), the manifest of what determines a
row besides its seed (profile, mode, steps, mutant, guided or blind, rounds, runs asked); a
resume with other values is refused (CampaignMismatch). ``_parts/`` holds the rows of each
finished partition of a round that has not finished (the plain loop, Spark's local masters), so a failed round loses
only its unfinished tasks. A Parquet file that cannot be read is renamed ``*.corrupt`` and
its seeds run again.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from popverify.errors import UsageError


class CampaignMismatch(UsageError):
    """``--out`` holds rows of a campaign with other parameters (exit 2, never reused)."""

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
    existing = sorted(directory.glob(f"{profile}-{mode}-*.parquet*"))  # set-aside files keep their number
    final = directory / f"{profile}-{mode}-{len(existing):05d}-round{round_no}.parquet"
    table = pa.Table.from_pylist(sorted(rows, key=lambda r: r["seed"]), schema=_schema())
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    os.close(fd)
    pq.write_table(table, tmp)
    os.replace(tmp, final)
    return final


def parts_dir(out: Path) -> Path:
    return runs_dir(out) / "_parts"  # "_": a Parquet read of runs/ skips it (no double rows)


def _manifest_path(out: Path, profile: str, mode: str) -> Path:
    return runs_dir(out) / f"_{profile}-{mode}.campaign.json"  # "_": Spark and pyarrow skip it when reading runs/


# What determines a row besides its seed (and round, stored in the row); ``runs`` is not part
# of it: a resume may extend a campaign to more runs. ``swarm`` is a digest of the swarm
# configurations the first seeds draw: a change to how configurations are drawn (a new
# version of popverify) makes old rows another campaign's.
KEY_FIELDS = ("profile", "mode", "steps", "mutant", "guided", "swarm")


def check_manifest(out: Path, key: dict[str, Any]) -> None:
    """Record ``key`` for a new campaign under ``out``, or check that the rows already there were
    made with the same key; CampaignMismatch names the differences."""
    path = _manifest_path(out, key["profile"], key["mode"])
    existing = sorted(runs_dir(out).glob(f"{key['profile']}-{key['mode']}-*.parquet"))
    if path.is_file():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise CampaignMismatch(f"{path} is unreadable ({err}); use another --out") from err
        if not isinstance(recorded, dict):
            raise CampaignMismatch(f"{path} is not a campaign manifest; use another --out")
        diff = [f"{k} {recorded.get(k)!r} (asked {key[k]!r})" for k in KEY_FIELDS if recorded.get(k) != key[k]]
        if diff:
            raise CampaignMismatch(f"{out} holds a campaign with other parameters: {', '.join(diff)}; "
                                   "use another --out (or the same parameters to resume)")
        return
    if existing:
        # rows written before manifests existed: their key is read from the rows themselves
        rows = load_rows(out, key["profile"], key["mode"])
        for row in rows.values():
            if (row.get("mutant") or None) != key["mutant"]:
                raise CampaignMismatch(f"{out} holds rows of mutant {row.get('mutant') or None!r} "
                                       f"(asked {key['mutant']!r}); use another --out")
    runs_dir(out).mkdir(parents=True, exist_ok=True)
    _atomic_write(path, (json.dumps({k: key[k] for k in KEY_FIELDS}, sort_keys=True) + "\n").encode())


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def write_part(parts: Path, profile: str, mode: str, round_no: int, partition: int,
               rows: list[dict[str, Any]]) -> None:
    """A finished task's rows (called in the task; parts are unique per attempt, duplicates
    of a retried task are removed by seed when read back)."""
    if not rows:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq
    parts.mkdir(parents=True, exist_ok=True)
    name = f"{profile}-{mode}-round{round_no}-p{partition:05d}-{uuid.uuid4().hex[:12]}.parquet"
    fd, tmp = tempfile.mkstemp(dir=parts, suffix=".tmp")
    os.close(fd)
    pq.write_table(pa.Table.from_pylist(sorted(rows, key=lambda r: r["seed"]), schema=_schema()), tmp)
    os.replace(tmp, parts / name)


def consolidate_parts(out: Path, profile: str, mode: str) -> int:
    """Rows that finished tasks of an interrupted round left in ``_parts/`` go into a round file
    of their own (seeds already in a round file are dropped), then the parts are removed;
    returns how many rows were kept."""
    files = sorted(parts_dir(out).glob(f"{profile}-{mode}-round*.parquet"))
    if not files:
        return 0
    aside: list[Path] = []
    have: set[int] = set()
    for path in sorted(runs_dir(out).glob(f"{profile}-{mode}-*.parquet")):
        have.update(row["seed"] for row in _read(path, aside))
    kept: dict[int, dict[str, Any]] = {}
    for path in files:
        for row in _read(path, aside):
            if row["seed"] not in have:
                kept.setdefault(row["seed"], row)
    if kept:
        write_round(out, profile, mode, max(r["round"] for r in kept.values()), list(kept.values()))
    drop_parts(out, profile, mode)
    return len(kept)


def drop_parts(out: Path, profile: str, mode: str) -> None:
    """Remove the part files of (profile, mode) once a round's file holds their rows."""
    for path in parts_dir(out).glob(f"{profile}-{mode}-round*.parquet"):
        path.unlink(missing_ok=True)


def _read(path: Path, set_aside: list[Path]) -> list[dict[str, Any]]:
    """The rows of one Parquet file; a file that cannot be read is renamed ``.corrupt`` (and
    reported on stderr), so its seeds run again."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        return pq.read_table(path, schema=_schema()).to_pylist()
    except (pa.ArrowException, OSError, ValueError) as err:
        target = path.with_name(path.name + ".corrupt")
        os.replace(path, target)
        set_aside.append(target)
        print(f"[fuzz] set aside unreadable {path.name} as {target.name} ({type(err).__name__}); "
              "its seeds run again", file=sys.stderr, flush=True)
        return []


def load_rows(out: Path, profile: str, mode: str, set_aside: list[Path] | None = None) -> dict[int, dict[str, Any]]:
    """Every finished run of (profile, mode) under ``out`` (round files, then parts of an
    unfinished round), one per seed; unreadable files are set aside into ``set_aside``."""
    aside: list[Path] = [] if set_aside is None else set_aside
    rows: dict[int, dict[str, Any]] = {}
    files = sorted(runs_dir(out).glob(f"{profile}-{mode}-*.parquet"))
    files += sorted(parts_dir(out).glob(f"{profile}-{mode}-round*.parquet"))
    for path in files:
        for row in _read(path, aside):
            rows.setdefault(row["seed"], row)
    return rows
