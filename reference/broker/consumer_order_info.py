"""The consumer order info of orderly POP: one OrderInfo per ``topic@group`` and queue.

Two releases, two classes behind one interface (``make_order_info_manager`` picks one from
BrokerConfig#order_info_queue_level):

* 5.0.0 ``broker/offset/ConsumerOrderInfoManager``: the OrderInfo holds the batch's offsets
  (first offset, then distances), a consumed count for the whole batch, the last consume time
  and the commit bitmap. checkBlock blocks the queue while ``now - lastConsumeTimestamp <
  invisibleTime`` of the *asking* request and the batch is not done.
* 5.5.0 ``broker/pop/orderly/QueueLevelConsumerManager``: the OrderInfo also holds the pop's
  popTime and invisibleTime, a next-visible time per offset (changeInvisibleTime) and a
  consumed count per offset; needBlock blocks while some un-acked offset is not yet visible
  again; commitAndNext refuses (-2) a handle of another pop (popTime differs) and answers the
  first un-acked offset. QueueLevelConsumerOrderInfoLockManager only schedules a long-polling
  wake-up at the lock-free time; the model keeps that time (``lock_free_timestamps``) and the
  broker's long-polling step fires the due ones (``take_lock_free``; spec/broker.md "Orderly
  POP").

Persistence: both are ConfigManagers persisted every 10 s (BrokerController: initial delay
10 s, period 10 s) and on shutdown; a restart (a crash in the model) reloads the last
snapshot. 5.0.0's hand-written encode writes keys "c", "cm", "l", "o" that fastjson's decode
(RemotingSerializable.fromJson into bean properties consumedCount, commitOffsetBit, ...) does
not match, so every reloaded OrderInfo is empty (offsetList null, times 0): an oddity kept
as it is (spec/broker.md). encode calls autoClean first, which drops entries not consumed
for 24 h (CLEAN_SPAN_FROM_LAST), of topics or groups that no longer exist, or of queues beyond
the topic's read queue count.
"""

from __future__ import annotations

import copy
from typing import Callable

import attrs

from reference.common.javalang import long_hash_map_order

TOPIC_GROUP_SEPARATOR = "@"
CLEAN_SPAN_FROM_LAST = 24 * 3600 * 1000  # ConsumerOrderInfoManager.CLEAN_SPAN_FROM_LAST
PERSIST_INTERVAL_MS = 10 * 1000  # BrokerController: consumerOrderInfoManager.persist every 10 s
NO_NEED_COMMIT = -2  # commitAndNext: "-2 : no need commit"
ILLEGAL = -1  # commitAndNext: "-1 : illegal"


class OrderInfoNullError(Exception):
    """5.0.0 update on a reloaded OrderInfo whose offsetList is null: NullPointerException,
    caught by PopMessageProcessor#popMsgFromQueue's ``catch (Exception e)``."""


@attrs.define
class OrderInfo:
    """ConsumerOrderInfoManager.OrderInfo (5.0.0) / QueueLevelConsumerManager.OrderInfo (5.5.0).

    ``offset_list``: [first, d1, d2, ...] with di = offset_i - first (buildOffsetList /
    simpleO); None after a 5.0.0 reload. ``consumed_count`` is 5.0.0's; ``pop_time``,
    ``invisible_time``, ``offset_next_visible_time``, ``offset_consumed_count``,
    ``attempt_id`` are 5.5.0's.
    """

    offset_list: list[int] | None
    last_consume_timestamp: int = 0
    commit_offset_bit: int = 0
    consumed_count: int = 0
    pop_time: int = 0
    invisible_time: int | None = None
    offset_next_visible_time: dict[int, int] | None = None
    offset_consumed_count: dict[int, int] | None = None
    attempt_id: str | None = None

    def queue_offset(self, index: int) -> int:
        """getQueueOffset(i): offsetList[0] (+ offsetList[i] when i > 0)."""
        assert self.offset_list is not None
        return self.offset_list[0] if index == 0 else self.offset_list[0] + self.offset_list[index]

    def queue_offsets(self) -> list[int]:
        """Every queue offset of the batch (empty when the list is null)."""
        return [self.queue_offset(i) for i in range(len(self.offset_list or []))]

    def is_not_ack(self, index: int) -> bool:
        """isNotAck: bit ``index`` of commitOffsetBit is clear."""
        return (self.commit_offset_bit & (1 << index)) == 0

    def is_done(self) -> bool:
        """5.0.0 isDone: every bit of the batch set (a null or empty list counts as done)."""
        if not self.offset_list:
            return True
        return all(not self.is_not_ack(i) for i in range(len(self.offset_list)))

    def next_visible_time(self, index: int) -> int:
        """5.5.0: popTime + invisibleTime, or the offset's changed next visible time."""
        assert self.invisible_time is not None
        t = self.pop_time + self.invisible_time
        if self.offset_next_visible_time is not None:
            t = self.offset_next_visible_time.get(self.queue_offset(index), t)
        return t

    def need_block(self, attempt_id: str | None, current_invisible_time: int, now: int) -> bool:
        """5.5.0 OrderInfo#needBlock."""
        if not self.offset_list:
            return False
        if self.attempt_id is not None and self.attempt_id == attempt_id:
            return False
        if self.invisible_time is None or self.invisible_time <= 0:
            # Java writes the asking request's invisibleTime into the stored OrderInfo.
            self.invisible_time = current_invisible_time
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i) and now < self.next_visible_time(i):
                return True
        return False

    def lock_free_timestamp(self, now: int) -> int | None:
        """5.5.0 OrderInfo#getLockFreeTimestamp: when the queue stops being blocked."""
        if not self.offset_list:
            return None
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i):
                if self.invisible_time is None or self.invisible_time <= 0:
                    return None
                t = self.next_visible_time(i)
                if now < t:
                    return t
        return now

    def next_offset(self) -> int:
        """5.5.0 OrderInfo#getNextOffset: the first un-acked offset, or last + 1 when all are."""
        if not self.offset_list:
            return NO_NEED_COMMIT
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i):
                return self.queue_offset(i)
        return self.queue_offset(len(self.offset_list) - 1) + 1


def build_offset_list(queue_offsets: list[int]) -> list[int]:
    """OrderInfo#simpleO / buildOffsetList: [first, o1 - first, o2 - first, ...]."""
    if len(queue_offsets) == 1:
        return list(queue_offsets)
    first = queue_offsets[0]
    return [first] + [o - first for o in queue_offsets[1:]]


@attrs.frozen
class OrderCount:
    """One orderCountInfo entry: ``offset`` None is the queue-level count (5.0.0's only kind)."""

    is_retry: bool
    queue_id: int
    offset: int | None
    count: int

    def encode(self) -> str:
        """ExtraInfoUtil#buildOrderCountInfo / buildQueueIdOrderCountInfo ("t qid count") and
        5.5.0 buildQueueOffsetOrderCountInfo ("t qo{qid}%{offset} count",
        getQueueOffsetKeyValueKey)."""
        t = "1" if self.is_retry else "0"
        key = str(self.queue_id) if self.offset is None else f"qo{self.queue_id}%{self.offset}"
        return f"{t} {key} {self.count}"


class ConsumerOrderInfoManager:
    """The table ``topic@group`` → {queueId → OrderInfo}; release-specific rules in subclasses."""

    def __init__(self, now: Callable[[], int], topic_read_queues: Callable[[str], int | None],
                 group_exists: Callable[[str], bool]) -> None:
        self._now = now
        self._topic_read_queues = topic_read_queues
        self._group_exists = group_exists
        self.table: dict[str, dict[int, OrderInfo]] = {}
        self._persisted: dict[str, dict[int, OrderInfo]] = {}
        self._last_persist = now()

    @staticmethod
    def key(topic: str, group: str) -> str:
        """buildKey: ``topic@group``."""
        return topic + TOPIC_GROUP_SEPARATOR + group

    def get(self, topic: str, group: str, queue_id: int) -> OrderInfo | None:
        """get(topic, group, queueId)."""
        return self.table.get(self.key(topic, group), {}).get(queue_id)

    def holds_batch(self, topic: str, group: str, queue_id: int) -> bool:
        """Whether an orderly batch of the queue is not fully acked (F18's counterfactual; no
        Java method: checkBlock also asks whether the asking request's invisibleTime passed)."""
        info = self.get(topic, group, queue_id)
        return info is not None and not info.is_done()

    def _queues(self, topic: str, group: str) -> dict[int, OrderInfo]:
        # checkBlock and update both putIfAbsent an empty per-queue map first.
        return self.table.setdefault(self.key(topic, group), {})

    def clear_block(self, topic: str, group: str, queue_id: int) -> None:
        """clearBlock (5.5.0; resetPopOffset): forget the queue's OrderInfo."""
        qs = self.table.get(self.key(topic, group))
        if qs is not None:
            qs.pop(queue_id, None)

    # -- persistence --------------------------------------------------------------------------
    def auto_clean(self) -> None:
        """autoClean (called by encode): drop entries of gone topics/groups/queues, empty maps,
        and queues not consumed for CLEAN_SPAN_FROM_LAST."""
        now = self._now()
        for key in list(self.table):
            parts = key.split(TOPIC_GROUP_SEPARATOR)
            if len(parts) != 2:
                continue
            topic, group = parts
            read_queues = self._topic_read_queues(topic)
            qs = self.table[key]
            if read_queues is None or self._group_gone(group) or not qs:
                del self.table[key]
                continue
            for qid in list(qs):
                # A 5.0.0 reloaded entry has timestamp 0: on a real clock (epoch ms) it is always
                # more than 24 h old, whatever the model's virtual clock starts at.
                last = qs[qid].last_consume_timestamp
                if qid >= read_queues or last == 0 or now - last > CLEAN_SPAN_FROM_LAST:
                    del qs[qid]

    def _group_gone(self, group: str) -> bool:
        """autoClean's group test (5.0.0:224 getSubscriptionGroupTable().get, 5.5.0:319
        containsSubscriptionGroup: neither auto-creates the group)."""
        return not self._group_exists(group)

    def persist(self) -> None:
        """ConfigManager#persist: encode (autoClean first) and write the snapshot."""
        self.auto_clean()
        self._persisted = {k: {q: self._reloaded(i) for q, i in qs.items()} for k, qs in self.table.items()}
        self._last_persist = self._now()

    @property
    def last_persist(self) -> int:
        """When the table was last persisted (virtual ms)."""
        return self._last_persist

    def flush_step(self) -> bool:
        """The 10 s persist task; True when it ran."""
        if self._now() - self._last_persist >= PERSIST_INTERVAL_MS:
            self.persist()
            return True
        return False

    def restart(self) -> None:
        """Broker restart: load the last snapshot (decode)."""
        self.table = {k: {q: copy.deepcopy(i) for q, i in qs.items()} for k, qs in self._persisted.items()}

    def take_lock_free(self, now: int) -> list[tuple[str, str, int]]:
        """The queues whose lock-free notification is due at ``now``, taken out (5.0.0 has no
        lock manager: none)."""
        return []

    def _reloaded(self, info: OrderInfo) -> OrderInfo:
        """What decode gives back for a persisted OrderInfo."""
        return copy.deepcopy(info)

    # -- release rules --------------------------------------------------------------------------
    def check_block(self, attempt_id: str | None, topic: str, group: str, queue_id: int, invisible_time: int) -> bool:
        """checkBlock: True when the queue must not be served to this request."""
        raise NotImplementedError

    def update(self, attempt_id: str | None, is_retry: bool, topic: str, group: str, queue_id: int, pop_time: int,
               invisible_time: int, queue_offsets: list[int]) -> list[OrderCount]:
        """update: record the batch just popped; returns the orderCountInfo entries."""
        raise NotImplementedError

    def commit_and_next(self, topic: str, group: str, queue_id: int, offset: int, pop_time: int) -> int:
        """commitAndNext: >= 0 the offset to commit, -1 illegal, -2 no need to commit. Both
        releases: no entry → offset + 1; no offsets → illegal; an offset outside the batch →
        illegal; else its commit bit is set and the release decides what to commit."""
        info = self.get(topic, group, queue_id)
        if info is None:
            return offset + 1
        if not info.offset_list:
            return ILLEGAL
        if not self._handle_of_this_pop(info, pop_time):
            return NO_NEED_COMMIT  # 5.5.0: a handle of an earlier pop of this queue
        offsets = info.queue_offsets()
        if offset not in offsets:
            return ILLEGAL
        info.commit_offset_bit |= 1 << offsets.index(offset)
        return self._next_after_commit(topic, group, queue_id, info)

    def _handle_of_this_pop(self, info: OrderInfo, pop_time: int) -> bool:
        """Whether commitAndNext accepts a handle of the pop at ``pop_time``."""
        raise NotImplementedError

    def _next_after_commit(self, topic: str, group: str, queue_id: int, info: OrderInfo) -> int:
        """commitAndNext's answer once the offset's bit is set."""
        raise NotImplementedError

    def update_next_visible_time(self, topic: str, group: str, queue_id: int, offset: int, pop_time: int,
                                 next_visible_time: int) -> None:
        """updateNextVisibleTime (5.5.0 only; 5.0.0 has no such method)."""
        raise NotImplementedError


class ConsumerOrderInfoManager50(ConsumerOrderInfoManager):
    """rocketmq-all-5.0.0 broker/offset/ConsumerOrderInfoManager."""

    def __init__(self, now: Callable[[], int], topic_read_queues: Callable[[str], int | None],
                 group_exists: Callable[[str], bool], lost_on_reload: bool = True) -> None:
        super().__init__(now, topic_read_queues, group_exists)
        self._lost_on_reload = lost_on_reload  # BrokerConfig.order_info_lost_on_reload (F21)

    def _reloaded(self, info: OrderInfo) -> OrderInfo:
        # encode writes "c"/"cm"/"l"/"o"; fastjson's decode matches none of the bean
        # properties (consumedCount, commitOffsetBit, lastConsumeTimestamp, offsetList).
        return OrderInfo(offset_list=None) if self._lost_on_reload else super()._reloaded(info)

    def check_block(self, attempt_id: str | None, topic: str, group: str, queue_id: int, invisible_time: int) -> bool:
        info = self._queues(topic, group).get(queue_id)
        if info is None:
            return False
        # The asking request's invisibleTime, not the one the batch was popped with.
        is_block = self._now() - info.last_consume_timestamp < invisible_time
        return is_block and not info.is_done()

    def update(self, attempt_id: str | None, is_retry: bool, topic: str, group: str, queue_id: int, pop_time: int,
               invisible_time: int, queue_offsets: list[int]) -> list[OrderCount]:
        qs = self._queues(topic, group)
        info = qs.get(queue_id)
        simple = build_offset_list(queue_offsets)
        if info is not None and info.offset_list is None:
            raise OrderInfoNullError("orderInfo.getOffsetList().get(0)")
        if info is not None and simple[0] == info.offset_list[0]:  # type: ignore[index]
            # "start is same": the same batch again counts one more consume, a changed batch 0.
            info.consumed_count = info.consumed_count + 1 if simple == info.offset_list else 0
            info.last_consume_timestamp = self._now()
            info.offset_list = simple
            info.commit_offset_bit = 0
        else:
            info = OrderInfo(offset_list=simple, last_consume_timestamp=self._now())
            qs[queue_id] = info
        return [OrderCount(is_retry, queue_id, None, info.consumed_count)]

    def _handle_of_this_pop(self, info: OrderInfo, pop_time: int) -> bool:
        return True  # 5.0.0 does not compare popTimes

    def _next_after_commit(self, topic: str, group: str, queue_id: int, info: OrderInfo) -> int:
        # last + 1 once the whole batch is acked, else nothing to commit
        return info.queue_offset(len(info.offset_list or []) - 1) + 1 if info.is_done() else NO_NEED_COMMIT


class QueueLevelConsumerManager55(ConsumerOrderInfoManager):
    """rocketmq 5.5.0 broker/pop/orderly/QueueLevelConsumerManager (with its lock manager's
    lock-free times)."""

    def __init__(self, now: Callable[[], int], topic_read_queues: Callable[[str], int | None],
                 group_exists: Callable[[str], bool], notify_after_lock_release: bool = True) -> None:
        super().__init__(now, topic_read_queues, group_exists)
        # QueueLevelConsumerOrderInfoLockManager#timeoutMap: key → when to wake long polling.
        self.lock_free_timestamps: dict[tuple[str, str, int], int] = {}
        # BrokerConfig#enableNotifyAfterPopOrderLockRelease: off, updateLockFreeTimestamp:83 and
        # recover:56 return at once (no timeout is ever scheduled)
        self.notify_after_lock_release = notify_after_lock_release

    def _update_lock_free_timestamp(self, topic: str, group: str, queue_id: int, info: OrderInfo) -> None:
        # updateLockFreeTimestamp (enableNotifyAfterPopOrderLockRelease, default true):
        # a null lock-free time leaves the previous timeout in place.
        t = info.lock_free_timestamp(self._now())
        if t is not None and self.notify_after_lock_release:
            # timeoutMap.compute: a new timeout replaces (cancels) the old one, scheduled after
            # every earlier one (the order a tie of lock-free times fires in)
            self.lock_free_timestamps.pop((topic, group, queue_id), None)
            self.lock_free_timestamps[(topic, group, queue_id)] = t

    def restart(self) -> None:
        super().restart()
        # decode → QueueLevelConsumerOrderInfoLockManager#recover: future lock-free times only.
        self.lock_free_timestamps = {}
        now = self._now()
        for key, qs in self.table.items() if self.notify_after_lock_release else ():
            topic, group = key.split(TOPIC_GROUP_SEPARATOR, 1)
            for qid, info in qs.items():
                t = info.lock_free_timestamp(now)
                if t is not None and t > now:
                    self.lock_free_timestamps[(topic, group, qid)] = t

    def take_lock_free(self, now: int) -> list[tuple[str, str, int]]:
        """NotifyLockFreeTimerTask: the queues whose lock-free time has come, earliest first
        (ties in scheduling order); each task removes its timeout from timeoutMap."""
        due = sorted(((t, k) for k, t in self.lock_free_timestamps.items() if t <= now), key=lambda e: e[0])
        for _, key in due:
            del self.lock_free_timestamps[key]
        return [key for _, key in due]

    def check_block(self, attempt_id: str | None, topic: str, group: str, queue_id: int, invisible_time: int) -> bool:
        info = self._queues(topic, group).get(queue_id)
        if info is None:
            return False
        return info.need_block(attempt_id, invisible_time, self._now())

    def update(self, attempt_id: str | None, is_retry: bool, topic: str, group: str, queue_id: int, pop_time: int,
               invisible_time: int, queue_offsets: list[int]) -> list[OrderCount]:
        qs = self._queues(topic, group)
        old = qs.get(queue_id)
        info = OrderInfo(offset_list=build_offset_list(queue_offsets), last_consume_timestamp=self._now(),
                         pop_time=pop_time, invisible_time=invisible_time, attempt_id=attempt_id)
        if old is not None:
            # mergeOffsetConsumedCount: an offset popped again counts previous + 1.
            if old.attempt_id is not None and old.attempt_id == attempt_id:
                info.offset_consumed_count = old.offset_consumed_count or {}
            else:
                prev = old.offset_consumed_count or {}
                before = set(old.queue_offsets())
                info.offset_consumed_count = {o: prev.get(o, 0) + 1 for o in info.queue_offsets() if o in before}
        qs[queue_id] = info
        counts: list[OrderCount] = []
        consumed = info.offset_consumed_count
        if consumed is not None:
            # HashMap<Long, Integer> key order (OrderInfo#mergeOffsetConsumedCount puts them in
            # offsetList order): by bin of Long#hashCode, not by value once offsets are large
            # (v5.5 corpus seed 9 of 26 November 2026: queues starting past 2^47)
            for o in long_hash_map_order(list(consumed)):
                counts.append(OrderCount(is_retry, queue_id, o, consumed[o]))
            min_times = min(consumed.values()) if consumed else 2**31 - 1
            if len(consumed) != len(info.offset_list or []):
                min_times = 0  # some offsets are new (count 0 is not stored)
        else:
            min_times = 0
        counts.append(OrderCount(is_retry, queue_id, None, min_times))
        self._update_lock_free_timestamp(topic, group, queue_id, info)
        return counts

    def _handle_of_this_pop(self, info: OrderInfo, pop_time: int) -> bool:
        return pop_time == info.pop_time

    def _next_after_commit(self, topic: str, group: str, queue_id: int, info: OrderInfo) -> int:
        # the first un-acked offset at every ack
        nxt = info.next_offset()
        self._update_lock_free_timestamp(topic, group, queue_id, info)
        return nxt

    def update_next_visible_time(self, topic: str, group: str, queue_id: int, offset: int, pop_time: int,
                                 next_visible_time: int) -> None:
        info = self.get(topic, group, queue_id)
        if info is None or pop_time != info.pop_time:
            return  # logged and ignored
        if info.offset_next_visible_time is None:
            info.offset_next_visible_time = {}
        info.offset_next_visible_time[offset] = next_visible_time
        self._update_lock_free_timestamp(topic, group, queue_id, info)


def make_order_info_manager(queue_level: bool, now: Callable[[], int],
                            topic_read_queues: Callable[[str], int | None],
                            group_exists: Callable[[str], bool],
                            notify_after_lock_release: bool = True,
                            lost_on_reload: bool = True) -> ConsumerOrderInfoManager:
    """The release's manager: QueueLevelConsumerManager (5.5.0, its lock-free notification as
    ``notify_after_lock_release`` says) or ConsumerOrderInfoManager (5.0.0, whose reload loses
    every OrderInfo as ``lost_on_reload`` says)."""
    if queue_level:
        return QueueLevelConsumerManager55(now, topic_read_queues, group_exists, notify_after_lock_release)
    return ConsumerOrderInfoManager50(now, topic_read_queues, group_exists, lost_on_reload)
