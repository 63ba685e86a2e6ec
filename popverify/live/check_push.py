"""Check a live push history (``--mode push``) with the model's push checker and count totals.

The history of PushClient JVMs (popverify/live/push.py) is replayed, in recorded order, into
``popverify.checker.push.PushChecker``:

- ``ok send`` (from its invoke on)   -> ``on_produce(key, queue, offset)``;
- ``consume`` with its status        -> ``on_consume(ConsumeRecord)``: CONSUME_SUCCESS counts as
  consumed; RECONSUME_LATER as sent back to %RETRY%group (ConsumeMessageConcurrentlyService#
  processConsumeResult: if the send-back fails the client re-consumes it locally and its offset
  is not committed past it, so treating it as sent back only weakens OFF-3 for that case);
- broker ``kill``                    -> ``on_fault("restart")``; consumer SIGKILL -> ``consumer_crash``.

Checked from the client side:
- ALO-3 (PushChecker#finish): every acknowledged send is consumed with CONSUME_SUCCESS.
- OFF-3, on the offsets the client observed itself: every ``update`` (OffsetStore#updateOffset:
  the in-memory offset, which every pull also carries to the broker) and every ``persist``
  (OffsetStore#persistAll) of a topic queue to offset o requires every acknowledged send stored
  at a lower offset of that queue to have been consumed or sent back by then. Retry-topic
  offsets are not checked (which message sits at which retry offset is not known to clients).
- PRG-3: after the drain, the last persisted offset of every topic queue equals the queue's max
  offset (maxOffset asked of the broker by a live consumer at the end of the drain).
Not observable: PSH-1, PQ-1, PQ-2 (ProcessQueue internals), OFF-3 on the broker's own table.

Totals add ``consumed_below_commit``: a successful consumption of a topic position below an
offset persisted earlier for that queue. Legitimate after a broker kill (consumerOffset.json is
flushed every 5 s) and possible around a rebalance; counted, not a violation.
"""

from __future__ import annotations

from collections import Counter

import attrs

from popverify.checker.properties import PROPERTIES
from popverify.checker.push import PushChecker
from popverify.live.check import LiveVerdict
from popverify.live.history import Op
from popverify.live.push import PUSH_GROUP
from popverify.live.workload import TOPIC
from popverify.sim.scenario import Violation
from reference.client.consume_api import ConsumeRecord
from reference.common.message_queue import MessageQueue

OBSERVABLE = ("ALO-3", "OFF-3", "PRG-3")
NOT_OBSERVABLE = ("PSH-1", "PQ-1", "PQ-2")
RETRY_TOPIC = f"%RETRY%{PUSH_GROUP}"


@attrs.frozen
class PushTotals:
    """Jepsen-style counts of a push run, over message keys."""

    attempted_sends: int
    acknowledged_sends: int     # send answered ok
    indeterminate_sends: int
    consumed: int               # acknowledged sends consumed with CONSUME_SUCCESS at least once
    lost: int                   # acknowledged sends never consumed successfully
    duplicated: int             # acknowledged sends consumed successfully more than once
    consumed_below_commit: int  # successful consumptions of a position below an earlier persisted offset
    recovered: int              # indeterminate sends consumed anyway
    unexpected: int             # consumed keys never sent
    deliveries: int             # messages handed to a listener
    reconsume_later: int        # RECONSUME_LATER answers
    from_retry_topic: int       # deliveries pulled from %RETRY%group
    skipped: int                # test-only broken client: CONSUME_SUCCESS without processing
    persists: int               # offsets persisted to the broker
    consumer_kills: int
    faults: int

    def consistent(self) -> bool:
        """Arithmetic every push history must satisfy."""
        return (self.consumed + self.lost == self.acknowledged_sends
                and self.acknowledged_sends + self.indeterminate_sends == self.attempted_sends
                and self.duplicated <= self.consumed and self.recovered <= self.indeterminate_sends
                and self.reconsume_later + self.skipped <= self.deliveries)

    @property
    def totals_label(self) -> str:
        return "push"

    def to_json(self) -> dict[str, int]:
        return attrs.asdict(self)


def check_push_history(ops: list[Op], drained: bool = True) -> LiveVerdict:
    """Run the push checks over ``ops``; ALO-3 and PRG-3 only when the run reached its drain
    (was not cut short by a broker that did not come back)."""
    checker = PushChecker(PUSH_GROUP, (TOPIC, RETRY_TOPIC))
    violations: list[Violation] = []
    sent_ok = {op.key: op for op in ops if op.f == "send" and op.type == "ok" and op.key is not None
               and op.queue is not None and op.offset is not None}
    # Where each message is stored, as the consumers saw it (first topic position a listener got).
    # Not the send receipt's queue: rocketmq-python-client 5.1.2's SendReceipt names a different
    # queue than the one the message is stored in (its offset is right; measured on 5.0.0 and
    # 5.5.0: receipt queue = stored queue + 1 mod 4 for most sends). A message no consumer ever
    # got has no known position: OFF-3 cannot place it, ALO-3 still reports it.
    observed: dict[str, tuple[int, int]] = {}
    for op in ops:
        if op.f in ("consume", "skip") and op.topic == TOPIC and op.key is not None and op.queue is not None \
                and op.offset is not None:
            observed.setdefault(op.key, (int(op.queue), int(op.offset)))
    at_position = {pos: key for key, pos in observed.items() if key in sent_ok}
    by_queue: dict[int, list[int]] = {}
    for qid, offset in sorted(at_position):
        by_queue.setdefault(qid, []).append(offset)
    attempted: set[str] = set()
    success: Counter[str] = Counter()
    persisted: dict[int, int] = {}        # topic queue -> highest offset persisted so far
    last_persist: dict[int, int] = {}     # topic queue -> last persisted offset
    max_offset: dict[int, int] = {}
    reported_off3: set[tuple[int, int]] = set()
    deliveries = later = retry = skipped = persists = kills = faults = below = 0

    def off3(op: Op, qid: int, offset: int, what: str) -> None:
        for pos in by_queue.get(qid, ()):
            if pos >= offset:
                break
            if (TOPIC, qid, pos) in checker.handled or (qid, pos) in reported_off3:
                continue
            reported_off3.add((qid, pos))
            key = at_position[(qid, pos)]
            message = (f"{op.process} {what} offset {offset} of {TOPIC}:{qid}, passing offset {pos} "
                       f"(message {key}) that was neither consumed nor sent back")
            if checker.faults_seen & PROPERTIES["OFF-3"].excluded_faults:
                checker.excused_violations += 1
            else:
                violations.append(Violation("OFF-3", message, op.index))
            return

    # The history joins several processes (popverify's producer, one JVM per consumer), each
    # appended by its own reader thread: replay in the order of their clocks (one machine's
    # wall clock), each process's own order kept.
    for op in sorted(ops, key=lambda o: (o.time_ms, o.index)):
        value = op.value if isinstance(op.value, dict) else {}
        if op.f == "send" and op.type == "invoke" and op.key is not None:
            attempted.add(op.key)
            done = sent_ok.get(op.key)
            if done is not None:
                qid, offset = observed.get(op.key, (int(done.queue), int(done.offset)))  # type: ignore[arg-type]
                checker.on_produce(op.key, qid, offset)
        elif op.f in ("consume", "skip") and op.queue is not None and op.offset is not None:
            deliveries += 1
            topic = str(op.topic)
            retry += topic == RETRY_TOPIC
            if op.f == "skip":
                skipped += 1
                continue  # claimed CONSUME_SUCCESS, never processed: nothing consumed
            status = str(value.get("status"))
            mq = MessageQueue(topic, "broker-a", int(op.queue))
            if status == "CONSUME_SUCCESS":
                success[str(op.key)] += 1
                if topic == TOPIC and op.offset < persisted.get(int(op.queue), -1):
                    below += 1
                checker.on_consume(ConsumeRecord(mq, (int(op.offset),), (op.key,), status, None))
            else:
                later += 1
                checker.on_consume(ConsumeRecord(mq, (int(op.offset),), (op.key,), status, None,
                                                 sent_back=(int(op.offset),)))
        elif op.f in ("update", "persist") and op.topic == TOPIC and op.queue is not None and op.offset is not None:
            qid, offset = int(op.queue), int(op.offset)
            if op.f == "persist":
                persists += 1
                persisted[qid] = max(persisted.get(qid, -1), offset)
                last_persist[qid] = offset
            off3(op, qid, offset, "committed (" + ("OffsetStore#persistAll" if op.f == "persist"
                                                   else "OffsetStore#updateOffset") + ")")
        elif op.f == "max" and op.topic == TOPIC and op.queue is not None and op.offset is not None:
            max_offset[int(op.queue)] = int(op.offset)
        elif op.f == "crash":
            kills += 1
        elif op.f == "fault" and op.type == "info" and value.get("phase") == "begin":
            faults += 1
            kind = value.get("kind")
            if kind == "kill":
                checker.on_fault("restart")
            elif kind == "consumer":
                checker.on_fault("consumer_crash")
            elif kind is not None:
                checker.on_fault(str(kind))
    end = max((op.index for op in ops), default=0)
    checker.finish(drained, end)
    violations.extend(checker.violations)
    prg3_status = "not checked: the run did not reach its drain"
    if drained:
        if not max_offset:
            prg3_status = "not checked: no consumer reported the queues' max offsets"
        else:
            stuck = {q: (last_persist.get(q, -1), m) for q, m in sorted(max_offset.items())
                     if last_persist.get(q, -1) != m}
            for q, (got, want) in stuck.items():
                violations.append(Violation("PRG-3", f"after the drain {TOPIC}:{q} was last persisted at {got}, "
                                                     f"its max offset is {want}", end))
            prg3_status = "violated" if stuck else "holds"
    ack_keys = set(sent_ok)
    consumed = {k for k in ack_keys if success[k]}
    indeterminate = attempted - ack_keys
    totals = PushTotals(
        attempted_sends=len(attempted), acknowledged_sends=len(ack_keys), indeterminate_sends=len(indeterminate),
        consumed=len(consumed), lost=len(ack_keys - consumed), duplicated=sum(1 for k in consumed if success[k] > 1),
        consumed_below_commit=below, recovered=sum(1 for k in indeterminate if success[k]),
        unexpected=sum(1 for k in success if k not in attempted), deliveries=deliveries, reconsume_later=later,
        from_retry_topic=retry, skipped=skipped, persists=persists, consumer_kills=kills, faults=faults)
    violated = {v.property_id for v in violations}
    checked: dict[str, str] = {}
    for pid in OBSERVABLE:
        if pid == "PRG-3":
            checked[pid] = prg3_status
        elif pid == "ALO-3" and not drained:
            checked[pid] = "not checked: the run did not reach its drain"
        elif pid in violated:
            checked[pid] = "violated"
        else:
            checked[pid] = "holds"
    for pid in NOT_OBSERVABLE:
        checked[pid] = "not checked: not observable from clients"
    return LiveVerdict(totals, tuple(violations), checker.excused_violations,  # type: ignore[arg-type]
                       tuple(sorted(checker.faults_seen)), checked)
