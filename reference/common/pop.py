"""The POP request and response records the broker's processors and the POP client exchange.

As rocketmq-remoting's PopMessageRequestHeader / PopMessageResponseHeader and the ack and
changeInvisibleTime headers sit below both the broker and the client in Java, these records
sit in Common so that reference/client never imports reference/broker. The processors that
build them are reference/broker/{pop_processor,ack_processor,change_invisible_processor}.py.
"""

from __future__ import annotations

import attrs

from reference.common.message import MessageExt

INIT_MODE_MIN = 0  # ConsumeInitMode.MIN (the header's default value 0)
INIT_MODE_MAX = 1  # ConsumeInitMode.MAX


@attrs.frozen
class PopRequest:
    """PopMessageRequestHeader fields the model uses. ``tags`` None = no filter."""

    topic: str
    group: str
    queue_id: int = -1
    max_msg_nums: int = 32
    invisible_time: int = 60_000
    poll_time: int = 0
    init_mode: int = INIT_MODE_MIN
    tags: frozenset[str] | None = None
    client: str = "client"
    # PopMessageRequestHeader#order (orderly POP) and #attemptId (5.5.0; null from the client)
    order: bool = False
    attempt_id: str | None = None
    # #bornTime: None = the client's now (every client sends it); 0 = left unset.
    born_time: int | None = None
    # #expType and #exp of an expression that is not a tag list (``tags`` is the TAG case):
    # SQL92, a type no filter exists for, or an empty one; exp_type None: neither field sent.
    exp_type: str | None = "TAG"
    exp: str | None = None


@attrs.frozen
class PoppedMessage:
    """A message handed to the consumer with the receipt handle the client builds for it.

    ``ack_topic`` is the topic the ack must name (the retry topic for retry messages: the
    client uses ExtraInfoUtil#getRealTopic); ``extra_info`` is the 8-field handle.
    """

    message: MessageExt
    ack_topic: str
    queue_id: int
    queue_offset: int
    extra_info: str
    # The handle's queue offset (msgOffsetInfo's consume-queue index the client maps the
    # message to, MQClientAPIImpl#processPopResponse); None without a handle. It differs from
    # ``queue_offset`` (the stored message's, what the client decodes) once an offset was burnt.
    handle_offset: int | None = None

    @property
    def ack_offset(self) -> int:
        """The offset an ack or changeInvisibleTime names: the handle's
        (DefaultMQPushConsumerImpl#ackAsync: ExtraInfoUtil.getQueueOffset), else the message's."""
        return self.queue_offset if self.handle_offset is None else self.handle_offset


@attrs.frozen
class PopResult:
    """The pop response: code, messages and response header fields."""

    code: int
    messages: tuple[PoppedMessage, ...] = ()
    pop_time: int = 0
    invisible_time: int = 0
    revive_qid: int = 0
    rest_num: int = 0
    start_offset_info: str = ""
    msg_offset_info: str = ""
    # PopMessageResponseHeader#orderCountInfo: set only for an orderly pop.
    order_count_info: str | None = None


@attrs.frozen
class AckEntry:
    """One ack of a batch (topic, queueId, offset, extraInfo)."""

    topic: str
    queue_id: int
    offset: int
    extra_info: str


@attrs.frozen
class ChangeInvisibleResult:
    """Response code and header; ``extra_info`` is the new handle the client builds from it."""

    code: int
    pop_time: int = 0
    invisible_time: int = 0
    revive_qid: int = 0
    extra_info: str | None = None
