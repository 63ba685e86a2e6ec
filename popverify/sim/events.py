"""Typed events: what a step of a scenario did, as records (issue 17 item 1).

A world (popverify/sim/pop_driver.py, push_driver.py) publishes one event per thing that
happened -- a message stored, delivered, acked, revived, a fault -- through the engine;
subscribers react to them: the property checker (``checker_subscriber``), the run's counts
(each mode's ``count``) and the trace recorder (``Event.to_json`` into the ITF state).

``TYPE`` is the event's name in an ITF trace. Fields marked ``ghost`` are for subscribers
only (a deadline, the ConsumeRecord) and stay out of the trace, so traces are the same
bytes as before the engine existed. An event with ``TRACED = False`` is not recorded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from popverify.checker.pop import PopChecker
from popverify.checker.push import PushChecker
from reference.common import response_code as rc


def ghost(default: Any = attrs.NOTHING) -> Any:
    """A field subscribers read that the trace leaves out."""
    return attrs.field(default=default, metadata={"ghost": True}, eq=False, repr=False)


@attrs.frozen
class Event:
    """Base of every event."""

    TYPE: ClassVar[str] = ""
    TRACED: ClassVar[bool] = True

    def to_json(self) -> dict[str, Any]:
        """``{"type": TYPE, field: value, ...}`` without the ghost fields (ITF state event)."""
        out: dict[str, Any] = {"type": self.TYPE}
        for name in _traced_fields(type(self)):
            out[name] = getattr(self, name)
        return out


@functools.cache
def _traced_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(cls) if not f.metadata.get("ghost"))


# -- both modes ------------------------------------------------------------------------------
@attrs.frozen
class MessageStored(Event):
    """A producer's SendMessage stored a message (DefaultMessageStore#putMessage)."""

    TYPE: ClassVar[str] = "produce"
    queue: int
    offset: int
    uniq: str | None


@attrs.frozen
class TimeAdvanced(Event):
    """Virtual time passed (services on their periods as the mode runs them)."""

    TYPE: ClassVar[str] = "advance"
    ms: int
    now: int


@attrs.frozen
class ClockJumped(Event):
    """The clock jumped forward with no service running in between."""

    TYPE: ClassVar[str] = "clock_jump"
    ms: int
    now: int


@attrs.frozen
class BrokerRestarted(Event):
    """The broker restarted: memory buffers lost, store kept."""

    TYPE: ClassVar[str] = "restart"


@attrs.frozen
class Expired(Event):
    """Retention removed the messages of the consumed topic's queue below ``below``."""

    TYPE: ClassVar[str] = "expire"
    queue: int
    below: int
    topic: str = ghost()


@attrs.frozen
class RetentionLost(Event):
    """Retention deleted commit-log files holding what a message still needed besides its own
    copy in the consumed topic (a retry copy, a CK or ACK in the revive topic, a parked timer
    copy): those messages may be lost or redelivered (reference/broker/store.py "Retention")."""

    TYPE: ClassVar[str] = "retention_lost"
    uniqs: tuple[str, ...] = ()


@attrs.frozen
class ConsumerCrashed(Event):
    """A consumer process died (what it held is lost with it)."""

    TYPE: ClassVar[str] = "consumer_crash"
    consumer: str


@attrs.frozen
class FaultInjected(Event):
    """An action declared as a fault was applied (the engine publishes it; not traced)."""

    TYPE: ClassVar[str] = "fault"
    TRACED: ClassVar[bool] = False
    kind: str


@attrs.frozen
class ModelErrorRaised(Event):
    """An exception raised inside reference/ ended the run (popverify/findings/model_error.py)."""

    TYPE: ClassVar[str] = "model_error"
    message: str
    traceback: str


# -- POP -------------------------------------------------------------------------------------
@attrs.frozen
class PopBegun(Event):
    """A consumer sent a POP request (PopMessageProcessor#processRequest takes popTime)."""

    TYPE: ClassVar[str] = "pop_begin"
    consumer: str
    queue: int


@attrs.frozen
class MessagePopped(Event):
    """A POP response handed a message to its consumer."""

    TYPE: ClassVar[str] = "deliver"
    consumer: str
    uniq: str
    topic: str
    queue: int
    offset: int
    pop_time: int
    invisible_time: int
    handle: str
    redelivery: bool = ghost(False)
    reconsume_times: int = ghost(0)
    order: bool = ghost(False)  # the POP was orderly (POP-ORD-1)


@attrs.frozen
class PopAnswered(Event):
    """A POP response reached its consumer: how many messages, of how many asked (BAT-1)."""

    TYPE: ClassVar[str] = "pop_answer"
    TRACED: ClassVar[bool] = False
    consumer: str
    delivered: int
    max_msg_nums: int


@attrs.frozen
class PopParked(Event):
    """A POP request went to long polling (PopLongPollingService#polling): no response yet."""

    TYPE: ClassVar[str] = "pop_park"
    TRACED: ClassVar[bool] = False
    consumer: str


@attrs.frozen
class Acked(Event):
    """An ack (single or one entry of a batch) and the broker's response code."""

    TYPE: ClassVar[str] = "ack"
    consumer: str
    uniq: str
    topic: str
    queue: int
    offset: int
    code: int
    handle: str
    deadline: int = ghost(0)


@attrs.frozen
class InvisibleTimeChanged(Event):
    """A changeInvisibleTime request and its response."""

    TYPE: ClassVar[str] = "change_invisible"
    consumer: str
    uniq: str
    code: int
    invisible_time: int
    handle: str
    new_deadline: int = ghost(0)
    renewed: bool = ghost(False)
    old_deadline: int | None = ghost(None)


@attrs.frozen
class Revived(Event):
    """PopReviveService copied a message whose checkpoint expired into the retry topic."""

    TYPE: ClassVar[str] = "revive"
    uniq: str | None
    topic: str
    queue: int
    offset: int
    retry_offset: int
    normal: bool = ghost(True)
    # the retry queue the copy went to: 0 but with 5.5.0's useSeparateRetryQueue
    retry_queue: int = 0

    def to_json(self) -> dict[str, Any]:
        """As Event's, ``retry_queue`` left out when 0 (the traces written before it existed)."""
        out = super().to_json()
        if not self.retry_queue:
            del out["retry_queue"]
        return out


@attrs.frozen
class TopicRecreated(Event):
    """The consumed topic was deleted and created again."""

    TYPE: ClassVar[str] = "delete_recreate"


@attrs.frozen
class GroupDeleted(Event):
    """An admin deleted the consumed group (DELETE_SUBSCRIPTIONGROUP), its offsets too when
    ``clean_offset`` (popverify/sim/admin.py)."""

    TYPE: ClassVar[str] = "delete_group"
    clean_offset: bool


@attrs.frozen
class TopicShrunk(Event):
    """An admin updated the consumed topic to ``to`` queues, the order info persisted, and the
    admin restored the queue count (popverify/sim/admin.py ``topic_shrink_persist``): the order
    info of the queues from ``to`` on is gone."""

    TYPE: ClassVar[str] = "topic_shrink"
    to: int


@attrs.frozen
class OffsetReset(Event):
    """An admin asked to reset queue ``queue`` of the consumed group to ``offset``; ``code`` is
    the broker's answer, ``before`` the committed offset a reset replaced (-1: none)
    (popverify/sim/admin.py)."""

    TYPE: ClassVar[str] = "reset_offset"
    queue: int
    offset: int
    before: int
    code: int
    # the queue offset the message at ``offset`` carries (larger past a 5.0.0 burnt offset)
    stored: int = ghost()


@attrs.frozen
class Stalled(Event):
    """The broker thread serving a consumer's request stalled ``ms`` (GC pause, slow disk)."""

    TYPE: ClassVar[str] = "stall"
    consumer: str
    ms: int
    pop_time: int | None
    now: int


@attrs.frozen
class PutFailuresArmed(Event):
    """The store will refuse the next ``count`` puts of the consumption path (a fault)."""

    TYPE: ClassVar[str] = "store_put_fail"
    count: int


@attrs.frozen
class ScanStalled(Event):
    """One PopBufferMergeService scan took ``ms``; ``serving`` is the buffer's flag after it."""

    TYPE: ClassVar[str] = "scan_stall"
    ms: int
    serving: bool


# -- push ------------------------------------------------------------------------------------
@attrs.frozen
class ConsumerStarted(Event):
    """A push consumer started (and rebalanced at once)."""

    TYPE: ClassVar[str] = "start"
    consumer: str


@attrs.frozen
class ConsumerShutdown(Event):
    """A push consumer shut down cleanly (offsets persisted, queues unlocked)."""

    TYPE: ClassVar[str] = "shutdown"
    consumer: str


@attrs.frozen
class Rebalanced(Event):
    """RebalanceImpl#doRebalance of one consumer: queues added and removed."""

    TYPE: ClassVar[str] = "rebalance"
    consumer: str
    added: list[str]
    removed: list[str]


@attrs.frozen
class PullSent(Event):
    """A PULL_MESSAGE request the broker answered (code) or suspended (code None)."""

    TYPE: ClassVar[str] = "pull"
    consumer: str
    queue: str
    offset: int
    commit_offset: int
    code: int | None


@attrs.frozen
class PullAnswered(Event):
    """A pull response reached its consumer (PullCallback#onSuccess / onException)."""

    TYPE: ClassVar[str] = "deliver"
    consumer: str
    queue: str
    code: int | None
    offsets: list[int]


@attrs.frozen
class ResponseLost(Event):
    """A pull response was lost: the invokeAsync time-out fires onException."""

    TYPE: ClassVar[str] = "lose_response"
    consumer: str
    queue: str


@attrs.frozen
class ResponseDuplicated(Event):
    """A pull response arrives twice."""

    TYPE: ClassVar[str] = "dup_response"
    consumer: str


@attrs.frozen
class ListenerCalled(Event):
    """consume_begin: a batch was handed to the listener, whose status comes back at a later
    ``consume_end`` step (a Consumed event); until then its messages are neither consumed nor lost."""

    TYPE: ClassVar[str] = "consume_begin"
    consumer: str
    queue: str
    offsets: list[int]


@attrs.frozen
class ExpiredSentBack(Event):
    """cleanExpiredMsg (ProcessQueue#cleanExpiredMsg) sent ``offsets`` of a queue back (delay
    level 3) and removed them: the retry copies carry them from here on (OFF-3). Not traced, so
    traces and engine digests keep their bytes."""

    TYPE: ClassVar[str] = "expired_sent_back"
    TRACED: ClassVar[bool] = False
    topic: str
    queue_id: int
    offsets: list[int]


@attrs.frozen
class Consumed(Event):
    """One consume request: the listener's status applied to a batch (or a dropped queue)."""

    TYPE: ClassVar[str] = "consume"
    consumer: str
    queue: str
    offsets: list[int]
    uniq: list[str | None]
    status: str
    committed_offset: int | None
    sent_back: list[int]
    dropped: bool
    record: Any = ghost(None)   # reference.client.consume_api.ConsumeRecord
    floor: int | None = ghost(None)     # max(client offset before the step, broker's committed): DUP-1
    orderly: bool = ghost(False)
    # the broker's queue lock holder (orderly) when the batch was handed to the listener: ORD-1
    lock_holder: str | None = ghost(None)


@attrs.frozen
class PullSized(Event):
    """The broker answered a pull with ``delivered`` messages of ``max_msg_nums`` asked (BAT-1)."""

    TYPE: ClassVar[str] = "pull_size"
    TRACED: ClassVar[bool] = False
    queue: str
    delivered: int
    max_msg_nums: int


@attrs.frozen
class OffsetPersisted(Event):
    """persistConsumerOffset of one consumer."""

    TYPE: ClassVar[str] = "persist"
    consumer: str


# A subscriber: called with each published event, the step it happened in and virtual now.
Subscriber = Callable[[Event, int, int], None]


# -- the checker's subscription ----------------------------------------------------------------
def pop_checker_subscriber(checker: PopChecker) -> Subscriber:
    """The POP property checker's subscription: each event to the history method it feeds."""
    def on_event(event: Event, step: int, now: int) -> None:
        if isinstance(event, MessageStored):
            checker.on_produce(event.uniq or "", event.queue, event.offset)
        elif isinstance(event, MessagePopped):
            position = (event.topic, event.queue, event.offset)
            checker.on_deliver(step, now, event.uniq, event.pop_time + event.invisible_time, position,
                               event.reconsume_times, event.order)
            if event.order:
                checker.on_orderly_deliver(step, now, event.consumer, event.uniq, position, event.pop_time,
                                           event.invisible_time)
        elif isinstance(event, PopAnswered):
            checker.on_response_size(step, event.delivered, event.max_msg_nums)
        elif isinstance(event, Acked):
            checker.on_ack(step, now, event.uniq, event.code, event.deadline)
        elif isinstance(event, InvisibleTimeChanged):
            checker.on_change_invisible(event.uniq, event.code, event.new_deadline, event.old_deadline)
        elif isinstance(event, Revived):
            checker.on_revive(step, event.uniq, event.queue, event.offset, event.normal,
                              (event.topic, event.retry_queue, event.retry_offset))
        elif isinstance(event, BrokerRestarted):
            checker.on_restart()
        elif isinstance(event, Expired):
            checker.on_expire(event.queue, event.below)
        elif isinstance(event, RetentionLost):
            checker.on_retention_lost(event.uniqs)
        elif isinstance(event, TopicRecreated):
            checker.on_delete_topic()
        elif isinstance(event, GroupDeleted):
            checker.on_delete_group(event.clean_offset, now)
        elif isinstance(event, TopicShrunk):
            checker.on_order_info_dropped(event.to, now)
        elif isinstance(event, OffsetReset) and event.code == rc.SUCCESS:
            checker.on_reset_offset(event.queue, event.offset, event.before, event.stored)
        elif isinstance(event, FaultInjected):
            checker.on_fault(event.kind)
    return on_event


def push_checker_subscriber(checker: PushChecker) -> Subscriber:
    """The push property checker's subscription."""
    def on_event(event: Event, step: int, now: int) -> None:
        if isinstance(event, MessageStored):
            checker.on_produce(event.uniq or "", event.queue, event.offset)
        elif isinstance(event, Consumed):
            checker.on_consume(event.record, step, event.floor, event.consumer)
            if event.orderly:
                checker.on_orderly_consume(step, event.consumer, event.record, event.lock_holder)
        elif isinstance(event, PullSized):
            checker.on_pull_response_size(step, event.queue, event.delivered, event.max_msg_nums)
        elif isinstance(event, ExpiredSentBack):
            checker.on_sent_back(event.topic, event.queue_id, event.offsets)
        elif isinstance(event, Expired):
            checker.on_expire(event.topic, event.queue, event.below)
        elif isinstance(event, RetentionLost):
            checker.on_retention_lost(event.uniqs)
        elif isinstance(event, OffsetReset) and event.code == rc.SUCCESS:
            checker.on_reset_offset(event.queue, event.stored)
        elif isinstance(event, FaultInjected):
            checker.on_fault(event.kind)
    return on_event
