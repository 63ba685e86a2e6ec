"""ProcessQueue (seed 001), every method, oddities included."""

from __future__ import annotations

import pytest

from reference.client.process_queue import NoSuchElement, ProcessQueue, PulledMessage
from reference.common.clock import VirtualClock


def msg(offset: int, size: int = 10, **props: str) -> PulledMessage:
    return PulledMessage(offset, b"x" * size, dict(props))


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(0)


def test_put_message_counts_new_offsets_and_dispatches_once(clock) -> None:
    pq = ProcessQueue(clock.now)
    assert pq.put_message([msg(1), msg(2), msg(3, MAX_OFFSET="10")]) is True
    assert (pq.msg_count, pq.msg_size, pq.queue_offset_max, pq.msg_acc_cnt) == (3, 30, 3, 7)
    assert pq.put_message([msg(4)]) is False  # already consuming
    assert pq.get_max_span() == 3


def test_reput_offset_replaces_message_but_keeps_old_size(clock) -> None:
    pq = ProcessQueue(clock.now)
    pq.put_message([msg(5, 10)])
    pq.put_message([msg(5, 99)])
    assert pq.msg_count == 1 and pq.msg_size == 10 and len(pq.msg_tree_map[5].body) == 99


def test_queue_offset_max_is_the_last_new_offset_not_the_maximum(clock) -> None:
    pq = ProcessQueue(clock.now)
    pq.put_message([msg(9), msg(4)])
    assert pq.queue_offset_max == 4


def test_remove_message_returns_next_offset_to_commit(clock) -> None:
    pq = ProcessQueue(clock.now)
    assert pq.remove_message([msg(1)]) == -1  # empty
    pq.put_message([msg(1), msg(2), msg(3)])
    assert pq.remove_message([msg(2)]) == 1  # 1 still in flight
    assert pq.remove_message([msg(1)]) == 3
    assert pq.remove_message([msg(3)]) == 4  # empty: queueOffsetMax + 1
    assert pq.msg_count == 0 and pq.msg_size == 0


def test_orderly_take_commit_rollback_and_consume_again(clock) -> None:
    pq = ProcessQueue(clock.now)
    pq.put_message([msg(1), msg(2), msg(3)])
    batch = pq.take_messages(2)
    assert [m.queue_offset for m in batch] == [1, 2] and pq.msg_count == 3
    pq.rollback()
    assert sorted(pq.msg_tree_map) == [1, 2, 3] and not pq.consuming_msg_orderly_tree_map
    batch = pq.take_messages(2)
    pq.make_message_to_consume_again([batch[1]])
    assert sorted(pq.msg_tree_map) == [2, 3]
    assert pq.commit() == 2 and pq.msg_count == 2 and pq.msg_size == 20
    with pytest.raises(NoSuchElement):
        pq.commit()
    pq.take_messages(5)
    assert pq.take_messages(1) == [] and pq.consuming is False


def test_lock_and_pull_expiry_follow_the_virtual_clock(clock) -> None:
    pq = ProcessQueue(clock.now)
    clock.advance(30_000)
    assert not pq.is_lock_expired()
    clock.advance(1)
    assert pq.is_lock_expired() and not pq.is_pull_expired()
    clock.advance(90_000)
    assert pq.is_pull_expired()


def test_clean_expired_msg_sends_back_and_removes_the_head(clock) -> None:
    pq = ProcessQueue(clock.now)
    pq.put_message([msg(1, CONSUME_START_TIME="0"), msg(2, CONSUME_START_TIME="0"), msg(3)])
    sent: list[int] = []
    clock.advance(15 * 60 * 1000 + 1)
    assert pq.clean_expired_msg(False, 15, lambda m, level: sent.append(m.queue_offset)) == 2
    assert sent == [1, 2] and sorted(pq.msg_tree_map) == [3]
    assert pq.clean_expired_msg(True, 15, lambda m, level: sent.append(m.queue_offset)) == 0


def test_clear_resets_everything(clock) -> None:
    pq = ProcessQueue(clock.now)
    pq.put_message([msg(1)])
    pq.take_messages(1)
    pq.clear()
    assert (pq.msg_count, pq.msg_size, pq.queue_offset_max, pq.has_temp_message()) == (0, 0, 0, False)
