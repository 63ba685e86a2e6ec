"""ConsumeMessageOrderlyService: one queue at a time, in offset order, under the broker's
queue lock (client/impl/consumer/ConsumeMessageOrderlyService.java at rocketmq-all-5.0.0).

A ConsumeRequest of Java runs a loop (take a batch, call the listener, process the result)
until the queue is empty, suspended or a minute has passed; the model runs one iteration per
``consume_step`` and keeps the request at the head while the loop would continue. Delayed
re-submits (suspend, tryLockLaterAndReconsume) are timers on the virtual clock.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable

import attrs

from reference.client.broker_api import ConsumerBrokerApi
from reference.client.config import ClientConfig
from reference.client.consume_api import (ConsumeConcurrentlyStatus, ConsumeOrderlyStatus, ConsumeRecord, ListenerBatch,
                                          change_bodies)
from reference.client.consume_concurrently import reset_retry_and_namespace, uniq_keys
from reference.client.process_queue import ProcessQueue, PulledMessage
from reference.common.message_queue import MessageQueue

JAVA_INT_MAX = 2**31 - 1


@attrs.define(eq=False)
class OrderlyConsumeRequest:
    """ConsumeMessageOrderlyService.ConsumeRequest: a queue to consume, and when its loop began."""

    process_queue: ProcessQueue
    message_queue: MessageQueue
    begin_time: int | None = None


class ConsumeMessageOrderlyService:
    """The orderly consume service of one push consumer."""

    def __init__(self, group: str, client_id: str, config: ClientConfig, clock, offset_store,
                 broker: ConsumerBrokerApi, message_model: str, lock_mq: Callable[[MessageQueue], bool]) -> None:
        self.group = group
        self.client_id = client_id
        self.config = config
        self._now: Callable[[], int] = clock.now
        self.offset_store = offset_store
        self.broker = broker
        self.message_model = message_model
        self.lock_mq = lock_mq
        self._ready: deque[OrderlyConsumeRequest] = deque()
        self.running: list[ListenerBatch] = []   # listeners at work (consume_begin .. consume_end)
        self._busy: set[MessageQueue] = set()     # their queues (MessageQueueLock: one listener per queue)
        self._timers: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = 0

    def max_reconsume_times(self) -> int:
        """getMaxReconsumeTimes: Integer.MAX_VALUE when unset."""
        return JAVA_INT_MAX if self.config.max_reconsume_times == -1 else self.config.max_reconsume_times

    def submit_consume_request(self, msgs: list[PulledMessage] | None, pq: ProcessQueue, mq: MessageQueue,
                               dispatch_to_consume: bool) -> None:
        """submitConsumeRequest: a request for the queue only when putMessage asked for one."""
        if dispatch_to_consume:
            self._ready.append(OrderlyConsumeRequest(pq, mq))

    def has_pending(self) -> bool:
        """A consume request is ready to run."""
        return bool(self._ready)

    def _later(self, delay: int, action: Callable[[], None]) -> None:
        heapq.heappush(self._timers, (self._now() + delay, self._seq, action))
        self._seq += 1

    def submit_consume_request_later(self, pq: ProcessQueue, mq: MessageQueue, suspend_time_millis: int) -> None:
        """submitConsumeRequestLater: -1 means suspendCurrentQueueTimeMillis; clamped to 10..30000."""
        delay = self.config.suspend_current_queue_time_millis if suspend_time_millis == -1 else suspend_time_millis
        delay = min(max(delay, 10), 30_000)
        self._later(delay, lambda: self.submit_consume_request(None, pq, mq, True))

    def try_lock_later_and_reconsume(self, mq: MessageQueue, pq: ProcessQueue, delay_mills: int) -> None:
        """tryLockLaterAndReconsume: lock the queue after a while, then consume again soon (10 ms)
        or, when the lock failed, in 3 s."""
        def retry() -> None:
            self.submit_consume_request_later(pq, mq, 10 if self.lock_mq(mq) else 3000)
        self._later(delay_mills, retry)

    def consume_step(self, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus) -> ConsumeRecord | None:
        """One iteration of the head request's loop with the listener's ``status``."""
        begun = self.consume_begin()
        if not isinstance(begun, ListenerBatch):
            return begun
        return self.consume_end(len(self.running) - 1, status)

    def consume_begin(self) -> ConsumeRecord | ListenerBatch | None:
        """One iteration of the loop of the first ready request whose queue no listener is
        working on (the others wait on MessageQueueLock's objLock), up to
        listener.consumeMessage: a record when the iteration ends before the listener, else the
        batch now in the listener's hands, which holds the ProcessQueue's consumeLock."""
        request = next((r for r in self._ready if r.message_queue not in self._busy), None)
        if request is None:
            return None
        pq, mq = request.process_queue, request.message_queue
        clustering = self.message_model == "CLUSTERING"
        if pq.dropped:
            self._ready.remove(request)
            return ConsumeRecord(mq, (), (), "DROPPED", None, dropped=True)
        if request.begin_time is None:  # entering the synchronized block
            if clustering and not (pq.locked and not pq.is_lock_expired()):
                self._ready.remove(request)
                self.try_lock_later_and_reconsume(mq, pq, 100)
                return ConsumeRecord(mq, (), (), "NOT_LOCKED", None)
            request.begin_time = self._now()
        if clustering and (not pq.locked or pq.is_lock_expired()):
            self._ready.remove(request)
            self.try_lock_later_and_reconsume(mq, pq, 10)
            return ConsumeRecord(mq, (), (), "LOCK_LOST", None)
        if self._now() - request.begin_time > self.config.max_time_consume_continuously:
            self._ready.remove(request)
            self.submit_consume_request_later(pq, mq, 10)
            return ConsumeRecord(mq, (), (), "YIELD", None)
        msgs = pq.take_messages(self.config.consume_message_batch_max_size)
        reset_retry_and_namespace(msgs, self.group)
        if not msgs:
            self._ready.remove(request)
            return ConsumeRecord(mq, (), (), "EMPTY", None)
        # The listener runs under processQueue.getConsumeLock() (RebalancePushImpl#
        # removeUnnecessaryMessageQueue cannot unlock the queue meanwhile).
        pq.consume_locked = True
        self._busy.add(mq)
        batch = ListenerBatch(request, mq, msgs)
        self.running.append(batch)
        return batch

    def consume_end(self, index: int, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus,
                    body_size: int | None = None) -> ConsumeRecord:
        """The listener of ``running[index]`` returns ``status`` (bodies set to ``body_size``
        bytes unless None): consumeLock released, then processConsumeResult -- with no isDropped
        check before it in 5.0.0 or 5.5.0; a dropped queue only keeps its offset unchanged
        (``commitOffset >= 0 && !isDropped()``)."""
        batch = self.running.pop(index)
        request: OrderlyConsumeRequest = batch.request
        msgs = batch.msgs
        request.process_queue.consume_locked = False
        self._busy.discard(batch.mq)
        if body_size is not None:
            change_bodies(msgs, body_size)
        if not isinstance(status, ConsumeOrderlyStatus):
            status = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT  # a null status
        offsets = tuple(m.queue_offset for m in msgs)
        keys = uniq_keys(msgs)
        continue_consume, committed = self.process_consume_result(msgs, status, request)
        if not continue_consume:  # the loop ends (the request stayed ready while its listener worked)
            self._ready.remove(request)
        return ConsumeRecord(batch.mq, offsets, keys, status.value, committed)

    def process_consume_result(self, msgs: list[PulledMessage], status: ConsumeOrderlyStatus,
                               request: OrderlyConsumeRequest) -> tuple[bool, int | None]:
        """processConsumeResult with autoCommit (the default): SUCCESS, COMMIT and ROLLBACK all
        commit (the deprecated two are only logged), SUSPEND puts the batch back and waits unless
        every message is past maxReconsumeTimes and was sent to the DLQ. The offset goes to the
        store with increaseOnly = false."""
        pq, mq = request.process_queue, request.message_queue
        continue_consume = True
        commit_offset = -1
        if status is ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT:
            if self.check_reconsume_times(msgs):
                pq.make_message_to_consume_again(msgs)
                self.submit_consume_request_later(pq, mq, -1)
                continue_consume = False
            else:
                commit_offset = pq.commit()
        else:
            commit_offset = pq.commit()
        if commit_offset >= 0 and not pq.dropped:
            self.offset_store.update_offset(mq, commit_offset, False)
            return continue_consume, commit_offset
        return continue_consume, None

    def check_reconsume_times(self, msgs: list[PulledMessage]) -> bool:
        """checkReconsumeTimes: True (suspend) unless every message past maxReconsumeTimes was
        sent back (to the DLQ); each suspended message counts one more reconsume."""
        suspend = False
        for msg in msgs:
            ext = msg.ext
            if ext is None:
                continue
            if ext.reconsume_times >= self.max_reconsume_times():
                if not self._send_to_dlq(msg):
                    suspend = True
                    ext.reconsume_times += 1
            else:
                suspend = True
                ext.reconsume_times += 1
        return suspend

    def _send_to_dlq(self, msg: PulledMessage) -> bool:
        """ConsumeMessageOrderlyService#sendMessageBack: the client's producer sends the message
        to the retry topic with its reconsume times, which the broker routes to the DLQ."""
        assert msg.ext is not None
        try:
            return self.broker.send_message_back_as_normal_message(self.group, msg.ext, self.max_reconsume_times()) == 0
        except OSError:
            return False

    def timer_step(self) -> None:
        """Run the delayed re-submits and lock retries that are due."""
        while self._timers and self._timers[0][0] <= self._now():
            heapq.heappop(self._timers)[2]()

    def clear(self) -> None:
        """The thread pools stop (shutdown or crash)."""
        self._ready.clear()
        self.running.clear()
        self._busy.clear()
        self._timers.clear()
