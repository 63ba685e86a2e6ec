"""The POP consumer client: pop, consume, ack on success, changeInvisibleTime with RocketMQ's
back-off on failure (DefaultMQPushConsumerImpl's POP path and
ConsumeMessagePopConcurrentlyService at rocketmq-all-5.0.0).

Sans-IO over the broker model's request methods: ``pop_step`` sends one POP (to the queue the
broker assigned, or -1 for all) and keeps what arrives; ``consume_step`` hands the oldest
held message to the listener with the status the caller chooses and sends the ack or the
changeInvisibleTime that result asks for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import attrs

from reference.client.consume_api import ConsumeConcurrentlyStatus
from reference.common import response_code as rc
from reference.common.pop import PoppedMessage, PopRequest

# DefaultMQPushConsumerImpl#popDelayLevel, in seconds.
POP_DELAY_LEVEL: tuple[int, ...] = (10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200)
MAX_RECONSUME_TIMES = 16  # getMaxReconsumeTimes with maxReconsumeTimes = -1


class PopDelayLevelError(IndexError):
    """checkNeedAckOrDelay's loop can end at level -1, and popDelayLevel[-1] throws
    ArrayIndexOutOfBoundsException in Java (the consume thread dies with it; nothing is sent)."""


def change_invisible_delay_ms(reconsume_times: int, delay_level: int = 0) -> int:
    """ConsumeMessagePopConcurrentlyService#changePopInvisibleTime: level 0 means "by
    reconsumeTimes"; levels past the table use its last entry."""
    level = reconsume_times if delay_level == 0 else delay_level
    if level < 0:
        raise PopDelayLevelError(f"popDelayLevel[{level}]")
    return 1000 * (POP_DELAY_LEVEL[-1] if level >= len(POP_DELAY_LEVEL) else POP_DELAY_LEVEL[level])


def need_ack_or_delay(age_ms: int) -> int | None:
    """checkNeedAckOrDelay for a message consumed maxReconsumeTimes times: None means ack it
    (give up: older than twice the longest delay), else the delay level to wait. For a
    message younger than the first level the loop leaves -1 (see PopDelayLevelError)."""
    if age_ms > POP_DELAY_LEVEL[-1] * 1000 * 2:
        return None
    level = len(POP_DELAY_LEVEL) - 1
    while level >= 0:
        if age_ms >= POP_DELAY_LEVEL[level] * 1000:
            return level + 1
        level -= 1
    return level


@attrs.frozen
class PopConsumeRecord:
    """What one consume step did: the message, the status, and the request it sent."""

    uniq_key: str | None
    status: str
    request: str            # "ack", "change_invisible" or "none"
    code: int | None
    invisible_time: int | None = None


class PopConsumer:
    """One POP consumer of a group on one topic, against a Broker model."""

    def __init__(self, client_id: str, group: str, topic: str, broker, now: Callable[[], int],
                 invisible_time: int = 60_000, batch: int = 32, queue_id: int = -1) -> None:
        self.client_id = client_id
        self.group = group
        self.topic = topic
        self.broker = broker
        self._now = now
        self.invisible_time = invisible_time
        self.batch = batch
        self.queue_id = queue_id        # the broker's assignment: a queue, or -1 for all
        self.held: deque[PoppedMessage] = deque()   # PopProcessQueue's messages waiting for the listener

    def pop_step(self) -> int:
        """One POP request run to its response; returns the response code."""
        op = self.broker.pop(PopRequest(topic=self.topic, group=self.group, queue_id=self.queue_id,
                                        max_msg_nums=self.batch, invisible_time=self.invisible_time,
                                        client=self.client_id))
        if not op.done or op.result is None:
            return rc.SYSTEM_ERROR  # aborted (broker restart): no response
        self.held.extend(op.result.messages)
        return op.result.code

    def consume_step(self, status: ConsumeConcurrentlyStatus) -> PopConsumeRecord | None:
        """processConsumeResult for the oldest held message."""
        if not self.held:
            return None
        popped = self.held.popleft()
        msg = popped.message
        if status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS:
            code = self.broker.ack(self.group, popped.ack_topic, popped.queue_id, popped.ack_offset,
                                   popped.extra_info)
            return PopConsumeRecord(msg.uniq_key, status.value, "ack", code)
        if msg.reconsume_times >= MAX_RECONSUME_TIMES:
            level = need_ack_or_delay(self._now() - msg.born_timestamp)
            if level is None:  # given up: acked, never consumed (spec/push.md)
                code = self.broker.ack(self.group, popped.ack_topic, popped.queue_id, popped.ack_offset,
                                       popped.extra_info)
                return PopConsumeRecord(msg.uniq_key, status.value, "ack", code)
            try:
                delay = change_invisible_delay_ms(msg.reconsume_times, level)
            except PopDelayLevelError:
                return PopConsumeRecord(msg.uniq_key, status.value, "none", None)
        else:
            delay = change_invisible_delay_ms(msg.reconsume_times)
        result = self.broker.change_invisible_time(self.group, popped.ack_topic, popped.queue_id, popped.ack_offset,
                                                   popped.extra_info, delay)
        return PopConsumeRecord(msg.uniq_key, status.value, "change_invisible", result.code, delay)
