"""PullAPIWrapper and MQClientAPIImpl#processPullResponse: building the pull request and
turning the broker's response into a PullResult (seed 004)."""

from __future__ import annotations

import enum

import attrs

from reference.client.process_queue import PulledMessage
from reference.common import response_code as rc
from reference.common.exceptions import MQBrokerException
from reference.common.message import PROPERTY_MAX_OFFSET, PROPERTY_MIN_OFFSET
from reference.common.message_queue import MessageQueue
from reference.common.remoting import PullMessageRequestHeader, PullMessageResponse, build_sys_flag


class PullStatus(enum.Enum):
    """PullStatus."""

    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


@attrs.frozen
class PullResult:
    """PullResult with its found messages decoded for the ProcessQueue."""

    pull_status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    msg_found_list: tuple[PulledMessage, ...] = ()


_STATUS = {rc.SUCCESS: PullStatus.FOUND, rc.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
           rc.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG, rc.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL}


def build_pull_request(group: str, client_id: str, mq: MessageQueue, offset: int, max_nums: int,
                       commit_offset: int, commit_offset_enable: bool, suspend_timeout_millis: int,
                       request_id: int) -> PullMessageRequestHeader:
    """PullAPIWrapper#pullKernelImpl's header: suspend always set; the subscription is not sent
    (postSubscriptionWhenPull is false), so the broker uses the heartbeat's."""
    sys_flag = build_sys_flag(commit_offset_enable, True, False, False)
    return PullMessageRequestHeader(consumer_group=group, topic=mq.topic, queue_id=mq.queue_id, queue_offset=offset,
                                    max_msg_nums=max_nums, sys_flag=sys_flag, commit_offset=commit_offset,
                                    suspend_timeout_millis=suspend_timeout_millis, subscription=None,
                                    client_id=client_id, request_id=request_id)


def process_pull_result(response: PullMessageResponse) -> PullResult:
    """processPullResponse + PullAPIWrapper#processPullResult: the PullStatus of the code
    (MQBrokerException for any other code), and for FOUND the messages with MIN_OFFSET and
    MAX_OFFSET set (subscription "*": no client-side tag filtering)."""
    status = _STATUS.get(response.code)
    if status is None:
        raise MQBrokerException(response.code, response.remark)
    found: list[PulledMessage] = []
    if status is PullStatus.FOUND:
        for msg in response.messages:
            ext = msg.copy()
            ext.properties[PROPERTY_MIN_OFFSET] = str(response.min_offset)
            ext.properties[PROPERTY_MAX_OFFSET] = str(response.max_offset)
            found.append(PulledMessage(ext.queue_offset, ext.body, ext.properties, ext))
    return PullResult(status, response.next_begin_offset, response.min_offset, response.max_offset, tuple(found))
