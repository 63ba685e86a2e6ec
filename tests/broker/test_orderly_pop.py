"""Orderly POP on the broker model, per release (spec/broker.md "Orderly POP")."""

from __future__ import annotations

import pytest

from reference.common import response_code as rc
from reference.common.clock import EPOCH_ZERO_MS
from reference.common.pop import AckEntry
from reference.broker.keys import POP_ORDER_REVIVE_QUEUE
from reference.common.pop import PopRequest

from tests.broker.conftest import make_broker

PROFILES = ("v5.0", "v5.5")


def fill(b, n, queue=0):
    for i in range(n):
        assert b.put_message("T", queue, b"m%d" % i).code == rc.SUCCESS


def opop(b, n=2, inv=10_000, queue=0):
    """An orderly pop of queue ``queue``; its result."""
    return b.pop(PopRequest("T", "G", queue_id=queue, max_msg_nums=n, invisible_time=inv, order=True)).result


def offsets(r):
    return [m.queue_offset for m in r.messages]


def ack(b, m):
    return b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info)


@pytest.mark.parametrize("profile", PROFILES)
def test_orderly_pop_writes_no_ck_commits_start_and_names_order_revive_queue(profile):
    b = make_broker(profile, queues=1)
    fill(b, 3)
    r = opop(b)
    assert r.code == rc.SUCCESS and offsets(r) == [0, 1]
    assert r.revive_qid == POP_ORDER_REVIVE_QUEUE
    assert all(m.extra_info.split(" ")[3] == "999" for m in r.messages)
    assert b.stored_checkpoints() == [] and b.buffered_checkpoints() == []
    assert b.committed_offset("G", "T", 0) == 0  # the batch's start offset
    assert r.order_count_info is not None and r.order_count_info.endswith("0 0 0")


@pytest.mark.parametrize("profile", PROFILES)
def test_check_block_keeps_queue_until_batch_acked(profile):
    b = make_broker(profile, queues=1)
    fill(b, 3)
    r = opop(b)
    blocked = opop(b)
    assert blocked.code != rc.SUCCESS and blocked.messages == ()
    assert ack(b, r.messages[0]) == rc.SUCCESS
    if profile == "v5.0":
        # 5.0.0 commits only when the whole batch is done
        assert b.committed_offset("G", "T", 0) == 0
        assert opop(b).messages == ()
    else:
        # 5.5.0 commits the first un-acked offset at once; still blocked by offset 1
        assert b.committed_offset("G", "T", 0) == 1
        assert opop(b).messages == ()
    assert ack(b, r.messages[1]) == rc.SUCCESS
    assert b.committed_offset("G", "T", 0) == 2
    assert offsets(opop(b)) == [2]


@pytest.mark.parametrize("profile", PROFILES)
def test_unacked_batch_is_redelivered_after_invisible_time_with_counts(profile):
    b = make_broker(profile, queues=1)
    fill(b, 2)
    r1 = opop(b, inv=5_000)
    b.clock.advance(4_999)
    assert opop(b, inv=5_000).messages == ()
    b.clock.advance(1)
    r2 = opop(b, inv=5_000)
    assert offsets(r2) == [0, 1]
    if profile == "v5.0":
        assert r2.order_count_info == "0 0 1"  # one count for the whole batch
    else:
        assert r2.order_count_info == "0 qo0%0 1;0 qo0%1 1;0 0 1"
    # the first pop's handle: 5.0.0 sets bit 0 of the new batch (not done: -2); 5.5.0 refuses
    # it (popTime differs: -2). Neither commits.
    assert ack(b, r1.messages[0]) == rc.SUCCESS
    assert b.committed_offset("G", "T", 0) == 0
    assert b.order_info.get("T", "G", 0).commit_offset_bit == (1 if profile == "v5.0" else 0)


def test_v50_block_uses_the_asking_requests_invisible_time():
    """Oddity: 5.0.0 checkBlock compares with the new request's invisibleTime."""
    b = make_broker("v5.0", queues=1)
    fill(b, 2)
    opop(b, inv=60_000)
    b.clock.advance(1_000)
    assert offsets(opop(b, inv=1_000)) == [0, 1]


def test_v55_block_uses_the_batch_invisible_time():
    b = make_broker("v5.5", queues=1)
    fill(b, 2)
    opop(b, inv=60_000)
    b.clock.advance(1_000)
    assert opop(b, inv=1_000).messages == ()


def test_v50_ack_of_other_offset_is_illegal_and_stale_ack_quiet():
    b = make_broker("v5.0", queues=1)
    fill(b, 3)
    r = opop(b, n=1)
    assert b.ack("G", "T", 0, 2, r.messages[0].extra_info) == rc.MESSAGE_ILLEGAL
    assert ack(b, r.messages[0]) == rc.SUCCESS and b.committed_offset("G", "T", 0) == 1
    assert ack(b, r.messages[0]) == rc.SUCCESS  # below the committed offset: nothing happens
    assert b.committed_offset("G", "T", 0) == 1


def test_v55_change_invisible_time_extends_block_and_keeps_pop_time():
    b = make_broker("v5.5", queues=1)
    fill(b, 1)
    r = opop(b, n=1, inv=5_000)
    m = r.messages[0]
    b.clock.advance(4_000)
    c = b.change_invisible_time("G", "T", 0, 0, m.extra_info, 10_000)
    assert c.code == rc.SUCCESS and c.pop_time == r.pop_time and c.invisible_time == 14_000
    b.clock.advance(2_000)  # past the original invisible time, before the new one
    assert opop(b, n=1).messages == ()
    assert b.stored_checkpoints() == []  # no CK for an orderly handle on 5.5.0
    b.clock.advance(8_000)
    assert offsets(opop(b, n=1)) == [0]


def test_v55_change_invisible_time_below_the_committed_offset_answers_an_empty_header():
    """processChangeInvisibleTimeForOrder returns before the lock: SUCCESS, header fields 0; the
    client's handle built from them has the epoch's popTime, invisibleTime 0, reviveQid 0."""
    b = make_broker("v5.5", queues=1)
    fill(b, 1)
    r = opop(b, n=1, inv=5_000)
    m = r.messages[0]
    assert ack(b, m) == rc.SUCCESS and b.committed_offset("G", "T", 0) == 1
    c = b.change_invisible_time("G", "T", 0, 0, m.extra_info, 10_000)
    assert (c.code, c.pop_time, c.invisible_time, c.revive_qid) == (rc.SUCCESS, EPOCH_ZERO_MS, 0, 0)
    assert c.extra_info == f"0 {EPOCH_ZERO_MS} 0 0 0 broker-a 0 0"


def test_v50_change_invisible_time_of_orderly_handle_writes_ck_to_queue_999():
    """5.0.0 has no orderly branch: a CK lands in revive queue 999 and the order info stays."""
    b = make_broker("v5.0", queues=1)
    fill(b, 1)
    r = opop(b, n=1, inv=5_000)
    c = b.change_invisible_time("G", "T", 0, 0, r.messages[0].extra_info, 60_000)
    assert c.code == rc.SUCCESS and c.revive_qid == POP_ORDER_REVIVE_QUEUE
    b.clock.advance(5_000)
    assert offsets(opop(b, n=1, inv=5_000)) == [0]  # the block ended at the old time


@pytest.mark.parametrize("profile", PROFILES)
def test_orderly_pop_never_reads_retry_topic(profile):
    b = make_broker(profile, queues=1)
    for _ in range(30):  # every random draw: retry-first never applies to an orderly pop
        assert opop(b).messages == ()


def test_v55_batch_ack_of_orderly_handles_commits():
    b = make_broker("v5.5", queues=1)
    fill(b, 2)
    r = opop(b)
    codes = b.batch_ack("G", [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in r.messages])
    assert codes == [rc.SUCCESS, rc.SUCCESS] and b.committed_offset("G", "T", 0) == 2


def test_v50_restart_reloads_empty_order_info():
    """Oddity: 5.0.0's encode keys do not decode; a reloaded OrderInfo is empty and the next
    orderly pop's update throws (messages answered without offset info, nothing committed)."""
    b = make_broker("v5.0", queues=1)
    fill(b, 2)
    opop(b)
    b.clock.advance(10_000)
    b.offset_flush_step()  # persists offsets and (10 s task) the order info
    b.restart()
    info = b.order_info.get("T", "G", 0)
    assert info is not None and info.offset_list is None
    r = opop(b)
    assert offsets(r) == [0, 1] and r.msg_offset_info == "" and all(m.extra_info == "" for m in r.messages)
    assert b.order_info.get("T", "G", 0).offset_list is None


def test_v50_next_persist_drops_the_reloaded_empty_order_info():
    """autoClean (ConsumerOrderInfoManager#autoClean, called by encode) drops an entry whose
    lastConsumeTimestamp is more than 24 h old: a reloaded one has 0, older than 24 h on any
    real clock, so the first persist after the restart frees the queue."""
    b = make_broker("v5.0", queues=1)
    fill(b, 2)
    opop(b)
    b.clock.advance(10_000)
    b.offset_flush_step()
    b.restart()
    b.clock.advance(10_000)
    b.offset_flush_step()  # the 10 s persist after the restart
    assert b.order_info.get("T", "G", 0) is None
    r = opop(b)
    assert offsets(r) == [0, 1] and all(m.extra_info for m in r.messages)
    assert all(ack(b, m) == rc.SUCCESS for m in r.messages)
    assert b.committed_offset("G", "T", 0) == 2


def test_v55_restart_keeps_order_info_and_block():
    b = make_broker("v5.5", queues=1)
    fill(b, 2)
    opop(b, inv=60_000)
    b.clock.advance(10_000)
    b.offset_flush_step()
    b.restart()
    assert opop(b).messages == ()  # still blocked by the reloaded batch
    b.clock.advance(50_000)
    assert offsets(opop(b)) == [0, 1]


def test_check_block_switch_off_serves_in_flight_queue():
    """The ORD mutant: without checkBlock a second orderly pop gets the in-flight batch again."""
    b = make_broker("v5.0", queues=1, order_check_block=False)
    fill(b, 2)
    opop(b)
    assert offsets(opop(b)) == [0, 1]
