"""RemoteBrokerOffsetStore: updateOffset with increaseOnly, every ReadOffsetType, persistAll."""

from __future__ import annotations

import pytest

from reference.client.offset_store import OffsetNotFound, ReadOffsetType, RemoteBrokerOffsetStore
from reference.common.message_queue import MessageQueue

MQ = MessageQueue("T", "broker-a", 0)
OTHER = MessageQueue("T", "broker-a", 1)


class FakeBroker:
    """The broker side of the two requests, with a switch to fail like a dead connection."""

    def __init__(self) -> None:
        self.offsets: dict[MessageQueue, int] = {}
        self.down = False

    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int:
        if self.down:
            raise ConnectionError("broker unreachable")
        if mq not in self.offsets:
            raise OffsetNotFound(str(mq))
        return self.offsets[mq]

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None:
        if self.down:
            raise ConnectionError("broker unreachable")
        self.offsets[mq] = offset


def test_increase_only_never_moves_back_but_plain_update_does() -> None:
    store = RemoteBrokerOffsetStore("g", FakeBroker())
    store.update_offset(MQ, 10, True)
    store.update_offset(MQ, 7, True)
    assert store.offset_table[MQ] == 10
    store.update_offset(MQ, 12, True)
    assert store.offset_table[MQ] == 12
    store.update_offset(MQ, 3, False)
    assert store.offset_table[MQ] == 3
    store.update_offset(None, 99, False)
    assert None not in store.offset_table


@pytest.mark.parametrize("read_type, in_memory, on_broker, down, expected", [
    (ReadOffsetType.READ_FROM_MEMORY, 5, 9, False, 5),
    (ReadOffsetType.READ_FROM_MEMORY, None, 9, False, -1),
    (ReadOffsetType.MEMORY_FIRST_THEN_STORE, 5, 9, False, 5),
    (ReadOffsetType.MEMORY_FIRST_THEN_STORE, None, 9, False, 9),   # falls through to the store
    (ReadOffsetType.READ_FROM_STORE, 5, 9, False, 9),
    (ReadOffsetType.READ_FROM_STORE, 5, None, False, -1),          # OffsetNotFoundException
    (ReadOffsetType.READ_FROM_STORE, 5, 9, True, -2),              # any other broker error
])
def test_read_offset_types(read_type, in_memory, on_broker, down, expected) -> None:
    broker = FakeBroker()
    if on_broker is not None:
        broker.offsets[MQ] = on_broker
    broker.down = down
    store = RemoteBrokerOffsetStore("g", broker)
    if in_memory is not None:
        store.update_offset(MQ, in_memory, False)
    assert store.read_offset(MQ, read_type) == expected
    if expected == on_broker and read_type is not ReadOffsetType.READ_FROM_MEMORY and in_memory != expected:
        assert store.offset_table[MQ] == on_broker  # a store read refreshes memory
    assert store.read_offset(None, read_type) == -3


def test_persist_all_sends_held_queues_and_drops_the_rest() -> None:
    broker = FakeBroker()
    store = RemoteBrokerOffsetStore("g", broker)
    store.update_offset(MQ, 4, False)
    store.update_offset(OTHER, 8, False)
    store.persist_all({MQ})
    assert broker.offsets == {MQ: 4} and set(store.offset_table) == {MQ}
    broker.down = True
    store.persist_all({MQ})  # the failure is logged in Java; the offset stays to be sent later
    assert store.offset_table == {MQ: 4}
    store.persist_all(set())
    assert store.offset_table == {MQ: 4}
