"""RebalanceImpl + RebalancePushImpl: which queues a push consumer holds, the ProcessQueue of
each, where its pulling starts, and the orderly-consumption locks
(client/impl/consumer/RebalanceImpl.java, RebalancePushImpl.java at rocketmq-all-5.0.0).

Java keeps processQueueTable in a ConcurrentHashMap and iterates it in hash order; the model
iterates in MessageQueue order (the outcome of a rebalance does not depend on the order).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from reference.client.allocation import (allocate_averagely, allocate_averagely_by_circle, allocate_consistent_hash,
                                         sort_cids, sort_queues)
from reference.client.broker_api import ConsumerBrokerApi
from reference.client.config import ClientConfig
from reference.client.offset_store import ReadOffsetType
from reference.client.process_queue import ProcessQueue
from reference.client.pull_message_service import PullRequest
from reference.common.exceptions import MQClientException
from reference.common.message_queue import MessageQueue

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
STRATEGIES = {"AVG": allocate_averagely, "AVG_BY_CIRCLE": allocate_averagely_by_circle,
              "CONSISTENT_HASH": allocate_consistent_hash}


class ConsumeFromWhere(enum.Enum):
    """ConsumeFromWhere (the deprecated values behave as CONSUME_FROM_LAST_OFFSET)."""

    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"


def compute_pull_from_where(where: ConsumeFromWhere, mq: MessageQueue, last_offset: int,
                            max_offset: Callable[[], int], search_offset: Callable[[], int]) -> int:
    """RebalancePushImpl#computePullFromWhereWithException given readOffset(READ_FROM_STORE)'s
    answer ``last_offset`` (>= 0 found, -1 none, -2 error). The retry topic of a group with no
    offset starts at 0 (LAST_OFFSET family) or at its max (TIMESTAMP); a normal topic at its max
    offset, 0 or the consume timestamp's offset."""
    if last_offset >= 0:
        return last_offset
    if last_offset != -1:
        raise MQClientException(f"Failed to query consume offset from offset store ({last_offset})")
    retry = mq.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
    if where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
        result = 0
    elif where is ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
        result = max_offset() if retry else search_offset()
    else:
        result = 0 if retry else max_offset()
    if result < 0:
        raise MQClientException(f"Found unexpected result {result}")
    return result


@attrs.frozen
class RebalanceResult:
    """What one doRebalance changed: queues added and removed (MessageQueue order)."""

    added: tuple[MessageQueue, ...] = ()
    removed: tuple[MessageQueue, ...] = ()


class RebalancePushImpl:
    """The push consumer's rebalance state for one group."""

    def __init__(self, group: str, client_id: str, config: ClientConfig, now: Callable[[], int],
                 broker: ConsumerBrokerApi, offset_store, *, message_model: str = "CLUSTERING",
                 consume_orderly: bool = False, consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
                 consume_timestamp: int = 0, allocate_strategy: str = "AVG",
                 dispatch: Callable[[PullRequest, int], None] = lambda r, d: None,
                 schedule: Callable[[int, Callable[[], None]], None] = lambda d, f: f()) -> None:
        self.group = group
        self.client_id = client_id
        self.config = config
        self._now = now
        self.broker = broker
        self.offset_store = offset_store
        self.message_model = message_model
        self.consume_orderly = consume_orderly
        self.consume_from_where = consume_from_where
        self.consume_timestamp = consume_timestamp
        if allocate_strategy not in STRATEGIES:
            raise ValueError(f"unknown allocation strategy {allocate_strategy!r}; known: {', '.join(STRATEGIES)}")
        self.allocate = STRATEGIES[allocate_strategy]
        self.subscriptions: list[str] = []                 # subscriptionInner keys
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}
        self._dispatch = dispatch                          # dispatchPullRequest → executePullRequestLater
        self._schedule = schedule                          # the client's scheduled executor

    # -- doRebalance ---------------------------------------------------------------------------
    def do_rebalance(self) -> RebalanceResult:
        """doRebalance(isOrder) over every subscribed topic, then truncateMessageQueueNotMyTopic.
        A topic whose rebalance throws is skipped (logged in Java)."""
        added: list[MessageQueue] = []
        removed: list[MessageQueue] = []
        for topic in self.subscriptions:
            try:
                a, r = self._rebalance_by_topic(topic)
            except (OSError, ValueError):
                continue
            added += a
            removed += r
        for mq in sorted(self.process_queue_table, key=MessageQueue.sort_key):
            if mq.topic not in self.subscriptions:
                self.process_queue_table.pop(mq).dropped = True
                removed.append(mq)
        return RebalanceResult(tuple(sort_queues(added)), tuple(sort_queues(removed)))

    def _rebalance_by_topic(self, topic: str) -> tuple[list[MessageQueue], list[MessageQueue]]:
        mq_set = self.broker.topic_queues(topic)           # topicSubscribeInfoTable
        if self.message_model == "BROADCASTING":
            return self._update_process_queue_table(topic, set(mq_set))
        cid_all = self.broker.get_consumer_id_list(self.group)
        if not mq_set or not cid_all:
            return [], []
        mine = self.allocate(self.group, self.client_id, sort_queues(mq_set), sort_cids(cid_all))
        return self._update_process_queue_table(topic, set(mine))

    def _update_process_queue_table(self, topic: str, mq_set: set[MessageQueue]
                                    ) -> tuple[list[MessageQueue], list[MessageQueue]]:
        """updateProcessQueueTableInRebalance."""
        removed = []
        for mq in sorted(self.process_queue_table, key=MessageQueue.sort_key):
            pq = self.process_queue_table[mq]
            if mq.topic != topic:
                continue
            # A queue no longer assigned, or one nobody pulled for 120 s, is dropped.
            if mq not in mq_set or pq.is_pull_expired():
                pq.dropped = True
                if self.remove_unnecessary_message_queue(mq, pq):
                    del self.process_queue_table[mq]
                    removed.append(mq)
        added = []
        requests = []
        for mq in sort_queues(list(mq_set)):
            if mq in self.process_queue_table:
                continue
            if self.consume_orderly and not self.lock(mq):
                continue  # Java: allMQLocked = false → rebalanceLater(500)
            self.offset_store.remove_offset(mq)            # removeDirtyOffset
            pq = ProcessQueue(self._now, self.config.pq_reset_size_when_empty,
                              size_counted_at_put=not self.config.pq_size_counts_current_body)
            pq.locked = True                               # createProcessQueue(topic) then setLocked(true)
            try:
                next_offset = self.compute_pull_from_where(mq)
            except MQClientException:
                continue
            self.process_queue_table[mq] = pq
            requests.append(PullRequest(self.group, mq, pq, next_offset))
            added.append(mq)
        for request in requests:
            self._dispatch(request, 500)                   # dispatchPullRequest(pullRequestList, 500)
        return added, removed

    def compute_pull_from_where(self, mq: MessageQueue) -> int:
        """computePullFromWhereWithException for this consumer's ConsumeFromWhere."""
        last = self.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE)

        def start() -> int:  # mechanism switch for F5 (else the first stored offset), read only when asked
            if self.config.unflushed_queue_starts_at_max_offset:
                return self.broker.get_max_offset(mq)
            return self.broker.search_offset(mq, 0)

        return compute_pull_from_where(self.consume_from_where, mq, last, start,
                                       lambda: self.broker.search_offset(mq, self.consume_timestamp))

    def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """RebalancePushImpl#removeUnnecessaryMessageQueue: persist and forget the offset. An
        orderly clustering consumer also has to release the broker's lock, under the
        ProcessQueue's consume lock, which a listener holds from consume_begin to consume_end
        (tryLock then fails: the dropped queue stays in processQueueTable, tryUnlockTimes counts).
        5.0.0: offset removed first; the lock released 20 s later while messages are cached."""
        self.offset_store.persist(mq)
        orderly = self.consume_orderly and self.message_model == "CLUSTERING"
        if orderly and self.config.try_remove_order_message_queue:
            return self._try_remove_order_message_queue(mq, pq)
        self.offset_store.remove_offset(mq)
        if not orderly:
            return True
        if pq.consume_locked:
            pq.try_unlock_times += 1
            return False
        if pq.has_temp_message():
            self._schedule(self.config.unlock_delay_time_mills, lambda: self.unlock(mq))
        else:
            self.unlock(mq)
        return True

    def _try_remove_order_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """v5.5 RebalancePushImpl#tryRemoveOrderMessageQueue: forced once the dropped queue's
        lock is older than unlockDelayTimeMills, else only when the consume lock is free; then
        persist, removeOffset, setLocked(false) and unlock at once."""
        force = pq.dropped and self._now() > pq.last_lock_timestamp + self.config.unlock_delay_time_mills
        if not force and pq.consume_locked:
            pq.try_unlock_times += 1
            return False
        self.offset_store.persist(mq)
        self.offset_store.remove_offset(mq)
        pq.locked = False
        self.unlock(mq)
        return True

    def remove_process_queue(self, mq: MessageQueue) -> None:
        """removeProcessQueue (OFFSET_ILLEGAL's fix-up): drop it and remove its offset."""
        pq = self.process_queue_table.pop(mq, None)
        if pq is not None:
            pq.dropped = True
            self.remove_unnecessary_message_queue(mq, pq)

    # -- orderly locks -------------------------------------------------------------------------
    def lock(self, mq: MessageQueue) -> bool:
        """lock(mq): LOCK_BATCH_MQ for one queue; marks the ProcessQueues locked."""
        try:
            locked = self.broker.lock_batch_mq(self.group, self.client_id, [mq])
        except OSError:
            return False
        for m in sort_queues(list(locked)):
            pq = self.process_queue_table.get(m)
            if pq is not None:
                pq.locked = True
                pq.last_lock_timestamp = self._now()
        return mq in locked

    def lock_all(self) -> None:
        """lockAll (every REBALANCE_LOCK_INTERVAL): renew what is held, mark what was lost."""
        mqs = sort_queues(list(self.process_queue_table))
        if not mqs:
            return
        try:
            locked = self.broker.lock_batch_mq(self.group, self.client_id, mqs)
        except OSError:
            return
        for mq in mqs:
            pq = self.process_queue_table.get(mq)
            if pq is None:
                continue
            if mq in locked:
                pq.locked = True
                pq.last_lock_timestamp = self._now()
            else:
                pq.locked = False

    def unlock(self, mq: MessageQueue) -> None:
        """unlock(mq, oneway)."""
        try:
            self.broker.unlock_batch_mq(self.group, self.client_id, [mq])
        except OSError:
            pass

    def unlock_all(self) -> None:
        """unlockAll (at shutdown)."""
        mqs = sort_queues(list(self.process_queue_table))
        if mqs:
            try:
                self.broker.unlock_batch_mq(self.group, self.client_id, mqs)
            except OSError:
                pass
        for mq in mqs:
            self.process_queue_table[mq].locked = False
