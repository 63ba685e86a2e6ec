"""The pull request and response as they cross the wire (remoting protocol headers).

Shared by the broker's PullMessageProcessor and the push consumer's pull path, so neither
imports the other. Field names follow PullMessageRequestHeader / PullMessageResponseHeader;
sys-flag bits follow PullSysFlag.
"""

from __future__ import annotations

import attrs

from reference.common.message import MessageExt

# PullSysFlag bits
FLAG_COMMIT_OFFSET = 0x1
FLAG_SUSPEND = 0x1 << 1
FLAG_SUBSCRIPTION = 0x1 << 2
FLAG_CLASS_FILTER = 0x1 << 3
FLAG_LITE_PULL_MESSAGE = 0x1 << 4


def build_sys_flag(commit_offset: bool, suspend: bool, subscription: bool, class_filter: bool) -> int:
    """PullSysFlag#buildSysFlag."""
    flag = 0
    if commit_offset:
        flag |= FLAG_COMMIT_OFFSET
    if suspend:
        flag |= FLAG_SUSPEND
    if subscription:
        flag |= FLAG_SUBSCRIPTION
    if class_filter:
        flag |= FLAG_CLASS_FILTER
    return flag


def clear_commit_offset_flag(sys_flag: int) -> int:
    """PullSysFlag#clearCommitOffsetFlag."""
    return sys_flag & ~FLAG_COMMIT_OFFSET


def has_commit_offset_flag(sys_flag: int) -> bool:
    """PullSysFlag#hasCommitOffsetFlag."""
    return sys_flag & FLAG_COMMIT_OFFSET == FLAG_COMMIT_OFFSET


def has_suspend_flag(sys_flag: int) -> bool:
    """PullSysFlag#hasSuspendFlag."""
    return sys_flag & FLAG_SUSPEND == FLAG_SUSPEND


def clear_suspend_flag(sys_flag: int) -> int:
    """PullSysFlag#clearSuspendFlag."""
    return sys_flag & ~FLAG_SUSPEND


def has_subscription_flag(sys_flag: int) -> bool:
    """PullSysFlag#hasSubscriptionFlag."""
    return sys_flag & FLAG_SUBSCRIPTION == FLAG_SUBSCRIPTION


@attrs.frozen
class PullMessageRequestHeader:
    """PullMessageRequestHeader (the fields the model uses).

    ``request_id`` is the model's stand-in for the remoting opaque: it lets the driver pair a
    response with its request when responses are delayed, lost or duplicated.
    """

    consumer_group: str
    topic: str
    queue_id: int
    queue_offset: int
    max_msg_nums: int
    sys_flag: int
    commit_offset: int
    suspend_timeout_millis: int
    subscription: str | None = "*"
    sub_version: int = 0
    client_id: str = ""
    request_id: int = 0
    # expressionType (ExpressionType: TAG, SQL92); read by the broker only with the subscription flag
    expression_type: str = "TAG"
    # sent as LITE_PULL_MESSAGE (DefaultLitePullConsumer) instead of PULL_MESSAGE: a request
    # code, not a header field; the broker serves both alike (litePullMessageEnable, default true)
    lite_pull: bool = False


@attrs.frozen
class PullMessageResponse:
    """RemotingCommand response of PULL_MESSAGE: code, PullMessageResponseHeader fields and the
    message bodies (decoded; the model carries MessageExt copies)."""

    code: int
    remark: str | None = None
    next_begin_offset: int = 0
    min_offset: int = 0
    max_offset: int = 0
    suggest_which_broker_id: int = 0
    messages: tuple[MessageExt, ...] = ()
