"""The develop profile follows rocketmq-broker 5.5.0 switch by switch (spec/profiles.md);
each test shows a switch's two behaviours, citing the Java lines of both releases."""

from __future__ import annotations

import pytest

from reference.broker import response_code as rc
from reference.broker.pop_processor import PopRequest

from tests.broker.conftest import make_broker

INV = 60_000


def test_change_invisible_offset_equal_to_max_offset() -> None:
    """ChangeInvisibleTimeProcessor: 5.0.0 `offset > maxOffset` (line 92) lets offset ==
    maxOffset through; 5.5.0 `offset >= maxOffset` (processRequestAsync line 141) answers
    NO_MESSAGE."""
    for profile, code in (("v5.0", rc.SUCCESS), ("develop", rc.NO_MESSAGE)):
        b = make_broker(profile)
        b.put_message("T", 0, b"m")
        m = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result.messages[0]
        assert b.max_offset("T", 0) == 1
        assert b.change_invisible_time("G", "T", 0, 1, m.extra_info, 5000).code == code
        # offset inside the queue: both accept
        assert b.change_invisible_time("G", "T", 0, 0, m.extra_info, 5000).code == rc.SUCCESS


def _colliding_pops(profile: str, merge: bool):
    """Queue 1 from offset 23 and queue 12 from offset 3 in the same millisecond: both merge
    keys are "T" "G" "123" popTime (PopCheckPointWrapper#getMergeKey has no separators)."""
    b = make_broker(profile, queues=13, enable_pop_buffer_merge=merge)
    for _ in range(24):
        b.put_message("T", 1, b"a")
    for _ in range(4):
        b.put_message("T", 12, b"b")
    b.offsets.commit_offset("test", "G", "T", 1, 23)
    b.offsets.commit_offset("test", "G", "T", 12, 3)
    first = b.pop(PopRequest("T", "G", queue_id=1, invisible_time=INV)).result
    second = b.pop(PopRequest("T", "G", queue_id=12, invisible_time=INV)).result
    assert first.pop_time == second.pop_time and [m.queue_offset for m in first.messages] == [23]
    return b, second


@pytest.mark.parametrize("merge", [False, True])
def test_merge_key_conflict_guard(merge: bool) -> None:
    """5.5.0 PopBufferMergeService#addCk (line 517) and #addCkJustOffset (line 450) refuse a CK
    whose merge key is buffered; PopMessageProcessor#appendCheckPoint returns false and
    popMsgFromQueue returns `atomicRestNum + getMessageCount()` without the messages. 5.0.0
    (addCk line 434, addCkJustOffset line 399: no check) buffers it over the other one."""
    b, second = _colliding_pops("develop", merge)
    assert second.messages == () and second.rest_num == 1
    assert b.committed_offset("G", "T", 12) == 3  # nothing queued for queue 12
    again = b.pop(PopRequest("T", "G", queue_id=12, invisible_time=INV))  # same ms: refused again
    assert again.result.messages == ()
    b.clock.advance(1)
    assert [m.queue_offset for m in b.pop(PopRequest("T", "G", queue_id=12, invisible_time=INV)).result.messages] == [3]

    b, second = _colliding_pops("v5.0", merge)
    assert [m.queue_offset for m in second.messages] == [3]
