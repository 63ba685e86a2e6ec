"""History checker for POP consumption: ALO, NSR, INV, OFF and CKM properties.

The driver reports every produce, delivery, ack, changeInvisibleTime, revive and fault;
``check_offsets`` reads committed offsets and live checkpoints from the broker. Message
identity is the UNIQ_KEY property, which revive copies into the retry topic.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from popverify.checker.orderly import OrderlyBlockCheck
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
    # RED-1: every delivery's current deadline and whether a clean ack ended it.
    handles: list["Handle"] = attrs.Factory(list)
    # deliveries an admin's reset or group deletion re-reads on purpose (spec/properties.md
    # "Admin requests"): each lets one delivery start the message's history afresh
    reread_credits: int = 0
    # CKs of deliveries before such a re-read, not cleanly acked: each may still revive (CKM-1)
    stale_cks: int = 0


@attrs.define
class Handle:
    """One delivery of a message (RED-1): its (possibly changed) deadline; clean once a clean
    ack ended it. A delivery whose deadline passed without a clean ack is *abandoned*."""

    deadline: int
    clean: bool = False


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
    # RED-2: reconsumeTimes the copy at (retry queue, retry offset) must carry -- its source's
    # plus one (PopReviveService#reviveRetry) -- and what each delivered position carried.
    _expected_rt: dict[tuple[int, int], tuple[str, int]] = attrs.Factory(dict)
    _delivered_rt: dict[tuple[str, int, int], int] = attrs.Factory(dict)
    _red1_reported: set[str] = attrs.Factory(set)
    orderly: OrderlyBlockCheck = attrs.Factory(OrderlyBlockCheck)  # POP-ORD-1
    # An admin's offset resets (spec/properties.md "Admin requests"): per queue, the spans of
    # offsets a reset crossed (a later move back into one is the reset taking effect, OFF-2)
    _reset_spans: dict[int, list[tuple[int, int]]] = attrs.Factory(dict)
    # after a deletion with its offsets: queues whose first commit is still to come (the group
    # starts anew there: the undelivered messages below it are skipped deliberately)
    _fresh_queues: set[int] | None = None
    # per queue, the latest reset's offset: messages stored later below it are skipped too
    _reset_floor: dict[int, int] = attrs.Factory(dict)

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
        if offset < self._reset_floor.get(queue_id, 0):
            self.excused.add(uniq)  # stored below an admin's reset of its queue (on_reset_offset)

    def on_deliver(self, step: int, now: int, uniq: str, deadline: int,
                   position: tuple[str, int, int] | None = None, reconsume_times: int | None = None,
                   orderly: bool = False) -> None:
        """A delivery of ``uniq`` popped at ``now`` and invisible until ``deadline``; with
        ``position`` (topic, queue, offset) and the delivered copy's ``reconsume_times``,
        RED-2 is checked too. An ``orderly`` delivery is held to POP-ORD-1 (on_orderly_deliver)
        instead of NSR-1, INV-1 and RED-1: orderly POP redelivers a queue's batch from its
        start offset, acked messages included, and drops acks of an earlier pop's handles
        (spec/properties.md)."""
        if not self.enabled:
            return
        if position is not None and reconsume_times is not None:
            self._check_reconsume_times(step, uniq, position, reconsume_times)
        rec = self.messages.get(uniq)
        if rec is None:
            return  # a message of a deleted incarnation's key space: nothing to hold it to
        if rec.reread_credits and self._bounded(rec, now):
            rec.reread_credits -= 1  # an admin's deliberate re-read: the history starts afresh
            rec.stale_cks += sum(1 for h in rec.handles if not h.clean)
            rec.clean_ack_epoch = rec.deliver_epoch = -1
            rec.handles.clear()
        if not orderly:
            self._check_bounded_redelivery(step, now, uniq, rec)
        rec.handles.append(Handle(deadline))
        checked = not orderly and uniq not in self.excused
        if checked and rec.clean_ack_epoch == self.epoch:
            self._fail("NSR-1", f"message {uniq} (queue {rec.queue_id} offset {rec.offset}) delivered again "
                                f"after an ack before its invisibility deadline", step)
        elif checked and rec.deliver_epoch == self.epoch and now < rec.visible_at:
            self._fail("INV-1", f"message {uniq} delivered at {now}, before its invisible time "
                                f"ended at {rec.visible_at}", step)
        rec.deliveries += 1
        rec.visible_at = deadline
        rec.deliver_epoch = self.epoch

    def on_orderly_deliver(self, step: int, now: int, consumer: str, uniq: str, position: tuple[str, int, int],
                           pop_time: int, invisible_time: int) -> None:
        """POP-ORD-1 on an orderly delivery of ``uniq`` at ``position`` (topic, queue, offset)."""
        if not self.enabled:
            return
        topic, queue, offset = position
        if uniq in self.excused:
            self.orderly.took_reset(topic, queue, offset)  # a re-read the reset excused still took it
            return
        problem = self.orderly.deliver(now, consumer, uniq, topic, queue, offset, pop_time, invisible_time)
        if problem is not None:
            self._fail("POP-ORD-1", problem, step)

    def on_response_size(self, step: int, delivered: int, max_msg_nums: int) -> None:
        """BAT-1: a POP response carries at most the request's maxMsgNums messages
        (popMsgFromQueue asks each queue for what is left of it)."""
        # a maxMsgNums <= 0 (a request of the argument domain) asks for nothing: 0 is the bound
        if self.enabled and delivered > max(max_msg_nums, 0):
            self._fail("BAT-1", f"a POP response carries {delivered} messages for maxMsgNums {max_msg_nums}", step)

    def on_ack(self, step: int, now: int, uniq: str, code: int, deadline: int) -> None:
        """An ack of the handle whose invisibility ends at ``deadline``; code is the response."""
        if not self.enabled or code != 0:
            return
        self.orderly.ack(uniq, now)
        rec = self.messages.get(uniq)
        if rec is None:
            return
        rec.acked = True
        if now < deadline:
            rec.clean_ack_epoch = self.epoch
            handle = self._handle(rec, deadline)
            if handle is not None:
                handle.clean = True

    def on_change_invisible(self, uniq: str, code: int, new_deadline: int, old_deadline: int | None = None) -> None:
        """A changeInvisibleTime answered ``code`` on the handle whose deadline was
        ``old_deadline`` (the latest delivery when not given)."""
        if not self.enabled or code != 0:
            return
        self.orderly.change_invisible(uniq, new_deadline)
        rec = self.messages.get(uniq)
        if rec is not None:
            rec.visible_at = new_deadline
            handle = self._handle(rec, old_deadline)
            if handle is not None:
                handle.deadline = new_deadline

    @staticmethod
    def _handle(rec: MessageRecord, deadline: int | None) -> Handle | None:
        """The delivery of ``rec`` not yet cleanly acked with that deadline (None: the latest)."""
        if deadline is None:
            return rec.handles[-1] if rec.handles else None
        return next((h for h in rec.handles if h.deadline == deadline and not h.clean), None)

    def _bounded(self, rec: MessageRecord, now: int) -> bool:
        """Whether a delivery of ``rec`` at ``now`` would meet NSR-1, INV-1 or RED-1's bound."""
        abandoned = sum(1 for h in rec.handles if not h.clean and h.deadline <= now)
        return rec.clean_ack_epoch == self.epoch or len(rec.handles) > abandoned or \
            (rec.deliver_epoch == self.epoch and now < rec.visible_at)

    def _check_bounded_redelivery(self, step: int, now: int, uniq: str, rec: MessageRecord) -> None:
        """RED-1: the n-th redelivery of a message needs n earlier deliveries of it abandoned
        (deadline reached with no clean ack): consumers that ack in time see it once."""
        earlier = len(rec.handles)
        if earlier == 0 or uniq in self.excused or uniq in self._red1_reported:
            return
        abandoned = sum(1 for h in rec.handles if not h.clean and h.deadline <= now)
        if earlier > abandoned:
            self._red1_reported.add(uniq)
            clean = sum(h.clean for h in rec.handles)
            self._fail("RED-1", f"message {uniq} (queue {rec.queue_id} offset {rec.offset}) delivered for the "
                                f"{earlier + 1}. time with only {abandoned} earlier deliveries abandoned "
                                f"(bound K = {abandoned}; {clean} cleanly acked, "
                                f"{earlier - abandoned - clean} still invisible)", step)

    def _check_reconsume_times(self, step: int, uniq: str, position: tuple[str, int, int], rt: int) -> None:
        """RED-2: a copy from the consumed topic carries reconsumeTimes 0; a revived copy in the
        retry topic carries its source's reconsumeTimes + 1 (the count a client's DLQ decision
        and the redelivery bound rest on)."""
        topic, qid, offset = position
        self._delivered_rt[position] = rt
        if topic == self.topic:
            expected: int | None = 0
        else:
            source = self._expected_rt.get((qid, offset))
            expected = None if source is None else source[1]
        if expected is not None and rt != expected and uniq not in self.excused:
            self._fail("RED-2", f"message {uniq} delivered from {topic}:{qid}:{offset} with reconsumeTimes {rt}, "
                                f"expected {expected}", step)

    def on_revive(self, step: int, uniq: str | None, queue_id: int, offset: int, normal: bool,
                  copy: tuple[str, int, int] | None = None) -> None:
        """Revive copied the message at (queue, offset) of its CK's topic into the retry topic.

        ``normal`` says the CK was of the consumed topic (not of its retry topic); without a
        UNIQ_KEY the message is then found by its position. ``copy`` is (CK topic, retry
        queue, retry offset) of the new copy (RED-2).
        """
        if not self.enabled:
            return
        if copy is not None:
            ck_topic, retry_qid, retry_offset = copy
            source = 0 if normal else self._delivered_rt.get((ck_topic, queue_id, offset))
            if source is not None:
                self._expected_rt[(retry_qid, retry_offset)] = (uniq or "", source + 1)
        key = uniq if uniq is not None else (self.by_offset.get((queue_id, offset)) if normal else None)
        rec = self.messages.get(key) if key is not None else None
        if rec is None:
            return
        rec.revived += 1
        if rec.stale_cks:
            rec.stale_cks -= 1  # the CK of a delivery before an admin's re-read (on_deliver) ...
            rec.reread_credits += 1  # ... whose retry copy is delivered once more
            return
        if rec.reread_credits:
            return  # the CK of a re-read whose response was lost; its retry copy takes the credit
        if rec.clean_ack_epoch == self.epoch and key not in self.excused:
            self._fail("CKM-1", f"revive re-sent message {key} (queue {queue_id} offset {offset}) "
                                f"that was acked before its deadline", step)

    def on_restart(self) -> None:
        if self.enabled:
            self.epoch += 1

    def on_expire(self, queue_id: int, below: int) -> None:
        if not self.enabled:
            return
        self.excused.update(u for q, o, u in self._live() if q == queue_id and o < below)

    def on_retention_lost(self, uniqs: "Iterable[str]") -> None:
        """Retention deleted a retry copy, CK, ACK or parked copy these messages needed."""
        if self.enabled:
            self.excused.update(uniqs)

    def on_delete_topic(self) -> None:
        if not self.enabled:
            return
        self.excused.update(u for _, _, u in self._live())
        # RED-2's positions: 5.5.0 deletes the POP retry topic with its topic, so both start
        # again at offset 0; what is forgotten is of excused messages only
        self._expected_rt.clear()
        self._delivered_rt.clear()
        self.orderly.forget()
        self.by_offset.clear()
        self._last_commits.clear()
        self._reset_floor.clear()
        self._reset_spans.clear()
        self.incarnation += 1

    def _skip(self, queue_id: int, below: int) -> None:
        """The messages of ``queue_id`` below ``below`` that nobody acked are skipped on purpose:
        the admin moved the offset past them. Those not yet delivered, and those an orderly POP
        delivered (no CK: the committed offset was their only way back) are never seen again;
        a plain POP's delivery may still come back through its CK, unless a crash lost the CK
        in the merge buffer (PopBufferMergeService keeps it until its scan stores it)."""
        self.excused.update(u for q, o, u in self._live()
                            if q == queue_id and o < below and not self.messages[u].acked)

    def _credit(self, queue_id: int | None, from_offset: int) -> None:
        """Each message (of ``queue_id``; None: every queue) at or above ``from_offset`` may be
        re-read once on purpose."""
        for qid, off, uniq in self._live():
            if (queue_id is None or qid == queue_id) and off >= from_offset:
                self.messages[uniq].reread_credits += 1

    def _live(self) -> list[tuple[int, int, str]]:
        """(queue, stored offset, uniq) of every message of the topic's live incarnation. Not
        by_offset's entries: after a 5.0.0 burnt offset and a broker restart two messages carry
        the same stored offset (MessageStore.burn_queue_offset), and by_offset keeps one."""
        return [(r.queue_id, r.offset, u) for u, r in self.messages.items() if r.incarnation == self.incarnation]

    def on_delete_group(self, clean_offset: bool, now: int | None = None) -> None:
        """The consumed group was deleted (at ``now``, when known). Any deletion may re-read what
        was stored (the order info and the merge buffer's commit queues of a missing group are
        dropped by their clean-ups); with ``clean_offset`` the group's offsets are gone, so what
        it has not acked may be skipped (ALO, OFF-1 excused) and each queue starts anew at its
        next commit. POP-ORD-1: no batch read by then blocks (OrderlyBlockCheck#forget)."""
        if not self.enabled:
            return
        self.orderly.forget(now)
        self._credit(None, 0)
        if clean_offset:
            self.excused.update(u for u, rec in self.messages.items() if not rec.acked)
            self._last_commits.clear()
            self._fresh_queues = set()

    def on_order_info_dropped(self, from_queue: int, now: int) -> None:
        """The order info of the queues from ``from_queue`` on was dropped at ``now`` (an admin's
        topic update seen by its persist, autoClean): their batches in flight no longer block,
        and their next orderly POPs may re-read them once (POP-ORD-1 as after a group deletion:
        forget)."""
        if not self.enabled:
            return
        self.orderly.forget(now)
        for qid in {q for q, _, _ in self._live() if q >= from_queue}:
            self._credit(qid, 0)

    def on_reset_offset(self, queue_id: int, offset: int, before: int, stored: int | None = None) -> None:
        """An admin reset ``queue_id`` from committed offset ``before`` to ``offset``: the
        messages below it not yet delivered, and those stored later below it, may be skipped
        (ALO, OFF-1 excused); those at or above it may be re-read once; a later move of the
        committed offset back into the span the reset crossed is the reset taking effect (OFF-2;
        5.5.0 commits it at the queue's next POP, 5.0.0's in-flight POPs may commit their older
        offsets over it). ``stored`` is ``offset`` as the messages' stored queue offsets count
        (MessageStore.queue_offset_at; None: the same)."""
        if not self.enabled:
            return
        stored = offset if stored is None else stored
        self.orderly.forget()  # 5.5.0 resetPopOffset clears the queue's order info (clearBlock)
        # ... at the queue's next POP, which reads from the reset offset: a batch answered after
        # this request but read before it (a POP in flight) does not block that POP
        self.orderly.reset(self.topic, queue_id, stored)
        self._skip(queue_id, stored)
        self._credit(queue_id, stored)
        self._reset_floor[queue_id] = stored
        self._reset_spans.setdefault(queue_id, []).append((min(before, offset), max(before, offset)))
        self._last_commits[queue_id] = offset

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
            if self._fresh_queues is not None and before == -1 and qid not in self._fresh_queues:
                # the group's first commit on the queue after its deletion: where it starts anew
                self._fresh_queues.add(qid)
                self._skip(qid, self._stored(broker, qid, now_commit))
                self._credit(qid, self._stored(broker, qid, now_commit))
            if now_commit < before and any(lo <= now_commit <= hi for lo, hi in self._reset_spans.get(qid, ())):
                continue  # an admin's reset taking effect (on_reset_offset)
            if now_commit < before:
                self._fail("OFF-2", f"committed offset of queue {qid} moved back from {before} to {now_commit}", step)
                continue
            if covered is None:
                covered = self._live_checkpoint_offsets(broker)
            low, high = self._stored(broker, qid, max(before, 0)), self._stored(broker, qid, now_commit)
            # Only offsets a message was seen at can fail; a queue may start anywhere a long
            # allows (ScenarioConfig.start_offset), so the gap is not walked offset by offset.
            if high - low <= len(self.by_offset):
                seen: Iterable[int] = range(low, high)
            else:
                seen = sorted(o for q, o in self.by_offset if q == qid and low <= o < high)
            for offset in seen:
                uniq = self.by_offset.get((qid, offset))
                if uniq is None or uniq in self.excused:
                    continue
                rec = self.messages[uniq]
                if not (rec.acked or rec.revived or (qid, offset) in covered):
                    self._fail("OFF-1", f"committed offset of queue {qid} passed offset {offset} "
                                        f"(message {uniq}) that is neither acked, revived nor under a live checkpoint",
                               step)

    def _stored(self, broker: "Broker", qid: int, index: int) -> int:
        """A consume-queue index (committed offsets, CK offsets) as the stored queue offsets the
        checker knows messages by count it (larger past a 5.0.0 burnt offset:
        MessageStore.burn_queue_offset)."""
        return broker.queue_offset_at(self.topic, qid, index)

    def _live_checkpoint_offsets(self, broker: "Broker") -> set[tuple[int, int]]:
        out: set[tuple[int, int]] = set()
        cks = [w.ck for w in broker.buffered_checkpoints()] + [s.ck for s in broker.stored_checkpoints()]
        for ck in cks:
            if ck.topic != self.topic:
                continue
            diffs = ck.queue_offset_diff or [0]
            out.update((ck.queue_id, self._stored(broker, ck.queue_id, ck.start_offset + d)) for d in diffs)
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
