"""Progress and resource properties of POP consumption, checked once after a drain that
reached quiescence (spec/properties.md#progress-and-resource-properties).

PRG-1 consumer-offset progress and QUI-1 quiescence read the broker's state after a drain
that reached quiescence (for PRG-1, only queues whose messages were all acked or excused);
PRG-2 revive progress is the drain reaching quiescence at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.broker.keys import CK_TAG, REVIVE_GROUP

if TYPE_CHECKING:
    from popverify.checker.pop import PopChecker
    from popverify.checker.push import PushChecker
    from reference.broker.broker import Broker
    from reference.client.push_consumer import DefaultMQPushConsumer


def check_after_drain(checker: "PopChecker", broker: "Broker", queues: int, retry_topic: str, step: int) -> None:
    """PRG-1 and QUI-1 on the broker after a drain that reached quiescence."""
    _offset_progress(checker, broker, queues, retry_topic, step)
    _quiescence(checker, broker, step)


def _offset_progress(checker: "PopChecker", broker: "Broker", queues: int, retry_topic: str, step: int) -> None:
    """PRG-1: every queue whose messages were all acked (or excused) has its committed offset
    at its max offset -- the consumer offset does not stop short although nothing is owed."""
    owed: set[int] = set()
    for uniq, rec in checker.messages.items():
        if rec.incarnation == checker.incarnation and not rec.acked and uniq not in checker.excused:
            owed.add(rec.queue_id)
    for qid in range(queues):
        if qid in owed:
            continue  # ALO-2 speaks for it
        top = broker.max_offset(checker.topic, qid)
        committed = broker.committed_offset(checker.group, checker.topic, qid)
        if top > broker.min_offset(checker.topic, qid) and committed < top:
            checker._fail("PRG-1", f"after the drain queue {qid}'s committed offset is {committed}, not its max "
                                   f"offset {top}, although every message was acked", step)
    for qid in range(broker.topics.get(retry_topic, 0)):
        top = broker.max_offset(retry_topic, qid)
        committed = broker.committed_offset(checker.group, retry_topic, qid)
        if top > broker.min_offset(retry_topic, qid) and committed < top and not owed:
            checker._fail("PRG-1", f"after the drain retry queue {qid}'s committed offset is {committed}, not its "
                                   f"max offset {top}", step)


def drain_not_quiet(checker: "PopChecker", broker: "Broker", rounds: int, step: int,
                    horizon: int | None = None) -> bool:
    """PRG-2 revive progress: the drain (consumers ack everything, time and services run)
    reaches quiescence within ``rounds`` rounds -- every checkpoint is revived or acked and
    every revive offset passes its last checkpoint. Reported with what is still pending.

    ``horizon``: the latest time anything the drain itself started can fall due (its end plus
    the POP invisibleTime it asks for). When all that is left falls due after it, a request of
    the run asked for an invisibility longer than the drain watches -- the broker bounds
    neither PopMessageProcessor's nor ChangeInvisibleTimeProcessor's invisibleTime, so an
    Integer.MAX_VALUE one sets a revive ~24.8 days out -- and that is no lack of progress:
    nothing is reported and False is returned (spec/properties.md, PRG-2's assumption).
    True when PRG-2 was reported."""
    if horizon is not None and _all_due_after(broker, horizon, checker.topic, checker.group):
        return False
    pending = []
    lagging = {}
    for s in broker.stored_checkpoints():
        if not s.in_timer:
            lagging[s.revive_queue_id] = lagging.get(s.revive_queue_id, 0) + 1
    if lagging:
        offsets = broker.revive_offsets()
        pending.append("revive queues behind their checkpoints: " + ", ".join(
            f"queue {q} at offset {offsets[q]} with {n} checkpoint(s) after it" for q, n in sorted(lagging.items())))
    if broker.buffered_checkpoints():
        pending.append(f"{len(broker.buffered_checkpoints())} buffered checkpoint(s)")
    if broker.timer_pending():
        pending.append(f"{len(broker.timer_pending())} timer message(s)")
    checker._fail("PRG-2", f"the drain did not reach quiescence in {rounds} rounds"
                           + (": " + "; ".join(pending) if pending else " (messages kept being delivered)"), step)
    return True


def _all_due_after(broker: "Broker", horizon: int, topic: str, group: str) -> bool:
    """Something is pending (a CK stored or buffered, a timer message, an orderly batch not
    fully acked) and all of it falls due after ``horizon`` (a CK at its revive time, a timer
    message at its delivery time, an orderly queue when its batch stops blocking it)."""
    due = [s.ck.revive_time for s in broker.stored_checkpoints()]
    due += [w.ck.revive_time for w in broker.buffered_checkpoints()]
    due += [m.deliver_time_ms for m in broker.timer_pending()]
    due += _orderly_unblocked_at(broker, topic, group)
    return bool(due) and min(due) > horizon


def _orderly_unblocked_at(broker: "Broker", topic: str, group: str) -> list[int]:
    """For each queue of ``topic`` with an orderly batch not fully acked, when the batch stops
    blocking it: an orderly POP writes no CK, so this is all that brings such a batch back.
    5.5.0 keeps the batch's next visible times (a changeInvisibleTime moves one); 5.0.0 blocks by
    the asking request's invisibleTime (ConsumerOrderInfoManager#checkBlock), which the drain's
    own POPs bound: such a queue counts as due now."""
    now = broker.clock.now()
    due = []
    for qid in range(broker.topics.get(topic, 0)):
        info = broker.order_info.get(topic, group, qid)
        if info is None or info.is_done():
            continue
        free = info.lock_free_timestamp(now) if info.invisible_time is not None else None
        due.append(now if free is None else free)
    return due


def _quiescence(checker: "PopChecker", broker: "Broker", step: int) -> None:
    """QUI-1: nothing is left in the merge buffer, its commit queues, the queue-lock table,
    the buffer's counter or the timer once the drain is quiet."""
    merge = broker.buffer_merge
    left = []
    if merge.buffer:
        left.append(f"{len(merge.buffer)} buffered checkpoint(s)")
    queued = {key: len(q) for key, q in merge.commit_offsets.items() if q}
    if queued:
        left.append(f"commit-offset queue entries {dict(sorted(queued.items()))}")
    if merge.counter != len(merge.buffer):
        left.append(f"buffer counter {merge.counter} for {len(merge.buffer)} checkpoint(s)")
    locks = broker.queue_locks.held_keys()
    if locks:
        left.append(f"queue locks held {sorted(locks)}")
    if broker.timer_pending():
        left.append(f"{len(broker.timer_pending())} timer message(s)")
    if left:
        checker._fail("QUI-1", "after the drain: " + "; ".join(left), step)


def check_push_after_drain(checker: "PushChecker", broker: "Broker", consumers: list[tuple[str, "DefaultMQPushConsumer"]],
                           topic: str, drained: bool, step: int) -> None:
    """Push progress after the drain (spec/properties.md#progress-and-resource-properties).

    PSH-1: the drain reaches quiescence, and then every queue a live consumer holds has a live
    PullRequest (queued or in flight) due within ``PULL_BOUND_MS`` and an empty ProcessQueue.
    PRG-3: every queue of ``topic`` held by a live consumer has the broker's committed offset at
    its max offset (the consumers persisted what they consumed).
    """
    if not drained:
        checker._fail("PSH-1", "the push drain did not reach quiescence (messages kept moving or the timer "
                               "kept firing)", step, "drain")
        return
    now = broker.clock.now()
    for name, consumer in consumers:
        due = consumer.next_pull_due()
        for mq, pq in sorted(consumer.process_queue_table.items(), key=lambda kv: (kv[0].topic, kv[0].queue_id)):
            if pq.dropped:
                continue
            where = f"{name} {mq.topic}:{mq.queue_id}"
            if consumer.pull_cursor(mq) is None:
                checker._fail("PSH-1", f"after the drain {where} is held but has no PullRequest: it is never pulled "
                                       f"again", step, where)
            elif due is not None and due - now > PULL_BOUND_MS:
                checker._fail("PSH-1", f"after the drain the next pull of {name} is due in {due - now} ms "
                                       f"(bound {PULL_BOUND_MS})", step, where)
            if pq.msg_count or pq.msg_tree_map:
                checker._fail("PSH-1", f"after the drain {where} still holds {pq.msg_count} message(s)", step, where)
            if mq.topic == topic:
                committed = broker.committed_offset(checker.group, topic, mq.queue_id)
                top = broker.max_offset(topic, mq.queue_id)
                if committed < top:
                    checker._fail("PRG-3", f"after the drain {where}: committed offset {committed}, max offset {top}",
                                  step, where)


# Longest wait for a held queue's next pull after quiescence: the broker's long-poll suspension
# (brokerSuspendMaxTimeMillis 15 s) plus the client's consumerTimeoutMillisWhenSuspend (30 s).
PULL_BOUND_MS = 45_000
