"""The checks DefaultMQPushConsumerImpl#pullMessage makes before it sends a pull (seed 004),
as one pure function: which branch is taken and how long the request waits.
"""

from __future__ import annotations

import enum

import attrs

from reference.client.config import ClientConfig

MIB = 1024 * 1024


class FlowBranch(enum.Enum):
    """Where pullMessage stops (or PULL when it sends the request)."""

    DROPPED = "dropped"                  # the ProcessQueue was dropped: the request dies
    NOT_RUNNING = "not_running"          # makeSureStateOK failed: pullTimeDelayMillsWhenException
    PAUSED = "paused"                    # isPause: PULL_TIME_DELAY_MILLS_WHEN_SUSPEND
    COUNT = "count"                      # msgCount > pullThresholdForQueue: flow control
    SIZE = "size"                        # msgSize (MiB) > pullThresholdSizeForQueue: flow control
    SPAN = "span"                        # concurrent: maxSpan > consumeConcurrentlyMaxSpan
    NOT_LOCKED = "not_locked"            # orderly: the queue is not locked
    FIRST_LOCKED = "first_locked"        # orderly: first pull after locking re-reads the offset
    PULL = "pull"


@attrs.frozen
class FlowDecision:
    """The branch and the delay before the request is tried again (-1: not re-queued)."""

    branch: FlowBranch
    delay: int = -1


def flow_control(config: ClientConfig, *, dropped: bool, running: bool, paused: bool, msg_count: int,
                 msg_size: int, max_span: int, consume_orderly: bool, locked: bool,
                 previously_locked: bool) -> FlowDecision:
    """The branch pullMessage takes, in Java's order of checks."""
    if dropped:
        return FlowDecision(FlowBranch.DROPPED)
    if not running:
        return FlowDecision(FlowBranch.NOT_RUNNING, config.pull_time_delay_mills_when_exception)
    if paused:
        return FlowDecision(FlowBranch.PAUSED, config.pull_time_delay_mills_when_suspend)
    if msg_count > config.pull_threshold_for_queue:
        return FlowDecision(FlowBranch.COUNT, config.pull_time_delay_mills_when_flow_control)
    if msg_size // MIB > config.pull_threshold_size_for_queue:  # cachedMessageSizeInMiB: integer division
        return FlowDecision(FlowBranch.SIZE, config.pull_time_delay_mills_when_flow_control)
    if not consume_orderly:
        if max_span > config.consume_concurrently_max_span:
            return FlowDecision(FlowBranch.SPAN, config.pull_time_delay_mills_when_flow_control)
        return FlowDecision(FlowBranch.PULL)
    if not locked:
        return FlowDecision(FlowBranch.NOT_LOCKED, config.pull_time_delay_mills_when_exception)
    if not previously_locked:
        return FlowDecision(FlowBranch.FIRST_LOCKED)
    return FlowDecision(FlowBranch.PULL)
