"""History checker for POP consumption: ALO, NSR, INV, OFF and CKM properties.

The driver reports every produce, delivery, ack, changeInvisibleTime, revive and fault;
``check_offsets`` reads committed offsets and live checkpoints from the broker. Message
identity is the UNIQ_KEY property, which revive copies into the retry topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from popverify.checker.properties import PROPERTIES
from popverify.checker.violation import Violation

if TYPE_CHECKING:
    from reference.broker.broker import Broker


@attrs.define
class MessageRecord:
    """What the history says about one produced message."""

    queue_id: int
    offset: int
    incarnation: int            # topic incarnation (delete + re-create starts a new one)
    deliveries: int = 0
    acked: bool = False
    revived: int = 0
    visible_at: int = -1        # end of the current invisibility (latest pop or changeInvisibleTime)
    clean_ack_epoch: int = -1   # restart epoch of an ack that came before its deadline; -1 none
    deliver_epoch: int = -1     # restart epoch of the latest delivery


@attrs.define
class PopChecker:
    """Collects violations; ``enabled=False`` records nothing (benchmark 'checker off')."""

    topic: str
    group: str
    enabled: bool = True
    violations: list[Violation] = attrs.Factory(list)
    messages: dict[str, MessageRecord] = attrs.Factory(dict)
    by_offset: dict[tuple[int, int], str] = attrs.Factory(dict)  # (queueId, offset) → uniq key, live incarnation
    epoch: int = 0               # broker restarts so far
    incarnation: int = 0
    excused: set[str] = attrs.Factory(set)  # expired or deleted: no ALO obligation
    _last_commits: dict[int, int] = attrs.Factory(dict)
    faults_seen: set[str] = attrs.Factory(set)
    excused_violations: int = 0
    end_step: int = -1

    def _fail(self, pid: str, message: str, step: int) -> None:
        if self.faults_seen & PROPERTIES[pid].excluded_faults:
            self.excused_violations += 1  # outside the property's assumptions
            return
        self.violations.append(Violation(pid, message, step))

    def on_fault(self, kind: str) -> None:
        """A fault happened; properties whose assumptions exclude it stop being checked."""
        if self.enabled:
            self.faults_seen.add(kind)

    # -- events ----------------------------------------------------------------------------
    def on_produce(self, uniq: str, queue_id: int, offset: int) -> None:
        if not self.enabled:
            return
        self.messages[uniq] = MessageRecord(queue_id, offset, self.incarnation)
        self.by_offset[(queue_id, offset)] = uniq

    def on_deliver(self, step: int, now: int, uniq: str, deadline: int) -> None:
        """A delivery of ``uniq`` popped at ``now`` and invisible until ``deadline``."""
        if not self.enabled:
            return
        rec = self.messages.get(uniq)
        if rec is None:
            return  # a message of a deleted incarnation's key space: nothing to hold it to
        if rec.clean_ack_epoch == self.epoch and uniq not in self.excused:
            self._fail("NSR-1", f"message {uniq} (queue {rec.queue_id} offset {rec.offset}) delivered again "
                                f"after an ack before its invisibility deadline", step)
        elif rec.deliver_epoch == self.epoch and now < rec.visible_at and uniq not in self.excused:
            self._fail("INV-1", f"message {uniq} delivered at {now}, before its invisible time "
                                f"ended at {rec.visible_at}", step)
        rec.deliveries += 1
        rec.visible_at = deadline
        rec.deliver_epoch = self.epoch

    def on_ack(self, step: int, now: int, uniq: str, code: int, deadline: int) -> None:
        """An ack of the handle whose invisibility ends at ``deadline``; code is the response."""
        if not self.enabled or code != 0:
            return
        rec = self.messages.get(uniq)
        if rec is None:
            return
        rec.acked = True
        if now < deadline:
            rec.clean_ack_epoch = self.epoch

    def on_change_invisible(self, uniq: str, code: int, new_deadline: int) -> None:
        if not self.enabled or code != 0:
            return
        rec = self.messages.get(uniq)
        if rec is not None:
            rec.visible_at = new_deadline

    def on_revive(self, step: int, uniq: str | None, queue_id: int, offset: int, normal: bool) -> None:
        """Revive copied the message at (queue, offset) of its CK's topic into the retry topic.

        ``normal`` says the CK was of the consumed topic (not of its retry topic); without a
        UNIQ_KEY the message is then found by its position.
        """
        if not self.enabled:
            return
        key = uniq if uniq is not None else (self.by_offset.get((queue_id, offset)) if normal else None)
        rec = self.messages.get(key) if key is not None else None
        if rec is None:
            return
        rec.revived += 1
        if rec.clean_ack_epoch == self.epoch and key not in self.excused:
            self._fail("CKM-1", f"revive re-sent message {key} (queue {queue_id} offset {offset}) "
                                f"that was acked before its deadline", step)

    def on_restart(self) -> None:
        if self.enabled:
            self.epoch += 1

    def on_expire(self, queue_id: int, below: int) -> None:
        if not self.enabled:
            return
        for (qid, offset), uniq in self.by_offset.items():
            if qid == queue_id and offset < below:
                self.excused.add(uniq)

    def on_delete_topic(self) -> None:
        if not self.enabled:
            return
        self.excused.update(self.by_offset.values())
        self.by_offset.clear()
        self._last_commits.clear()
        self.incarnation += 1

    # -- state -------------------------------------------------------------------------------
    def check_offsets(self, step: int, broker: "Broker", queues: int) -> None:
        """OFF-1 and OFF-2 on every queue whose committed offset moved since the last call."""
        if not self.enabled:
            return
        covered: set[tuple[int, int]] | None = None
        for qid in range(queues):
            now_commit = broker.committed_offset(self.group, self.topic, qid)
            before = self._last_commits.get(qid, -1)
            if now_commit == before:
                continue
            self._last_commits[qid] = now_commit
            if now_commit < before:
                self._fail("OFF-2", f"committed offset of queue {qid} moved back from {before} to {now_commit}", step)
                continue
            if covered is None:
                covered = self._live_checkpoint_offsets(broker)
            for offset in range(max(before, 0), now_commit):
                uniq = self.by_offset.get((qid, offset))
                if uniq is None or uniq in self.excused:
                    continue
                rec = self.messages[uniq]
                if not (rec.acked or rec.revived or (qid, offset) in covered):
                    self._fail("OFF-1", f"committed offset of queue {qid} passed offset {offset} "
                                        f"(message {uniq}) that is neither acked, revived nor under a live checkpoint",
                               step)

    def _live_checkpoint_offsets(self, broker: "Broker") -> set[tuple[int, int]]:
        out: set[tuple[int, int]] = set()
        cks = [w.ck for w in broker.buffered_checkpoints()] + [s.ck for s in broker.stored_checkpoints()]
        for ck in cks:
            if ck.topic != self.topic:
                continue
            diffs = ck.queue_offset_diff or [0]
            out.update((ck.queue_id, ck.start_offset + d) for d in diffs)
        return out

    def finish(self, drained: bool, end_step: int) -> None:
        """ALO-1 / ALO-2 after the drain (every consumer kept popping and acking to quiescence);
        violations are reported at ``end_step``, the drain's step."""
        self.end_step = end_step
        if not self.enabled or not drained:
            return
        for uniq, rec in self.messages.items():
            if uniq in self.excused:
                continue
            if rec.deliveries == 0:
                self._fail("ALO-1", f"message {uniq} (queue {rec.queue_id} offset {rec.offset}) was never "
                                    f"delivered", self.end_step)
            elif not rec.acked:
                self._fail("ALO-2", f"message {uniq} (queue {rec.queue_id} offset {rec.offset}) was delivered "
                                    f"but never acked although consumers acked everything", self.end_step)
