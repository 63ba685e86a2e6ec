"""The v5.5 profile follows rocketmq-broker 5.5.0 switch by switch (spec/profiles.md);
each test shows a switch's two behaviours, citing the Java lines of both releases."""

from __future__ import annotations

import pytest

from reference.common import response_code as rc
from reference.common.pop import PopRequest

from tests.broker.conftest import make_broker

INV = 60_000


def test_change_invisible_offset_equal_to_max_offset() -> None:
    """ChangeInvisibleTimeProcessor: 5.0.0 `offset > maxOffset` (line 92) lets offset ==
    maxOffset through; 5.5.0 `offset >= maxOffset` (processRequestAsync line 141) answers
    NO_MESSAGE."""
    for profile, code in (("v5.0", rc.SUCCESS), ("v5.5", rc.NO_MESSAGE)):
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
    b, second = _colliding_pops("v5.5", merge)
    assert second.messages == () and second.rest_num == 1
    assert b.committed_offset("G", "T", 12) == 3  # nothing queued for queue 12
    again = b.pop(PopRequest("T", "G", queue_id=12, invisible_time=INV))  # same ms: refused again
    assert again.result.messages == ()
    b.clock.advance(1)
    assert [m.queue_offset for m in b.pop(PopRequest("T", "G", queue_id=12, invisible_time=INV)).result.messages] == [3]

    b, second = _colliding_pops("v5.0", merge)
    assert [m.queue_offset for m in second.messages] == [3]


def test_initial_pop_offset_rules() -> None:
    """getPopOffset without a committed offset. 5.0.0 PopMessageProcessor#getPopOffset: MIN →
    minOffset, not committed; MAX → maxOffset - 1, committed when init. 5.5.0 #getInitOffset
    (line 915): MIN or a retry topic → minOffset; MAX → 0 while offset 0 is in memory
    (initPopOffsetByCheckMsgInMem, default true), else maxOffset - 1; committed either way."""
    from reference.common.pop import INIT_MODE_MAX

    for profile, max_start, min_commit in (("v5.0", [2], -1), ("v5.5", [0, 1, 2], 0)):
        b = make_broker(profile)
        for _ in range(3):
            b.put_message("T", 0, b"m")
        got = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV, init_mode=INIT_MODE_MAX)).result
        assert [m.queue_offset for m in got.messages] == max_start
        # MIN: the initial commit happens before getMessage; the first pop of an empty queue
        # shows it (later commits come from scanCommitOffset)
        b3 = make_broker(profile)
        b3.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV))
        assert b3.committed_offset("G", "T", 0) == min_commit
    # MAX once offset 0 is gone (retention): maxOffset - 1 on 5.5.0 as well
    b = make_broker("v5.5")
    for _ in range(3):
        b.roll_commit_log()  # one commit-log file per message
        b.put_message("T", 0, b"m")
    b.expire("T", 0, 1)
    got = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV, init_mode=INIT_MODE_MAX)).result
    assert [m.queue_offset for m in got.messages] == [2]


@pytest.mark.parametrize("merge", [False, True])
def test_batch_ack_is_one_batch_ack_msg(merge: bool) -> None:
    """5.5.0: MQClientAPIImpl#batchAckMessageAsync groups handles by retry@queueId@ckQueueOffset@
    popTime; AckMessageProcessor#appendAck (lines 229-273) keeps the offsets in [min, max],
    builds one BatchAckMsg (ackOffset -1) and merges it (PopBufferMergeService#addAk sets every
    bit) or puts one BATCH_ACK_TAG message (line 296) that PopReviveService#consumeReviveMessage
    (line 428) applies offset by offset."""
    from reference.broker.keys import ACK_TAG, BATCH_ACK_TAG
    from reference.common.pop import AckEntry

    b = make_broker("v5.5", enable_pop_buffer_merge=merge)
    for _ in range(4):
        b.put_message("T", 0, b"m")
    msgs = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result.messages
    b.put_message("T", 1, b"n")
    other = b.pop(PopRequest("T", "G", queue_id=1, invisible_time=INV)).result.messages
    entries = [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in (msgs[0], msgs[2], other[0])]
    assert b.batch_ack("G", entries) == [rc.SUCCESS] * 3
    revive_msgs = list(b.timer_pending())
    for q in range(b.config.revive_queue_num):
        revive_msgs += b.store.snapshot_queue(b.revive_topic, q)
    tags = sorted(m.tags for m in revive_msgs if m.tags in (ACK_TAG, BATCH_ACK_TAG))
    # two checkpoints, two batches: merged in the buffer, or one BATCH_ACK message each
    assert tags == ([] if merge else [BATCH_ACK_TAG, BATCH_ACK_TAG])
    assert sorted(a.ack_offset for a in b.acks_received) == [0, 0, 2]
    b.clock.advance(INV + 6000)
    revived = []
    for _ in range(3):
        b.clock.advance(3000)
        b.timer_step()
        b.buffer_merge_scan()
        for q in range(b.config.revive_queue_num):
            revived += [(r.ck_queue_id, r.msg_offset) for r in b.revive_step(q)]
    assert sorted(revived) == [(0, 1), (0, 3)]


def test_batch_ack_drops_offsets_outside_the_queue_and_answers_success() -> None:
    """appendAck's batch branch checks neither the topic nor the queueId as the single ack does;
    offsets outside [minOffset, maxOffset] are skipped (line 258) and the response stays SUCCESS."""
    from reference.common.pop import AckEntry

    b = make_broker("v5.5")
    for _ in range(2):
        b.roll_commit_log()  # one commit-log file per message
        b.put_message("T", 0, b"m")
    msgs = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result.messages
    b.expire("T", 0, 1)
    entries = [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in msgs]
    assert b.batch_ack("G", entries) == [rc.SUCCESS, rc.SUCCESS]
    assert [a.ack_offset for a in b.acks_received] == [1]  # offset 0 expired: not in the batch
    # single acks on 5.5.0 answer NO_MESSAGE for the expired offset
    assert b.ack("G", msgs[0].ack_topic, 0, 0, msgs[0].extra_info) == rc.NO_MESSAGE


def test_refused_put_burns_queue_offset() -> None:
    """5.0.0 CommitLog#asyncPutMessage:846-851 assigns the queue offset before
    MessageExtEncoder#encode refuses an oversized body (:1876-1879): the next message is
    stored with offset 1 at consume-queue index 0; getMessage and the POP handle name the
    index; a new queue starts with a blank first unit; a restart re-sets the counter from
    the consume queue (recoverTopicQueueTable). 5.5.0 increases the offset only after the
    append (CommitLog 5.5.0:1117)."""
    from reference.common.message import MAX_MESSAGE_SIZE

    for profile, stored in (("v5.0", 1), ("v5.5", 0)):
        b = make_broker(profile)
        assert b.put_message("T", 0, b"x" * (MAX_MESSAGE_SIZE + 1)).code == rc.MESSAGE_ILLEGAL
        assert b.put_message("T", 0, b"a").queue_offset == stored
        # the queue never had a file: its first unit sits at the stored offset (fillPreBlank)
        assert (b.min_offset("T", 0), b.max_offset("T", 0)) == (stored, stored + 1)
        assert b.put_message("T", 1, b"b").queue_offset == 0
        assert b.put_message("T", 1, b"x" * (MAX_MESSAGE_SIZE + 1)).code == rc.MESSAGE_ILLEGAL
        assert b.put_message("T", 1, b"c").queue_offset == 1 + stored
        assert b.max_offset("T", 1) == 2  # the unit went at the queue's end
        r = b.store.get_message("G", "T", 1, 1, 1)
        assert (r.messages[0].queue_offset, r.queue_offsets, r.next_begin_offset) == (1 + stored, [1], 2)
        m = [p for p in b.pop(PopRequest("T", "G", queue_id=1, invisible_time=INV)).result.messages
             if p.message.body == b"c"][0]
        assert (m.queue_offset, m.ack_offset) == (1 + stored, 1)  # processPopResponse's sortMap
        assert b.ack("G", "T", 1, m.ack_offset, m.extra_info) == rc.SUCCESS
        b.restart()
        assert b.put_message("T", 1, b"d").queue_offset == 2  # the counter is the CQ's max again
