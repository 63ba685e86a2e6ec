"""The contract between the push consumer (pull path, rebalance) and its consume services.

DefaultMQPushConsumerImpl owns one ConsumeMessageService; the pull callback hands it the
messages it put into a ProcessQueue (``submit_consume_request``), and the driver runs the
service one consume request at a time (``consume_step``) with the listener's answer it chose.
"""

from __future__ import annotations

import enum
from typing import Protocol

import attrs

from reference.client.process_queue import ProcessQueue, PulledMessage
from reference.common.message_queue import MessageQueue


class ConsumeConcurrentlyStatus(enum.Enum):
    """ConsumeConcurrentlyStatus."""

    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"


class ConsumeOrderlyStatus(enum.Enum):
    """ConsumeOrderlyStatus (the deprecated ROLLBACK / COMMIT included)."""

    SUCCESS = "SUCCESS"
    ROLLBACK = "ROLLBACK"
    COMMIT = "COMMIT"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"


@attrs.frozen
class ConsumeRecord:
    """What one consume step did, for the driver's history and the checker."""

    mq: MessageQueue
    offsets: tuple[int, ...]          # queue offsets handed to the listener
    uniq_keys: tuple[str | None, ...]  # their UNIQ_KEY (identity across retry)
    status: str                       # the listener status applied
    committed_offset: int | None      # offset given to OffsetStore#updateOffset, if any
    sent_back: tuple[int, ...] = ()   # offsets sent back to %RETRY%group
    dropped: bool = False             # the ProcessQueue was dropped: nothing applied


class ConsumeMessageService(Protocol):
    """ConsumeMessageConcurrentlyService / ConsumeMessageOrderlyService, sans threads."""

    def submit_consume_request(self, msgs: list[PulledMessage], pq: ProcessQueue, mq: MessageQueue,
                               dispatch_to_consume: bool) -> None: ...

    def has_pending(self) -> bool: ...

    def consume_step(self, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus) -> ConsumeRecord | None: ...

    def timer_step(self) -> None: ...  # delayed re-submits (submitConsumeRequestLater) and cleanExpiredMsg

    def clear(self) -> None: ...  # the consumer stops: queued and delayed requests are gone
