"""PopBufferMergeService's periodic work beyond scan: scanGarbage, the counter reset, and the
serving flag a slow scan clears (spec/broker.md, "The merge buffer's garbage scan and serving")."""

from __future__ import annotations

import attrs
import pytest

from reference.broker.buffer_merge import (COUNTER_RESET_PERIOD_MS, GARBAGE_SCAN_PERIOD_MS, GARBAGE_UNUSED_MS,
                                           PopBufferMergeService)
from reference.broker.checkpoint import AckMsg, PopCheckPoint
from reference.broker.config import BrokerConfig
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.queue_lock import QueueLockManager
from reference.common import response_code as rc
from reference.common.pop import PopRequest

from tests.broker.conftest import make_broker

INV = 10_000


def service(now, topics, groups, put_ck=lambda ck, q: -1, profile="v5.0", merge=True):
    """A buffer whose CK puts the store refuses (by default), so its offset queue never drains."""
    cfg = attrs.evolve(BrokerConfig.for_profile(profile), enable_pop_buffer_merge=merge)
    return PopBufferMergeService(cfg, lambda: now[0], ConsumerOffsetManager(5000, 0), QueueLockManager(),
                                 put_ck, lambda m, site: True, lambda a: "{}",
                                 topic_exists=topics.__contains__, group_exists=groups.__contains__)


def ck(pop_time, start=0, num=1, topic="T", group="G", queue_id=0):
    point = PopCheckPoint(start_offset=start, pop_time=pop_time, invisible_time=INV, num=num, topic=topic, cid=group,
                          queue_id=queue_id)
    for i in range(num):
        point.add_diff(i)
    return point


def scan_until(svc, now, until, step=1000):
    while now[0] < until:
        now[0] = min(until, now[0] + step)
        svc.scan()


def test_garbage_scan_drops_a_queue_unused_for_five_minutes_even_with_uncommitted_pops():
    now = [0]
    svc = service(now, {"T"}, {"G"})
    svc.add_ck_just_offset(ck(0), 0, -1, 1)
    assert svc.get_latest_offset("T@G@0") == 1
    scan_until(svc, now, GARBAGE_UNUSED_MS - 1000, step=GARBAGE_SCAN_PERIOD_MS // 3)
    assert svc.get_latest_offset("T@G@0") == 1  # 5 minutes not yet passed: kept
    scan_until(svc, now, GARBAGE_UNUSED_MS + GARBAGE_SCAN_PERIOD_MS + 1000, step=GARBAGE_SCAN_PERIOD_MS // 3)
    assert "T@G@0" not in svc.commit_offsets and svc.get_latest_offset("T@G@0") == -1
    assert svc.buffer  # the wrapper itself stays in the buffer (scanGarbage only touches commitOffsets)


@pytest.mark.parametrize("gone", ["topic", "group"])
def test_garbage_scan_drops_queues_of_deleted_topics_and_groups(gone):
    now = [0]
    topics, groups = {"T", "U"}, {"G"}
    svc = service(now, topics, groups)
    svc.add_ck_just_offset(ck(0), 0, -1, 1)
    svc.add_ck_just_offset(ck(0, topic="U"), 0, -1, 1)
    (topics if gone == "topic" else groups).discard("T" if gone == "topic" else "G")
    scan_until(svc, now, GARBAGE_SCAN_PERIOD_MS - 1000)
    assert "T@G@0" in svc.commit_offsets  # no garbage scan before 30 s
    scan_until(svc, now, GARBAGE_SCAN_PERIOD_MS + 1000)
    assert "T@G@0" not in svc.commit_offsets
    assert ("U@G@0" in svc.commit_offsets) == (gone == "topic")


def test_counter_is_reset_to_the_buffer_size_every_minute():
    # 5.0.0 addCkJustOffset overwrites a buffered wrapper of the same merge key and counts it
    # again; Java's minute reset (counter.set(buffer.size())) repairs the count.
    now = [0]
    svc = service(now, {"T"}, {"G"})
    svc.add_ck_just_offset(ck(0), 0, -1, 1)
    svc.add_ck_just_offset(ck(0), 0, -1, 1)
    assert (svc.counter, len(svc.buffer)) == (2, 1)
    scan_until(svc, now, COUNTER_RESET_PERIOD_MS - 1000)
    assert svc.counter == 2
    scan_until(svc, now, COUNTER_RESET_PERIOD_MS + 1000)
    assert svc.counter == len(svc.buffer) == 1


def test_a_slow_scan_stops_serving_until_the_buffer_is_empty():
    b = make_broker("v5.0", enable_pop_buffer_merge=True)
    for i in range(2):
        b.put_message("T", 0, b"m%d" % i)
    msgs = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=30_000)).result.messages
    assert len(b.buffered_checkpoints()) == 1 and b.stored_checkpoints() == []
    b.buffer_merge_scan(elapsed_ms=2000)  # popCkStayBufferTimeOut - 1000: not too long
    assert b.buffer_merge.serving
    b.buffer_merge_scan(elapsed_ms=2001)
    assert not b.buffer_merge.serving
    # not serving: the ack is not merged but written as an ACK message
    m = msgs[0]
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert [a.ack_offset for a in b.stored_acks()] == [0]
    # not serving: a new POP's CK skips the buffer (addCk refuses) and is stored at once
    b.put_message("T", 0, b"m2")
    b.pop(PopRequest("T", "G", queue_id=0, invisible_time=30_000))
    assert len(b.stored_checkpoints()) == 1
    # the next scans store the buffered CK (removeCk = !serving), drain, and serving returns
    b.clock.advance(5)
    b.buffer_merge_scan()
    b.clock.advance(5)
    b.buffer_merge_scan()
    assert len(b.stored_checkpoints()) == 2 and b.buffered_checkpoints() == []
    assert b.buffer_merge.serving


def test_the_shutdown_drain_stores_a_partly_acked_ck_and_commits_its_queue():
    # buffer2 (PopBufferMergeService#run's tail): serving off, scan() until nothing is left
    now, offsets = [1000], []
    svc = service(now, {"T"}, {"G"}, put_ck=lambda point, q: offsets.append(point.start_offset) or 7)
    assert svc.add_ck(ck(1000, num=3), 0, -1, 3)
    svc.add_ak(0, AckMsg(1, 0, "G", "T", 0, 1000, None))
    svc.scan()
    assert svc.buffer and not offsets  # popped 0 s ago, partly acked: the scan keeps it
    assert svc.shutdown_drain()
    assert not svc.buffer and not svc.serving and offsets == [0]
    assert svc._offsets.query_offset("G", "T", 0) == 3  # committed past the pop


def test_a_shutdown_drain_whose_queue_lock_stays_taken_never_ends():
    now = [1000]
    svc = service(now, {"T"}, {"G"}, put_ck=lambda point, q: 7)
    assert svc.add_ck(ck(1000, num=1), 0, -1, 1)
    assert svc._locks.try_lock("T@G@0")  # a POP in flight holds the queue (Java's thread spins)
    assert not svc.shutdown_drain() and svc.commit_offsets["T@G@0"]
