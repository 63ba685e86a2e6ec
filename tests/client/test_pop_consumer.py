"""The POP consumer client against the broker model: ack on success, back-off on failure."""

from __future__ import annotations

import pytest

from reference.broker.broker import Broker
from reference.client.consume_api import ConsumeConcurrentlyStatus
from reference.client.pop_consumer import (PopConsumer, PopDelayLevelError, change_invisible_delay_ms,
                                           need_ack_or_delay)
from reference.common import response_code as rc
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom

OK, LATER = ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ConsumeConcurrentlyStatus.RECONSUME_LATER


def test_back_off_follows_pop_delay_level_by_reconsume_times() -> None:
    assert [change_invisible_delay_ms(t) for t in (0, 1, 2, 15, 16, 40)] == \
        [10_000, 30_000, 60_000, 7_200_000, 7_200_000, 7_200_000]
    assert change_invisible_delay_ms(0, delay_level=3) == 120_000


def test_check_need_ack_or_delay_and_its_minus_one_level() -> None:
    assert need_ack_or_delay(2 * 7_200_000 + 1) is None          # too old: acked, given up
    assert need_ack_or_delay(35_000) == 2                          # >= 30 s → next level
    assert need_ack_or_delay(9_999) == -1                          # younger than 10 s: the loop ends at -1
    with pytest.raises(PopDelayLevelError):
        change_invisible_delay_ms(16, -1)


def test_failure_hides_the_message_for_its_back_off_and_success_acks_it() -> None:
    clock = VirtualClock()
    broker = Broker("v5.5", clock, JavaRandom(2))
    broker.create_topic("T", 1)
    broker.create_group("g")
    broker.put_message("T", 0, b"m")
    consumer = PopConsumer("c0", "g", "T", broker, clock.now, invisible_time=60_000)
    assert consumer.pop_step() == rc.SUCCESS and len(consumer.held) == 1
    record = consumer.consume_step(LATER)
    assert (record.request, record.code, record.invisible_time) == ("change_invisible", rc.SUCCESS, 10_000)
    clock.advance(5_000)
    consumer.pop_step()
    assert not consumer.held                                       # still invisible
    clock.advance(6_000)
    for _ in range(5):                                             # revive brings it back
        broker.timer_step()
        for qid in range(broker.config.revive_queue_num):
            broker.revive_step(qid)
        clock.advance(1_000)
        consumer.pop_step()
        if consumer.held:
            break
    assert consumer.held
    record = consumer.consume_step(OK)
    assert record.request == "ack" and record.code == rc.SUCCESS
