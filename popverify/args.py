"""Argument types with documented bounds, shared by every command.

Each factory returns an ``argparse`` ``type=`` callable; a value out of its bounds, NaN,
infinite or of the wrong type is an ``argparse.ArgumentTypeError``, which the CLI prints as
one line with exit 2. The bounds are listed in README.md (Commands, "Bounds").
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An integer in ``low..high`` (both inclusive); ``1e3`` style and floats are refused."""
    def parse(text: str) -> int:
        try:
            # int() of a 5000-digit string raises ValueError too (Python's digit limit)
            value = int(text.strip().replace("_", "")) if re.fullmatch(r"\s*[+-]?\d[\d_]*\s*", text) else None
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"expected an integer, got {_show(text)}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{_show(text)} is out of range {low}..{high}")
        return value
    parse.__name__ = "integer"
    return parse


def bounded_float(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """A finite number in ``low..high`` (``low`` excluded when ``low_open``); NaN and inf refused."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {_show(text)}") from None
        if math.isnan(value) or math.isinf(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {_show(text)}")
        if value < low or value > high or (low_open and value == low):
            span = f"{'(' if low_open else '['}{low:g}, {high:g}]"
            raise argparse.ArgumentTypeError(f"{_show(text)} is out of range {span}")
        return value
    parse.__name__ = "number"
    return parse


def comma_list(known: tuple[str, ...] | None = None, what: str = "name") -> Callable[[str], tuple[str, ...]]:
    """A non-empty comma list (``a,b``); empty items such as ``,,`` are an error, as are names
    outside ``known`` when given."""
    def parse(text: str) -> tuple[str, ...]:
        items = tuple(part.strip() for part in text.split(","))
        if not items or any(not item for item in items):
            raise argparse.ArgumentTypeError(f"expected a comma list of {what}s without empty items, got {_show(text)}")
        if known is not None:
            unknown = [item for item in items if item not in known]
            if unknown:
                raise argparse.ArgumentTypeError(f"unknown {what}(s) {', '.join(map(_show, unknown))}; "
                                                 f"known: {', '.join(known)}")
        return tuple(dict.fromkeys(items))
    parse.__name__ = "list"
    return parse


def output_dir(text: str) -> Path:
    """A folder to write into: not empty, not an existing file; created now (with its parents)
    and probed with a scratch file, so an unwritable place fails before any work starts."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not a folder (give e.g. popverify-out/run)")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot write under {text}: {err.strerror or err}") from None
    return path


def output_file(text: str) -> Path:
    """A file to write: not empty, not a folder; its folder is created now and the file probed
    for writing (a file that did not exist is removed again)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not a file name")
    path = Path(text)
    if path.is_dir() or text.endswith(os.sep):
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
    existed = path.exists()
    if existed and not path.is_file():
        return path  # a device or pipe (/dev/stdout, a FIFO): written as it is
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot write {text}: {err.strerror or err}") from None
    if not existed:
        path.unlink(missing_ok=True)
    return path


def input_file(text: str) -> Path:
    """An existing, readable regular file."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not a file")
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text} does not exist")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a regular file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text} is not readable")
    return path


# Spark master URLs popverify accepts (spark-submit's own forms): local, local[N], local[*],
# local[N,F], local[*,F], local-cluster[W,C,M], spark://host:port[,host:port], yarn,
# k8s://..., mesos://...
MAX_LOCAL_THREADS = 512
_LOCAL = re.compile(r"local(?:\[(\*|\d+)(?:,(\d+))?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[(\d+),(\d+),(\d+)\]")
_REMOTE = re.compile(r"(spark://[\w.\-]+:\d+(,[\w.\-]+:\d+)*|yarn|k8s://\S+|mesos://\S+)")


def spark_master(text: str) -> str:
    """A Spark master URL in one of the forms above, with thread/retry counts >= 1; the empty
    string (spark-submit's choice) is kept as is."""
    if text == "":
        return text
    local = _LOCAL.fullmatch(text)
    if local:
        threads, failures = local.groups()
        if threads not in (None, "*") and not 1 <= int(threads) <= MAX_LOCAL_THREADS:
            raise argparse.ArgumentTypeError(f"{_show(text)}: local threads must be in 1..{MAX_LOCAL_THREADS}")
        if failures is not None and not 1 <= int(failures) <= 100:
            raise argparse.ArgumentTypeError(f"{_show(text)}: task attempts must be in 1..100")
        return text
    cluster = _LOCAL_CLUSTER.fullmatch(text)
    if cluster:
        if any(int(g) < 1 for g in cluster.groups()):
            raise argparse.ArgumentTypeError(f"{_show(text)}: workers, cores and memory must be >= 1")
        return text
    if _REMOTE.fullmatch(text):
        return text
    raise argparse.ArgumentTypeError(
        f"not a Spark master URL: {_show(text)} (local, local[N], local[*], local[N,F], local-cluster[W,C,M], "
        "spark://host:port, yarn, k8s://..., mesos://...)")


def _show(text: str) -> str:
    """A value quoted for an error message, cut short when huge."""
    return repr(text if len(text) <= 60 else text[:57] + "...")


def profile_name(text: str) -> str:
    """A model profile (``v5.0``, ``v5.5``) or an old alias (``develop`` = ``v5.5``), returned
    under its canonical name: the CLI's one place where aliases are resolved."""
    from reference.common.profile import canonical_profile

    try:
        return canonical_profile(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


profile_name.__name__ = "profile"
