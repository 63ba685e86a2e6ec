"""ConsumerOffsetManager: committed offsets per ``topic@group`` and queue, with persistence.

The table lives in memory; ``persist`` writes the snapshot (ConfigManager#persist on the
broker's flushConsumerOffsetInterval). A restart reloads the last snapshot, so commits made
after the last flush are lost.
"""

from __future__ import annotations

from reference.broker.keys import build_offset_table_key


class ConsumerOffsetManager:
    """offsetTable: ``{topic}@{group}`` → {queueId → offset}."""

    def __init__(self, flush_interval_ms: int, now: int = 0) -> None:
        self._table: dict[str, dict[int, int]] = {}
        self._persisted: dict[str, dict[int, int]] = {}
        self._flush_interval = flush_interval_ms
        self._last_flush = now

    def commit_offset(self, client_host: str, group: str, topic: str, queue_id: int, offset: int) -> None:
        """commitOffset: unconditional put (no monotonic check, as in Java)."""
        self._table.setdefault(build_offset_table_key(topic, group), {})[queue_id] = offset

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """queryOffset: the committed offset, or -1 when none."""
        queues = self._table.get(build_offset_table_key(topic, group))
        if queues is None:
            return -1
        return queues.get(queue_id, -1)

    def remove_topic(self, topic: str, persisted_too: bool = False) -> None:
        """cleanOffsetByTopic: drop every group's offsets of ``topic``. Java splits the
        ``topic@group`` key on '@' and removes it only when that gives exactly two parts, so a
        group name containing '@' keeps its offsets (kept as Java does it). Java removes them
        in memory only (finding F10); ``persisted_too`` also drops them from the snapshot a
        restart reloads (F10's cause removed)."""
        tables = (self._table, self._persisted) if persisted_too else (self._table,)
        for table in tables:
            for key in [k for k in table if topic in k]:
                parts = key.split("@")
                if len(parts) == 2 and parts[0] == topic:
                    del table[key]

    def persist(self, now: int) -> None:
        """Write the snapshot a restart reloads."""
        self._persisted = {k: dict(v) for k, v in self._table.items()}
        self._last_flush = now

    def flush_step(self, now: int) -> bool:
        """The scheduled persist: flushes when the interval has elapsed; True if it did."""
        if now - self._last_flush >= self._flush_interval:
            self.persist(now)
            return True
        return False

    def restart(self) -> None:
        """Broker restart: reload the last persisted snapshot."""
        self._table = {k: dict(v) for k, v in self._persisted.items()}

    def offsets(self) -> dict[tuple[str, str, int], int]:
        """All committed offsets as {(group, topic, queueId): offset} (inspection copy)."""
        out: dict[tuple[str, str, int], int] = {}
        for key, queues in self._table.items():
            topic, group = key.split("@", 1)
            for qid, off in queues.items():
                out[(group, topic, qid)] = off
        return out
