"""History checker for push consumption: ALO-3, OFF-3, PQ-1 and PQ-2.

The push driver reports every produce, every consume step (ConsumeRecord) and every fault;
``check_state`` reads the broker's committed offsets, the clients' offset tables and their
ProcessQueues. Message identity is UNIQ_KEY, which consumerSendMsgBack copies into the
retry topic, so a message sent back and consumed from %RETRY%group counts as consumed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from popverify.checker.properties import PROPERTIES
from popverify.checker.violation import Violation
from reference.client.consume_api import ConsumeRecord

if TYPE_CHECKING:
    from reference.broker.broker import Broker
    from reference.client.process_queue import ProcessQueue
    from reference.common.message_queue import MessageQueue

# Listener statuses after which the messages of a record count as consumed.
CONSUMED_STATUSES = frozenset({"CONSUME_SUCCESS", "SUCCESS", "COMMIT"})


@attrs.define
class PushChecker:
    """Collects push-mode violations; ``enabled=False`` records nothing."""

    group: str
    topics: tuple[str, ...]           # the subscribed topic and %RETRY%group
    enabled: bool = True
    violations: list[Violation] = attrs.Factory(list)
    produced: dict[str, tuple[int, int]] = attrs.Factory(dict)      # uniq → (queueId, offset) in the topic
    consumed: dict[str, int] = attrs.Factory(dict)                  # uniq → successful consumptions
    handled: set[tuple[str, int, int]] = attrs.Factory(set)         # (topic, qid, offset) consumed or sent back
    excused: set[str] = attrs.Factory(set)                          # expired: no ALO obligation
    # offsets2: per queue of the subscribed topic, the highest queue offset an admin reset it to
    # (on_reset_offset): a message stored below it, then or later, is no longer owed
    _reset_to: dict[int, int] = attrs.Factory(dict)
    faults_seen: set[str] = attrs.Factory(set)
    excused_violations: int = 0
    _reported: set[tuple[str, str]] = attrs.Factory(set)
    # DUP-1: (topic, qid, offset) → (consumer, its holding generation of the queue) when it was
    # consumed successfully; a rebalance of that consumer adding or removing the queue (a new
    # ProcessQueue) starts a new generation.
    _consumed_at: dict[tuple[str, int, int], tuple[str, int]] = attrs.Factory(dict)
    _generation: dict[tuple[str, str, int], int] = attrs.Factory(dict)
    # PSH-2: held pull (by identity) → virtual time it was first seen held with a message
    # at or after its offset.
    _cause_gone_since: dict[tuple, int] = attrs.Factory(dict)
    # PQ-2: held message (by identity; the object is kept so its id is not reused) → its body
    # length when a check first saw it held, i.e. as ProcessQueue#putMessage counted it.
    _counted: dict[int, tuple[object, int]] = attrs.Factory(dict)

    def _fail(self, pid: str, message: str, step: int, key: str) -> None:
        if (pid, key) in self._reported:
            return  # one report per property and subject: a stuck offset is one finding
        self._reported.add((pid, key))
        if self.faults_seen & PROPERTIES[pid].excluded_faults:
            self.excused_violations += 1
            return
        self.violations.append(Violation(pid, message, step))

    def on_fault(self, kind: str) -> None:
        """A fault happened; properties whose assumptions exclude it stop being checked."""
        if self.enabled:
            self.faults_seen.add(kind)

    def on_produce(self, uniq: str, queue_id: int, offset: int) -> None:
        """A message was stored in the subscribed topic."""
        if self.enabled:
            self.produced[uniq] = (queue_id, offset)
            if offset < self._reset_to.get(queue_id, 0):
                self.excused.add(uniq)

    def on_reset_offset(self, queue_id: int, offset: int) -> None:
        """An admin reset queue ``queue_id`` of the subscribed topic to queue offset ``offset``
        (spec/properties.md "Admin requests"): the messages below it, stored now or later (a
        reset past the end), are skipped on purpose, no longer owed (ALO-3, OFF-3). A reset
        back re-delivers in a new ProcessQueue (the pull's OFFSET_ILLEGAL, a rebalance), which
        DUP-1 allows."""
        if not self.enabled:
            return
        self._reset_to[queue_id] = max(self._reset_to.get(queue_id, 0), offset)
        for uniq, (qid, stored) in self.produced.items():
            if qid == queue_id and stored < offset:
                self.excused.add(uniq)

    def on_expire(self, topic: str, queue_id: int, below: int) -> None:
        """Retention removed the messages of (topic, queue) below ``below``."""
        if not self.enabled:
            return
        for uniq, (qid, offset) in self.produced.items():
            if topic == self.topics[0] and qid == queue_id and offset < below:
                self.excused.add(uniq)

    def on_retention_lost(self, uniqs: Iterable[str]) -> None:
        """Retention deleted a retry copy or parked copy these messages needed."""
        if self.enabled:
            self.excused.update(uniqs)

    def on_rebalance(self, consumer: str, changed: Iterable["MessageQueue"]) -> None:
        """``consumer``'s rebalance added or removed these queues: what it consumes there from
        now on may legitimately start again from the committed offset (DUP-1)."""
        if not self.enabled:
            return
        for mq in changed:
            key = (consumer, mq.topic, mq.queue_id)
            self._generation[key] = self._generation.get(key, 0) + 1

    def on_consume(self, record: ConsumeRecord, step: int = -1, floor: int | None = None,
                   consumer: str = "") -> None:
        """One consume step of ``consumer``: the listener's status applied to a batch (or a
        dropped queue). ``floor`` is the larger of the broker's committed offset and the
        consumer's own offset table entry for the queue just before the step (DUP-1)."""
        if not self.enabled or record.dropped:
            return
        mq = record.mq
        if record.status in CONSUMED_STATUSES:
            holder = (consumer, self._generation.get((consumer, mq.topic, mq.queue_id), 0))
            for offset in record.offsets:
                key = (mq.topic, mq.queue_id, offset)
                if floor is not None and offset < floor and self._consumed_at.get(key) == holder:
                    self._fail("DUP-1", f"{consumer} consumed {mq.topic}:{mq.queue_id} offset {offset} successfully "
                                        f"again below the committed offset {floor}, holding the queue throughout "
                                        f"(no rebalance move, crash, restart or lost/duplicated response since)",
                               step, f"{mq.topic}:{mq.queue_id}:{offset}")
                self._consumed_at[key] = holder
            for offset, uniq in zip(record.offsets, record.uniq_keys):
                self.handled.add((mq.topic, mq.queue_id, offset))
                if uniq is not None:
                    self.consumed[uniq] = self.consumed.get(uniq, 0) + 1
        self.on_sent_back(mq.topic, mq.queue_id, record.sent_back)

    def on_sent_back(self, topic: str, queue_id: int, offsets: Iterable[int]) -> None:
        """Messages sent back to %RETRY%group (by a listener's result or by cleanExpiredMsg): the
        copy there carries the obligation from here on."""
        if self.enabled:
            self.handled.update((topic, queue_id, offset) for offset in offsets)

    def on_retry_copy(self, step: int, uniq: str | None, offset: int, reconsume_times: int,
                      max_reconsume_times: int | None) -> None:
        """RED-2 (push): a copy in %RETRY%group was made by consumerSendMsgBack from a stored
        message with reconsumeTimes r < maxReconsumeTimes and carries r + 1, so it lies in
        1..maxReconsumeTimes (no upper bound when ``max_reconsume_times`` is None: orderly)."""
        if not self.enabled:
            return
        low_ok = reconsume_times >= 1
        high_ok = max_reconsume_times is None or reconsume_times <= max_reconsume_times
        if not (low_ok and high_ok):
            bound = f"1..{max_reconsume_times}" if max_reconsume_times is not None else ">= 1"
            self._fail("RED-2", f"the copy of {uniq} at {self.topics[1]} offset {offset} carries reconsumeTimes "
                                f"{reconsume_times}, outside {bound}", step, f"retry:{offset}")

    def on_dead_letter(self, uniq: str | None) -> None:
        """The message went to %DLQ%group after maxReconsumeTimes: no longer owed to consumers."""
        if self.enabled and uniq is not None:
            self.excused.add(uniq)

    # -- state -------------------------------------------------------------------------------
    def check_state(self, step: int, broker: "Broker", offset_tables: Iterable[tuple[str, dict["MessageQueue", int]]],
                    process_queues: Iterable[tuple[str, "MessageQueue", "ProcessQueue"]]) -> None:
        """OFF-3 on the broker's committed offsets and every live client's offset table;
        PQ-1 / PQ-2 on every ProcessQueue."""
        if not self.enabled:
            return
        for topic in self.topics:
            for qid in range(broker.topics.get(topic, 0)):
                committed = broker.committed_offset(self.group, topic, qid)
                self._check_offset(step, broker, "broker", topic, qid, committed)
        for client, table in offset_tables:
            for mq, offset in sorted(table.items(), key=lambda kv: (kv[0].topic, kv[0].queue_id)):
                if mq.topic in self.topics:
                    self._check_offset(step, broker, client, mq.topic, mq.queue_id, offset)
        counted, alive = self._counted, []
        for client, mq, pq in process_queues:
            held = list(pq.msg_tree_map.values()) + list(pq.consuming_msg_orderly_tree_map.values())
            where = f"{client} {mq.topic}:{mq.queue_id}"
            if pq.msg_count != len(held):
                self._fail("PQ-1", f"ProcessQueue of {where}: msgCount {pq.msg_count} but {len(held)} messages held",
                           step, where)
            # A listener may change the body of a message the queue still holds (an orderly
            # SUSPEND keeps it, ProcessQueue#makeMessageToConsumeAgain): msgSize counts the body
            # as it was put, so that length is what the held message weighs (spec/properties.md).
            size = 0
            for m in held:
                seen = counted.get(id(m))
                if seen is None or seen[0] is not m:
                    seen = counted[id(m)] = (m, len(m.body))
                size += seen[1]
            alive += held
            if pq.msg_size != size:
                self._fail("PQ-2", f"ProcessQueue of {where}: msgSize {pq.msg_size} but held bodies total {size} "
                                   "(as put)", step, where)
        if len(counted) > 2 * len(alive) + 64:  # forget messages no longer held, now and then
            self._counted = {id(m): counted[id(m)] for m in alive}

    def on_pull_response_size(self, step: int, where: str, delivered: int, max_msg_nums: int) -> None:
        """BAT-1 (push): a pull response carries at most the request's maxMsgNums
        (pullBatchSize) messages (DefaultMessageStore#getMessage)."""
        if self.enabled and delivered > max_msg_nums:
            self._fail("BAT-1", f"a pull response for {where} carries {delivered} messages for maxMsgNums "
                                f"{max_msg_nums}", step, where)

    def on_orderly_consume(self, step: int, consumer: str, record: ConsumeRecord, lock_holder: str | None) -> None:
        """ORD-1: an orderly consume step hands messages of a queue to ``consumer``'s listener
        only while the broker's RebalanceLockManager lock of (group, queue) is ``consumer``'s
        (``lock_holder``: the holder of an unexpired lock, None when there is none)."""
        if not self.enabled or record.dropped or not record.offsets:
            return
        if lock_holder != consumer:
            where = f"{record.mq.topic}:{record.mq.queue_id}"
            self._fail("ORD-1", f"{consumer} consumed {where} offsets {list(record.offsets)} orderly while the "
                                f"broker's lock of the queue is held by {lock_holder or 'nobody'}",
                       step, f"{consumer}:{where}")

    def check_suspended(self, step: int, now: int, broker: "Broker") -> None:
        """PSH-2: no pull stays held by PullRequestHoldService more than SUSPEND_CAUSE_BOUND_MS
        while its queue has a message at or after the pull's offset (its cause is gone:
        notifyMessageArriving should have answered it)."""
        if not self.enabled:
            return
        seen: set[tuple] = set()
        for held in broker.pull_hold.held_requests():
            header = held.header
            if broker.max_offset(header.topic, header.queue_id) <= header.queue_offset:
                continue
            key = (header.client_id, header.request_id, header.topic, header.queue_id, held.suspend_timestamp)
            seen.add(key)
            since = self._cause_gone_since.setdefault(key, now)
            if now - since > SUSPEND_CAUSE_BOUND_MS:
                where = f"{header.topic}:{header.queue_id}"
                self._fail("PSH-2", f"a pull of {where} at offset {header.queue_offset} (held since "
                                    f"{held.suspend_timestamp}) is still suspended {now - since} ms after its queue "
                                    f"reached max offset {broker.max_offset(header.topic, header.queue_id)}",
                           step, f"{where}:{header.queue_offset}")
        for gone in set(self._cause_gone_since) - seen:
            del self._cause_gone_since[gone]

    def _check_offset(self, step: int, broker: "Broker", who: str, topic: str, qid: int, offset: int) -> None:
        if offset <= 0:
            return
        # the offset counts consume-queue units; the client knows a message by its stored
        # queue offset (one more per burnt offset on 5.0.0: MessageStore.burn_queue_offset)
        for index, msg in broker.store.live_units(topic, qid):
            if index >= offset:
                break
            if (topic, qid, msg.queue_offset) in self.handled or msg.uniq_key in self.excused:
                continue
            self._fail("OFF-3", f"offset {offset} of {topic}:{qid} held by {who} passes offset {index} "
                                f"(message {msg.uniq_key}) that was neither consumed nor sent back",
                       step, f"{topic}:{qid}:{index}")
            return

    def finish(self, drained: bool, end_step: int) -> None:
        """ALO-3 after a drain that reached quiescence with every consumer consuming."""
        if not self.enabled or not drained:
            return
        for uniq, (qid, offset) in self.produced.items():
            if uniq in self.excused or self.consumed.get(uniq, 0) > 0:
                continue
            self._fail("ALO-3", f"message {uniq} (queue {qid} offset {offset}) was never consumed", end_step, uniq)


# PSH-2's bound: the model answers a held pull on the put itself (ReputMessageService →
# PullRequestHoldService#notifyMessageArriving runs within milliseconds in Java); 1 s leaves
# room for the reput lag without letting PullRequestHoldService's 5 s check loop stand in.
SUSPEND_CAUSE_BOUND_MS = 1000
