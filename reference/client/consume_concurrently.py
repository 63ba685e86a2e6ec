"""ConsumeMessageConcurrentlyService: consume requests of a concurrent listener
(client/impl/consumer/ConsumeMessageConcurrentlyService.java at rocketmq-all-5.0.0).

The consume thread pool becomes a FIFO of ConsumeRequests the driver runs one at a time with
the listener status it chooses; submitConsumeRequestLater (5 s) and cleanExpireMsg (every
consumeTimeout minutes) are timers on the virtual clock.
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
from reference.client.process_queue import PROPERTY_CONSUME_START_TIMESTAMP, ProcessQueue, PulledMessage
from reference.common import response_code as rc
from reference.common.message import PROPERTY_RETRY_TOPIC, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from reference.common.message_queue import MessageQueue

SUBMIT_LATER_DELAY = 5_000           # submitConsumeRequestLater
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"


@attrs.define(eq=False)
class ConsumeRequest:
    """ConsumeMessageConcurrentlyService.ConsumeRequest."""

    msgs: list[PulledMessage]
    process_queue: ProcessQueue
    message_queue: MessageQueue


def reset_retry_and_namespace(msgs: list[PulledMessage], group: str) -> None:
    """DefaultMQPushConsumerImpl#resetRetryAndNamespace: a message pulled from %RETRY%{group}
    takes its original topic back (so the listener sees the real topic)."""
    group_topic = RETRY_GROUP_TOPIC_PREFIX + group
    for msg in msgs:
        retry_topic = msg.properties.get(PROPERTY_RETRY_TOPIC)
        if msg.ext is not None and retry_topic is not None and msg.ext.topic == group_topic:
            msg.ext.topic = retry_topic


def send_message_back(broker: ConsumerBrokerApi, group: str, msg: PulledMessage, delay_level: int,
                      max_reconsume_times: int) -> bool:
    """DefaultMQPushConsumerImpl#sendMessageBack: CONSUMER_SEND_MSG_BACK, and on any failure the
    client's fallback sendMessageBackAsNormalMessage. A message pulled from the retry topic has
    had its topic reset to the original one, which the broker's origin-topic check rejects, so
    for those the fallback is the path actually taken (spec/push.md)."""
    assert msg.ext is not None
    try:
        if broker.consumer_send_msg_back(group, msg.ext, delay_level, max_reconsume_times) == rc.SUCCESS:
            return True
        return broker.send_message_back_as_normal_message(group, msg.ext, max_reconsume_times) == rc.SUCCESS
    except OSError:
        return False


def uniq_keys(msgs: list[PulledMessage]) -> tuple[str | None, ...]:
    """The UNIQ_KEY of each message (its identity across the retry topic)."""
    return tuple(m.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) for m in msgs)


class ConsumeMessageConcurrentlyService:
    """The concurrent consume service of one push consumer."""

    def __init__(self, group: str, client_id: str, config: ClientConfig, clock, offset_store,
                 broker: ConsumerBrokerApi, message_model: str = "CLUSTERING") -> None:
        self.group = group
        self.client_id = client_id
        self.config = config
        self._now: Callable[[], int] = clock.now
        self.offset_store = offset_store
        self.broker = broker
        self.message_model = message_model
        self._ready: deque[ConsumeRequest] = deque()
        self.running: list[ListenerBatch] = []   # listeners at work (consume_begin .. consume_end)
        self._later: list[tuple[int, int, ConsumeRequest]] = []
        self._seq = 0
        self._next_clean = self._now() + config.consume_timeout * 60_000
        self.process_queues: Callable[[], dict[MessageQueue, ProcessQueue]] = dict

    def max_reconsume_times(self) -> int:
        """getMaxReconsumeTimes: 16 when unset."""
        return 16 if self.config.max_reconsume_times == -1 else self.config.max_reconsume_times

    def submit_consume_request(self, msgs: list[PulledMessage], pq: ProcessQueue, mq: MessageQueue,
                               dispatch_to_consume: bool) -> None:
        """submitConsumeRequest: batches of consumeMessageBatchMaxSize (dispatchToConsume is
        ignored by the concurrent service)."""
        size = max(self.config.consume_message_batch_max_size, 1)
        for start in range(0, len(msgs), size):
            self._ready.append(ConsumeRequest(list(msgs[start:start + size]), pq, mq))

    def has_pending(self) -> bool:
        """A consume request is ready to run."""
        return bool(self._ready)

    def consume_step(self, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus) -> ConsumeRecord | None:
        """ConsumeRequest#run for the first ready request with the listener's ``status``."""
        begun = self.consume_begin()
        if not isinstance(begun, ListenerBatch):
            return begun
        return self.consume_end(len(self.running) - 1, status)

    def consume_begin(self) -> ConsumeRecord | ListenerBatch | None:
        """ConsumeRequest#run of the first ready request up to listener.consumeMessage: a DROPPED
        record when its ProcessQueue is dropped, else the batch now in the listener's hands."""
        if not self._ready:
            return None
        request = self._ready.popleft()
        pq, mq, msgs = request.process_queue, request.message_queue, request.msgs
        if pq.dropped:
            return ConsumeRecord(mq, tuple(m.queue_offset for m in msgs), uniq_keys(msgs), "DROPPED", None,
                                 dropped=True)
        reset_retry_and_namespace(msgs, self.group)
        for msg in msgs:
            msg.properties[PROPERTY_CONSUME_START_TIMESTAMP] = str(self._now())
        batch = ListenerBatch(request, mq, msgs)
        self.running.append(batch)
        return batch

    def consume_end(self, index: int, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus,
                    body_size: int | None = None) -> ConsumeRecord:
        """The listener of ``running[index]`` returns ``status``, having set the bodies to
        ``body_size`` bytes unless None. ConsumeRequest#run re-checks processQueue.isDropped()
        after the listener and skips processConsumeResult when it was dropped meanwhile (same in
        5.0.0 and 5.5.0): nothing is removed, no offset moves, nothing is sent back."""
        batch = self.running.pop(index)
        request: ConsumeRequest = batch.request
        if body_size is not None:
            change_bodies(request.msgs, body_size)
        offsets = tuple(m.queue_offset for m in request.msgs)
        if not isinstance(status, ConsumeConcurrentlyStatus):
            status = ConsumeConcurrentlyStatus.RECONSUME_LATER  # a null status is RECONSUME_LATER
        if request.process_queue.dropped:
            return ConsumeRecord(batch.mq, offsets, uniq_keys(request.msgs), status.value, None, dropped=True)
        keys = uniq_keys(request.msgs)
        sent_back, committed = self.process_consume_result(status, request)
        return ConsumeRecord(batch.mq, offsets, keys, status.value, committed, tuple(sent_back))

    def process_consume_result(self, status: ConsumeConcurrentlyStatus, request: ConsumeRequest
                               ) -> tuple[list[int], int | None]:
        """processConsumeResult: send back what failed (re-submitting what could not be sent
        back), removeMessage, then updateOffset(increaseOnly) unless the queue was dropped.
        Returns the offsets sent back and the offset given to the offset store."""
        msgs = request.msgs
        if not msgs:
            return [], None
        ack_index = len(msgs) - 1 if status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS else -1
        sent_back: list[int] = []
        if self.message_model == "CLUSTERING":
            failed = []
            for msg in msgs[ack_index + 1:]:
                if self.config.send_back_only_held and msg.queue_offset not in request.process_queue.msg_tree_map:
                    continue  # v5.5: cleanExpiredMsg already sent it back and removed it
                if send_message_back(self.broker, self.group, msg, 0, self.max_reconsume_times()):
                    sent_back.append(msg.queue_offset)
                else:
                    if msg.ext is not None:
                        msg.ext.reconsume_times += 1
                    failed.append(msg)
            if failed:
                request.msgs = [m for m in msgs if m not in failed]
                self._submit_later(ConsumeRequest(failed, request.process_queue, request.message_queue))
        # BROADCASTING: failed messages are only logged, never retried.
        offset = request.process_queue.remove_message(request.msgs)
        if offset >= 0 and not request.process_queue.dropped:
            self.offset_store.update_offset(request.message_queue, offset, True)
            return sent_back, offset
        return sent_back, None

    def _submit_later(self, request: ConsumeRequest) -> None:
        heapq.heappush(self._later, (self._now() + SUBMIT_LATER_DELAY, self._seq, request))
        self._seq += 1

    def timer_step(self) -> None:
        """Due delayed re-submits, and cleanExpireMsg every consumeTimeout minutes."""
        while self._later and self._later[0][0] <= self._now():
            request = heapq.heappop(self._later)[2]
            self.submit_consume_request(request.msgs, request.process_queue, request.message_queue, True)
        if self._now() >= self._next_clean:
            self._next_clean = self._now() + self.config.consume_timeout * 60_000
            self.clean_expire_msg()

    def clean_expire_msg(self) -> None:
        """cleanExpireMsg: every ProcessQueue sends back messages consumed for too long."""
        for mq, pq in sorted(self.process_queues().items(), key=lambda kv: kv[0].sort_key()):
            pq.clean_expired_msg(False, self.config.consume_timeout,
                                 lambda msg, level: self._send_back_or_raise(msg, level))

    def _send_back_or_raise(self, msg: PulledMessage, level: int) -> None:
        if not send_message_back(self.broker, self.group, msg, level, self.max_reconsume_times()):
            raise OSError("sendMessageBack failed")

    def clear(self) -> None:
        """The thread pools stop (shutdown or crash): queued requests are gone, and so is what a
        running listener returns (a crash kills it; after shutdown the ProcessQueues are dropped,
        so ConsumeRequest#run would skip processConsumeResult anyway)."""
        self._ready.clear()
        self.running.clear()
        self._later.clear()
