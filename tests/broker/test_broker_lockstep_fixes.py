"""Model defects found by lockstep replay on RocketMQ's own broker classes
(popverify conformance --stateful, spec/conformance.md): each fixed rule, with its Java line."""

import json

import pytest

from reference.broker.keys import build_pop_retry_topic
from reference.common.pop import PopRequest

from tests.broker.conftest import make_broker
from tests.broker.test_broker_ack_revive import INV, popped, run_revive


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_revive_creating_the_retry_topic_commits_its_offset_zero(profile):
    """PopReviveService#addRetryTopicIfNoExit -> initPopRetryOffset: commitOffset(group,
    retryTopic, 0, 0) when the group has no offset there (5.0.0 and 5.5.0)."""
    b = make_broker(profile)
    retry = build_pop_retry_topic("T", "G")
    popped(b, n=1)
    assert b.offsets.query_offset("G", retry, 0) == -1
    assert run_revive(b) == [0]
    assert b.offsets.query_offset("G", retry, 0) == 0


def test_restart_starts_ck_message_number_again():
    """PopMessageProcessor's constructor: ckMessageNumber = new AtomicLong(); a restart builds a
    new processor, so the next POP's reviveQid is 0 % reviveQueueNum again."""
    b = make_broker()
    for _ in range(3):
        b.put_message("T", 0, b"m")
        assert b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=1, invisible_time=INV)).result.messages
    b.restart()
    b.put_message("T", 0, b"m")
    assert b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=1, invisible_time=INV)).result.revive_qid == 0


@pytest.mark.parametrize("profile, expected", [("v5.0", "ascending"), ("v5.5", "descending")])
def test_pop_of_all_queues_visits_them_in_the_release_order(profile, expected):
    """5.0.0 visits (randomQ + i) % n; 5.5.0's popMsgFromTopic visits
    ((priorityOrderAsc ? n - 1 - i : i) + randomQ) % n with priorityOrderAsc true by default."""
    b = make_broker(profile, queues=4)
    for q in range(4):
        b.put_message("T", q, b"m")
    result = b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=32, invisible_time=INV)).result
    order = [m.queue_id for m in result.messages]
    steps = {(b_ - a) % 4 for a, b_ in zip(order, order[1:])}
    assert sorted(order) == [0, 1, 2, 3]
    assert steps == ({1} if expected == "ascending" else {3})


def _revive_all(b):
    return sorted(r.msg_offset for q in range(b.config.revive_queue_num) for r in b.revive_step(q))


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_revive_moves_its_window_only_when_the_timer_has_caught_up_with_the_clock(profile):
    """PopReviveService#consumeReviveMessage moves endTime to now after 3 s without messages only
    if `timerDelay <= 0 && commitLogDelay <= 0`; timerDelay is TimerMessageStore#getReadBehind
    (5.5.0 #getDequeueBehind) = (now - currReadTimeMs) / 1000: how far the timer's dequeue is
    behind the clock, not whether a delivery is due. A timer that has not run for 5 s keeps the
    window where the last CK put it (lockstep: the model revived, 5.0.0 did not)."""
    b = make_broker(profile)
    assert popped(b, n=1)                     # CK delivered at popTime + INV - 1 s
    b.clock.advance(INV)
    b.timer_step()                            # the CK reaches the revive topic
    assert _revive_all(b) == []               # endTime = the CK's deliver time: too early
    b.clock.advance(5000)                     # 5 s, the timer does not run
    assert b.timer.read_behind(b.clock.now()) == 5
    assert _revive_all(b) == []               # nothing due, but the timer is behind: window kept
    b.timer_step()                            # nothing to deliver; its read time reaches now
    assert b.timer.read_behind(b.clock.now()) == 0
    assert _revive_all(b) == [0]


def test_restart_gives_the_new_pop_processor_a_random_seeded_as_the_first():
    """PopMessageProcessor's constructor: random = new Random(System.currentTimeMillis()); a
    restart builds a new processor. Any seed is Java's behaviour; the model takes the broker's
    seed again, as the lockstep harness seeds each new processor, so the queue start of a POP
    of all queues after a restart is the one the first POP drew (it used to continue)."""
    def first_queue(b):
        result = b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=1, invisible_time=INV)).result
        return result.messages[0].queue_id

    b = make_broker(queues=4)
    for q in range(4):
        for _ in range(4):
            b.put_message("T", q, b"m")
    starts = [first_queue(b) for _ in range(3)]
    b.restart()
    assert [first_queue(b) for _ in range(3)] == starts


@pytest.mark.parametrize("profile, answered", [("v5.0", "retry"), ("v5.5", "request")])
def test_a_popped_retry_message_carries_the_release_topic(profile, answered):
    """5.5.0 PopMessageProcessor#popMsgFromQueue re-encodes a message popped from the retry
    topic with the request's topic (popResponseReturnActualRetryTopic false by default); 5.0.0
    answers the stored retry message. The handle names the retry topic on both, and the
    stored retry message keeps its topic. Found by replaying F1's trace on 5.5.0."""
    b = make_broker(profile)
    retry = build_pop_retry_topic("T", "G")
    popped(b, n=1)
    assert run_revive(b) == [0]
    got = []
    for _ in range(10):  # a retry-first draw or an empty normal topic brings the retry message
        got = b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=1, invisible_time=INV)).result.messages
        if got:
            break
    assert got and got[0].ack_topic == retry
    assert got[0].message.topic == (retry if answered == "retry" else "T")
    assert [m.topic for m in b.retry_messages("G", "T")] == [retry]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_revive_keeps_its_window_for_2_s_after_any_timer_enqueue(profile):
    """The other half of that condition: commitLogDelay = TimerMessageStore#getEnqueueBehind,
    ``(now - lastEnqueueButExpiredStoreTime) / 1000`` while ``now - lastEnqueueButExpiredTime <
    2000``; TimerMessageStore#enqueue sets both for every timer message it reads, expired or not
    (5.0.0 and 5.5.0). So for 1..2 s after a CK/ACK goes into the timer the window stays
    (lockstep: 5.0.0 answered enqueueBehind 1 where the model had moved it)."""
    b = make_broker(profile)
    assert popped(b, n=1)                     # CK of queue 0 due at popTime + INV - 1 s
    b.clock.advance(INV)
    b.timer_step()
    b.clock.advance(4000)
    assert popped(b, n=1, queue=1)            # another CK enters the timer now
    b.clock.advance(1500)
    b.timer_step()
    assert (b.timer.read_behind(b.clock.now()), b.timer.enqueue_behind(b.clock.now())) == (0, 1)
    assert _revive_all(b) == []               # window kept: enqueue 1 s behind
    b.clock.advance(500)                      # 2 s after that enqueue: no longer counted
    b.timer_step()
    assert b.timer.enqueue_behind(b.clock.now()) == 0
    assert _revive_all(b) == [0]
    b.restart()                               # a new TimerMessageStore: nothing enqueued yet
    assert b.timer.enqueue_behind(b.clock.now()) == 0


def test_concurrent_hash_map_order_is_javas():
    """Recorded on a JVM (17): `new ConcurrentHashMap<>(1024 * 16)`, these keys put in this
    order, keySet() printed."""
    from reference.common.javalang import concurrent_hash_map_order

    keys = ["TopicTestGID_popverify001700000000000broker-a", "TopicTestGID_popverify101700000000000broker-a",
            "TopicTestGID_popverify0010", "abc", "TopicTestGID_popverify1101700000001234", "x%RETRY%y", "zz",
            "q1", "q2", "q3"]
    java = ["q1", "q2", "q3", "zz", "TopicTestGID_popverify0010", "TopicTestGID_popverify101700000000000broker-a",
            "x%RETRY%y", "TopicTestGID_popverify1101700000001234", "abc", "TopicTestGID_popverify001700000000000broker-a"]
    assert concurrent_hash_map_order(keys, 32768) == java


def test_orderly_counts_follow_javas_hash_map_of_long_offsets():
    """5.5.0's orderCountInfo lists a batch's offsets in `HashMap<Long, Integer>` order: by bin
    of Long#hashCode (lockstep on 5.5.0, corpus seed 9: 045, 047, 046 for a queue near 2^47),
    which is not the offsets' order; small offsets happen to come in order."""
    from reference.common.javalang import long_hash_map_order

    big = [228964289779045, 228964289779046, 228964289779047]
    assert long_hash_map_order(big) == [228964289779045, 228964289779047, 228964289779046]
    assert long_hash_map_order([2, 0, 16, 1]) == [0, 16, 1, 2]  # bins 0, 0, 1, 2; 0 and 16 as put
    b = make_broker("v5.5", queues=1)
    b.start_queue_at("T", 0, big[0])
    for _ in range(3):
        b.put_message("T", 0, b"m")
    request = PopRequest("T", "G", queue_id=0, max_msg_nums=3, invisible_time=1000, order=True)
    assert len(b.pop(request).result.messages) == 3
    b.clock.advance(1001)  # the batch comes back: each offset consumed once
    counts = b.pop(request).result.order_count_info
    assert counts == "0 qo0%228964289779045 1;0 qo0%228964289779047 1;0 qo0%228964289779046 1;0 0 1"


def test_buffer_scan_stores_checkpoints_in_concurrent_hash_map_order():
    """PopBufferMergeService#scan walks `buffer.entrySet()` of a ConcurrentHashMap: the CKs of
    one POP of four queues reach the revive topic in bin order of their merge keys, not in the
    order the POP added them (lockstep on 5.5.0: two CKs revived in the other order)."""
    from reference.common.javalang import concurrent_hash_map_order

    b = make_broker("v5.0", seed=2, queues=4, enable_pop_buffer_merge=True)
    for q in range(4):
        b.put_message("T", q, b"m")
    assert b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=32, invisible_time=60_000)).result.messages
    added = list(b.buffer_merge.buffer)
    # Java hashes the key with popTime on the broker's epoch (reference/common/clock.py): the
    # model's own clock digits give another order (lockstep --interleave on 5.0.0: two CKs of one
    # scan written the other way round before the model hashed the epoch's digits)
    expected = concurrent_hash_map_order(added, 32768, lambda k: b.buffer_merge.buffer[k].wall_clock_merge_key)
    assert expected != added and expected != concurrent_hash_map_order(added, 32768)
    b.buffer_merge.serving = False  # a not-serving buffer stores every CK on the next scan
    b.buffer_merge_scan()
    # PopCheckPointWrapper's key ends with the brokerName (5.0.0 and 5.5.0)
    assert added[0] == "TG001000000broker-a"
    # the CKs wait in the timer (same deliver time: put order); merge key "TG" + queueId + ...
    queues = [json.loads(m.body.decode())["q"] for m in b.timer.pending()]
    assert queues == [int(k[2]) for k in expected] == [1, 3, 2, 0]


@pytest.mark.parametrize("profile, bn", [("v5.0", None), ("v5.5", "broker-a")])
def test_an_ack_merged_in_the_buffer_is_stored_with_the_release_broker_name(profile, bn):
    """PopBufferMergeService#putAckToStore: 5.5.0 sets the AckMsg's brokerName from the CK,
    5.0.0 leaves it null (lockstep on 5.5.0: the revive topic's ACK body had "bn")."""
    b = make_broker(profile, enable_pop_buffer_merge=True, broker_name="broker-a")
    msgs = popped(b, n=2)
    m = msgs[0]
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == 0
    b.clock.advance(INV - 2000)  # within popCkStayBufferTimeOut of the revive time: stored
    b.buffer_merge_scan()        # the CK
    b.buffer_merge_scan()        # the merged ack, once the CK is stored
    acks = [json.loads(x.body.decode()) for x in b.timer.pending() if x.tags == "ack"]
    assert len(acks) == 1
    assert acks[0].get("bn", acks[0].get("brokerName")) == bn
