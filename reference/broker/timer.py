"""Timer (scheduled) delivery: messages put with a deliver time reach their queue later.

Models the TimerMessageStore path Message#setDeliverTimeMs takes (the revive topic's CK and
ACK messages use it). HookUtils#transformTimerMessage parks a message only when its deliver
time D is in the future, and rounds D to the wheel's precision P: ``D - P`` when D is a
multiple of P, else D rounded down. TimerMessageStore#dequeue reads a slot only while
``currReadTimeMs < currWriteTimeMs``, and currWriteTimeMs is formatTimeMs(now) (now rounded
down to P), so a slot S is delivered once ``now >= S + P``: D is delivered at the first
multiple of P at or after D (never before D, up to P - 1 ms after it). A message whose D is
not in the future is stored at once. ``timer_step(now)`` moves every due message into its
target queue, in (slot, put order) order. The timer log is on disk in RocketMQ, so a broker
restart keeps parked messages. (Lockstep against 5.0.0 and 5.5.0 found the model's earlier
round-down delivery up to 1 s early; spec/conformance.md.)
"""

from __future__ import annotations

import heapq

from reference.broker.store import MessageStore
from reference.common.javalang import java_div
from reference.common.message import PROPERTY_TIMER_DELIVER_MS, MessageExt


class TimerService:
    """Parked messages by delivery slot; ``timer_step`` is the timer's dequeue service step.

    It also keeps the dequeue side's read time (TimerMessageStore#currReadTimeMs): the slot the
    dequeue thread reads next. It starts at now rounded down to the precision (a broker that has
    been running: the lockstep harness starts its timer there too) and, after a ``timer_step``,
    is at now rounded down (dequeue reads slots while currReadTimeMs < currWriteTimeMs =
    formatTimeMs(now)); between steps it stays, however far the clock moves. PopReviveService
    reads how far behind it is (``read_behind``). A restart keeps it (TimerCheckpoint's
    lastReadTimeMs, written at shutdown, is where recovery starts reading).
    """

    def __init__(self, store: MessageStore, precision_ms: int = 1000) -> None:
        self._store = store
        self._precision = max(1, precision_ms)
        self._heap: list[tuple[int, int, MessageExt]] = []
        self._copy_file: dict[int, int] = {}  # seq -> commit-log file of the parked copy
        self._seq = 0
        self._read_time = store.now() // self._precision * self._precision
        self._last_enqueue_time = 0
        self._last_enqueue_store_time = 0

    @property
    def read_time_ms(self) -> int:
        """TimerMessageStore#currReadTimeMs."""
        return self._read_time

    def read_behind(self, now: int) -> int:
        """Whole seconds the dequeue side is behind the clock: 5.0.0 TimerMessageStore#getReadBehind,
        5.5.0 #getDequeueBehind, both ``(System.currentTimeMillis() - currReadTimeMs) / 1000``."""
        return java_div(now - self._read_time, 1000)

    def enqueue_behind(self, now: int) -> int:
        """TimerMessageStore#getEnqueueBehind: ``(now - lastEnqueueButExpiredStoreTime) / 1000``
        while ``now - lastEnqueueButExpiredTime < 2000``, else 0. Despite the names, #enqueue
        sets both for *every* timer message it reads (5.0.0 and 5.5.0), so this is "a timer
        message was enqueued in the last 2 s, stored whole seconds ago". Enqueue runs right
        after the put (the lockstep harness releases it after every request; a running broker
        within milliseconds), so enqueue time = store time = the put's time here."""
        if now - self._last_enqueue_time < 2000:
            return java_div(now - self._last_enqueue_store_time, 1000)
        return 0

    def restart(self) -> None:
        """A new TimerMessageStore on the same files: parked messages and the read time are
        recovered (timer log, TimerCheckpoint); the enqueue bookkeeping starts at 0."""
        self._last_enqueue_time = 0
        self._last_enqueue_store_time = 0

    def slot_of(self, deliver_time_ms: int) -> int:
        """The wheel slot (ms) a deliver time is parked in (HookUtils#transformTimerMessage:
        ``deliverMs % precision == 0 ? deliverMs - precision : deliverMs / precision * precision``)."""
        p = self._precision
        return deliver_time_ms - p if deliver_time_ms % p == 0 else deliver_time_ms // p * p

    def due_time(self, deliver_time_ms: int) -> int:
        """When a parked message is delivered: its slot is read once formatTimeMs(now) passes
        it (TimerMessageStore#dequeue: ``if (currReadTimeMs >= currWriteTimeMs) return -1``)."""
        return self.slot_of(deliver_time_ms) + self._precision

    def put(self, msg: MessageExt, delay_level: bool = False) -> None:
        """The CommitLog hook: park ``msg`` until it is due, or store it at once when its deliver
        time is not in the future (HookUtils#transformTimerMessage: ``if (deliverMs > now)``).

        ``delay_level``: a delay-level message (a send-back's copy) goes to SCHEDULE_TOPIC_XXXX
        instead (HookUtils#transformDelayLevelMessage) and ScheduleMessageService's
        DeliverDelayedMessageTimerTask#executeOnTimeup delivers it once ``deliverTimestamp - now
        <= 0``, deliverTimestamp = store time + the level's delay: at its deliver time, not
        rounded to the wheel's precision (push lockstep found the model up to 1 s late)."""
        msg.properties[PROPERTY_TIMER_DELIVER_MS] = str(msg.deliver_time_ms)
        if msg.deliver_time_ms <= self._store.now():
            self._store.put_message(msg)
            return
        due = msg.deliver_time_ms if delay_level else self.due_time(msg.deliver_time_ms)
        heapq.heappush(self._heap, (due, self._seq, msg))
        self._copy_file[self._seq] = self._store.write_timer_copy()
        self._seq += 1
        self._last_enqueue_time = self._last_enqueue_store_time = self._store.now()

    def parked_in_files(self, lo: int, hi: int) -> list[MessageExt]:
        """Parked messages whose timer-topic copy is in commit-log files lo..hi-1."""
        return [m for _, seq, m in self._heap if lo <= self._copy_file[seq] < hi]

    def timer_step(self, now: int) -> int:
        """Deliver every parked message that is due at ``now``; returns how many."""
        moved = 0
        while self._heap and self._heap[0][0] <= now:
            _, seq, msg = heapq.heappop(self._heap)
            if self._store.file_removed(self._copy_file.pop(seq)):
                # TimerMessageStore's dequeue reads the parked copy from the commit log
                # (getMessageByCommitOffset); retention took its file: "the tr will never be
                # processed afterwards", the message is dropped.
                continue
            self._store.put_message(msg)
            moved += 1
        # dequeue has read every slot up to the write time (which never moves back:
        # TimerMessageStore#maybeMoveWriteTime only moves it forward)
        self._read_time = max(self._read_time, now // self._precision * self._precision)
        return moved

    def has_due(self, now: int) -> bool:
        """Whether a delivery is overdue (the timer is 'behind', getReadBehind > 0)."""
        return bool(self._heap) and self._heap[0][0] <= now

    def pending(self, readable_only: bool = False) -> list[MessageExt]:
        """Parked messages in delivery order (read-only inspection); ``readable_only``: only
        those whose timer-topic copy is still in the commit log (what a reader of the timer
        topic finds; the others are dropped when their slot is read)."""
        return [m for _, seq, m in sorted(self._heap, key=lambda e: (e[0], e[1]))
                if not readable_only or not self._store.file_removed(self._copy_file[seq])]

    def next_delivery(self) -> int | None:
        """The earliest time a parked message is due, or None."""
        return self._heap[0][0] if self._heap else None
