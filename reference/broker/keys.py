"""Names and keys built exactly as RocketMQ concatenates them (KeyBuilder, PopAckConstants)."""

from __future__ import annotations

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"  # MixAll.RETRY_GROUP_TOPIC_PREFIX
SPLIT = "@"  # PopAckConstants.SPLIT
KEY_SEPARATOR = " "  # MessageConst.KEY_SEPARATOR
REVIVE_GROUP = "CID_RMQ_SYS_REVIVE_GROUP"  # MixAll.CID_RMQ_SYS_PREFIX + "REVIVE_GROUP"
REVIVE_TOPIC_PREFIX = "rmq_sys_REVIVE_LOG_"
CK_TAG = "ck"
ACK_TAG = "ack"
BATCH_ACK_TAG = "bAck"  # v5.5 only
ACK_TIME_INTERVAL = 1000  # PopAckConstants.ackTimeInterval
SECOND = 1000  # PopAckConstants.SECOND
RETRY_QUEUE_NUM = 1  # PopAckConstants.retryQueueNum
POP_ORDER_REVIVE_QUEUE = 999  # KeyBuilder.POP_ORDER_REVIVE_QUEUE
TOPIC_GROUP_SEPARATOR = "@"  # ConsumerOffsetManager.TOPIC_GROUP_SEPARATOR


# TopicValidator (rocketmq-common 5.5.0): GROUP_MAX_LENGTH and VALID_CHAR_BIT_MAP.
GROUP_MAX_LENGTH = 120
_VALID_NAME_CHARS = frozenset("%-_|0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def valid_group_name(group: str) -> bool:
    """TopicValidator#validateGroup: not blank, only ``^[%|a-zA-Z0-9_-]+$``, at most 120 chars."""
    return bool(group.strip()) and all(ch in _VALID_NAME_CHARS for ch in group) and len(group) <= GROUP_MAX_LENGTH


def build_pop_retry_topic(topic: str, cid: str) -> str:
    """KeyBuilder#buildPopRetryTopic: ``%RETRY%{group}_{topic}``."""
    return RETRY_GROUP_TOPIC_PREFIX + cid + "_" + topic


def parse_normal_topic(topic: str, cid: str) -> str:
    """KeyBuilder#parseNormalTopic: strip ``%RETRY%{cid}_`` by length (not by match); a retry
    topic shorter than that prefix throws StringIndexOutOfBoundsException in Java (IndexError
    here; found by `popverify conformance`)."""
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        begin = len(RETRY_GROUP_TOPIC_PREFIX + cid + "_")
        if begin > len(topic):
            raise IndexError(f"begin {begin}, end {len(topic)}, length {len(topic)}")
        return topic[begin:]
    return topic


def is_retry_topic(topic: str) -> bool:
    """Whether the topic is a retry topic (starts with %RETRY%)."""
    return topic.startswith(RETRY_GROUP_TOPIC_PREFIX)


def build_cluster_revive_topic(cluster_name: str) -> str:
    """PopAckConstants#buildClusterReviveTopic: ``rmq_sys_REVIVE_LOG_{clusterName}``."""
    return REVIVE_TOPIC_PREFIX + cluster_name


def build_lock_key(topic: str, cid: str, queue_id: int) -> str:
    """Queue lock / offset-queue key in popMsgFromQueue: ``{topic}@{group}@{queueId}``."""
    return topic + SPLIT + cid + SPLIT + str(queue_id)


def build_polling_key(topic: str, cid: str, queue_id: int) -> str:
    """KeyBuilder#buildPollingKey (queueId may be -1)."""
    return topic + SPLIT + cid + SPLIT + str(queue_id)


def build_ck_merge_key(topic: str, cid: str, queue_id: int, start_offset: int, pop_time: int) -> str:
    """Merge key of a checkpoint (PopCheckPointWrapper#getMergeKey, PopReviveService map key).

    Plain concatenation with no separator, as Java does: topic + cid + queueId + startOffset
    + popTime. Distinct checkpoints can collide (e.g. queue 1 offset 23 vs queue 12 offset 3);
    see spec/broker.md.
    """
    return topic + cid + str(queue_id) + str(start_offset) + str(pop_time)


def build_offset_table_key(topic: str, group: str) -> str:
    """ConsumerOffsetManager key ``{topic}@{group}``."""
    return topic + TOPIC_GROUP_SEPARATOR + group
