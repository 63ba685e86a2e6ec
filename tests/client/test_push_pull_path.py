"""The push consumer's pull path: flow control, PullResult handling, computePullFromWhere."""

from __future__ import annotations

import attrs
import pytest

from reference.broker.broker import Broker
from reference.broker.config import with_options
from reference.broker.consumer_manager import SubscriptionData
from reference.client.config import ClientConfig
from reference.client.consume_api import ConsumeConcurrentlyStatus
from reference.client.pull_api_wrapper import PullStatus, process_pull_result
from reference.client.pull_flow_control import MIB, FlowBranch, flow_control
from reference.client.push_consumer import DefaultMQPushConsumer
from reference.client.rebalance_impl import ConsumeFromWhere, compute_pull_from_where
from reference.common import response_code as rc
from reference.common.clock import VirtualClock
from reference.common.exceptions import MQBrokerException, MQClientException
from reference.common.javalang import JavaRandom
from reference.common.message_queue import MessageQueue
from reference.common.remoting import FLAG_SUBSCRIPTION, PullMessageRequestHeader, PullMessageResponse

CONFIG = ClientConfig.for_profile("v5.5")
GROUP, TOPIC = "g", "T"


def _flow(**kw) -> FlowBranch:
    args = dict(dropped=False, running=True, paused=False, msg_count=0, msg_size=0, max_span=0,
                consume_orderly=False, locked=True, previously_locked=True)
    args.update(kw)
    return flow_control(CONFIG, **args)


@pytest.mark.parametrize("kw, branch, delay", [
    ({"dropped": True}, FlowBranch.DROPPED, -1),
    ({"running": False}, FlowBranch.NOT_RUNNING, 3000),
    ({"paused": True}, FlowBranch.PAUSED, 1000),
    ({"msg_count": 1001}, FlowBranch.COUNT, 50),
    ({"msg_size": 101 * MIB}, FlowBranch.SIZE, 50),
    ({"max_span": 2001}, FlowBranch.SPAN, 50),
    ({"consume_orderly": True, "locked": False}, FlowBranch.NOT_LOCKED, 3000),
    ({"consume_orderly": True, "previously_locked": False}, FlowBranch.FIRST_LOCKED, -1),
    ({}, FlowBranch.PULL, -1),
    ({"msg_count": 1000, "msg_size": 100 * MIB + MIB - 1, "max_span": 2000}, FlowBranch.PULL, -1),  # limits inclusive
    ({"consume_orderly": True, "max_span": 5000}, FlowBranch.PULL, -1),  # span is not checked for orderly
])
def test_every_flow_control_branch_and_its_delay(kw: dict, branch: FlowBranch, delay: int) -> None:
    decision = _flow(**kw)
    assert (decision.branch, decision.delay) == (branch, delay)


def test_pull_status_of_each_response_code_and_the_found_messages_carry_offsets() -> None:
    assert process_pull_result(PullMessageResponse(rc.PULL_NOT_FOUND, next_begin_offset=3)).pull_status \
        is PullStatus.NO_NEW_MSG
    assert process_pull_result(PullMessageResponse(rc.PULL_RETRY_IMMEDIATELY)).pull_status is PullStatus.NO_MATCHED_MSG
    assert process_pull_result(PullMessageResponse(rc.PULL_OFFSET_MOVED)).pull_status is PullStatus.OFFSET_ILLEGAL
    with pytest.raises(MQBrokerException):
        process_pull_result(PullMessageResponse(rc.SUBSCRIPTION_NOT_EXIST))


@pytest.mark.parametrize("where, topic, last, expected", [
    (ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, "T", 7, 7),
    (ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, "T", -1, 100),        # max offset
    (ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, "%RETRY%g", -1, 0),   # retry topic from 0
    (ConsumeFromWhere.CONSUME_FROM_MIN_OFFSET, "T", -1, 100),         # deprecated: as LAST_OFFSET
    (ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, "T", -1, 0),
    (ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, "T", 5, 5),
    (ConsumeFromWhere.CONSUME_FROM_TIMESTAMP, "T", -1, 42),           # searchOffset
    (ConsumeFromWhere.CONSUME_FROM_TIMESTAMP, "%RETRY%g", -1, 100),   # retry topic: max offset
])
def test_compute_pull_from_where(where: ConsumeFromWhere, topic: str, last: int, expected: int) -> None:
    mq = MessageQueue(topic, "b", 0)
    assert compute_pull_from_where(where, mq, last, lambda: 100, lambda: 42) == expected


def test_compute_pull_from_where_fails_on_a_broker_error() -> None:
    with pytest.raises(MQClientException):
        compute_pull_from_where(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, MessageQueue("T", "b", 0), -2,
                                lambda: 100, lambda: 0)


def _consumer(broker: Broker, clock: VirtualClock, name: str = "c0", **kw) -> DefaultMQPushConsumer:
    consumer = DefaultMQPushConsumer(name, GROUP, TOPIC, broker, clock, CONFIG, **kw)
    consumer.start()
    consumer.do_rebalance()
    return consumer


def _world(queues: int = 1) -> tuple[Broker, VirtualClock]:
    clock = VirtualClock()
    broker = Broker("v5.5", clock, JavaRandom(1))
    broker.create_topic(TOPIC, queues)
    broker.create_group(GROUP)
    return broker, clock


def _pull_once(consumer: DefaultMQPushConsumer, broker: Broker, clock: VirtualClock):
    clock.advance(max(0, (consumer.next_pull_due() or clock.now()) - clock.now()))
    header = consumer.pull_step()
    assert header is not None
    return header, broker.pull_message(header)


def test_found_messages_are_consumed_and_the_offset_committed_through_the_next_pull() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    for _ in range(3):
        broker.put_message(TOPIC, 0, b"abc")
    header, response = _pull_once(consumer, broker, clock)
    assert response is not None and response.code == rc.SUCCESS and len(response.messages) == 3
    consumer.on_pull_response(header, response)
    mq = MessageQueue(TOPIC, broker.broker_name, 0)
    pq = consumer.process_queue_table[mq]
    assert (pq.msg_count, pq.msg_size) == (3, 9)
    records = [consumer.consume_step(ConsumeConcurrentlyStatus.CONSUME_SUCCESS) for _ in range(3)]
    assert [r.offsets for r in records] == [(0,), (1,), (2,)]
    assert consumer.offset_store.offset_table[mq] == 3
    header, response = _pull_once(consumer, broker, clock)
    while header.topic != TOPIC:  # %RETRY%g (created by the heartbeat) has its own first pull
        header, response = _pull_once(consumer, broker, clock)
    assert header.commit_offset == 3 and response is None  # held for long polling; offset committed
    assert broker.committed_offset(GROUP, TOPIC, 0) == 3


def test_a_held_pull_is_answered_when_a_message_arrives() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    header, response = _pull_once(consumer, broker, clock)
    assert response is None and broker.pull_hold.held_count() == 1
    broker.put_message(TOPIC, 0, b"x")
    [(woken, answer)] = broker.pull_hold_step()
    assert woken == header and answer.code == rc.SUCCESS and len(answer.messages) == 1


def test_a_held_pull_times_out_with_pull_not_found() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    _pull_once(consumer, broker, clock)
    clock.advance(CONFIG.broker_suspend_max_time_millis)
    [(_, answer)] = broker.pull_hold_step()
    assert answer.code == rc.PULL_NOT_FOUND


def test_offset_illegal_drops_the_queue_and_fixes_the_offset_ten_seconds_later() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    for _ in range(5):
        broker.roll_commit_log()  # one commit-log file per message
        broker.put_message(TOPIC, 0, b"x")
    broker.expire(TOPIC, 0, 3)
    mq = MessageQueue(TOPIC, broker.broker_name, 0)
    header, _ = _pull_once(consumer, broker, clock)
    response = PullMessageResponse(rc.PULL_OFFSET_MOVED, next_begin_offset=3, min_offset=3, max_offset=5)
    consumer.on_pull_response(header, response)
    pq = consumer.process_queue_table[mq]
    assert pq.dropped
    clock.advance(9_999)
    consumer.timer_step()
    assert mq in consumer.process_queue_table
    clock.advance(1)
    consumer.timer_step()
    assert mq not in consumer.process_queue_table and broker.committed_offset(GROUP, TOPIC, 0) == 3


def test_a_lost_response_times_out_and_the_pull_is_retried() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    broker.put_message(TOPIC, 0, b"x")
    for _ in range(2):  # T and %RETRY%g (created by the heartbeat): the responses never arrive
        _pull_once(consumer, broker, clock)
    assert consumer.next_pull_due() is None
    clock.advance(CONFIG.consumer_timeout_millis_when_suspend + 1)
    consumer.timer_step()
    assert consumer.next_pull_due() == clock.now() + CONFIG.pull_time_delay_mills_when_exception


def test_duplicate_and_stale_responses_are_ignored() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    broker.put_message(TOPIC, 0, b"x")
    header, response = _pull_once(consumer, broker, clock)
    consumer.on_pull_response(header, response)
    consumer.on_pull_response(header, response)  # the same opaque again: no matching request
    pq = next(iter(consumer.process_queue_table.values()))
    assert pq.msg_count == 1


def test_unknown_subscription_answers_an_error_and_the_pull_backs_off() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    broker.restart()  # registrations are lost until the next heartbeat
    for _ in range(2):  # T and %RETRY%g (created by the heartbeat)
        header, response = _pull_once(consumer, broker, clock)
        assert response is not None and response.code == rc.SUBSCRIPTION_NOT_EXIST
        consumer.on_pull_response(header, response)
    assert consumer.next_pull_due() == clock.now() + CONFIG.pull_time_delay_mills_when_exception


def test_bad_pull_requests_get_response_codes_and_leave_state_alone() -> None:
    broker, clock = _world()
    consumer = _consumer(broker, clock)
    header, _ = _pull_once(consumer, broker, clock)
    assert broker.pull_message(attrs.evolve(header, topic="nope")).code == rc.TOPIC_NOT_EXIST
    # 5.5.0 answers an illegal queue id INVALID_PARAMETER (5.0.0 SYSTEM_ERROR: the v5.0 case below)
    assert broker.pull_message(attrs.evolve(header, queue_id=9)).code == rc.INVALID_PARAMETER
    assert broker.pull_message(attrs.evolve(header, queue_id=-1)).code == rc.INVALID_PARAMETER
    assert broker.pull_message(attrs.evolve(header, sub_version=1)).code == rc.SUBSCRIPTION_NOT_LATEST
    assert broker.committed_offsets() == {}
    old = Broker("v5.0", clock, JavaRandom(1))
    old.create_topic(TOPIC, 1)
    assert old.pull_message(attrs.evolve(header, queue_id=1)).code == rc.SYSTEM_ERROR


def test_a_pull_with_its_own_subscription_is_parsed_and_filters_by_tags() -> None:
    broker, clock = _world()
    broker.put_message(TOPIC, 0, b"x")
    broker.put_message(TOPIC, 0, b"y")
    own = PullMessageRequestHeader("other", TOPIC, 0, 0, 32, FLAG_SUBSCRIPTION, 0, 0)  # no heartbeat needed
    assert broker.pull_message(own).code == rc.SUCCESS
    tagged = broker.pull_message(attrs.evolve(own, subscription="TagA || TagB"))
    # untagged messages (tags code 0) never match: scanned past, PULL_RETRY_IMMEDIATELY
    assert (tagged.code, tagged.remark, tagged.next_begin_offset) == (rc.PULL_RETRY_IMMEDIATELY, "NO_MATCHED_MESSAGE", 2)
    assert broker.pull_message(attrs.evolve(own, subscription="||")).code == rc.SUBSCRIPTION_PARSE_FAILED
    assert broker.pull_message(attrs.evolve(own, subscription="", expression_type="SQL92")).code == \
        rc.SUBSCRIPTION_PARSE_FAILED
    # enablePropertyFilter is off by default: an SQL92 subscription is refused
    assert broker.pull_message(attrs.evolve(own, subscription="a > 1", expression_type="SQL92")).code == rc.SYSTEM_ERROR
    # with enablePropertyFilter on (a broker option) getMessage filters on the stored properties:
    # the tagged message alone, the untagged one after it filtered out (FOUND, nextBeginOffset 4)
    sql = Broker(with_options(broker.config, ("enablePropertyFilter",)), clock, JavaRandom(1))
    sql.create_topic(TOPIC, 1)
    for tags in (None, "TagA", None, "TagB"):
        sql.put_message(TOPIC, 0, b"x", tags=tags)
    by_sql = sql.pull_message(attrs.evolve(own, subscription="TAGS = 'TagA'", expression_type="SQL92"))
    assert (by_sql.code, by_sql.next_begin_offset, [m.queue_offset for m in by_sql.messages]) == (rc.SUCCESS, 4, [1])
    none = sql.pull_message(attrs.evolve(own, subscription="TAGS = 'TagC'", expression_type="SQL92"))
    assert (none.code, none.remark, none.next_begin_offset) == (rc.PULL_RETRY_IMMEDIATELY, "NO_MATCHED_MESSAGE", 4)
    # "a > 1" compiles (consumer_filter's integer comparison): no message has "a", none matches
    assert sql.pull_message(attrs.evolve(own, subscription="a > 1", expression_type="SQL92")).code == \
        rc.PULL_RETRY_IMMEDIATELY
    with pytest.raises(ValueError, match="outside the model's subset"):
        sql.pull_message(attrs.evolve(own, subscription="a LIKE 'x%'", expression_type="SQL92"))
    # a lite pull passes as a pull; with litePullMessageEnable off (a broker option) it is refused first
    lite = attrs.evolve(own, lite_pull=True, topic="nope")
    assert broker.pull_message(lite).code == rc.TOPIC_NOT_EXIST
    off = Broker(with_options(broker.config, ("litePullMessageEnable=false",)), clock, JavaRandom(1))
    assert off.pull_message(lite).code == rc.NO_PERMISSION
    assert off.pull_message(attrs.evolve(lite, lite_pull=False)).code == rc.TOPIC_NOT_EXIST


def test_a_held_sql92_subscription_reads_the_filter_data_its_heartbeat_registered() -> None:
    """offsets helper: a heartbeat's SQL92 subscription registers filter data when it compiles
    (ConsumerFilterManager#register); a pull without its own subscription reads it:
    FILTER_DATA_NOT_EXIST, FILTER_DATA_NOT_LATEST, then SYSTEM_ERROR with enablePropertyFilter
    off or, on, getMessage's property filter (no message has "a": NO_MATCHED_MESSAGE)."""
    broker, clock = _world()
    broker.put_message(TOPIC, 0, b"x")
    sql = lambda expr, version: SubscriptionData(expr, "SQL92", version)  # noqa: E731
    pull = PullMessageRequestHeader("sql", TOPIC, 0, 0, 32, 0, 0, 0, sub_version=1)
    broker.register_consumer("sql", "c0@sql", (TOPIC,), subscription=sql("a >", 1))
    assert broker.pull_message(pull).code == rc.FILTER_DATA_NOT_EXIST  # "a >" does not compile
    broker.register_consumer("sql", "c0@sql", (TOPIC,), subscription=sql("a > 1", 1))
    # version 1 is not later than the subscription's: the group's subscription stays "a >"...
    assert broker.consumer_manager.subscription("sql", TOPIC).sub_string == "a >"
    # ... but the filter manager had none, so it keeps the new one
    assert broker.pull_message(pull).code == rc.SYSTEM_ERROR
    assert broker.pull_message(attrs.evolve(pull, sub_version=2)).code == rc.SUBSCRIPTION_NOT_LATEST
    broker.register_consumer("sql", "c0@sql", (TOPIC,), subscription=sql("a > 1", 2))
    assert broker.consumer_filters.get(TOPIC, "sql").client_version == 2  # same expression: version only
    # a broker whose filter data lags the subscription (the model's own table set behind)
    broker.consumer_filters.get(TOPIC, "sql").client_version = 1
    assert broker.pull_message(attrs.evolve(pull, sub_version=2)).code == rc.FILTER_DATA_NOT_LATEST
    broker.register_consumer("sql", "c0@sql", (TOPIC,), subscription=sql("a >", 3))
    assert broker.consumer_filters.get(TOPIC, "sql") is None  # a newer expression that does not compile
    on = Broker(with_options(broker.config, ("enablePropertyFilter",)), clock, JavaRandom(1))
    on.create_topic(TOPIC, 1)
    on.put_message(TOPIC, 0, b"x")
    on.register_consumer("sql", "c0@sql", (TOPIC,), subscription=sql("a > 1", 1))
    found = on.pull_message(pull)
    assert (found.code, found.remark, found.next_begin_offset) == (rc.PULL_RETRY_IMMEDIATELY, "NO_MATCHED_MESSAGE", 1)
    own = PullMessageRequestHeader("other", TOPIC, 0, 0, 32, FLAG_SUBSCRIPTION, 0, 0, subscription="a >",
                                   expression_type="SQL92")
    assert on.pull_message(own).code == rc.SUCCESS  # the request's own "a >": no filter data, every message
    with pytest.raises(ValueError, match="outside the model's subset"):
        on.pull_message(attrs.evolve(own, subscription="a > 1 AND b < 2"))
