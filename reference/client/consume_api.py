"""The contract between the push consumer (pull path, rebalance) and its consume services.

DefaultMQPushConsumerImpl owns one ConsumeMessageService; the pull callback hands it the
messages it put into a ProcessQueue (``submit_consume_request``), and the driver runs the
service one consume request at a time (``consume_step``) with the listener's answer it chose.
A consume request can also run in two steps, so that other steps run while its listener works:
``consume_begin`` hands a batch to the listener (ConsumeRequest#run up to
listener.consumeMessage) and ``consume_end`` applies the status the listener returns (the rest
of ConsumeRequest#run: the isDropped check, processConsumeResult); ``consume_step`` is the two
back to back.
"""

from __future__ import annotations

import enum
from typing import Any, Protocol

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


@attrs.define(eq=False)
class ListenerBatch:
    """A batch handed to the listener whose status has not come back yet (between
    ``consume_begin`` and ``consume_end``). Its messages are still in the ProcessQueue (orderly:
    in its consuming map) -- removeMessage / commit run at the end."""

    request: Any                      # the service's ConsumeRequest
    mq: MessageQueue
    msgs: list[PulledMessage]


def change_bodies(msgs: list[PulledMessage], size: int) -> None:
    """The listener sets the body of each message it was handed to ``size`` bytes
    (MessageExt#setBody: the listener gets the very objects the ProcessQueue holds, so
    removeMessage / commit then subtract the new length, and sendMessageBackAsNormalMessage
    sends the new body; CONSUMER_SEND_MSG_BACK carries only the commit-log offset)."""
    body = b"y" * size
    for msg in msgs:
        msg.body = body
        if msg.ext is not None:
            msg.ext.body = body


class ConsumeMessageService(Protocol):
    """ConsumeMessageConcurrentlyService / ConsumeMessageOrderlyService, sans threads."""

    def submit_consume_request(self, msgs: list[PulledMessage], pq: ProcessQueue, mq: MessageQueue,
                               dispatch_to_consume: bool) -> None: ...

    def has_pending(self) -> bool: ...

    def consume_step(self, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus) -> ConsumeRecord | None: ...

    # listener calls begun and not ended yet, in the order they began
    running: list[ListenerBatch]

    def consume_begin(self) -> ConsumeRecord | ListenerBatch | None: ...  # a record when no listener is called

    def consume_end(self, index: int, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus,
                    body_size: int | None = None) -> ConsumeRecord: ...

    def timer_step(self) -> None: ...  # delayed re-submits (submitConsumeRequestLater) and cleanExpiredMsg

    def clear(self) -> None: ...  # the consumer stops: queued and delayed requests are gone
