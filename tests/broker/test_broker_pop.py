import pytest

from reference.broker.keys import build_lock_key
from reference.common import response_code as rc
from reference.common.javalang import JavaRandom
from reference.common.pop import INIT_MODE_MAX, PopRequest

from tests.broker.conftest import make_broker


def fill(b, n, queue=0, topic="T"):
    for i in range(n):
        b.roll_commit_log()  # one commit-log file per message (the lockstep harness's layout)
        assert b.put_message(topic, queue, b"m%d" % i).code == rc.SUCCESS


def test_pop_creates_checkpoint_and_handles(broker):
    fill(broker, 3)
    op = broker.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=2, invisible_time=20000))
    r = op.result
    assert r.code == rc.SUCCESS and [m.queue_offset for m in r.messages] == [0, 1]
    assert r.rest_num == 1 and r.start_offset_info == "0 0 0" and r.msg_offset_info == "0 0 0,1"
    assert r.messages[1].extra_info == f"0 {r.pop_time} 20000 {r.revive_qid} 0 broker-a 0 1"
    (ck,) = broker.stored_checkpoints()  # buffer merge off (v5.0 default): CK stored now
    assert (ck.ck.start_offset, ck.ck.num, ck.ck.queue_offset_diff, ck.in_timer) == (0, 2, [0, 1], True)
    # the next pop continues after the buffered offset even before any commit
    op2 = broker.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000))
    assert [m.queue_offset for m in op2.result.messages] == [2]
    broker.buffer_merge_scan()
    assert broker.committed_offset("G", "T", 0) == 3


def test_pop_takes_pop_time_first_and_interleaves_between_queues(broker):
    fill(broker, 1, queue=0)
    fill(broker, 1, queue=1)
    op = broker.begin_pop(PopRequest("T", "G", invisible_time=20000))
    op.step()
    t0 = op.pop_time
    broker.clock.advance(500)
    op.step()  # first queue visited, its lock held until the next step
    held = [q for q in (0, 1) if broker.queue_locks.is_locked(build_lock_key("T", "G", q))]
    assert len(held) == 1
    other = broker.pop(PopRequest("T", "G", queue_id=held[0], invisible_time=20000))
    assert other.result.code == rc.POLLING_TIMEOUT  # tryLock failed: queue skipped
    op.run_to_end()
    assert op.result.pop_time == t0 and len(op.result.messages) == 2
    assert not any(broker.queue_locks.is_locked(build_lock_key("T", "G", q)) for q in (0, 1))


def test_retry_first_follows_seeded_random():
    # v5.0: needRetry = nextInt(100) % 5 == 0; the first draw of seed s decides
    seeds = [s for s in range(40) if JavaRandom(s).next_int(100) % 5 == 0]
    assert seeds
    b = make_broker(seed=seeds[0], queues=1)
    fill(b, 1)
    b.create_topic("%RETRY%G_T", 1)
    b.put_message("%RETRY%G_T", 0, b"r")
    op = b.pop(PopRequest("T", "G", max_msg_nums=1, invisible_time=20000))
    assert op.result.messages[0].ack_topic == "%RETRY%G_T"
    other = [s for s in range(40) if JavaRandom(s).next_int(100) % 5 != 0][0]
    b2 = make_broker(seed=other, queues=1)
    fill(b2, 1)
    b2.create_topic("%RETRY%G_T", 1)
    b2.put_message("%RETRY%G_T", 0, b"r")
    op2 = b2.pop(PopRequest("T", "G", max_msg_nums=1, invisible_time=20000))
    assert op2.result.messages[0].ack_topic == "T"


def test_long_polling_parks_and_wakes_on_put(broker):
    op = broker.pop(PopRequest("T", "G", queue_id=-1, invisible_time=20000, poll_time=5000))
    assert op.parked and not op.done
    broker.put_message("T", 1, b"x")
    assert not op.parked
    op.run_to_end()
    assert op.result.code == rc.SUCCESS and op.result.messages[0].message.body == b"x"


def test_long_polling_times_out(broker):
    op = broker.pop(PopRequest("T", "G", invisible_time=20000, poll_time=1000))
    assert op.parked
    broker.clock.advance(2000)
    assert broker.long_polling_step() == 1
    op.run_to_end()
    assert op.result.code == rc.POLLING_TIMEOUT


@pytest.mark.parametrize("profile, empty_poll", [("v5.0", 0), ("v5.5", 1)])
def test_a_closed_channels_parked_pop_is_dropped_not_woken(profile, empty_poll):
    b = make_broker(profile)
    closed, live = (b.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000, poll_time=p)) for p in (3000, 5000))
    closed.close_channel()
    b.put_message("T", 0, b"x")  # keys -1 (nothing parked) and 0: the closed one dropped, the next woken
    assert not closed.parked and not closed.in_flight and live.in_flight
    assert b.pop_polling.total_polling_num == 0
    again = b.pop(PopRequest("T", "G", queue_id=1, invisible_time=20000, poll_time=3000))
    again.close_channel()
    b.put_message("T", 1, b"y")  # only a closed one: 5.5.0's do-while counts the empty poll too
    assert not again.parked and b.pop_polling.total_polling_num == -empty_poll
    late = b.pop(PopRequest("T", "G", queue_id=1, invisible_time=20000, poll_time=1000))
    late.close_channel()
    b.clock.advance(2000)
    assert b.long_polling_step() == 0 and not late.parked and not late.in_flight  # dropped at its timeout


def test_a_re_run_woken_more_than_500_ms_after_its_poll_time_is_timeout_too_much(broker):
    # PopMessageRequestHeader#isTimeoutTooMuch: POLLING_TIMEOUT with an empty header, even
    # with a message to deliver; 500 ms late is still served
    late = broker.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000, poll_time=1000))
    broker.clock.advance(1501)
    fill(broker, 1)
    assert not late.parked
    late.run_to_end()
    assert (late.result.code, late.result.messages, late.result.pop_time) == (rc.POLLING_TIMEOUT, (), 0)
    in_time = broker.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000, poll_time=5000))
    assert in_time.done  # the message is there: no park
    broker.clock.advance(1000)
    parked = broker.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000, poll_time=1000))
    broker.clock.advance(1500)
    fill(broker, 1)
    parked.run_to_end()
    assert parked.result.code == rc.SUCCESS and len(parked.result.messages) == 1


def test_offset_correction_after_retention(broker):
    fill(broker, 5)
    broker.offsets.commit_offset("c", "G", "T", 0, 1)
    broker.expire("T", 0, 3)
    op = broker.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000))
    assert [m.queue_offset for m in op.result.messages] == [3, 4]


def test_init_mode_max_starts_at_last_message(broker):
    fill(broker, 4)
    op = broker.pop(PopRequest("T", "G", queue_id=0, invisible_time=20000, init_mode=INIT_MODE_MAX))
    assert [m.queue_offset for m in op.result.messages] == [3]


def test_pop_bad_requests(broker):
    assert broker.pop(PopRequest("nope", "G")).result.code == rc.TOPIC_NOT_EXIST
    strict = make_broker(auto_create_subscription_group=False)
    assert strict.pop(PopRequest("T", "nope")).result.code == rc.SUBSCRIPTION_GROUP_NOT_EXIST
    assert broker.pop(PopRequest("T", "G", queue_id=2)).result.code == rc.SYSTEM_ERROR
    assert broker.pop(PopRequest("T", "G", max_msg_nums=33)).result.code == rc.SYSTEM_ERROR
    assert broker.stored_checkpoints() == [] and broker.committed_offsets() == {}
    # findSubscriptionGroupConfig auto-creates a missing group (autoCreateSubscriptionGroup, default on)
    assert broker.pop(PopRequest("T", "nope")).result.code != rc.SUBSCRIPTION_GROUP_NOT_EXIST
    assert "nope" in broker.groups


def test_determinism_same_seed_same_results():
    def run(seed):
        b = make_broker(seed=seed, queues=3)
        out = []
        for i in range(20):
            b.put_message("T", i % 3, b"%d" % i)
            if i % 4 == 0:
                op = b.pop(PopRequest("T", "G", max_msg_nums=3, invisible_time=5000))
                out.append((op.result.code, [(m.queue_id, m.queue_offset, m.extra_info) for m in op.result.messages]))
            b.clock.advance(700)
            b.timer_step()
            b.buffer_merge_scan()
            for q in range(8):
                out.append(tuple(b.revive_step(q)))
        return out
    assert run(3) == run(3)
    assert run(3) != run(4)
