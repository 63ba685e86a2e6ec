import itertools

from reference.broker.store import GetMessageStatus as S
from reference.broker.store import MessageStore, get_message_status, next_offset_correction
from reference.common.clock import VirtualClock
from reference.common.message import MessageExt


def store_with(n: int) -> MessageStore:
    s = MessageStore(VirtualClock().now)
    for i in range(n):
        s.put_message(MessageExt("T", 0, body=b"m%d" % i, tags="a" if i % 2 == 0 else "b"))
    return s


def test_range_statuses_and_corrections():
    s = store_with(5)
    assert s.get_message("G", "T", 0, 0, 32).status is S.FOUND
    r = s.get_message("G", "T", 0, 5, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_ONE, 5)
    r = s.get_message("G", "T", 0, 9, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_BADLY, 5)
    r = s.get_message("G", "T", 1, 3, 32)
    assert (r.status, r.next_begin_offset) == (S.NO_MESSAGE_IN_QUEUE, 0)
    s.expire_queue("T", 0, 2)
    r = s.get_message("G", "T", 0, 0, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_TOO_SMALL, 2)


def test_found_reads_up_to_max_and_sets_next_begin():
    s = store_with(5)
    r = s.get_message("G", "T", 0, 1, 3)
    assert r.status is S.FOUND and r.message_queue_offsets == [1, 2, 3] and r.next_begin_offset == 4


def test_filter_statuses():
    s = store_with(4)
    r = s.get_message("G", "T", 0, 0, 32, lambda m: m.tags == "b")
    assert r.message_queue_offsets == [1, 3]
    r = s.get_message("G", "T", 0, 0, 32, lambda m: m.tags == "zzz")
    assert (r.status, r.next_begin_offset) == (S.NO_MATCHED_MESSAGE, 4)


def test_retention_stages():
    s = store_with(5)
    s.expire_commit_log("T", 0, 2)
    r = s.get_message("G", "T", 0, 0, 32)
    assert r.status is S.FOUND and r.message_queue_offsets == [2, 3, 4]
    r = s.get_message("G", "T", 0, 0, 1)
    assert r.message_queue_offsets == [2]
    s2 = store_with(3)
    s2.expire_commit_log("T", 0, 3)
    assert s2.get_message("G", "T", 0, 0, 32).status is S.MESSAGE_WAS_REMOVING
    s3 = store_with(5)
    s3.delete_expired_cq_files("T", 0, 3)
    r = s3.get_message("G", "T", 0, 1, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_FOUND_NULL, 3)
    s3.correct_min_offset("T", 0, 3)
    assert s3.get_message("G", "T", 0, 1, 32).status is S.OFFSET_TOO_SMALL


def test_topic_delete_and_recreate_restarts_offsets():
    s = store_with(3)
    s.delete_topic("T")
    assert s.get_max_offset_in_queue("T", 0) == 0
    assert s.put_message(MessageExt("T", 0)).queue_offset == 0


def test_status_decision_partitions_inputs():
    seen = set()
    for has, lo, hi, off in itertools.product([False, True], range(3), range(4), range(-1, 5)):
        if lo > hi:
            continue
        status, nxt = get_message_status(has, lo, hi, off)
        seen.add(status)
        if not has:
            assert status is S.NO_MATCHED_LOGIC_QUEUE and nxt == 0
        elif hi == 0:
            assert status is S.NO_MESSAGE_IN_QUEUE
        elif lo <= off < hi:
            assert status is S.NO_MATCHED_MESSAGE and nxt == off
    assert len(seen) == 6


def test_next_offset_correction_on_slave():
    assert next_offset_correction(5, 9) == 9
    assert next_offset_correction(5, 9, slave=True) == 5
    assert next_offset_correction(5, 9, slave=True, offset_check_in_slave=True) == 9
    assert get_message_status(True, 2, 5, 0, slave=True) == (S.OFFSET_TOO_SMALL, 0)
