"""QueryAssignmentProcessor: broker-side rebalance (doLoadBalance) and allocate4Pop."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from reference.client.allocation import Strategy, check, sort_cids, sort_queues
from reference.common import response_code as rc
from reference.common.message_queue import MessageQueue

BROADCASTING = "BROADCASTING"
CLUSTERING = "CLUSTERING"
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"  # MixAll.RETRY_GROUP_TOPIC_PREFIX
LMQ_PREFIX = "%LMQ%"  # MixAll.LMQ_PREFIX (MixAll#isLmq)
LMQ_QUEUE_ID = 0  # MixAll.LMQ_QUEUE_ID
# The strategies QueryAssignmentProcessor's constructor registers (name2LoadStrategy), at v5.0
# and v5.5; any other name is "unsupported strategy" (doLoadBalance returns null).
BROKER_STRATEGIES = ("AVG", "AVG_BY_CIRCLE")


def allocate_for_more_clients(current_cid: str, mq_all: Sequence[MessageQueue],
                              cid_all: Sequence[str]) -> list[MessageQueue]:
    """QueryAssignmentProcessor#allocate: with more clients than queues, client i gets queue i mod Q.

    Its argument checks are the strategies' own (AbstractAllocateMessageQueueStrategy#check).
    """
    if not check(current_cid, mq_all, cid_all):
        return []
    return [mq_all[list(cid_all).index(current_cid) % len(mq_all)]]


def allocate4pop(strategy: Strategy, group: str, client_id: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str], pop_share_queue_num: int) -> list[MessageQueue]:
    """QueryAssignmentProcessor#allocate4Pop (identical at v5.0 and v5.5).

    - popShareQueueNum <= 0 or >= C - 1: every client gets every queue, as queueId -1.
    - C <= Q: the client's own allocation plus those of the next popShareQueueNum clients
      in cid order (wrapping); duplicates kept in the list, as Java keeps them.
    - C > Q: one queue each, client i gets queue i mod Q.
    """
    if pop_share_queue_num <= 0 or pop_share_queue_num >= len(cid_all) - 1:
        return [MessageQueue(mq.topic, mq.broker_name, -1) for mq in mq_all]
    if len(cid_all) <= len(mq_all):
        result = strategy(group, client_id, mq_all, cid_all)
        if client_id in cid_all:
            index = list(cid_all).index(client_id)
            for _ in range(pop_share_queue_num):
                index = (index + 1) % len(cid_all)
                result = result + strategy(group, cid_all[index], mq_all, cid_all)
        return result
    return allocate_for_more_clients(client_id, mq_all, cid_all)


def route_queues(topic: str, broker_name: str, queues: Sequence[MessageQueue],
                 lmq_queue: bool) -> list[MessageQueue] | None:
    """The queue set doLoadBalance works on (its ``mqSet``), of a one-broker cluster.

    ``queues`` are the topic's queues on the broker (readQueueNums of its config). A topic without
    any has no route: TopicRouteInfoManager#getTopicSubscribeInfo asks the name server, which
    knows only the topics its one broker registered, and the table stays empty: null (5.0.0:177,
    5.5.0:185). With ``lmq_queue`` (5.5.0:180-184) an LMQ topic (MixAll#isLmq) is never looked up:
    its one queue LMQ_QUEUE_ID on this broker (clustering only; a broadcasting query looks it up).
    """
    if lmq_queue and topic.startswith(LMQ_PREFIX):
        return [MessageQueue(topic, broker_name, LMQ_QUEUE_ID)]
    return list(queues) or None


def do_load_balance(message_model: str, strategy: Strategy | None, group: str, client_id: str,
                    mq_set: Sequence[MessageQueue] | None, cid_all: Sequence[str] | None,
                    pop_share_queue_num: int | None, server_load_balancer: bool = True) -> set[MessageQueue] | None:
    """QueryAssignmentProcessor#doLoadBalance.

    ``pop_share_queue_num`` None means the group is not in POP mode. Returns None where the
    Java code returns null (unknown topic, no clients, unknown strategy, strategy threw). Without
    ``server_load_balancer`` (BrokerConfig#serverLoadBalancerEnable off) a clustering query of a
    routed topic gets every queue (5.0.0:185-187, 5.5.0:194-196).
    """
    if message_model == BROADCASTING:
        return None if mq_set is None else set(mq_set)
    if message_model != CLUSTERING or mq_set is None:
        return None
    if not server_load_balancer:
        return set(mq_set)
    if cid_all is None or strategy is None:
        return None
    mq_all = sort_queues(mq_set)
    cids = sort_cids(cid_all)
    try:
        if pop_share_queue_num is not None:
            result = allocate4pop(strategy, group, client_id, mq_all, cids, pop_share_queue_num)
        else:
            result = strategy(group, client_id, mq_all, cids)
    except ValueError:
        return None  # "allocate message queue exception": logged, null returned
    return set(result)


# BrokerConfig#defaultPopShareQueueNum (both releases)
DEFAULT_POP_SHARE_QUEUE_NUM = -1


@attrs.define
class RequestModes:
    """MessageRequestModeManager: the request mode SET_MESSAGE_REQUEST_MODE stored per topic and
    group (persisted on each set: a restart keeps it), as popShareQueueNum (None: PULL)."""

    modes: dict[tuple[str, str], int | None] = attrs.field(factory=dict)

    def set(self, topic: str, group: str, pop_share_queue_num: int | None) -> None:
        """An accepted SET_MESSAGE_REQUEST_MODE (setMessageRequestMode:334)."""
        self.modes[(topic, group)] = pop_share_queue_num

    def share_of(self, topic: str, group: str, default_pop: bool) -> int | None:
        """The popShareQueueNum a QUERY_ASSIGNMENT of ``topic`` and ``group`` allocates with, None
        in PULL mode (queryAssignment 5.5.0:112-129): the stored mode, else PULL for a retry
        topic, else BrokerConfig#defaultMessageRequestMode (``default_pop``) with
        DEFAULT_POP_SHARE_QUEUE_NUM."""
        if (topic, group) in self.modes:
            return self.modes[(topic, group)]
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) or not default_pop:
            return None
        return DEFAULT_POP_SHARE_QUEUE_NUM


def set_message_request_mode_code(topic: str, topic_exists: bool, checks_topic: bool, group_found: bool = True) -> int:
    """QueryAssignmentProcessor#setMessageRequestMode's answer (SET_MESSAGE_REQUEST_MODE, an
    admin's setConsumeMode): a retry topic is refused with NO_PERMISSION (5.0.0:305, 5.5.0:314);
    with ``checks_topic`` (5.5.0:319-332) a topic without a config answers TOPIC_NOT_EXIST, then a
    group findSubscriptionGroupConfig does not find or create answers SUBSCRIPTION_GROUP_NOT_EXIST
    (``group_found`` False: with autoCreateSubscriptionGroup on, only a name TopicValidator
    refuses, switch validate_group_name). 5.0.0 stores the mode of any other topic and group."""
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return rc.NO_PERMISSION
    if checks_topic and not topic_exists:
        return rc.TOPIC_NOT_EXIST
    if checks_topic and not group_found:
        return rc.SUBSCRIPTION_GROUP_NOT_EXIST
    return rc.SUCCESS
