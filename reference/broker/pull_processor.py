"""PullMessageProcessor and PullRequestHoldService: the broker side of the push consumer's
pull path (seed 004; broker/processor/PullMessageProcessor.java,
DefaultPullMessageResultHandler.java, broker/longpolling/PullRequestHoldService.java).

Sans-IO: ``process_request`` answers at once or, for an empty queue with the suspend flag,
holds the request and answers ``None``; the hold service later answers held requests when
a message arrives in their queue or their suspend time runs out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from reference.broker.consumer_filter import TAG, compile_sql92, is_tag_type
from reference.broker.store import GetMessageStatus
from reference.common import response_code as rc
from reference.common.javalang import string_hash
from reference.common.message import MessageExt
from reference.common.remoting import (PullMessageRequestHeader, PullMessageResponse, has_commit_offset_flag,
                                       has_subscription_flag, has_suspend_flag)

if TYPE_CHECKING:
    from reference.broker.broker import Broker

MASTER_ID = 0
SUB_ALL = "*"


@attrs.frozen
class Subscription:
    """SubscriptionData as FilterAPI#build makes it from a pull's own subscription: the
    expression, its type and the tag hash codes (codeSet)."""

    sub_string: str
    expression_type: str
    codes: frozenset[int] = frozenset()

    def is_tag_type(self) -> bool:
        """ExpressionType#isTagType: TAG, empty or absent."""
        return is_tag_type(self.expression_type)

    def matches(self, unit: MessageExt) -> bool:
        """ExpressionMessageFilter#isMatchedByConsumeQueue on the unit's tags code (0 for a
        message without tags, CommitLog#checkMessageAndReturnSize). A non-tag subscription
        passes here: its filter data has no bloom bits without enableCalcFilterBitMap."""
        if not self.is_tag_type() or self.sub_string == SUB_ALL:
            return True
        return (string_hash(unit.tags) if unit.tags else 0) in self.codes

    def commit_log_filter(self) -> Callable[[MessageExt], bool] | None:
        """ExpressionMessageFilter#isMatchedByCommitLog (ExpressionForRetryMessageFilter's is
        the same on a topic that is not a retry topic): None for a tag subscription (every
        message passes); else its compiled expression on the message's properties, or every
        message for one that does not compile (no filter data: "no expression"). The properties
        it reads are the stored message's (MessageDecoder#decodeProperties), TAGS included."""
        if self.is_tag_type():
            return None
        predicate = compile_sql92(self.sub_string)
        if predicate is None:
            return None
        return lambda msg: predicate({**msg.properties, "TAGS": msg.tags} if msg.tags else msg.properties)


def build_subscription(sub_string: str | None, expression_type: str | None) -> Subscription | None:
    """FilterAPI#build (5.0.0 common/filter, 5.5.0 remoting/protocol/filter, alike); None where
    it throws: a non-TAG expression that is empty, a tag expression whose split on "||" is
    empty (String#split drops trailing empty strings)."""
    if expression_type is None or expression_type == TAG:
        if not sub_string or sub_string == SUB_ALL:
            return Subscription(SUB_ALL, TAG)
        parts = sub_string.split("||")
        while parts and parts[-1] == "":
            parts.pop()
        if not parts:
            return None  # "subString split error"
        tags = [t.strip() for t in parts if t.strip()]
        return Subscription(sub_string, TAG, frozenset(string_hash(t) for t in tags))
    if not sub_string:
        return None  # "Expression can't be null!"
    return Subscription(sub_string, expression_type)


def response_code_of(status: GetMessageStatus, queue_offset: int) -> int:
    """PullMessageProcessor#processRequest: the response code of a getMessage status (5.0 and
    v5.5 agree). NO_MESSAGE_IN_QUEUE is PULL_OFFSET_MOVED unless the request asked for
    offset 0 -- a consumer asking offset 0 of an empty queue just waits."""
    if status is GetMessageStatus.FOUND:
        return rc.SUCCESS
    if status in (GetMessageStatus.MESSAGE_WAS_REMOVING, GetMessageStatus.NO_MATCHED_MESSAGE):
        return rc.PULL_RETRY_IMMEDIATELY
    if status in (GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, GetMessageStatus.NO_MESSAGE_IN_QUEUE):
        return rc.PULL_OFFSET_MOVED if queue_offset != 0 else rc.PULL_NOT_FOUND
    if status in (GetMessageStatus.OFFSET_FOUND_NULL, GetMessageStatus.OFFSET_OVERFLOW_ONE):
        return rc.PULL_NOT_FOUND
    return rc.PULL_OFFSET_MOVED  # OFFSET_OVERFLOW_BADLY, OFFSET_TOO_SMALL


class PullMessageProcessor:
    """processRequest for PULL_MESSAGE against the broker model."""

    def __init__(self, broker: "Broker") -> None:
        self.broker = broker

    def process_request(self, header: PullMessageRequestHeader, broker_allow_suspend: bool = True
                        ) -> PullMessageResponse | None:
        """The response, or None when the request is held for long polling."""
        b = self.broker
        cfg = b.config
        response, subscription = self._checks(header)
        # 5.5.0 processRequest:539-552: every pull that passes the checks takes the queue's pending
        # admin reset out (an empty table on 5.0.0, which has none); with useServerSideResetOffset
        # on it answers OFFSET_RESET at the reset offset (composeResponseHeader:672:
        # PULL_OFFSET_MOVED), without reading the store
        reset = None if response is not None else self._take_reset(header)
        if reset is not None and cfg.server_side_reset_offset:
            response = PullMessageResponse(
                rc.PULL_OFFSET_MOVED, GetMessageStatus.OFFSET_RESET.name, reset,
                b.store.get_min_offset_in_queue(header.topic, header.queue_id),
                b.store.get_max_offset_in_queue(header.topic, header.queue_id), MASTER_ID, ())
        elif response is None:
            # the request's own subscription filters by tags, an SQL92 one (held or the request's)
            # by properties; the broker's heartbeat "*" never filters
            message_filter = None if subscription is None else subscription.matches
            log_filter = None if subscription is None else subscription.commit_log_filter()
            result = b.store.get_message(header.consumer_group, header.topic, header.queue_id, header.queue_offset,
                                         header.max_msg_nums, message_filter, commit_log_filter=log_filter)
            code = response_code_of(result.status, header.queue_offset)
            if code == rc.PULL_OFFSET_MOVED and cfg.broker_role_slave and not cfg.offset_check_in_slave:
                code = rc.PULL_RETRY_IMMEDIATELY  # a slave without offset checks never moves offsets
            response = PullMessageResponse(
                code, result.status.name, result.next_begin_offset, result.min_offset, result.max_offset,
                MASTER_ID, tuple(m.copy() for m in result.messages) if code == rc.SUCCESS else ())
            if code == rc.PULL_NOT_FOUND and broker_allow_suspend and has_suspend_flag(header.sys_flag):
                b.pull_hold.suspend(header, header.suspend_timeout_millis)
                response = None
        # storeOffsetEnable: evaluated after the handler, so a held request commits too.
        if broker_allow_suspend and has_commit_offset_flag(header.sys_flag) and not cfg.broker_role_slave:
            b.offsets.commit_offset(header.client_id, header.consumer_group, header.topic, header.queue_id,
                                    header.commit_offset)
        return response

    def _take_reset(self, header: PullMessageRequestHeader) -> int | None:
        """ConsumerOffsetManager#queryThenEraseResetOffset of the pull's queue."""
        return self.broker.offsets.query_then_erase_reset_offset(header.topic, header.consumer_group, header.queue_id)

    def _checks(self, header: PullMessageRequestHeader) -> tuple[PullMessageResponse | None, Subscription | None]:
        """The early returns of processRequest, in Java's order, and the request's own
        subscription when it carries one (the subscription flag); (None, ...) when all pass.
        A LITE_PULL_MESSAGE passes as a PULL_MESSAGE unless litePullMessageEnable (default true)
        is off (5.0.0:310-315, 5.5.0:325-331: NO_PERMISSION, after the broker's read permission)."""
        b = self.broker
        if header.lite_pull and not b.config.lite_pull_message_enable:
            return PullMessageResponse(rc.NO_PERMISSION, "the broker for lite pull consumer is forbidden"), None
        if header.consumer_group not in b.groups:
            if not b.config.auto_create_subscription_group:
                return PullMessageResponse(rc.SUBSCRIPTION_GROUP_NOT_EXIST, "subscription group does not exist"), None
            b.groups.add(header.consumer_group)  # SubscriptionGroupManager auto-creation (default on)
        queues = b.topics.get(header.topic)
        if queues is None:
            return PullMessageResponse(rc.TOPIC_NOT_EXIST, f"topic[{header.topic}] not exist"), None
        if header.queue_id < 0 or header.queue_id >= queues:
            code = rc.INVALID_PARAMETER if b.config.pull_illegal_queue_invalid_parameter else rc.SYSTEM_ERROR
            return PullMessageResponse(code, f"queueId[{header.queue_id}] is illegal"), None
        subscription = None
        if has_subscription_flag(header.sys_flag):
            subscription = build_subscription(header.subscription, header.expression_type)
            if subscription is None:
                return PullMessageResponse(rc.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed"), None
        else:
            if not b.consumer_manager.has_group(header.consumer_group):
                return PullMessageResponse(rc.SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist"), None
            if not b.consumer_manager.subscribes(header.consumer_group, header.topic):
                return PullMessageResponse(rc.SUBSCRIPTION_NOT_EXIST, "the consumer's subscription not exist"), None
            held = b.consumer_manager.subscription(header.consumer_group, header.topic)
            if held.sub_version < header.sub_version:
                return PullMessageResponse(rc.SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest"), None
            if not is_tag_type(held.expression_type):
                # the filter data the heartbeat registered (5.0.0:431-446, 5.5.0:460-475)
                data = b.consumer_filters.get(header.topic, header.consumer_group)
                if data is None:
                    return PullMessageResponse(rc.FILTER_DATA_NOT_EXIST, "The broker's consumer filter data is not "
                                               "exist!Your expression may be wrong!"), None
                if data.client_version < header.sub_version:
                    return PullMessageResponse(rc.FILTER_DATA_NOT_LATEST,
                                               "the consumer's consumer filter data not latest"), None
                subscription = Subscription(held.sub_string, held.expression_type)
        if subscription is not None and not subscription.is_tag_type() and not b.config.enable_property_filter:
            # enablePropertyFilter is false by default in both releases (processRequest 5.0.0:449, 5.5.0:478)
            return PullMessageResponse(rc.SYSTEM_ERROR, "The broker does not support consumer to filter message by "
                                       + subscription.expression_type), None
        return None, subscription


@attrs.define
class HeldPull:
    """PullRequestHoldService's PullRequest: the request, when it was held and for how long."""

    header: PullMessageRequestHeader
    suspend_timestamp: int
    timeout_millis: int


class PullRequestHoldService:
    """Held pulls by topic@queueId; woken by a new message (notifyMessageArriving) or by
    checkHoldRequest once their time is up. Woken requests are re-processed with
    brokerAllowSuspend = false, so they are answered and never commit an offset again."""

    def __init__(self, now: Callable[[], int], process: Callable[[PullMessageRequestHeader, bool],
                                                                   PullMessageResponse | None],
                 max_offset: Callable[[str, int], int]) -> None:
        self._now = now
        self._process = process
        self._max_offset = max_offset
        self._held: dict[tuple[str, int], list[HeldPull]] = {}
        self._ready: list[tuple[PullMessageRequestHeader, PullMessageResponse]] = []

    def suspend(self, header: PullMessageRequestHeader, timeout_millis: int) -> None:
        """suspendPullRequest."""
        self._held.setdefault((header.topic, header.queue_id), []).append(
            HeldPull(header, self._now(), timeout_millis))

    def notify_message_arriving(self, topic: str, queue_id: int) -> None:
        """A message was stored in (topic, queueId): answer the held pulls it satisfies now."""
        self._check(topic, queue_id, self._max_offset(topic, queue_id))

    def _check(self, topic: str, queue_id: int, newest_offset: int) -> None:
        held = self._held.get((topic, queue_id))
        if not held:
            return
        keep = []
        for request in held:
            timed_out = self._now() >= request.suspend_timestamp + request.timeout_millis
            if newest_offset > request.header.queue_offset or timed_out:
                response = self._process(request.header, False)
                if response is not None:
                    self._ready.append((request.header, response))
            else:
                keep.append(request)
        if keep:
            self._held[(topic, queue_id)] = keep
        else:
            del self._held[(topic, queue_id)]

    def check_hold_request(self) -> list[tuple[PullMessageRequestHeader, PullMessageResponse]]:
        """checkHoldRequest (every 5 s with long polling; the driver runs it): time-outs are
        answered; returns every response produced since the last call."""
        for topic, queue_id in sorted(self._held):
            self._check(topic, queue_id, self._max_offset(topic, queue_id))
        ready, self._ready = self._ready, []
        return ready

    def held_requests(self) -> list[HeldPull]:
        """Every held pull, by topic@queueId then arrival (inspection: spec/properties.md PSH-2)."""
        return [request for key in sorted(self._held) for request in self._held[key]]

    def held_count(self) -> int:
        """How many pulls are held (inspection)."""
        return sum(len(v) for v in self._held.values())

    def clear(self) -> None:
        """A restart drops every held request (their channels are gone)."""
        self._held.clear()
        self._ready.clear()
