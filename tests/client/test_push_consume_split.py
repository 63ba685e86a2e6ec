"""Consumption in two steps: a listener at work (consume_begin .. consume_end) while other steps
run, and a listener that changes the bodies it was handed (issue 17 item 3)."""

from __future__ import annotations

import pytest

from reference.broker.broker import Broker
from reference.broker.send_back import get_retry_topic
from reference.client.config import ClientConfig
from reference.client.consume_api import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus, ListenerBatch
from reference.client.process_queue import ProcessQueue, PulledMessage
from reference.client.push_consumer import DefaultMQPushConsumer
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.message_queue import MessageQueue

GROUP, TOPIC = "g", "T"
SUCCESS = ConsumeConcurrentlyStatus.CONSUME_SUCCESS


def _world(profile: str = "v5.0") -> tuple[Broker, VirtualClock]:
    clock = VirtualClock()
    broker = Broker(profile, clock, JavaRandom(3))
    broker.create_topic(TOPIC, 1)
    broker.create_group(GROUP)
    return broker, clock


def _start(broker: Broker, clock: VirtualClock, name: str, profile: str = "v5.0", **kw) -> DefaultMQPushConsumer:
    consumer = DefaultMQPushConsumer(name, GROUP, TOPIC, broker, clock, ClientConfig.for_profile(profile), **kw)
    consumer.start()
    consumer.do_rebalance()
    return consumer


def _pull_all(broker: Broker, consumer: DefaultMQPushConsumer, clock: VirtualClock) -> None:
    """Every due pull request of ``consumer`` is sent and answered (held ones when woken)."""
    clock.advance(1000)
    for header, response in broker.pull_hold_step():
        consumer.on_pull_response(header, response)
    for _ in range(8):
        due = consumer.next_pull_due()
        if due is None or due > clock.now():
            return
        header = consumer.pull_step()
        if header is not None:
            response = broker.pull_message(header)
            if response is not None:
                consumer.on_pull_response(header, response)


def _mq(broker: Broker) -> MessageQueue:
    return MessageQueue(TOPIC, broker.broker_name, 0)


def test_atomic_consume_is_begin_then_end() -> None:
    broker, clock = _world()
    c = _start(broker, clock, "c")
    broker.put_message(TOPIC, 0, b"m")
    _pull_all(broker, c, clock)
    batch = c.consume_begin()
    assert isinstance(batch, ListenerBatch) and c.listeners_running() == 1
    pq = c.process_queue_table[_mq(broker)]
    assert 0 in pq.msg_tree_map  # held while the listener works: removeMessage runs at the end
    record = c.consume_end(0, SUCCESS)
    assert record.offsets == (0,) and record.committed_offset == 1 and not pq.msg_tree_map
    assert c.listeners_running() == 0


def test_concurrent_end_after_a_rebalance_dropped_the_queue_applies_nothing() -> None:
    """ConsumeMessageConcurrentlyService.ConsumeRequest#run re-checks processQueue.isDropped()
    after listener.consumeMessage and skips processConsumeResult (5.0.0 lines 454-458, 5.5.0
    lines 457-461): no removeMessage, no offset, no send-back; the new owner consumes again."""
    for profile in ("v5.0", "v5.5"):
        broker, clock = _world(profile)
        b = _start(broker, clock, "b", profile)
        broker.put_message(TOPIC, 0, b"m")
        _pull_all(broker, b, clock)
        assert isinstance(b.consume_begin(), ListenerBatch)
        a = _start(broker, clock, "a", profile)   # "a" sorts first: AllocateMessageQueueAveragely gives it the queue
        pq = b.process_queue_table[_mq(broker)]
        b.do_rebalance()
        assert pq.dropped and _mq(broker) not in b.process_queue_table
        record = b.consume_end(0, ConsumeConcurrentlyStatus.RECONSUME_LATER)
        assert record.dropped and record.committed_offset is None and record.sent_back == ()
        assert 0 in pq.msg_tree_map and broker.timer_pending() == []
        assert broker.committed_offset(GROUP, TOPIC, 0) <= 0   # nothing passes the message
        _pull_all(broker, a, clock)
        assert a.consume_step(SUCCESS).offsets == (0,)       # at least once: consumed by the new owner


def test_orderly_listener_keeps_the_queue_locked_through_a_rebalance_on_v50() -> None:
    """5.0.0 RebalancePushImpl#removeUnnecessaryMessageQueue (lines 88-114): tryLock of the
    consume lock, held by the listener (ConsumeMessageOrderlyService.ConsumeRequest#run lines
    497-513), fails: tryUnlockTimes + 1, the dropped queue stays in processQueueTable and the
    broker lock is kept; processConsumeResult then runs without an isDropped check, and
    ``commitOffset >= 0 && !isDropped()`` (line 344) keeps the offset where it was."""
    broker, clock = _world("v5.0")
    b = _start(broker, clock, "b", consume_orderly=True)
    broker.put_message(TOPIC, 0, b"m")
    _pull_all(broker, b, clock)
    assert isinstance(b.consume_begin(), ListenerBatch)
    a = _start(broker, clock, "a", consume_orderly=True)
    assert _mq(broker) not in a.process_queue_table            # b holds the broker lock
    pq = b.process_queue_table[_mq(broker)]
    b.do_rebalance()
    assert pq.dropped and pq.try_unlock_times == 1 and _mq(broker) in b.process_queue_table
    assert broker.rebalance_locks.holder(GROUP, _mq(broker)) == "b"
    record = b.consume_end(0, ConsumeOrderlyStatus.SUCCESS)
    assert record.offsets == (0,) and record.committed_offset is None and not pq.consuming_msg_orderly_tree_map
    b.do_rebalance()                                          # the consume lock is free now
    assert _mq(broker) not in b.process_queue_table and broker.rebalance_locks.holder(GROUP, _mq(broker)) is None
    a.do_rebalance()
    _pull_all(broker, a, clock)
    assert a.consume_step(ConsumeOrderlyStatus.SUCCESS).offsets == (0,)


def test_orderly_listener_loses_the_queue_once_its_lock_is_old_on_v55() -> None:
    """5.5.0 RebalancePushImpl#tryRemoveOrderMessageQueue (lines 110-134): the consume lock held
    by the listener blocks the removal only until the dropped queue's lock is older than
    unlockDelayTimeMills (20 s); then the queue is unlocked and removed while the listener works,
    and another consumer may lock and consume it at the same time."""
    broker, clock = _world("v5.5")
    b = _start(broker, clock, "b", "v5.5", consume_orderly=True)
    broker.put_message(TOPIC, 0, b"m")
    _pull_all(broker, b, clock)
    assert isinstance(b.consume_begin(), ListenerBatch)
    a = _start(broker, clock, "a", "v5.5", consume_orderly=True)
    pq = b.process_queue_table[_mq(broker)]
    b.do_rebalance()
    assert pq.dropped and pq.try_unlock_times == 1 and _mq(broker) in b.process_queue_table
    clock.advance(20_001)
    b.do_rebalance()
    assert _mq(broker) not in b.process_queue_table and broker.rebalance_locks.holder(GROUP, _mq(broker)) is None
    a.do_rebalance()
    assert broker.rebalance_locks.holder(GROUP, _mq(broker)) == "a"
    _pull_all(broker, a, clock)
    assert a.consume_step(ConsumeOrderlyStatus.SUCCESS).offsets == (0,)   # while b's listener still works
    assert b.consume_end(0, ConsumeOrderlyStatus.SUCCESS).committed_offset is None


@pytest.mark.parametrize("profile, size_after", [("v5.0", 1 - 5), ("v5.5", 0)])
def test_a_changed_body_is_what_remove_message_subtracts(profile: str, size_after: int) -> None:
    """ProcessQueue#removeMessage subtracts msg.getBody().length of the object the listener was
    handed and may have changed: msgSize drifts by old - new (v5.5 resets it when the queue empties)."""
    pq = ProcessQueue(lambda: 0, reset_size_when_empty=profile == "v5.5")
    msg = PulledMessage(0, b"m")
    pq.put_message([msg])
    msg.body = b"12345"
    pq.remove_message([msg])
    assert (pq.msg_count, pq.msg_size) == (0, size_after)


def test_send_back_stores_the_original_body_unless_it_falls_back_to_a_normal_send() -> None:
    """CONSUMER_SEND_MSG_BACK carries the commit-log offset only (MQClientAPIImpl#
    consumerSendMessageBack), so the broker's retry copy has the stored body; a message pulled
    from %RETRY% fails the origin-topic check and DefaultMQPushConsumerImpl#
    sendMessageBackAsNormalMessage sends ``msg.getBody()``: the listener's body."""
    broker, clock = _world()
    c = _start(broker, clock, "c")
    broker.put_message(TOPIC, 0, b"m")
    _pull_all(broker, c, clock)
    c.consume_begin()
    assert c.consume_end(0, ConsumeConcurrentlyStatus.RECONSUME_LATER, body_size=5).sent_back == (0,)
    [parked] = broker.timer_pending()
    assert parked.body == b"m"
    clock.advance(10_000)                                    # delay level 3
    broker.timer_step()
    retry = MessageQueue(get_retry_topic(GROUP), broker.broker_name, 0)
    assert retry in c.process_queue_table
    _pull_all(broker, c, clock)
    batch = c.consume_begin()
    assert isinstance(batch, ListenerBatch) and batch.mq == retry and batch.msgs[0].body == b"m"
    assert c.consume_end(0, ConsumeConcurrentlyStatus.RECONSUME_LATER, body_size=7).sent_back == (0,)
    [again] = broker.timer_pending()
    assert again.body == b"y" * 7 and again.reconsume_times == 2


@pytest.mark.parametrize("profile, copies", [("v5.0", 2), ("v5.5", 1)])
def test_a_listener_outliving_consume_timeout_is_sent_back_once_on_v55(profile: str, copies: int) -> None:
    """cleanExpiredMsg sends back and removes a message consumed for longer than consumeTimeout
    (15 min) while its listener still works; RECONSUME_LATER then sends it back again on 5.0.0,
    while 5.5.0's processConsumeResult skips a message its ProcessQueue no longer contains
    (ConsumeMessageConcurrentlyService 5.5.0 lines 282-288)."""
    broker, clock = _world(profile)
    c = _start(broker, clock, "c", profile)
    broker.put_message(TOPIC, 0, b"m")
    _pull_all(broker, c, clock)
    c.consume_begin()
    clock.advance(15 * 60_000 + 1)
    c.timer_step()
    assert not c.process_queue_table[_mq(broker)].msg_tree_map      # cleaned: sent back and removed
    record = c.consume_end(0, ConsumeConcurrentlyStatus.RECONSUME_LATER)
    assert len(record.sent_back) == copies - 1
    assert len([m for m in broker.timer_pending() if m.topic == get_retry_topic(GROUP)]) == copies
