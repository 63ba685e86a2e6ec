"""The live history: every client operation as Jepsen-style records, written as JSON lines.

An operation is an ``invoke`` followed by exactly one completion: ``ok``, ``fail`` (the
request definitely did not take effect, as far as the client can tell) or ``timeout``
(indeterminate: it may or may not have taken effect). Faults and consumer lifecycle are
``info`` records. Times are client wall-clock milliseconds (``time_ms``) so they compare with
the broker's popTime in receipt handles (same machine, same clock), plus ``rel_ms`` since
the run started for the timeline.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class Handle:
    """The fields of a proxy receipt handle (ReceiptHandle#encode: startOffset, retrieveTime,
    invisibleTime, reviveQueueId, topicType, brokerName, queueId, offset, commitLogOffset)."""

    start_offset: int
    pop_time: int
    invisible_ms: int
    revive_queue: int
    topic_type: str
    broker: str
    queue_id: int
    offset: int

    @property
    def deadline(self) -> int:
        """popTime + invisibleTime: the end of this handle's invisibility (broker clock)."""
        return self.pop_time + self.invisible_ms


def parse_handle(text: str) -> Handle | None:
    """The handle's fields, or None when the text is not a proxy receipt handle."""
    parts = text.split(" ")
    if len(parts) < 9:
        return None
    try:
        return Handle(int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), parts[4], parts[5],
                      int(parts[6]), int(parts[7]))
    except ValueError:
        return None


@attrs.frozen
class Op:
    """One history record."""

    index: int
    type: str                  # invoke | ok | fail | timeout | info
    f: str                     # send | receive | ack | change | fault | crash | start
    process: str               # producer, consumer-<n>, nemesis
    time_ms: int
    rel_ms: int
    key: str | None = None
    handle: str | None = None
    queue: int | None = None
    offset: int | None = None
    topic: str | None = None
    value: Any = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}


@attrs.define
class History:
    """A thread-safe, append-only list of operations with a JSON-lines sink."""

    started_ms: int = attrs.Factory(lambda: time.time_ns() // 1_000_000)
    ops: list[Op] = attrs.Factory(list)
    _lock: threading.Lock = attrs.Factory(threading.Lock)

    def add(self, type_: str, f: str, process: str, **fields: Any) -> Op:
        """Append one record stamped with the current client time."""
        now = time.time_ns() // 1_000_000
        with self._lock:
            op = Op(len(self.ops), type_, f, process, now, now - self.started_ms, **fields)
            self.ops.append(op)
        return op

    def record(self, time_ms: int, type_: str, f: str, process: str, **fields: Any) -> Op:
        """Append one record stamped with a time the operation's own process measured (the
        Java F2 client's clock: the same machine's wall clock)."""
        with self._lock:
            op = Op(len(self.ops), type_, f, process, time_ms, time_ms - self.started_ms, **fields)
            self.ops.append(op)
        return op

    def snapshot(self) -> list[Op]:
        with self._lock:
            return list(self.ops)

    def write(self, path: Path) -> None:
        """Write every record as one JSON object per line."""
        with path.open("w", encoding="utf-8") as out:
            for op in self.snapshot():
                out.write(json.dumps(op.to_json(), sort_keys=True) + "\n")


def read_history(path: Path) -> list[Op]:
    """Records from a JSON-lines history file written by ``History.write``."""
    fields = {a.name for a in attrs.fields(Op)}
    ops = []
    for line in path.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        ops.append(Op(**{k: v for k, v in raw.items() if k in fields}))
    return ops
