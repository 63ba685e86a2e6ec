"""Check a live history with the model's POP history checker and count Jepsen-style totals.

The history is replayed, in the order the client recorded it, into
``popverify.checker.pop.PopChecker`` through its events:

- ``ok send``      -> ``on_produce(key, queue, offset)`` (only acknowledged sends oblige the broker);
- ``deliver``      -> ``on_deliver(index, popTime, key, popTime + invisibleTime)``, both read from
  the proxy receipt handle (broker clock; same machine as the client);
- ``ok ack``       -> ``on_ack(index, t_ok, key, 0, deadline)`` with ``t_ok`` the client time of the
  answer: a clean ack is one answered before the handle's deadline, so it surely reached the
  broker before it (conservative for NSR-1);
- ``timeout ack``  -> an ack that may have happened, never clean (counts for ALO-2 only);
- ``ok change``    -> ``on_change_invisible(key, 0, new deadline)`` from the new handle;
- broker ``kill``  -> ``on_fault("restart")`` and ``on_restart()`` (NSR-1, INV-1, OFF-2, CKM-1 not
  checked afterwards, as in the model); ``consumer`` -> ``on_fault("consumer_crash")``.

OFF-1/OFF-2 (committed offsets, live checkpoints) and CKM-1 (revive) are not observable from
clients and are reported as such, not as passing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs

from popverify.checker.pop import PopChecker
from popverify.live.history import Op, parse_handle
from popverify.live.workload import GROUP, TOPIC
from popverify.checker.violation import Violation

OBSERVABLE = ("ALO-1", "ALO-2", "NSR-1", "INV-1", "RED-1")
NOT_OBSERVABLE = ("OFF-1", "OFF-2", "CKM-1")


@attrs.frozen
class Totals:
    """Jepsen-style counts over message keys."""

    attempted_sends: int
    acknowledged_sends: int      # send answered ok
    indeterminate_sends: int     # send failed or timed out at the client
    delivered: int               # distinct acknowledged-send keys delivered at least once
    lost: int                    # acknowledged send never delivered
    duplicated: int              # acknowledged send delivered more than once
    delivered_after_ack: int     # delivered again after an ok ack of the same key
    recovered: int               # indeterminate send that was delivered anyway
    unexpected: int              # delivered key that was never sent
    never_acked: int             # acknowledged send delivered but never acked (ok or timed out)
    stored_twice: int            # send stored at two or more queue positions (the client retried a send that had worked)
    deliveries: int
    acks_ok: int
    acks_indeterminate: int
    changes_ok: int
    faults: int

    def consistent(self) -> bool:
        """Internal arithmetic every history must satisfy."""
        return (self.delivered + self.lost == self.acknowledged_sends
                and self.acknowledged_sends + self.indeterminate_sends == self.attempted_sends
                and self.duplicated <= self.delivered and self.never_acked <= self.delivered
                and self.recovered <= self.indeterminate_sends)

    def to_json(self) -> dict[str, int]:
        return attrs.asdict(self)


@attrs.frozen
class LiveVerdict:
    """What the checker found in one live history."""

    totals: Any                  # Totals (pop) or check_push.PushTotals (push): to_json(), consistent()
    violations: tuple[Violation, ...]
    excused: int
    faults_seen: tuple[str, ...]
    checked: dict[str, str]      # property id -> "holds" | "violated" | "not checked: <why>"


def check_history(ops: list[Op], drained: bool = True) -> LiveVerdict:
    """Run the POP history checker over ``ops`` and compute the totals; ALO-1/ALO-2 only
    when the run reached its drain (not when it was cut short by a broker that did not
    come back)."""
    checker = PopChecker(TOPIC, GROUP)
    attempted: set[str] = set()
    acknowledged: dict[str, int] = {}
    deliveries: Counter[str] = Counter()
    acked_ok: set[str] = set()
    acked_any: set[str] = set()
    after_ack: set[str] = set()
    pending_ack: dict[tuple[str, str], Op] = {}
    acks_ok = acks_ind = changes_ok = faults = 0
    # A send took effect somewhere between its invoke and its ok; a consumer may record the
    # delivery before the producer records the ok, so the message is produced at the invoke.
    sent_ok = {op.key: op for op in ops if op.f == "send" and op.type == "ok" and op.key is not None
               and op.queue is not None and op.offset is not None}
    # The client retries a send whose answer it lost (a paused broker): the broker may store
    # the message twice, at two queue positions, under one key and one UNIQ_KEY. Deliveries of
    # the copies are not redeliveries of one message, and a revived copy (retry topic) cannot
    # be told apart from the other, so NSR-1/INV-1/ALO do not hold such keys to one message.
    positions: dict[str, set[tuple[int, int]]] = {}
    for op in ops:
        handle = parse_handle(op.handle or "") if op.f == "deliver" and op.key is not None else None
        if handle is not None and handle.topic_type == "0":
            positions.setdefault(str(op.key), set()).add((handle.queue_id, handle.offset))
    stored_twice = {k for k, where in positions.items() if len(where) > 1}
    for op in ops:
        key = op.key
        if op.f == "send" and key is not None:
            if op.type == "invoke":
                attempted.add(key)
                done = sent_ok.get(key)
                if done is not None:
                    acknowledged[key] = done.index
                    checker.on_produce(key, int(done.queue), int(done.offset))  # type: ignore[arg-type]
                    if key in stored_twice:
                        checker.excused.add(key)
        elif op.f == "deliver" and key is not None:
            deliveries[key] += 1
            if key in acked_ok:
                after_ack.add(key)
            handle = parse_handle(op.handle or "")
            if handle is not None:
                checker.on_deliver(op.index, handle.pop_time, key, handle.deadline)
        elif op.f == "ack" and key is not None:
            if op.type == "invoke":
                pending_ack[(op.process, key)] = op
            elif op.type in ("ok", "timeout"):
                invoke = pending_ack.pop((op.process, key), None)
                handle = parse_handle((invoke.handle if invoke else None) or "")
                deadline = handle.deadline if handle is not None else 0
                acked_any.add(key)
                if op.type == "ok":
                    acks_ok += 1
                    acked_ok.add(key)
                    checker.on_ack(op.index, op.time_ms, key, 0, deadline)
                else:
                    acks_ind += 1
                    checker.on_ack(op.index, max(op.time_ms, deadline), key, 0, deadline)
        elif op.f == "change" and op.type == "ok" and key is not None:
            changes_ok += 1
            handle = parse_handle(op.handle or "")
            if handle is not None:
                checker.on_change_invisible(key, 0, handle.deadline)
        elif op.f == "fault" and op.type == "info" and isinstance(op.value, dict) and op.value.get("phase") == "begin":
            faults += 1
            kind = op.value.get("kind")
            if kind == "kill":
                checker.on_fault("restart")
                checker.on_restart()
            elif kind == "consumer":
                checker.on_fault("consumer_crash")
            elif kind is not None:
                checker.on_fault(str(kind))
    end = ops[-1].index if ops else 0
    checker.finish(drained, end)
    ack_keys = set(acknowledged)
    delivered = {k for k in ack_keys if deliveries[k]}
    indeterminate = attempted - ack_keys
    totals = Totals(
        attempted_sends=len(attempted), acknowledged_sends=len(ack_keys), indeterminate_sends=len(indeterminate),
        delivered=len(delivered), lost=len(ack_keys - delivered),
        duplicated=sum(1 for k in delivered if deliveries[k] > 1),
        delivered_after_ack=len(after_ack & ack_keys),
        recovered=sum(1 for k in indeterminate if deliveries[k]),
        unexpected=sum(1 for k in deliveries if k not in attempted),
        never_acked=len(delivered - acked_any), stored_twice=len(stored_twice), deliveries=sum(deliveries.values()),
        acks_ok=acks_ok, acks_indeterminate=acks_ind, changes_ok=changes_ok, faults=faults)
    violated = {v.property_id for v in checker.violations}
    checked: dict[str, str] = {}
    for pid in OBSERVABLE:
        if pid in ("ALO-1", "ALO-2") and not drained:
            checked[pid] = "not checked: the run did not reach its drain"
        elif pid in violated:
            checked[pid] = "violated"
        elif checker.faults_seen & _excluded(pid):
            checked[pid] = "checked until an excluding fault: " + ",".join(sorted(checker.faults_seen & _excluded(pid)))
        else:
            checked[pid] = "holds"
    for pid in NOT_OBSERVABLE:
        checked[pid] = "not checked: not observable from clients"
    return LiveVerdict(totals, tuple(checker.violations), checker.excused_violations,
                       tuple(sorted(checker.faults_seen)), checked)


def _excluded(pid: str) -> frozenset[str]:
    from popverify.checker.properties import PROPERTIES
    return PROPERTIES[pid].excluded_faults
