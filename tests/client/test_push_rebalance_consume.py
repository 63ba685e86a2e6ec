"""RebalancePushImpl, the consume services and consumerSendMsgBack."""

from __future__ import annotations

from reference.broker.broker import Broker
from reference.broker.send_back import delay_of_level, get_dlq_topic, get_retry_topic
from reference.client.config import ClientConfig
from reference.client.consume_api import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus
from reference.client.push_consumer import DefaultMQPushConsumer
from reference.common import response_code as rc
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.message_queue import MessageQueue

CONFIG = ClientConfig.for_profile("v5.0")
GROUP, TOPIC = "g", "T"


def _world(queues: int = 4) -> tuple[Broker, VirtualClock]:
    clock = VirtualClock()
    broker = Broker("v5.0", clock, JavaRandom(3))
    broker.create_topic(TOPIC, queues)
    broker.create_group(GROUP)
    return broker, clock


def _start(broker: Broker, clock: VirtualClock, name: str, **kw) -> DefaultMQPushConsumer:
    consumer = DefaultMQPushConsumer(name, GROUP, TOPIC, broker, clock, CONFIG, **kw)
    consumer.start()
    return consumer


def _mine(consumer: DefaultMQPushConsumer) -> list[int]:
    return sorted(mq.queue_id for mq in consumer.process_queue_table if mq.topic == TOPIC)


def test_rebalance_follows_java_client_order_and_drops_queues_no_longer_assigned() -> None:
    broker, clock = _world(4)
    c10, c2 = _start(broker, clock, "c10"), _start(broker, clock, "c2")
    c10.do_rebalance()
    c2.do_rebalance()
    assert (_mine(c10), _mine(c2)) == ([0, 1], [2, 3])  # "c10" sorts before "c2"
    c2.shutdown()
    result = c10.do_rebalance()
    assert _mine(c10) == [0, 1, 2, 3] and [mq.queue_id for mq in result.added] == [2, 3]
    c2b = _start(broker, clock, "c2")
    c2b.do_rebalance()
    result = c10.do_rebalance()
    assert _mine(c10) == [0, 1] and [mq.queue_id for mq in result.removed] == [2, 3]


def test_removing_a_queue_persists_its_offset_first() -> None:
    broker, clock = _world(2)
    a = _start(broker, clock, "a")
    a.do_rebalance()
    mq = MessageQueue(TOPIC, broker.broker_name, 1)
    a.offset_store.update_offset(mq, 5, True)
    b = _start(broker, clock, "b")
    b.do_rebalance()
    a.do_rebalance()
    assert mq not in a.process_queue_table and broker.committed_offset(GROUP, TOPIC, 1) == 5


def test_a_queue_nobody_pulled_for_two_minutes_is_dropped() -> None:
    broker, clock = _world(1)
    a = _start(broker, clock, "a")
    a.do_rebalance()
    pq = next(iter(a.process_queue_table.values()))
    clock.advance(120_001)
    result = a.do_rebalance()
    assert pq.dropped and result.removed and result.added  # dropped, then created afresh


def test_orderly_queues_are_locked_on_the_broker_for_sixty_seconds() -> None:
    broker, clock = _world(1)
    a = _start(broker, clock, "a", consume_orderly=True)
    a.do_rebalance()
    mq = MessageQueue(TOPIC, broker.broker_name, 0)
    assert broker.rebalance_locks.holder(GROUP, mq) == "a"
    a.crash()
    broker.unregister_consumer(GROUP, "a")
    b = _start(broker, clock, "b", consume_orderly=True)
    b.do_rebalance()
    assert mq not in b.process_queue_table  # still locked by the crashed client
    clock.advance(60_001)
    b.do_rebalance()
    assert mq in b.process_queue_table and broker.rebalance_locks.holder(GROUP, mq) == "b"


def _fill(broker: Broker, consumer: DefaultMQPushConsumer, clock: VirtualClock, n: int) -> None:
    for _ in range(n):
        broker.put_message(TOPIC, 0, b"m")
    clock.advance(1000)
    header = consumer.pull_step()
    consumer.on_pull_response(header, broker.pull_message(header))


def test_reconsume_later_sends_back_to_the_retry_topic_with_delay_level_three() -> None:
    broker, clock = _world(1)
    c = _start(broker, clock, "c")
    c.do_rebalance()
    _fill(broker, c, clock, 2)
    record = c.consume_step(ConsumeConcurrentlyStatus.RECONSUME_LATER)
    assert record.sent_back == (0,) and record.committed_offset == 1  # offset passes the sent-back message
    [parked] = broker.timer_pending()
    assert parked.topic == get_retry_topic(GROUP) and parked.reconsume_times == 1
    assert parked.deliver_time_ms == clock.now() + delay_of_level(3)


def test_a_failed_send_back_is_consumed_again_locally_and_the_offset_waits() -> None:
    broker, clock = _world(1)
    c = _start(broker, clock, "c")
    c.do_rebalance()
    _fill(broker, c, clock, 2)
    broker.consumer_send_msg_back = lambda *a: rc.SYSTEM_ERROR          # both send-back paths fail
    broker.send_message_back_as_normal_message = lambda *a: rc.SYSTEM_ERROR
    record = c.consume_step(ConsumeConcurrentlyStatus.RECONSUME_LATER)
    assert record.sent_back == () and record.committed_offset == 0  # removeMessage of nothing: first key
    clock.advance(5_000)
    c.timer_step()
    assert c.has_consume_pending()


def test_messages_of_a_dropped_queue_are_not_consumed_nor_committed() -> None:
    broker, clock = _world(1)
    c = _start(broker, clock, "c")
    c.do_rebalance()
    _fill(broker, c, clock, 1)
    next(iter(c.process_queue_table.values())).dropped = True
    record = c.consume_step(ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
    assert record.dropped and record.committed_offset is None


def test_send_back_past_max_reconsume_times_goes_to_the_dlq() -> None:
    broker, clock = _world(1)
    broker.put_message(TOPIC, 0, b"m")
    [stored] = broker.store.snapshot_queue(TOPIC, 0)
    stored.reconsume_times = 16
    assert broker.consumer_send_msg_back(GROUP, stored, 0, 16) == rc.SUCCESS
    [dead] = broker.store.snapshot_queue(get_dlq_topic(GROUP), 0)
    assert dead.uniq_key == stored.uniq_key and dead.reconsume_times == 17


def test_send_back_of_an_unknown_or_renamed_message_is_a_system_error() -> None:
    broker, clock = _world(1)
    broker.put_message(TOPIC, 0, b"m")
    [stored] = broker.store.snapshot_queue(TOPIC, 0)
    renamed = stored.copy()
    renamed.topic = "Other"
    assert broker.consumer_send_msg_back(GROUP, renamed, 0, 16) == rc.SYSTEM_ERROR
    renamed.commit_log_offset = 999
    assert broker.consumer_send_msg_back(GROUP, renamed, 0, 16) == rc.SYSTEM_ERROR
    assert broker.timer_pending() == []


def test_orderly_success_commits_and_suspend_puts_the_batch_back() -> None:
    broker, clock = _world(1)
    c = _start(broker, clock, "c", consume_orderly=True)
    c.do_rebalance()
    _fill(broker, c, clock, 2)
    mq = MessageQueue(TOPIC, broker.broker_name, 0)
    record = c.consume_step(ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT)
    assert record.offsets == (0,) and record.committed_offset is None
    pq = c.process_queue_table[mq]
    assert 0 in pq.msg_tree_map and not pq.consuming_msg_orderly_tree_map
    assert not c.has_consume_pending()
    clock.advance(CONFIG.suspend_current_queue_time_millis)
    c.timer_step()
    first = c.consume_step(ConsumeOrderlyStatus.SUCCESS)
    second = c.consume_step(ConsumeOrderlyStatus.SUCCESS)
    assert (first.offsets, first.committed_offset) == ((0,), 1)
    assert (second.offsets, second.committed_offset) == ((1,), 2)
    assert c.offset_store.offset_table[mq] == 2


def test_orderly_consumption_waits_while_the_lock_is_expired() -> None:
    broker, clock = _world(1)
    c = _start(broker, clock, "c", consume_orderly=True)
    c.do_rebalance()
    _fill(broker, c, clock, 1)
    clock.advance(30_001)  # the client-side lock lease (REBALANCE_LOCK_MAX_LIVE_TIME) ran out
    record = c.consume_step(ConsumeOrderlyStatus.SUCCESS)
    assert record.status == "NOT_LOCKED" and record.offsets == ()
    clock.advance(100)
    c.timer_step()  # tryLockLaterAndReconsume: locks again, consumes 10 ms later
    clock.advance(10)
    c.timer_step()
    assert c.consume_step(ConsumeOrderlyStatus.SUCCESS).offsets == (0,)
