"""consumerSendMsgBack: a consumer returns a message it failed to consume
(AbstractSendMessageProcessor#consumerSendMsgBack at rocketmq-all-5.0.0).

The message is looked up by its commit-log offset, copied into %RETRY%{group} with
reconsumeTimes + 1 and a delay level (3 + reconsumeTimes when the client asks 0), or into
%DLQ%{group} once reconsumeTimes reaches maxReconsumeTimes (or the level is negative).
The delay is served by ScheduleMessageService; the model parks the copy in the timer until
now + the level's delay (spec/push.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.common import response_code as rc
from reference.common.message import (PROPERTY_DELAY_TIME_LEVEL, PROPERTY_ORIGIN_MESSAGE_ID, PROPERTY_RETRY_TOPIC,
                                      MessageExt)

if TYPE_CHECKING:
    from reference.broker.broker import Broker

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
# MessageStoreConfig#messageDelayLevel "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
DELAY_LEVEL_MS: tuple[int, ...] = (1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000,
                                   360_000, 420_000, 480_000, 540_000, 600_000, 1_200_000, 1_800_000,
                                   3_600_000, 7_200_000)
RETRY_QUEUE_NUMS = 1      # SubscriptionGroupConfig#retryQueueNums
DLQ_NUMS_PER_GROUP = 1    # MixAll DLQ_NUMS_PER_GROUP
RETRY_MAX_TIMES = 16      # SubscriptionGroupConfig#retryMaxTimes


def get_retry_topic(group: str) -> str:
    """MixAll#getRetryTopic."""
    return RETRY_GROUP_TOPIC_PREFIX + group


def get_dlq_topic(group: str) -> str:
    """MixAll#getDLQTopic."""
    return DLQ_GROUP_TOPIC_PREFIX + group


def create_retry_topic_at_heartbeat(broker: "Broker", group: str) -> None:
    """ClientManageProcessor#heartBeat (5.0.0 and 5.5.0): for each consumer in the heartbeat,
    once SubscriptionGroupManager#findSubscriptionGroupConfig finds (or auto-creates) the group,
    TopicConfigManager#createTopicInSendMessageBackMethod creates %RETRY%{group} with the group's
    retryQueueNums; a group that is not found (auto-creation off) is skipped. So the retry topic
    exists from the consumer's first heartbeat on, not from its first send-back (push lockstep)."""
    if group not in broker.groups:
        if not broker.config.auto_create_subscription_group:
            return
        broker.groups.add(group)
    broker.topics.setdefault(get_retry_topic(group), RETRY_QUEUE_NUMS)


def delay_of_level(level: int) -> int:
    """ScheduleMessageService#computeDeliverTimestamp's delay: levels above the table use its
    last entry (ScheduleMessageService#correctDelayLevel)."""
    return DELAY_LEVEL_MS[min(max(level, 1), len(DELAY_LEVEL_MS)) - 1]


def consumer_send_msg_back(broker: "Broker", group: str, commit_log_offset: int, delay_level: int,
                           origin_topic: str | None, max_reconsume_times: int | None) -> int:
    """The response code; on SUCCESS the copy is in the retry topic's schedule (or the DLQ)."""
    if group not in broker.groups:
        if not broker.config.auto_create_subscription_group:
            return rc.SUBSCRIPTION_GROUP_NOT_EXIST
        broker.groups.add(group)
    stored = broker.store.look_message_by_commit_log_offset(commit_log_offset)
    if stored is None:
        return rc.SYSTEM_ERROR  # "look message by offset failed"
    if broker.config.send_back_checks_origin_topic and origin_topic is not None and stored.topic != origin_topic:
        return rc.SYSTEM_ERROR  # "look message by offset failed to check the topic name" (5.0.0)
    props = dict(stored.properties)
    props.setdefault(PROPERTY_RETRY_TOPIC, stored.topic)
    max_times = RETRY_MAX_TIMES if max_reconsume_times is None else max_reconsume_times
    if stored.reconsume_times >= max_times or delay_level < 0:
        topic = get_dlq_topic(group)
        broker.topics.setdefault(topic, DLQ_NUMS_PER_GROUP)
        delay_level = 0
    else:
        topic = get_retry_topic(group)
        broker.topics.setdefault(topic, RETRY_QUEUE_NUMS)  # createTopicInSendMessageBackMethod
        if delay_level == 0:
            delay_level = 3 + stored.reconsume_times
        props[PROPERTY_DELAY_TIME_LEVEL] = str(delay_level)
    props.setdefault(PROPERTY_ORIGIN_MESSAGE_ID, str(stored.commit_log_offset))
    copy = MessageExt(topic=topic, queue_id=0, body=stored.body, tags=stored.tags, properties=props,
                      reconsume_times=stored.reconsume_times + 1, born_timestamp=stored.born_timestamp)
    if delay_level > 0:
        copy.deliver_time_ms = broker.clock.now() + delay_of_level(delay_level)
        broker.timer.put(copy, delay_level=True)
    else:
        broker.store.put_message(copy)
    return rc.SUCCESS


def send_message_back_as_normal_message(broker: "Broker", group: str, msg: MessageExt,
                                        max_reconsume_times: int) -> int:
    """DefaultMQPushConsumerImpl#sendMessageBackAsNormalMessage, as the broker stores it: the
    client's fallback when consumerSendMsgBack fails -- a plain send to %RETRY%{group} with
    RETRY_TOPIC, reconsumeTimes + 1 and delay level 3 + reconsumeTimes; the broker's
    SendMessageProcessor#handleRetryAndDLQ moves it to the DLQ past maxReconsumeTimes."""
    props = dict(msg.properties)
    props[PROPERTY_RETRY_TOPIC] = msg.topic
    reconsume_times = msg.reconsume_times + 1
    if reconsume_times > max_reconsume_times:
        topic = get_dlq_topic(group)
        broker.topics.setdefault(topic, DLQ_NUMS_PER_GROUP)
        copy = MessageExt(topic=topic, queue_id=0, body=msg.body, tags=msg.tags, properties=props,
                          reconsume_times=reconsume_times, born_timestamp=broker.clock.now())
        broker.store.put_message(copy)
        return rc.SUCCESS
    topic = get_retry_topic(group)
    broker.topics.setdefault(topic, RETRY_QUEUE_NUMS)
    level = 3 + msg.reconsume_times
    props[PROPERTY_DELAY_TIME_LEVEL] = str(level)
    copy = MessageExt(topic=topic, queue_id=0, body=msg.body, tags=msg.tags, properties=props,
                      reconsume_times=reconsume_times, born_timestamp=broker.clock.now(),
                      deliver_time_ms=broker.clock.now() + delay_of_level(level))
    broker.timer.put(copy, delay_level=True)
    return rc.SUCCESS
