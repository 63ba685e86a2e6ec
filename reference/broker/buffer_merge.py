"""PopBufferMergeService: checkpoints and acks merged in memory before they reach the revive topic.

A checkpoint (CK) from a pop waits in ``buffer``; acks arriving while it waits only set bits
(addAk). ``scan`` (every 5 ms; the driver calls it) drops fully-acked CKs without writing
anything, and writes a CK plus its acked bits (as ACK messages) to the revive topic when the
CK has stayed too long or is close to its revive time. ``commit_offsets`` keeps, per
``{topic}@{group}@{queueId}``, the pops in order; ``scan_commit_offset`` commits a queue's
consumer offset up to the first pop that is not yet safe. All of it is memory: a broker
restart loses it (and the consumer offset only advances through it).

Java iterates ConcurrentHashMaps here; the model iterates in insertion order (documented in
spec/broker.md). Every method is one model step (Java runs each in one thread, with CAS on
the bit sets).
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import attrs

from reference.broker.checkpoint import AckMsg, BatchAckMsg, PopCheckPoint, ck_queue_id, get_bit, set_bit
from reference.broker.config import BrokerConfig
from reference.broker.keys import ACK_TAG, BATCH_ACK_TAG, build_ck_merge_key, build_lock_key
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.queue_lock import QueueLockManager
from reference.common.clock import wall_clock_ms
from reference.common.javalang import LONG_MAX, concurrent_hash_map_order
from reference.common.message import MessageExt

def _java_str(value: str | None) -> str:
    """A String in Java string concatenation (null is "null")."""
    return "null" if value is None else value


# PopBufferMergeService: `buffer = new ConcurrentHashMap<>(1024 * 16)`: tableSizeFor(1 + 16384 /
# 0.75) = 32768 bins, resized only past 24576 entries.
BUFFER_TABLE_SIZE = 32768


# PopBufferMergeService: countOfSecond30 and countOfMinute1 scans of 5 ms, and minute5.
GARBAGE_SCAN_PERIOD_MS = 30 * 1000
COUNTER_RESET_PERIOD_MS = 60 * 1000
GARBAGE_UNUSED_MS = 5 * 60 * 1000
# shutdown_drain's bound: a drain whose store refuses at most MAX_PENDING_FAILURES puts per
# armed site ends within a few scans; one still running after this many never ends
DRAIN_PASS_BOUND = 64


@attrs.define(slots=True, eq=False)
class PopCheckPointWrapper:
    """PopCheckPointWrapper: a CK, its acked bits and what has been written to the store."""

    revive_queue_id: int
    revive_queue_offset: int
    ck: PopCheckPoint
    next_begin_offset: int
    just_offset: bool = False
    ck_stored: bool = False
    bits: int = 0
    to_store_bits: int = 0

    @property
    def merge_key(self) -> str:
        """topic + cid + queueId + startOffset + popTime + brokerName (no separators, as Java:
        PopCheckPointWrapper's constructors, 5.0.0 and 5.5.0; a null brokerName concatenates as
        "null"). The buffer's key: its ConcurrentHashMap order hashes it (lockstep on 5.0.0
        found the model's key without brokerName ordering two CKs of one scan the other way)."""
        ck = self.ck
        return build_ck_merge_key(ck.topic or "", ck.cid or "", ck.queue_id, ck.start_offset, ck.pop_time) \
            + _java_str(ck.broker_name)

    @property
    def wall_clock_merge_key(self) -> str:
        """The merge key as the broker holds it: popTime on its epoch (reference/common/clock.py),
        the String ConcurrentHashMap hashes (lockstep: two CKs of one scan written in the other
        order when the model hashed its own clock's digits)."""
        ck = self.ck
        return build_ck_merge_key(ck.topic or "", ck.cid or "", ck.queue_id, ck.start_offset,
                                  wall_clock_ms(ck.pop_time)) + _java_str(ck.broker_name)

    @property
    def lock_key(self) -> str:
        """topic@cid@queueId."""
        return build_lock_key(self.ck.topic or "", self.ck.cid or "", self.ck.queue_id)


def is_ck_done(w: PopCheckPointWrapper) -> bool:
    """isCkDone: every one of the CK's ``num`` bits acked."""
    return all(get_bit(w.bits, i) for i in range(w.ck.num))


def is_ck_done_for_finish(w: PopCheckPointWrapper) -> bool:
    """isCkDoneForFinish: every acked bit has been written to the store."""
    diff = w.bits ^ w.to_store_bits
    return not any(get_bit(diff, i) for i in range(w.ck.num))


class PopBufferMergeService:
    """The merge buffer, the per-queue offset queues and the scan service."""

    def __init__(self, config: BrokerConfig, now: Callable[[], int], offsets: ConsumerOffsetManager,
                 locks: QueueLockManager, put_ck: Callable[[PopCheckPoint, int], int],
                 put_revive: Callable[[MessageExt, str], bool], ack_json: Callable[[AckMsg], str], *,
                 topic_exists: Callable[[str], bool] | None = None,
                 group_exists: Callable[[str], bool] | None = None,
                 find_group: Callable[[str], bool] | None = None) -> None:
        self._cfg = config
        self._now = now
        self._offsets = offsets
        self._locks = locks
        self._put_ck = put_ck  # writes the CK message, returns its revive queue offset (-1: put failed)
        self._put_revive = put_revive
        self._ack_json = ack_json
        self.buffer: dict[str, PopCheckPointWrapper] = {}
        self.commit_offsets: dict[str, deque[PopCheckPointWrapper]] = {}
        self.counter = 0
        self.serving = True
        # QueueWithTime#time of each commit-offset queue: popTime of the last CK put in it.
        self.commit_offset_times: dict[str, int] = {}
        self._topic_exists = topic_exists or (lambda topic: True)
        self._group_exists = group_exists or (lambda group: True)
        # 5.5.0 scan's isSubscriptionGroupNotExist (findSubscriptionGroupConfig, auto-creating);
        # None: 5.0.0, no such check
        self._find_group = find_group
        # Java counts scans (one every 5 ms): scanGarbage every countOfSecond30 = 6000 scans,
        # counter.set(buffer.size()) every countOfMinute1 = 12000. The model's scans are not one
        # per 5 ms (the driver runs them per service slice), so the counts are read as time.
        self._next_garbage_scan = now() + GARBAGE_SCAN_PERIOD_MS
        self._next_counter_reset = now() + COUNTER_RESET_PERIOD_MS

    # -- adding -------------------------------------------------------------------------
    def add_ck(self, point: PopCheckPoint, revive_queue_id: int, revive_queue_offset: int, next_begin_offset: int) -> bool:
        """addCk: buffer the CK (True) or refuse (False: switch off, too close to revive, full)."""
        if not self._cfg.enable_pop_buffer_merge or not self.serving:
            return False
        if point.revive_time - self._now() < self._cfg.pop_ck_stay_buffer_time_out + 1500:
            return False
        if self.counter > self._cfg.pop_ck_max_buffer_size:
            return False
        w = PopCheckPointWrapper(revive_queue_id, revive_queue_offset, point, next_begin_offset)
        if not self._check_queue_ok(w):
            return False
        if self._cfg.buffer_merge_key_conflict_guard and w.merge_key in self.buffer:
            return False  # 5.5.0: "mergeKey conflict when add ck"
        self._put_offset_queue(w)
        self.buffer[w.merge_key] = w
        self.counter += 1
        return True

    def add_ck_just_offset(self, point: PopCheckPoint, revive_queue_id: int, revive_queue_offset: int,
                           next_begin_offset: int) -> bool:
        """addCkJustOffset: write the CK to the store now; keep it only for offset ordering.

        False (nothing written) on a merge-key conflict where the profile guards it (5.5.0);
        5.0.0 returns void and replaces the buffered wrapper of the same key.
        """
        w = PopCheckPointWrapper(revive_queue_id, revive_queue_offset, point, next_begin_offset, just_offset=True)
        if self._cfg.buffer_merge_key_conflict_guard and w.merge_key in self.buffer:
            return False  # 5.5.0: "mergeKey conflict when add ckJustOffset"
        self._put_ck_to_store(w)
        self._put_offset_queue(w)
        self.buffer[w.merge_key] = w
        self.counter += 1
        return True

    def add_ck_mock(self, group: str, topic: str, queue_id: int, start_offset: int, invisible_time: int,
                    pop_time: int, revive_queue_id: int, next_begin_offset: int, broker_name: str,
                    queue_id_is_byte: bool) -> None:
        """addCkMock: an empty CK (num 0) that only carries nextBeginOffset to the offset queue."""
        ck = PopCheckPoint(start_offset=start_offset, pop_time=pop_time, invisible_time=invisible_time, num=0,
                           queue_id=ck_queue_id(queue_id, queue_id_is_byte), topic=topic, cid=group,
                           broker_name=broker_name)
        w = PopCheckPointWrapper(revive_queue_id, LONG_MAX, ck, next_begin_offset, just_offset=True, ck_stored=True)
        self._put_offset_queue(w)

    def _ak_target(self, ack: AckMsg | BatchAckMsg) -> PopCheckPointWrapper | None:
        """The buffered CK addAk would set a bit on (None: addAk returns false)."""
        if not self._cfg.enable_pop_buffer_merge:
            return None
        # PopBufferMergeService#addAk: buffer.get(topic + group + queueId + startOffset + popTime
        # + ackMsg.getBrokerName())
        w = self.buffer.get(ack.merge_key + _java_str(ack.broker_name))
        # mechanism switch for F4: an ack whose CK is still unstored in the buffer is merged
        # into it whatever the timing or the serving flag (its refusal stores the ACK first)
        unstored = w is not None and not w.ck_stored

        def late_ok() -> bool:  # the switch read only where it decides (attribution's consulted())
            return unstored and not self._cfg.ack_bypasses_unstored_ck

        if not self.serving and not late_ok():
            return None  # addAk 5.0.0:475, 5.5.0:538: refused while a slow scan stopped the service
        if w is None or w.just_offset:
            return None
        point = w.ck
        now = self._now()
        if point.revive_time - now < self._cfg.pop_ck_stay_buffer_time_out + 1500 and not late_ok():
            return None
        if now - point.pop_time > self._cfg.pop_ck_stay_buffer_time - 1500 and not late_ok():
            return None
        return w

    def would_add_ak(self, revive_qid: int, ack: AckMsg | BatchAckMsg) -> bool:
        """What add_ak would answer, without its effect (5.0.0 parses invisibleTime only after)."""
        return self._ak_target(ack) is not None

    def add_ak(self, revive_qid: int, ack: AckMsg | BatchAckMsg) -> bool:
        """addAk: set the ack's bit on a buffered CK (True) or let the caller store it (False)."""
        w = self._ak_target(ack)
        if w is None:
            return False
        # A BatchAckMsg (5.5.0) sets the bit of every listed offset it finds.
        for ack_offset in ack.ack_offset_list if isinstance(ack, BatchAckMsg) else (ack.ack_offset,):
            index = w.ck.index_of_ack(ack_offset)
            if index > -1:
                w.bits = set_bit(w.bits, index)
        # An offset outside the CK is logged and swallowed (returns True): the ack is lost.
        return True

    def get_latest_offset(self, lock_key: str) -> int:
        """getLatestOffset: nextBeginOffset of the newest pop still queued for the queue, or -1."""
        q = self.commit_offsets.get(lock_key)
        if not q:
            return -1
        return q[-1].next_begin_offset

    def clear_offset_queue(self, lock_key: str) -> None:
        """clearOffsetQueue (consumer offset reset)."""
        self.commit_offsets.pop(lock_key, None)
        self.commit_offset_times.pop(lock_key, None)

    # -- scanning -------------------------------------------------------------------------
    def scan(self, elapsed_ms: int = 0, loop_work: bool = True) -> None:
        """One pass of the service thread: scan (CKs and acks to the store, scanCommitOffset),
        the periodic counter reset and scanGarbage, and the serving flag.

        ``elapsed_ms``: how long this scan took (0: the model's scans take no time; the
        ``scan_stall`` fault passes a GC pause or slow disk). A scan longer than
        popCkStayBufferTimeOut - 1000 ms stops the service ("scan stop, because eclipse too
        long", PopBufferMergeService#scan, 5.0.0:297-299, 5.5.0:339-341): while not serving,
        addCk and addAk refuse and every buffered CK is stored at the next scan; serving comes
        back once the buffer and the commit-offset queues are empty (run, 5.0.0:107-109).
        ``loop_work`` False: scan() alone, as the shutdown drain calls it (no scanGarbage, no
        serving switch: those are run()'s loop body)."""
        now = self._now()
        # `buffer.entrySet().iterator()` of `new ConcurrentHashMap<>(1024 * 16)` (32768 bins on
        # Java 8..17): bin order, not insertion order; it decides the order CKs and ACKs reach
        # the revive topic (lockstep on 5.5.0: two CKs of one POP revived in the other order).
        for key in concurrent_hash_map_order(list(self.buffer), BUFFER_TABLE_SIZE,
                                             lambda k: self.buffer[k].wall_clock_merge_key):
            w = self.buffer[key]
            if self._find_group is not None and not self._find_group(w.ck.cid or ""):
                del self.buffer[key]  # 5.5.0 scan: "skip pop record because consumer group not exist"
                self.counter -= 1
                continue
            if (w.just_offset and w.ck_stored) or is_ck_done(w) or (is_ck_done_for_finish(w) and w.ck_stored):
                del self.buffer[key]
                self.counter -= 1
                continue
            point = w.ck
            remove_ck = not self.serving
            if point.revive_time - now < self._cfg.pop_ck_stay_buffer_time_out:
                remove_ck = True
            if now - point.pop_time > self._cfg.pop_ck_stay_buffer_time:
                remove_ck = True
            if w.just_offset:
                if w.revive_queue_offset < 0:
                    self._put_ck_to_store(w)
                continue
            if remove_ck:
                if w.revive_queue_offset < 0:
                    self._put_ck_to_store(w)
                if not w.ck_stored:
                    continue
                unstored = [i for i in range(point.num) if get_bit(w.bits, i) and not get_bit(w.to_store_bits, i)]
                if self._cfg.enable_pop_batch_ack:
                    # 5.5.0 scan:298-311: the acked bits not yet stored as one BatchAckMsg
                    if unstored and self._put_batch_ack_to_store(w, unstored):
                        for i in unstored:
                            w.to_store_bits = set_bit(w.to_store_bits, i)
                else:
                    for i in unstored:
                        # a failed put leaves the bit for the next scan (putAckToStore false)
                        if self._put_ack_to_store(w, i):
                            w.to_store_bits = set_bit(w.to_store_bits, i)
                if is_ck_done_for_finish(w) and w.ck_stored:
                    del self.buffer[key]
                    self.counter -= 1
        self.scan_commit_offset()
        if elapsed_ms > self._cfg.pop_ck_stay_buffer_time_out - 1000:
            self.serving = False
        if not loop_work:
            return
        end = self._now()
        if end >= self._next_counter_reset:  # scanTimes >= countOfMinute1: counter.set(buffer.size())
            self.counter = len(self.buffer)
            self._next_counter_reset = end + COUNTER_RESET_PERIOD_MS
        if end >= self._next_garbage_scan:  # run(): scanTimes % countOfSecond30 == 0
            self.scan_garbage()
            self._next_garbage_scan = end + GARBAGE_SCAN_PERIOD_MS
        if not self.serving and not self.buffer and not any(self.commit_offsets.values()):
            self.serving = True

    def shutdown_drain(self) -> bool:
        """run()'s tail once the thread is stopped (ServiceThread#shutdown, from BrokerController
        #shutdownBasicService: 5.0.0 PopBufferMergeService:116-126, 5.5.0:121-133): serving off,
        then scan() until the buffer and the commit-offset queues are empty. Serving off makes
        every CK's scan store it with its acked bits; scanCommitOffset commits the offsets. The
        tail's Thread.sleep(2000) passes no virtual time (the shutdown is one instant, as the
        harness's VirtualClock#sleep). False when the drain never ends (Java's thread spins:
        a put the store refuses every time): DRAIN_PASS_BOUND scans, then it is left so."""
        self.serving = False
        for _ in range(DRAIN_PASS_BOUND):
            if not self.buffer and not any(self.commit_offsets.values()):
                return True
            self.scan(loop_work=False)
        return not self.buffer and not any(self.commit_offsets.values())

    def quiet_until(self) -> int | None:
        """The earliest time a scan may change anything, while the service has nothing to do
        (serving, buffer and commit-offset queues empty): its next counter reset or garbage
        scan. None while it has work: every scan may change something."""
        if not self.serving or self.buffer or any(self.commit_offsets.values()):
            return None
        return min(self._next_counter_reset, self._next_garbage_scan)

    def scan_garbage(self) -> None:
        """scanGarbage (5.0.0:181-212, 5.5.0:188-218): drop the commit-offset queue of a
        ``topic@group@queueId`` whose topic or group no longer exists, or whose last CK was
        popped more than 5 minutes ago -- even when it still holds pops whose offsets are not
        committed (their nextBeginOffsets are then never committed by the buffer)."""
        now = self._now()
        for key in list(self.commit_offsets):
            parts = key.split("@")
            if len(parts) != 3:
                continue
            topic, cid = parts[0], parts[1]
            stale = now - self.commit_offset_times.get(key, now) > GARBAGE_UNUSED_MS
            if stale and self.commit_offsets[key] and not self._cfg.buffer_garbage_drops_pending_pops:
                stale = False  # F16's cause removed: an idle queue with uncommitted pops is kept
            if not self._topic_exists(topic) or not self._group_exists(cid) or stale:
                del self.commit_offsets[key]
                self.commit_offset_times.pop(key, None)

    def scan_commit_offset(self) -> int:
        """scanCommitOffset: per queue, commit offsets of the leading pops that are safe."""
        count = 0
        for q in self.commit_offsets.values():
            while q:
                w = q[0]
                if (w.just_offset and w.ck_stored) or is_ck_done(w) or (is_ck_done_for_finish(w) and w.ck_stored):
                    if self._commit_offset(w):
                        q.popleft()
                    else:
                        break
                else:
                    break
            count += len(q)
        return count

    # -- internals --------------------------------------------------------------------------
    def _commit_offset(self, w: PopCheckPointWrapper) -> bool:
        """commitOffset: under the queue lock, commit nextBeginOffset (even if it moves back)."""
        if w.next_begin_offset < 0:
            return True
        lock_key = w.lock_key
        if not self._locks.try_lock(lock_key):
            return False
        try:
            if w.next_begin_offset <= self._offsets.query_offset(w.ck.cid or "", w.ck.topic or "", w.ck.queue_id) \
                    and not self._cfg.buffer_commit_moves_offset_back:
                return True  # mechanism switch for F6: never move the offset back
            self._offsets.commit_offset("PopBufferMergeService", w.ck.cid or "", w.ck.topic or "", w.ck.queue_id,
                                        w.next_begin_offset)
        finally:
            self._locks.unlock(lock_key)
        return True

    def _put_offset_queue(self, w: PopCheckPointWrapper) -> None:
        self.commit_offsets.setdefault(w.lock_key, deque()).append(w)
        self.commit_offset_times[w.lock_key] = w.ck.pop_time  # queue.setTime(popTime)

    def _check_queue_ok(self, w: PopCheckPointWrapper) -> bool:
        q = self.commit_offsets.get(w.lock_key)
        return q is None or len(q) < self._cfg.pop_ck_offset_max_queue_size

    def _put_ck_to_store(self, w: PopCheckPointWrapper) -> None:
        """putCkToStore: write the CK message once; remember where it went."""
        if w.revive_queue_offset >= 0:
            return
        offset = self._put_ck(w.ck, w.revive_queue_id)
        if offset < 0:
            # put ck to store fail (5.0.0 and 5.5.0 putCkToStore): reviveQueueOffset stays -1,
            # ckStored false; scan puts it again, scanCommitOffset waits for it.
            return
        w.revive_queue_offset = offset
        w.ck_stored = True

    def _put_ack_to_store(self, w: PopCheckPointWrapper, index: int) -> bool:
        """putAckToStore: an ACK message for bit ``index``, delivered at the CK's revive time;
        False when the store refused the put.

        5.0.0 does not set brokerName on this AckMsg (it stays null); 5.5.0 takes the CK's
        (switch buffer_ack_has_broker_name).
        """
        point = w.ck
        ack = AckMsg(point.ack_offset_by_index(index), point.start_offset, point.cid or "", point.topic or "",
                     point.queue_id, point.pop_time,
                     point.broker_name if self._cfg.buffer_ack_has_broker_name else None)
        return self._put_revive(MessageExt(topic="", queue_id=w.revive_queue_id, body=self._ack_json(ack).encode(),
                                           tags=ACK_TAG, deliver_time_ms=point.revive_time, born_timestamp=self._now()),
                                "buffer_ack")

    def _put_batch_ack_to_store(self, w: PopCheckPointWrapper, indexes: list[int]) -> bool:
        """putBatchAckToStore (5.5.0 PopBufferMergeService:712-748): one BATCH_ACK_TAG message
        listing the offsets of ``indexes``, delivered at the CK's revive time; no brokerName
        and ackOffset 0 (a bare ``new BatchAckMsg()``), unlike putAckToStore's AckMsg. False when
        the store refused it: handleBatchAckPutMessageResult:750-767 then marks no bit."""
        point = w.ck
        batch = BatchAckMsg(tuple(point.ack_offset_by_index(i) for i in indexes), point.start_offset,
                            point.cid or "", point.topic or "", point.queue_id, point.pop_time)
        return self._put_revive(MessageExt(topic="", queue_id=w.revive_queue_id, body=batch.to_json().encode(),
                                           tags=BATCH_ACK_TAG, deliver_time_ms=point.revive_time,
                                           born_timestamp=self._now()), "buffer_ack")

    def live_wrappers(self) -> list[PopCheckPointWrapper]:
        """Buffered CKs (inspection; do not mutate)."""
        return list(self.buffer.values())


