import pytest

from reference.common import response_code as rc
from reference.common.pop import AckEntry, PopRequest

from tests.broker.conftest import make_broker

INV = 10_000


def popped(b, n=3, queue=0, merge=False):
    for i in range(n):
        b.put_message("T", queue, b"m%d" % i)
    return b.pop(PopRequest("T", "G", queue_id=queue, invisible_time=INV)).result.messages


def run_revive(b, ms=INV + 6000, rounds=2):
    """Advance past the invisible time and run timer + revive rounds; returns revived offsets."""
    out = []
    for _ in range(rounds):
        b.clock.advance(ms // rounds)
        b.timer_step()
        b.buffer_merge_scan()
        for q in range(b.config.revive_queue_num):
            out += [r.msg_offset for r in b.revive_step(q)]
    return sorted(out)


def state(b):
    return (b.stored_checkpoints(), sorted(map(repr, b.stored_acks())), b.committed_offsets(),
            [w.bits for w in b.buffered_checkpoints()])


@pytest.mark.parametrize("merge", [False, True])
def test_revive_resends_exactly_the_unacked(merge):
    b = make_broker(enable_pop_buffer_merge=merge)
    msgs = popped(b)
    m = msgs[1]
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert run_revive(b) == [0, 2]
    retry = b.retry_messages("G", "T")
    assert sorted(r.body for r in retry) == [b"m0", b"m2"]
    assert all(r.reconsume_times == 1 and r.properties["1ST_POP_TIME"] for r in retry)
    assert {r.uniq_key for r in retry} == {msgs[0].message.uniq_key, msgs[2].message.uniq_key}
    assert b.committed_offset("G", "T", 0) == 3
    assert run_revive(b) == []  # revive offset committed: nothing revived twice


@pytest.mark.parametrize("merge", [False, True])
def test_all_acked_nothing_revived(merge):
    b = make_broker(enable_pop_buffer_merge=merge)
    for m in popped(b):
        assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    b.buffer_merge_scan()
    if merge:
        # merged in memory: nothing ever reaches the revive topic
        assert b.stored_checkpoints() == [] and b.stored_acks() == []
    assert run_revive(b) == []
    assert b.committed_offset("G", "T", 0) == 3


def test_buffered_ck_is_stored_with_acked_bits_after_stay_time():
    b = make_broker(enable_pop_buffer_merge=True)
    msgs = popped(b)
    m = msgs[0]
    b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info)
    (w,) = b.buffered_checkpoints()
    assert w.bits == 1 and not w.ck_stored
    b.clock.advance(INV - 3000 + 1)  # closer to revive than popCkStayBufferTimeOut
    b.buffer_merge_scan()
    assert b.buffered_checkpoints() == []
    assert len(b.stored_checkpoints()) == 1 and [a.ack_offset for a in b.stored_acks()] == [0]
    assert run_revive(b) == [1, 2]


def test_bad_acks_leave_state_unchanged():
    b = make_broker()
    m = popped(b)[0]
    before = state(b)
    assert b.ack("G", "nope", 0, 0, m.extra_info) == rc.TOPIC_NOT_EXIST
    assert b.ack("G", "T", 5, 0, m.extra_info) == rc.MESSAGE_ILLEGAL
    assert b.ack("G", "T", -1, 0, m.extra_info) == rc.MESSAGE_ILLEGAL
    assert b.ack("G", "T", 0, 99, m.extra_info) == rc.NO_MESSAGE
    assert b.ack("G", "T", 0, -1, m.extra_info) == rc.NO_MESSAGE
    assert b.ack("G", "T", 0, 0, "garbage") == rc.SYSTEM_ERROR
    assert b.ack("G", "T", 0, 0, None) == rc.SYSTEM_ERROR
    assert b.ack("G", "T", 0, 0, "0 1 2 99999999999 0 b 0 0") == rc.SYSTEM_ERROR
    assert state(b) == before


def test_double_ack_and_ack_after_revive_succeed_harmlessly():
    b = make_broker()
    m = popped(b, n=1)[0]
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert run_revive(b) == []
    b2 = make_broker()
    m2 = popped(b2, n=1)[0]
    assert run_revive(b2) == [0]
    assert b2.ack("G", m2.ack_topic, m2.queue_id, m2.queue_offset, m2.extra_info) == rc.SUCCESS
    assert run_revive(b2) == []
    assert len(b2.retry_messages("G", "T")) == 1


def test_batch_ack_by_profile():
    b = make_broker("v5.0")
    msgs = popped(b)
    entries = [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in msgs]
    assert b.batch_ack("G", entries) == [rc.REQUEST_CODE_NOT_SUPPORTED] * 3
    # entry by entry (the model's batch ack before v5.5 followed 5.5.0's BatchAckMsg)
    d = make_broker("v5.5", batch_ack_as_batch_ack_msg=False)
    msgs = popped(d)
    entries = [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in msgs]
    entries.append(AckEntry("T", 0, 0, "bad"))
    assert d.batch_ack("G", entries) == [rc.SUCCESS] * 3 + [rc.SYSTEM_ERROR]
    assert run_revive(d) == []
    # 5.5.0: the client parses every handle before sending; a bad one fails the whole call
    d = make_broker("v5.5")
    msgs = popped(d)
    entries = [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in msgs]
    assert d.batch_ack("G", entries + [AckEntry("T", 0, 0, "bad")]) == [rc.SYSTEM_ERROR] * 4
    assert d.batch_ack("G", entries) == [rc.SUCCESS] * 3
    assert run_revive(d) == []


def test_change_invisible_time_postpones_redelivery():
    b = make_broker()
    m = popped(b, n=1)[0]
    r = b.change_invisible_time("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info, 30_000)
    assert r.code == rc.SUCCESS
    assert run_revive(b) == []  # old CK acked by the change; new one not due yet
    assert run_revive(b, ms=30_000) == [0]


def test_change_invisible_bad_inputs_and_acked_handle_oddity():
    b = make_broker()
    m = popped(b, n=1)[0]
    before = state(b)
    assert b.change_invisible_time("G", "nope", 0, 0, m.extra_info, 1000).code == rc.TOPIC_NOT_EXIST
    assert b.change_invisible_time("G", "T", 9, 0, m.extra_info, 1000).code == rc.MESSAGE_ILLEGAL
    assert b.change_invisible_time("G", "T", 0, 7, m.extra_info, 1000).code == rc.NO_MESSAGE
    assert b.change_invisible_time("G", "T", 0, 0, "x", 1000).code == rc.SYSTEM_ERROR
    assert state(b) == before
    # v5.0 does not check that the handle is live: an acked message comes back.
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert b.change_invisible_time("G", "T", 0, 0, m.extra_info, 0).code == rc.SUCCESS
    assert run_revive(b) == [0]


def test_revive_epoch_skip_after_topic_recreate():
    b = make_broker()
    popped(b, n=1)
    b.delete_topic("T")
    b.clock.advance(1)
    b.create_topic("T", 2)
    b.put_message("T", 0, b"new")  # same offset 0, stored after the CK's popTime
    assert run_revive(b) == []
    assert b.retry_messages("G", "T") == []


def test_restart_loses_unflushed_offsets_and_buffer():
    b = make_broker(enable_pop_buffer_merge=True)
    popped(b)
    b.buffer_merge_scan()
    assert b.buffered_checkpoints()
    b.restart()
    assert b.buffered_checkpoints() == [] and b.committed_offsets() == {}
    # the CK never reached the store: the messages are popped again from offset 0
    op = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV))
    assert [m.queue_offset for m in op.result.messages] == [0, 1, 2]
    b.buffer_merge_scan()
    b.clock.advance(b.config.flush_consumer_offset_interval)
    assert b.offset_flush_step()
    b.restart()
    assert b.committed_offset("G", "T", 0) == -1  # buffered CK not yet safe: no commit before
