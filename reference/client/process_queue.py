"""ProcessQueue (client/impl/consumer/ProcessQueue.java, seed 001): a queue's pulled,
not-yet-consumed messages, as rocketmq-all-5.0.0 keeps them.

Java oddities kept on purpose (spec/client.md): a re-put offset replaces the message but
leaves msgCount/msgSize as they were (msgSize still counts the old body); queueOffsetMax is
the offset of the last *new* message put, not the maximum; removeMessage subtracts the
*argument's* body length; commit() on an empty consuming map throws (TreeMap#lastKey), so its
``offset != null`` branch is dead. Time is passed in (the virtual clock), never read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

REBALANCE_LOCK_MAX_LIVE_TIME = 30_000
REBALANCE_LOCK_INTERVAL = 20_000
PULL_MAX_IDLE_TIME = 120_000
PROPERTY_MAX_OFFSET = "MAX_OFFSET"
PROPERTY_CONSUME_START_TIMESTAMP = "CONSUME_START_TIME"


@attrs.define(eq=False)
class PulledMessage:
    """The parts of a MessageExt the ProcessQueue reads."""

    queue_offset: int
    body: bytes
    properties: dict[str, str] = attrs.Factory(dict)
    # The decoded MessageExt it came from (topic, reconsumeTimes, UNIQ_KEY for send-back).
    ext: Any = None


class NoSuchElement(Exception):
    """java.util.NoSuchElementException (TreeMap#lastKey on an empty map)."""


class ProcessQueue:
    """One message queue's process queue."""

    def __init__(self, now: Callable[[], int], reset_size_when_empty: bool = False,
                 size_counted_at_put: bool = False) -> None:
        self._now = now
        # F13's cause removed (ClientConfig.pq_size_counts_current_body False): remember each
        # message's body length at put and subtract that, whatever the listener did to the body
        self._put_size: dict[int, int] | None = {} if size_counted_at_put else None
        # v5.5 (5.1+): msgSize is reset to 0 whenever msgCount reaches 0 in removeMessage
        # or commit, which repairs the drift the re-put oddity causes (ClientConfig switch).
        self._reset_size_when_empty = reset_size_when_empty
        self.msg_tree_map: dict[int, PulledMessage] = {}          # TreeMap: iterate sorted
        self.consuming_msg_orderly_tree_map: dict[int, PulledMessage] = {}
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0
        if self._put_size is not None:
            self._put_size.clear()
        self.dropped = False
        self.locked = False
        self.consuming = False
        # consumeLock held: an orderly listener is at work on a batch of this queue
        self.consume_locked = False
        self.msg_acc_cnt = 0
        self.try_unlock_times = 0
        start = now()
        self.last_pull_timestamp = start
        self.last_consume_timestamp = start
        self.last_lock_timestamp = start

    def is_lock_expired(self) -> bool:
        """isLockExpired: the lock was last renewed more than 30 s ago."""
        return self._now() - self.last_lock_timestamp > REBALANCE_LOCK_MAX_LIVE_TIME

    def is_pull_expired(self) -> bool:
        """isPullExpired: no pull for more than 120 s."""
        return self._now() - self.last_pull_timestamp > PULL_MAX_IDLE_TIME

    def put_message(self, msgs: Sequence[PulledMessage]) -> bool:
        """putMessage: returns dispatchToConsume (True when consumption should be started)."""
        valid = 0
        for msg in msgs:
            old = self.msg_tree_map.get(msg.queue_offset)
            self.msg_tree_map[msg.queue_offset] = msg
            if old is None:
                valid += 1
                self.queue_offset_max = msg.queue_offset
                self.msg_size += len(msg.body)
                if self._put_size is not None:
                    self._put_size[msg.queue_offset] = len(msg.body)
        self.msg_count += valid
        dispatch = False
        if self.msg_tree_map and not self.consuming:
            dispatch = True
            self.consuming = True
        if msgs:
            last = msgs[-1]
            prop = last.properties.get(PROPERTY_MAX_OFFSET)
            if prop is not None:
                acc = int(prop) - last.queue_offset
                if acc > 0:
                    self.msg_acc_cnt = acc
        return dispatch

    def get_max_span(self) -> int:
        """getMaxSpan: lastKey - firstKey, 0 when empty."""
        if not self.msg_tree_map:
            return 0
        return max(self.msg_tree_map) - min(self.msg_tree_map)

    def remove_message(self, msgs: Sequence[PulledMessage]) -> int:
        """removeMessage: the offset to commit next (first remaining key, or queueOffsetMax + 1
        when the map empties); -1 when it was already empty."""
        self.last_consume_timestamp = self._now()
        if not self.msg_tree_map:
            return -1
        result = self.queue_offset_max + 1
        removed = 0
        for msg in msgs:
            if self.msg_tree_map.pop(msg.queue_offset, None) is not None:
                removed -= 1
                self.msg_size -= self._size(msg)
        self.msg_count += removed
        if self._reset_size_when_empty and self.msg_count == 0:
            self.msg_size = 0
        if self.msg_tree_map:
            result = min(self.msg_tree_map)
        return result

    def _size(self, msg: PulledMessage) -> int:
        """What removeMessage / commit subtract: the body's current length (Java: F13), or with
        F13's cause removed the length counted at put."""
        if self._put_size is None:
            return len(msg.body)
        return self._put_size.pop(msg.queue_offset, len(msg.body))

    def rollback(self) -> None:
        """rollback: the orderly batch goes back to the tree map."""
        self.msg_tree_map.update(self.consuming_msg_orderly_tree_map)
        self.consuming_msg_orderly_tree_map.clear()

    def commit(self) -> int:
        """commit: drop the orderly batch; returns its last offset + 1. NoSuchElement when empty."""
        if not self.consuming_msg_orderly_tree_map:
            raise NoSuchElement("TreeMap#lastKey on an empty consumingMsgOrderlyTreeMap")
        offset = max(self.consuming_msg_orderly_tree_map)
        self.msg_count -= len(self.consuming_msg_orderly_tree_map)
        if self._reset_size_when_empty and self.msg_count == 0:
            self.msg_size = 0
        else:
            self.msg_size -= sum(self._size(m) for m in self.consuming_msg_orderly_tree_map.values())
        self.consuming_msg_orderly_tree_map.clear()
        return offset + 1

    def make_message_to_consume_again(self, msgs: Sequence[PulledMessage]) -> None:
        """makeMessageToConsumeAgain: move messages of the orderly batch back."""
        for msg in msgs:
            self.consuming_msg_orderly_tree_map.pop(msg.queue_offset, None)
            self.msg_tree_map[msg.queue_offset] = msg

    def take_messages(self, batch_size: int) -> list[PulledMessage]:
        """takeMessages: up to batch_size lowest offsets into the orderly batch."""
        self.last_consume_timestamp = self._now()
        result: list[PulledMessage] = []
        for _ in range(max(batch_size, 0)):
            if not self.msg_tree_map:
                break
            first = min(self.msg_tree_map)
            msg = self.msg_tree_map.pop(first)
            result.append(msg)
            self.consuming_msg_orderly_tree_map[first] = msg
        if not result:
            self.consuming = False
        return result

    def has_temp_message(self) -> bool:
        """hasTempMessage."""
        return bool(self.msg_tree_map)

    def clear(self) -> None:
        """clear: both maps emptied, counters and queueOffsetMax reset."""
        self.msg_tree_map.clear()
        self.consuming_msg_orderly_tree_map.clear()
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0

    def clean_expired_msg(self, consume_orderly: bool, consume_timeout_minutes: int,
                          send_message_back: Callable[[PulledMessage, int], Any]) -> int:
        """cleanExpiredMsg: up to 16 head messages consumed for longer than consumeTimeout are
        sent back (delay level 3) and removed; returns how many were removed."""
        if consume_orderly:
            return 0
        removed = 0
        for _ in range(min(len(self.msg_tree_map), 16)):
            if not self.msg_tree_map:
                break
            head = self.msg_tree_map[min(self.msg_tree_map)]
            start = head.properties.get(PROPERTY_CONSUME_START_TIMESTAMP)
            if not start or self._now() - int(start) <= consume_timeout_minutes * 60 * 1000:
                break
            try:
                send_message_back(head, 3)
            except OSError:
                continue  # Java logs the failure and tries the next loop iteration
            if self.msg_tree_map and head.queue_offset == min(self.msg_tree_map):
                self.remove_message([head])
                removed += 1
        return removed
