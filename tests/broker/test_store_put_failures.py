"""Store put failures (reference/broker/put_failure.py): what each processor answers and what
state it leaves, per release (spec/broker.md, "Store put failures")."""

from __future__ import annotations

import pytest

from reference.broker.buffer_merge import PopBufferMergeService
from reference.broker.checkpoint import PopCheckPoint
from reference.broker.config import BrokerConfig
from reference.broker.keys import REVIVE_GROUP
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.put_failure import StorePutFaults
from reference.broker.revive import CK_REWRITE_INTERVALS_S
from reference.common import response_code as rc

from tests.broker.conftest import make_broker
from tests.broker.test_broker_ack_revive import popped, run_revive

INV = 10_000
PROFILES = ("v5.0", "v5.5")


def revive_offsets(b):
    return [b.committed_offset(REVIVE_GROUP, b.revive_topic, q) for q in range(b.config.revive_queue_num)]


def test_arming_is_bounded_and_sites_are_known():
    faults = StorePutFaults()
    with pytest.raises(ValueError):
        faults.arm(0)
    with pytest.raises(ValueError):
        faults.arm(9)
    with pytest.raises(ValueError):
        faults.take("nowhere")
    faults.arm(2)
    assert [faults.take("ack"), faults.take("buffer_ck"), faults.take("ack")] == [True, True, False]
    assert faults.failed == ["ack", "buffer_ck"] and faults.pending == 0


def test_retry_arming_waits_for_the_revive_retry_put():
    faults = StorePutFaults()
    with pytest.raises(ValueError):
        faults.arm_retry(9)
    faults.arm_retry(1)
    faults.arm(1)
    # other sites take the general arming only; the retry put takes its own first
    assert [faults.take("buffer_ck"), faults.take("ack"), faults.take("revive_retry"),
            faults.take("revive_retry")] == [True, False, True, False]
    assert faults.failed == ["buffer_ck", "revive_retry"] and faults.retry_pending == 0


@pytest.mark.parametrize("profile", PROFILES)
def test_pop_ck_put_failure_is_retried_by_the_scan_and_holds_the_offset(profile):
    # PopBufferMergeService#putCkToStore fails: the just-offset wrapper stays unstored, the
    # consumer offset waits for it, the next scan puts it (5.0.0 and 5.5.0 alike).
    b = make_broker(profile)
    b.put_faults.arm(1)
    msgs = popped(b)
    assert len(msgs) == 3 and b.put_faults.failed == ["buffer_ck"]
    assert b.stored_checkpoints() == []
    (w,) = b.buffered_checkpoints()
    assert w.just_offset and not w.ck_stored and w.revive_queue_offset < 0
    b.buffer_merge_scan()  # puts the CK; scanCommitOffset then passes it
    assert len(b.stored_checkpoints()) == 1 and w.ck_stored
    assert b.committed_offset("G", "T", 0) == 3
    b.buffer_merge_scan()  # the next scan drops the stored just-offset wrapper
    assert b.buffered_checkpoints() == []
    assert run_revive(b) == [0, 1, 2]


@pytest.mark.parametrize("profile", PROFILES)
def test_pop_ck_put_failure_without_a_scan_commits_nothing(profile):
    b = make_broker(profile)
    b.put_faults.arm(1)
    popped(b)
    b.clock.advance(1000)
    assert b.committed_offset("G", "T", 0) != 3  # nothing committed before the CK is stored
    clean = make_broker(profile)
    popped(clean)
    clean.buffer_merge_scan()
    assert clean.committed_offset("G", "T", 0) == 3


def test_buffer_ack_put_failure_keeps_the_bit_for_the_next_scan():
    cfg = BrokerConfig.for_profile("v5.0")
    now = [0]
    written: list[str] = []
    refuse = [True]

    def put_revive(msg, site):
        if refuse[0]:
            refuse[0] = False
            written.append("refused " + site)
            return False
        written.append(site)
        return True

    import attrs
    service = PopBufferMergeService(attrs.evolve(cfg, enable_pop_buffer_merge=True), lambda: now[0],
                                    ConsumerOffsetManager(5000, 0), __import__("reference.broker.queue_lock",
                                                                               fromlist=["QueueLockManager"]).QueueLockManager(),
                                    lambda ck, q: 7, put_revive, lambda a: "{}")
    ck = PopCheckPoint(start_offset=0, pop_time=0, invisible_time=INV, num=2, topic="T", cid="G", queue_id=0)
    ck.add_diff(0)
    ck.add_diff(1)
    assert service.add_ck(ck, 0, -1, 2)
    (w,) = service.live_wrappers()
    w.bits = 1  # offset 0 acked in the buffer
    now[0] = INV - 2000  # within popCkStayBufferTimeOut of the revive time: the scan stores
    service.scan()
    assert w.ck_stored and w.to_store_bits == 0 and written == ["refused buffer_ack"]
    service.scan()
    assert w.to_store_bits == 1 and written == ["refused buffer_ack", "buffer_ack"]


@pytest.mark.parametrize("profile", PROFILES)
def test_ack_put_failure_answers_success_and_the_message_is_revived(profile):
    b = make_broker(profile)
    m = popped(b)[1]
    b.put_faults.arm(1)
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert b.put_faults.failed == ["ack"] and b.stored_acks() == []
    assert run_revive(b) == [0, 1, 2]  # the acked message 1 comes back

    clean = make_broker(profile)
    m = popped(clean)[1]
    assert clean.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert run_revive(clean) == [0, 2]


@pytest.mark.parametrize("profile", PROFILES)
def test_change_invisible_ck_put_failure_is_system_error_and_keeps_the_old_handle(profile):
    b = make_broker(profile)
    m = popped(b)[0]
    before = (b.stored_checkpoints(), b.stored_acks())
    b.put_faults.arm(1)
    r = b.change_invisible_time("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info, 60_000)
    assert r.code == rc.SYSTEM_ERROR and r.extra_info is None
    assert b.put_faults.failed == ["change_invisible_ck"]
    assert (b.stored_checkpoints(), b.stored_acks()) == before  # no new CK, old not acked
    # the old handle is still good: acking it works and message 0 is not revived
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert run_revive(b) == [1, 2]


def test_v50_revive_retry_failure_ends_the_round_uncommitted():
    # 5.0.0 reviveRetry throws; PopReviveService#run catches it: no revive-offset commit, the
    # next round reads the CK again and revives every message.
    b = make_broker("v5.0")
    popped(b)
    b.clock.advance(INV + 6000)
    b.timer_step()
    before = revive_offsets(b)
    b.put_faults.arm(1)
    revived = [r.msg_offset for q in range(b.config.revive_queue_num) for r in b.revive_step(q)]
    assert b.put_faults.failed == ["revive_retry"] and revived == []
    assert revive_offsets(b) == before
    assert run_revive(b, ms=2000, rounds=1) == [0, 1, 2]
    assert len(b.retry_messages("G", "T")) == 3
    assert all(s.re_put_cks == [] for s in b.revive_services)


def test_v55_revive_retry_failure_reputs_a_one_message_ck():
    # 5.5.0 reviveRetry returns false and rePutCK writes a CK for that offset, rePutTimes 1 and
    # the invisible time extended by ckRewriteIntervalsInSeconds[0]; the round commits.
    b = make_broker("v5.5")
    popped(b)
    pop_time = b.stored_checkpoints()[0].ck.pop_time
    b.clock.advance(INV + 6000)
    b.timer_step()
    before = revive_offsets(b)
    b.put_faults.arm(1)
    revived = sorted(r.msg_offset for q in range(b.config.revive_queue_num) for r in b.revive_step(q))
    assert b.put_faults.failed == ["revive_retry"] and revived == [1, 2]
    assert revive_offsets(b) != before
    (ck,) = [ck for s in b.revive_services for ck in s.re_put_cks]
    assert (ck.start_offset, ck.num, ck.pop_time, ck.re_put_times) == (0, 1, pop_time, "1")
    assert ck.invisible_time == INV + CK_REWRITE_INTERVALS_S[0] * 1000
    assert any(s.ck.re_put_times == "1" for s in b.stored_checkpoints())
    assert run_revive(b, ms=2000, rounds=1) == []  # not before the extended revive time
    assert run_revive(b, ms=CK_REWRITE_INTERVALS_S[0] * 1000 + 2000, rounds=2) == [0]


@pytest.mark.parametrize("profile, lost", [("v5.0", False), ("v5.5", True)])
def test_two_failed_puts_at_the_revive_of_a_last_unacked_message(profile, lost):
    # The retry put of the CK's only un-acked message fails, then the next put fails too: on
    # 5.5.0 that is rePutCK's unchecked put and message 0 is never revived (lost for good);
    # 5.0.0 fails the round twice and revives it at the third.
    b = make_broker(profile)
    msgs = popped(b)
    for m in msgs[1:]:
        assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
    b.clock.advance(INV + 6000)
    b.timer_step()
    b.put_faults.arm(2)
    for _ in range(2):
        for q in range(b.config.revive_queue_num):
            b.revive_step(q)
    run_revive(b, ms=CK_REWRITE_INTERVALS_S[0] * 1000 + 6000, rounds=3)
    retried = sorted(r.body for r in b.retry_messages("G", "T"))
    if lost:
        assert b.put_faults.failed == ["revive_retry", "reput_ck"]
        assert retried == []
    else:
        assert b.put_faults.failed == ["revive_retry", "revive_retry"]
        assert retried == [b"m0"]


def test_v55_reputs_after_every_message_of_the_ck_was_tried():
    # rePutCK runs in reviveMsgFromCk's whenComplete, after the CK's other retries: with two
    # failures the retries of messages 0 and 1 fail, message 2 is re-sent, and both re-put CKs
    # are written -- nothing is lost.
    b = make_broker("v5.5")
    popped(b)
    b.clock.advance(INV + 6000)
    b.timer_step()
    b.put_faults.arm(2)
    revived = sorted(r.msg_offset for q in range(b.config.revive_queue_num) for r in b.revive_step(q))
    assert revived == [2] and b.put_faults.failed == ["revive_retry", "revive_retry"]
    assert sorted(ck.start_offset for s in b.revive_services for ck in s.re_put_cks) == [0, 1]
    assert run_revive(b, ms=CK_REWRITE_INTERVALS_S[0] * 1000 + 6000, rounds=3) == [0, 1]
