"""The Java classes of the consumption path whose coverage we report, and which RocketMQ
release each model profile is measured on.

A target names one class (or one method of a class) by its JVM name. Where a release moved
or renamed the code, the target lists the alternatives in order and the first class present
in that release's jars is measured; a target none of whose classes exist in a release is
reported as absent there, never as 0 %."""

from __future__ import annotations

import attrs

# Model profile -> the RocketMQ release whose jars are measured: the lockstep harness's table
# (one place for it), 5.0.0 for v5.0 and 5.5.0, the newest release complete on Maven Central
# (issue 16), for v5.5.
from popverify.conformance.lockstep import RELEASES

__all__ = ["RELEASES", "TARGETS", "Target"]

_B = "org/apache/rocketmq/broker/"
_C = "org/apache/rocketmq/client/"


@attrs.frozen
class Target:
    """One row of the coverage table."""

    label: str  # what the row is called in tables (Class or Class#method)
    side: str  # "broker" | "client" | "format"
    classes: tuple[str, ...]  # JVM names, first present wins
    method: str | None = None  # measure only the methods of this name (all overloads)


TARGETS: tuple[Target, ...] = (
    # broker: the POP path and its background services
    Target("PopMessageProcessor", "broker", (_B + "processor/PopMessageProcessor",)),
    Target("PopMessageProcessor$QueueLockManager", "broker", (_B + "processor/PopMessageProcessor$QueueLockManager",)),
    Target("AckMessageProcessor", "broker", (_B + "processor/AckMessageProcessor",)),
    Target("ChangeInvisibleTimeProcessor", "broker", (_B + "processor/ChangeInvisibleTimeProcessor",)),
    Target("PopBufferMergeService", "broker", (_B + "processor/PopBufferMergeService",)),
    Target("PopReviveService", "broker", (_B + "processor/PopReviveService",)),
    # orderly POP's consumer order info: a class in 5.0.0; by 5.5.0 an interface in
    # broker/pop/orderly implemented by QueueLevelConsumerManager (the code measured there)
    Target("ConsumerOrderInfoManager", "broker", (_B + "pop/orderly/QueueLevelConsumerManager",
                                                  _B + "offset/ConsumerOrderInfoManager")),
    Target("QueueLevelConsumerOrderInfoLockManager", "broker",
           (_B + "pop/orderly/QueueLevelConsumerOrderInfoLockManager",)),
    # POP long polling: an inner class of PopMessageProcessor in 5.0.0, its own class by 5.5.0
    Target("PopLongPollingService", "broker", (_B + "longpolling/PopLongPollingService",
                                               _B + "processor/PopMessageProcessor$PopLongPollingService")),
    Target("ConsumerOffsetManager", "broker", (_B + "offset/ConsumerOffsetManager",)),
    Target("PullMessageProcessor", "broker", (_B + "processor/PullMessageProcessor",)),
    Target("QueryAssignmentProcessor", "broker", (_B + "processor/QueryAssignmentProcessor",)),
    Target("DefaultMessageStore#getMessage", "broker", ("org/apache/rocketmq/store/DefaultMessageStore",),
           method="getMessage"),
    # client: push consumer and POP consume services
    Target("ProcessQueue", "client", (_C + "impl/consumer/ProcessQueue",)),
    Target("PopProcessQueue", "client", (_C + "impl/consumer/PopProcessQueue",)),
    Target("RebalanceImpl", "client", (_C + "impl/consumer/RebalanceImpl",)),
    Target("RebalancePushImpl", "client", (_C + "impl/consumer/RebalancePushImpl",)),
    Target("DefaultMQPushConsumerImpl#pullMessage", "client", (_C + "impl/consumer/DefaultMQPushConsumerImpl",),
           method="pullMessage"),
    Target("PullAPIWrapper", "client", (_C + "impl/consumer/PullAPIWrapper",)),
    Target("PullMessageService", "client", (_C + "impl/consumer/PullMessageService",)),
    Target("RemoteBrokerOffsetStore", "client", (_C + "consumer/store/RemoteBrokerOffsetStore",)),
    Target("LocalFileOffsetStore", "client", (_C + "consumer/store/LocalFileOffsetStore",)),
    Target("ConsumeMessagePopConcurrentlyService", "client", (_C + "impl/consumer/ConsumeMessagePopConcurrentlyService",)),
    Target("ConsumeMessagePopOrderlyService", "client", (_C + "impl/consumer/ConsumeMessagePopOrderlyService",)),
    Target("AllocateMessageQueueAveragely", "client", (_C + "consumer/rebalance/AllocateMessageQueueAveragely",)),
    Target("AllocateMessageQueueAveragelyByCircle", "client",
           (_C + "consumer/rebalance/AllocateMessageQueueAveragelyByCircle",)),
    Target("AllocateMessageQueueConsistentHash", "client", (_C + "consumer/rebalance/AllocateMessageQueueConsistentHash",)),
    # formats the broker and client share (receipt handles, CK and ACK messages)
    Target("PopCheckPoint", "format", ("org/apache/rocketmq/store/pop/PopCheckPoint",)),
    Target("AckMsg", "format", ("org/apache/rocketmq/store/pop/AckMsg",)),
    Target("BatchAckMsg", "format", ("org/apache/rocketmq/store/pop/BatchAckMsg",)),
    Target("ExtraInfoUtil", "format", ("org/apache/rocketmq/remoting/protocol/header/ExtraInfoUtil",
                                       "org/apache/rocketmq/common/protocol/header/ExtraInfoUtil")),
)
