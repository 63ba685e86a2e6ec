"""Timer (scheduled) delivery: messages put with a deliver time reach their queue later.

Models the TimerMessageStore path Message#setDeliverTimeMs takes (the revive topic's CK and
ACK messages use it): a put with ``deliver_time_ms > 0`` is parked; ``timer_step(now)``
moves every parked message whose slot has come into its target queue, in (slot, put order)
order. The wheel's precision (timerPrecisionMs) rounds deliveries down to a slot. The timer
log is on disk in RocketMQ, so a broker restart keeps parked messages.
"""

from __future__ import annotations

import heapq

from reference.broker.message import PROPERTY_TIMER_DELIVER_MS, MessageExt
from reference.broker.store import MessageStore


class TimerService:
    """Parked messages by delivery slot; ``timer_step`` is the timer's dequeue service step."""

    def __init__(self, store: MessageStore, precision_ms: int = 1000) -> None:
        self._store = store
        self._precision = max(1, precision_ms)
        self._heap: list[tuple[int, int, MessageExt]] = []
        self._seq = 0

    def slot_of(self, deliver_time_ms: int) -> int:
        """The wheel slot (ms) a deliver time falls in."""
        return deliver_time_ms - deliver_time_ms % self._precision

    def put(self, msg: MessageExt) -> None:
        """Park ``msg`` until its deliver time (the CommitLog hook routing to the timer topic)."""
        msg.properties[PROPERTY_TIMER_DELIVER_MS] = str(msg.deliver_time_ms)
        heapq.heappush(self._heap, (self.slot_of(msg.deliver_time_ms), self._seq, msg))
        self._seq += 1

    def timer_step(self, now: int) -> int:
        """Deliver every parked message whose slot <= ``now``; returns how many."""
        moved = 0
        while self._heap and self._heap[0][0] <= now:
            _, _, msg = heapq.heappop(self._heap)
            self._store.put_message(msg)
            moved += 1
        return moved

    def has_due(self, now: int) -> bool:
        """Whether a delivery is overdue (the timer is 'behind', getReadBehind > 0)."""
        return bool(self._heap) and self._heap[0][0] <= now

    def pending(self) -> list[MessageExt]:
        """Parked messages in delivery order (read-only inspection)."""
        return [m for _, _, m in sorted(self._heap, key=lambda e: (e[0], e[1]))]

    def next_delivery(self) -> int | None:
        """The earliest slot still parked, or None."""
        return self._heap[0][0] if self._heap else None
