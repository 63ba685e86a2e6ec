"""RemoteBrokerOffsetStore (clustering): the client's offset table and its broker round trips.

The broker is reached through a small ``OffsetBroker`` protocol (query / update), so the
store stays sans-IO; the push-consumer model (issue 3) will plug the broker model in.
"""

from __future__ import annotations

import enum
from typing import Protocol

from reference.common.message_queue import MessageQueue


class ReadOffsetType(enum.Enum):
    """ReadOffsetType."""

    READ_FROM_MEMORY = "READ_FROM_MEMORY"
    READ_FROM_STORE = "READ_FROM_STORE"
    MEMORY_FIRST_THEN_STORE = "MEMORY_FIRST_THEN_STORE"


class OffsetNotFound(Exception):
    """OffsetNotFoundException: the broker has no offset for the queue."""


class OffsetBroker(Protocol):
    """The two broker requests the store makes."""

    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int: ...  # may raise OffsetNotFound / OSError

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None: ...


def increase_only_update(old: int, new: int, increase_only: bool) -> int:
    """updateOffset on an existing entry: MixAll#compareAndIncreaseOnly keeps the larger value
    when ``increase_only``; otherwise AtomicLong#set."""
    if increase_only:
        return new if new > old else old
    return new


class RemoteBrokerOffsetStore:
    """RemoteBrokerOffsetStore of one consumer group."""

    def __init__(self, group: str, broker: OffsetBroker) -> None:
        self.group = group
        self.broker = broker
        self.offset_table: dict[MessageQueue, int] = {}

    def update_offset(self, mq: MessageQueue | None, offset: int, increase_only: bool) -> None:
        """updateOffset: a new entry takes ``offset`` (putIfAbsent), an existing one is updated."""
        if mq is None:
            return
        old = self.offset_table.get(mq)
        self.offset_table[mq] = offset if old is None else increase_only_update(old, offset, increase_only)

    def read_offset(self, mq: MessageQueue | None, read_type: ReadOffsetType) -> int:
        """readOffset with Java's switch fall-through: MEMORY_FIRST_THEN_STORE reads the store when
        memory has nothing; -1 not found, -2 broker error, -3 no queue."""
        if mq is None:
            return -3
        if read_type in (ReadOffsetType.MEMORY_FIRST_THEN_STORE, ReadOffsetType.READ_FROM_MEMORY):
            if mq in self.offset_table:
                return self.offset_table[mq]
            if read_type is ReadOffsetType.READ_FROM_MEMORY:
                return -1
        try:
            broker_offset = self.broker.query_consumer_offset(self.group, mq)
        except OffsetNotFound:
            return -1
        except OSError:
            return -2
        self.update_offset(mq, broker_offset, False)
        return broker_offset

    def persist(self, mq: MessageQueue) -> None:
        """persist(mq): send this queue's offset to the broker (a failure is logged and lost)."""
        offset = self.offset_table.get(mq)
        if offset is None:
            return
        try:
            self.broker.update_consumer_offset(self.group, mq, offset)
        except OSError:
            pass

    def remove_offset(self, mq: MessageQueue) -> None:
        """removeOffset: forget the queue's offset in memory."""
        self.offset_table.pop(mq, None)

    def persist_all(self, mqs: set[MessageQueue]) -> None:
        """persistAll: send the offsets of ``mqs``; drop entries of queues no longer held."""
        if not mqs:
            return
        unused = []
        for mq, offset in list(self.offset_table.items()):
            if mq in mqs:
                try:
                    self.broker.update_consumer_offset(self.group, mq, offset)
                except OSError:
                    pass  # logged in Java; the offset is sent again at the next persist
            else:
                unused.append(mq)
        for mq in unused:
            del self.offset_table[mq]
