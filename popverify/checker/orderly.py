"""POP-ORD-1: an orderly POP serves a queue only when the queue's previous batch is no longer
in flight (what PopMessageProcessor's checkBlock guarantees; spec/properties.md).

The history gives each orderly delivery with its consumer, popTime and invisibleTime; the
messages of one response that share (consumer, popTime) and queue form one batch. A batch's
message stays in flight until an ack of it answered SUCCESS or until the earliest of: its
batch's deadline (popTime + invisibleTime), its changed deadline (changeInvisibleTime), and
the batch's popTime + the *asking* request's invisibleTime (5.0.0's checkBlock compares with
the asking request's invisibleTime). Each term is one release's weaker guarantee, so the
property holds where both releases hold it (spec/properties.md, "POP-ORD-1").
"""

from __future__ import annotations

import attrs


@attrs.define
class OrderlyEntry:
    """One message of an orderly batch as the consumers saw it."""

    uniq: str
    offset: int
    deadline: int
    changed_deadline: int
    acked: bool = False


@attrs.define
class OrderlyBatch:
    """The latest orderly batch delivered from one queue."""

    consumer: str
    pop_time: int
    entries: list[OrderlyEntry] = attrs.Factory(list)


@attrs.define
class OrderlyBlockCheck:
    """The per-queue batches in flight; ``deliver`` answers the violation message, if any."""

    batches: dict[tuple[str, int], OrderlyBatch] = attrs.Factory(dict)
    acked_at: dict[str, int] = attrs.Factory(dict)  # uniq -> time of its latest SUCCESS ack
    # (topic, queue) -> the offset of an admin's reset not yet seen taken (on_reset_offset)
    reset_to: dict[tuple[str, int], int] = attrs.Factory(dict)
    # the latest group deletion's time (forget): a batch popped by then is not tracked
    cleared_at: int = -1

    def deliver(self, now: int, consumer: str, uniq: str, topic: str, queue: int, offset: int, pop_time: int,
                invisible_time: int) -> str | None:
        """An orderly delivery at ``now``; the violation when an earlier batch of the queue is in flight."""
        key = (topic, queue)
        batch = self.batches.get(key)
        # 5.0.0's commitAndNext sets the bit on the queue's current order info whatever the
        # handle's popTime, and a POP writes its order info when it reads (at or after its
        # popTime), before its response reaches the consumers: an ack answered at or after
        # this batch's popTime may have been taken as this batch's (counting it only weakens
        # the check; verify's v5.0 seed 110 raced a stale ack with the re-delivering POP).
        acked = self.acked_at.get(uniq, pop_time - 1) >= pop_time
        entry = OrderlyEntry(uniq, offset, pop_time + invisible_time, pop_time + invisible_time, acked)
        if pop_time <= self.cleared_at:
            # read by a POP in flight across a group deletion, answered after it: the clean-up at
            # the next persist may have dropped its order info (autoClean), so it may block no one
            # (v5.5 seed 4 of order2's corpus: delete_group_persist inside a POP)
            return None
        if self.took_reset(topic, queue, offset):
            self.batches[key] = OrderlyBatch(consumer, pop_time, [entry])
            return None
        if batch is not None and (batch.consumer, batch.pop_time) == (consumer, pop_time):
            batch.entries.append(entry)  # the next message of the same response
            return None
        self.batches[key] = OrderlyBatch(consumer, pop_time, [entry])
        if batch is None:
            return None
        for e in batch.entries:
            end = min(e.deadline, e.changed_deadline, batch.pop_time + invisible_time)
            if not e.acked and now < end:
                return (f"message {uniq} (queue {queue} offset {offset}) delivered to {consumer} at {now} while "
                        f"the batch popped at {batch.pop_time} by {batch.consumer} is in flight: offset {e.offset} "
                        f"not acked, invisible until {end}")
        return None

    def ack(self, uniq: str, now: int) -> None:
        """An ack of ``uniq`` answered SUCCESS at ``now`` (5.0.0 marks the offset whatever the
        handle's popTime)."""
        self.acked_at[uniq] = now
        for batch in self.batches.values():
            for e in batch.entries:
                if e.uniq == uniq:
                    e.acked = True

    def change_invisible(self, uniq: str, new_deadline: int) -> None:
        """A changeInvisibleTime of ``uniq`` answered SUCCESS with ``new_deadline``."""
        for batch in self.batches.values():
            for e in batch.entries:
                if e.uniq == uniq:
                    e.changed_deadline = new_deadline

    def reset(self, topic: str, queue: int, offset: int) -> None:
        """An admin reset ``queue`` to ``offset``: the queue's first delivery from that offset is
        the POP that took the reset, blocked by no batch before it."""
        self.reset_to[(topic, queue)] = offset

    def took_reset(self, topic: str, queue: int, offset: int) -> bool:
        """Whether a delivery at ``offset`` is the queue's first from a pending reset's offset:
        the POP that took the reset (5.5.0 resetPopOffset: clearBlock, then it reads from there),
        which no earlier batch blocks, not even one answered after the reset request but read
        before it (confirmed on rocketmq-broker 5.5.0: tests/checker/test_pop_orderly.py
        RESET_RACE agrees in lockstep, both sides deliver so). The queue's batch is dropped."""
        key = (topic, queue)
        if self.reset_to.get(key) != offset:
            return False
        del self.reset_to[key]
        self.batches.pop(key, None)
        return True

    def forget(self, now: int | None = None) -> None:
        """The topic or the group was deleted, or a queue reset: the batches known are gone; a
        group deletion at ``now`` also leaves untracked the batches popped by then and answered
        later."""
        self.batches.clear()
        self.acked_at.clear()
        self.reset_to.clear()
        if now is not None:
            self.cleared_at = now
