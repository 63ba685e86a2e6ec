"""ConsumerOffsetManager: committed offsets per ``topic@group`` and queue, with persistence.

The table lives in memory; ``persist`` writes the snapshot (ConfigManager#persist on the
broker's flushConsumerOffsetInterval). A restart reloads the last snapshot, so commits made
after the last flush are lost.
"""

from __future__ import annotations

from reference.broker.keys import build_offset_table_key


class ConsumerOffsetManager:
    """offsetTable: ``{topic}@{group}`` → {queueId → offset}; 5.5.0's resetOffsetTable beside it
    (an admin's pending reset, memory only: ``use_server_side_reset``)."""

    def __init__(self, flush_interval_ms: int, now: int = 0, use_server_side_reset: bool = False) -> None:
        self._table: dict[str, dict[int, int]] = {}
        self._persisted: dict[str, dict[int, int]] = {}
        self._flush_interval = flush_interval_ms
        self._last_flush = now
        # resetOffsetTable (5.5.0:51): not a bean property, so persist never writes it and a
        # restart starts without it
        self._reset: dict[str, dict[int, int]] = {}
        self._use_server_side_reset = use_server_side_reset

    def commit_offset(self, client_host: str, group: str, topic: str, queue_id: int, offset: int) -> None:
        """commitOffset: unconditional put (no monotonic check, as in Java)."""
        self._table.setdefault(build_offset_table_key(topic, group), {})[queue_id] = offset

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """queryOffset: a pending reset's offset (5.5.0, useServerSideResetOffset), else the
        committed offset, or -1 when none."""
        key = build_offset_table_key(topic, group)
        if self._use_server_side_reset and queue_id in self._reset.get(key, {}):
            return self._reset[key][queue_id]
        queues = self._table.get(key)
        if queues is None:
            return -1
        return queues.get(queue_id, -1)

    def remove_topic(self, topic: str, persisted_too: bool = False) -> None:
        """cleanOffsetByTopic: drop every group's offsets of ``topic``. Java splits the
        ``topic@group`` key on '@' and removes it only when that gives exactly two parts, so a
        group name containing '@' keeps its offsets (kept as Java does it). Java removes them
        in memory only (finding F10); ``persisted_too`` also drops them from the snapshot a
        restart reloads (F10's cause removed)."""
        # 5.5.0 drops the topic's pending resets too (cleanOffsetByTopic:99); 5.0.0 has none
        tables = (self._table, self._reset, self._persisted) if persisted_too else (self._table, self._reset)
        for table in tables:
            for key in [k for k in table if topic in k]:
                parts = key.split("@")
                if len(parts) == 2 and parts[0] == topic:
                    del table[key]

    def which_group_by_topic(self, topic: str) -> list[str]:
        """whichGroupByTopic (5.5.0:160-172): the groups with offsets of ``topic`` (keys that
        split on '@' into exactly two parts), in the table's order."""
        groups: list[str] = []
        for key in self._table:
            parts = key.split("@")
            if len(parts) == 2 and parts[0] == topic and parts[1] not in groups:
                groups.append(parts[1])
        return groups

    def remove_offset(self, group: str) -> bool:
        """removeOffset (deleteSubscriptionGroup with cleanOffset): every ``topic@group`` key of
        ``group`` goes from the offset table (5.5.0: and the reset table), in memory only: a
        restart before the next persist reloads them (as cleanOffsetByTopic, F10). A key whose
        topic holds '@' splits into more than two parts and is kept, as in Java."""
        removed = False
        for table in (self._table, self._reset):
            for key in [k for k in table if group in k]:
                parts = key.split("@")
                if len(parts) == 2 and parts[1] == group:
                    del table[key]
                    removed = True
        return removed

    def assign_reset_offset(self, topic: str, group: str, queue_id: int, offset: int) -> bool:
        """assignResetOffset (5.5.0:437-453): refuses an empty name or a negative queue or
        offset (False); else the reset is pending for the queue and the offset table holds it
        too (a client may overwrite that at once: Java says so)."""
        if not topic or not group or queue_id < 0 or offset < 0:
            return False
        key = build_offset_table_key(topic, group)
        self._reset.setdefault(key, {})[queue_id] = offset
        self._table.setdefault(key, {})[queue_id] = offset
        return True

    def has_offset_reset(self, topic: str, group: str, queue_id: int) -> bool:
        """hasOffsetReset: a reset of the queue is pending."""
        return queue_id in self._reset.get(build_offset_table_key(topic, group), {})

    def query_then_erase_reset_offset(self, topic: str, group: str, queue_id: int) -> int | None:
        """queryThenEraseResetOffset: the pending reset's offset, taken out (None when none)."""
        return self._reset.get(build_offset_table_key(topic, group), {}).pop(queue_id, None)

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
        """Broker restart: reload the last persisted snapshot (pending resets are gone)."""
        self._table = {k: dict(v) for k, v in self._persisted.items()}
        self._reset = {}

    def offsets(self) -> dict[tuple[str, str, int], int]:
        """All committed offsets as {(group, topic, queueId): offset} (inspection copy)."""
        out: dict[tuple[str, str, int], int] = {}
        for key, queues in self._table.items():
            topic, group = key.split("@", 1)
            for qid, off in queues.items():
                out[(group, topic, qid)] = off
        return out
