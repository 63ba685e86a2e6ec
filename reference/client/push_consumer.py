"""DefaultMQPushConsumerImpl: the push consumer as the driver sees it (seed 004).

Sans-IO and single-threaded: every method is one region Java runs in one thread without
yielding. ``pull_step`` is PullMessageService taking a due PullRequest and running
pullMessage (flow control, or a PULL_MESSAGE request returned to the driver);
``on_pull_response`` is the PullCallback; ``consume_step`` runs one consume request (or
``consume_begin`` / ``consume_end``, its listener call split in two);
``persist_consumer_offset``, ``do_rebalance`` and ``timer_step`` are the client's scheduled
tasks. Clustering consumers subscribe to %RETRY%{group} as well (copySubscription).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from reference.client.broker_api import ConsumerBrokerApi
from reference.client.config import ClientConfig
from reference.client.consume_api import (ConsumeConcurrentlyStatus, ConsumeMessageService, ConsumeOrderlyStatus, ConsumeRecord,
                                          ListenerBatch)
from reference.client.consume_concurrently import ConsumeMessageConcurrentlyService
from reference.client.consume_orderly import ConsumeMessageOrderlyService
from reference.client.offset_store import ReadOffsetType, RemoteBrokerOffsetStore
from reference.client.process_queue import ProcessQueue
from reference.client.pull_api_wrapper import PullStatus, build_pull_request, process_pull_result
from reference.client.pull_flow_control import FlowBranch, flow_control
from reference.client.pull_message_service import PullMessageService, PullRequest
from reference.client.rebalance_impl import ConsumeFromWhere, RebalancePushImpl, RebalanceResult
from reference.common.clock import VirtualClock
from reference.common.exceptions import MQBrokerException
from reference.common.message_queue import MessageQueue
from reference.common.remoting import PullMessageRequestHeader, PullMessageResponse

OFFSET_ILLEGAL_FIX_DELAY = 10_000   # executeTaskLater(..., 10000) after OFFSET_ILLEGAL


def retry_topic(group: str) -> str:
    """MixAll#getRetryTopic."""
    return "%RETRY%" + group


class DefaultMQPushConsumer:
    """One push consumer instance (client id) of a group, subscribed to one topic."""

    def __init__(self, client_id: str, group: str, topic: str, broker: ConsumerBrokerApi, clock: VirtualClock,
                 config: ClientConfig, *, consume_orderly: bool = False, message_model: str = "CLUSTERING",
                 consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
                 allocate_strategy: str = "AVG", offset_store=None,
                 consume_service: ConsumeMessageService | None = None) -> None:
        if message_model not in ("CLUSTERING", "BROADCASTING"):
            raise ValueError(f"unknown message model {message_model!r}")
        self.client_id = client_id
        self.group = group
        self.topic = topic
        self.broker = broker
        self.clock = clock
        self.config = config
        self.consume_orderly = consume_orderly
        self.message_model = message_model
        self.running = False
        self.paused = False
        # BROADCASTING keeps offsets in a LocalFileOffsetStore the caller passes in.
        self.offset_store = offset_store if offset_store is not None else RemoteBrokerOffsetStore(group, broker)
        self.pull_service = PullMessageService(clock.now)
        self._timers: list[tuple[int, int, Callable[[], None]]] = []
        self._timer_seq = 0
        self.rebalance = RebalancePushImpl(group, client_id, config, clock.now, broker, self.offset_store,
                                           message_model=message_model, consume_orderly=consume_orderly,
                                           consume_from_where=consume_from_where, allocate_strategy=allocate_strategy,
                                           dispatch=self.pull_service.execute_pull_request_later,
                                           schedule=self._schedule)
        self.rebalance.subscriptions = [topic] + ([retry_topic(group)] if message_model == "CLUSTERING" else [])
        if consume_service is not None:
            self.consume_service = consume_service
        elif consume_orderly:
            self.consume_service = ConsumeMessageOrderlyService(group, client_id, config, clock, self.offset_store,
                                                                broker, message_model, self.rebalance.lock)
        else:
            service = ConsumeMessageConcurrentlyService(group, client_id, config, clock, self.offset_store, broker,
                                                        message_model)
            service.process_queues = lambda: self.process_queue_table
            self.consume_service = service
        # request id → (the PullRequest waiting on it, when it was sent): ResponseFuture table
        self._in_flight: dict[int, tuple[PullRequest, int]] = {}
        self._request_seq = 0
        self._next_lock_all = clock.now() + 1_000

    @property
    def process_queue_table(self) -> dict[MessageQueue, ProcessQueue]:
        """RebalanceImpl#processQueueTable."""
        return self.rebalance.process_queue_table

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """start(): heartbeat to the broker, then rebalanceImmediately (the driver runs it)."""
        if hasattr(self.offset_store, "load"):
            self.offset_store.load()
        self.running = True
        self.broker.register_consumer(self.group, self.client_id, tuple(self.rebalance.subscriptions))

    def shutdown(self) -> None:
        """shutdown(): persistConsumerOffset, unlockAll, unregister."""
        if not self.running:
            return
        self.persist_consumer_offset()
        if self.consume_orderly and self.message_model == "CLUSTERING":
            self.rebalance.unlock_all()
        self.broker.unregister_consumer(self.group, self.client_id)
        self._stop()

    def crash(self) -> None:
        """The process dies: nothing persisted, nothing unlocked, in-flight pulls forgotten."""
        self._stop()

    def _stop(self) -> None:
        self.running = False
        for pq in self.process_queue_table.values():
            pq.dropped = True
        self.pull_service.clear()
        self.consume_service.clear()
        self._in_flight.clear()
        self._timers.clear()

    def _schedule(self, delay: int, action: Callable[[], None]) -> None:
        heapq.heappush(self._timers, (self.clock.now() + delay, self._timer_seq, action))
        self._timer_seq += 1

    # -- rebalance -------------------------------------------------------------------------------
    def do_rebalance(self) -> RebalanceResult:
        """RebalanceService: doRebalance(isOrder) (every 20 s, and when the group changes)."""
        if not self.running:
            return RebalanceResult()
        return self.rebalance.do_rebalance()

    # -- the pull path ---------------------------------------------------------------------------
    def next_pull_due(self) -> int | None:
        """When the first queued PullRequest is due."""
        return self.pull_service.next_due() if self.running else None

    def pull_cursor(self, mq: MessageQueue) -> int | None:
        """The nextOffset of the live PullRequest of ``mq`` (queued, or waiting on a response);
        None when there is none (inspection)."""
        pq = self.process_queue_table.get(mq)
        requests = self.pull_service.pending() + [request for request, _ in self._in_flight.values()]
        return next((r.next_offset for r in requests if r.process_queue is pq and pq is not None), None)

    def pull_step(self) -> PullMessageRequestHeader | None:
        """PullMessageService takes one due PullRequest and runs pullMessage: None when flow
        control (or a dropped queue) stops it, else the request to send."""
        if not self.running:
            return None
        request = self.pull_service.take()
        if request is None:
            return None
        pq = request.process_queue
        if not pq.dropped:
            pq.last_pull_timestamp = self.clock.now()
        decision = flow_control(self.config, dropped=pq.dropped, running=self.running, paused=self.paused,
                                msg_count=pq.msg_count, msg_size=pq.msg_size, max_span=pq.get_max_span(),
                                consume_orderly=self.consume_orderly, locked=pq.locked,
                                previously_locked=request.previously_locked)
        if decision.branch is FlowBranch.DROPPED:
            return None
        if decision.delay >= 0:
            self.pull_service.execute_pull_request_later(request, decision.delay)
            return None
        if decision.branch is FlowBranch.FIRST_LOCKED:
            # First pull after the lock: re-read the offset (the broker's may be newer).
            try:
                offset = self.rebalance.compute_pull_from_where(request.message_queue)
            except Exception:  # MQClientException: pullTimeDelayMillsWhenException
                offset = -1
            if offset < 0:
                self.pull_service.execute_pull_request_later(request, self.config.pull_time_delay_mills_when_exception)
                return None
            request.previously_locked = True
            request.next_offset = offset
        commit_offset = 0
        commit_enable = False
        if self.message_model == "CLUSTERING":
            commit_offset = self.offset_store.read_offset(request.message_queue, ReadOffsetType.READ_FROM_MEMORY)
            commit_enable = commit_offset > 0
        self._request_seq += 1
        header = build_pull_request(self.group, self.client_id, request.message_queue, request.next_offset,
                                    self.config.pull_batch_size, commit_offset, commit_enable,
                                    self.config.broker_suspend_max_time_millis, self._request_seq)
        self._in_flight[header.request_id] = (request, self.clock.now())
        return header

    def on_pull_response(self, header: PullMessageRequestHeader, response: PullMessageResponse | None) -> None:
        """PullCallback: onSuccess with the response, onException for None (time-out, lost
        response) or an unmapped code. A response nobody waits for (duplicate, or for a
        consumer that restarted) is dropped, as NettyRemotingAbstract drops unmatched opaques."""
        waiting = self._in_flight.pop(header.request_id, None)
        if waiting is None or not self.running:
            return
        request = waiting[0]
        if response is None:
            self.pull_service.execute_pull_request_later(request, self.config.pull_time_delay_mills_when_exception)
            return
        try:
            result = process_pull_result(response)
        except MQBrokerException:
            self.pull_service.execute_pull_request_later(request, self.config.pull_time_delay_mills_when_exception)
            return
        pq = request.process_queue
        if result.pull_status is PullStatus.FOUND:
            request.next_offset = result.next_begin_offset
            if not result.msg_found_list:
                self.pull_service.execute_pull_request_immediately(request)
                return
            msgs = list(result.msg_found_list)
            dispatch = pq.put_message(msgs)
            self.consume_service.submit_consume_request(msgs, pq, request.message_queue, dispatch)
            if self.config.pull_interval > 0:
                self.pull_service.execute_pull_request_later(request, self.config.pull_interval)
            else:
                self.pull_service.execute_pull_request_immediately(request)
        elif result.pull_status in (PullStatus.NO_NEW_MSG, PullStatus.NO_MATCHED_MSG):
            request.next_offset = result.next_begin_offset
            if pq.msg_count == 0:  # correctTagsOffset
                self.offset_store.update_offset(request.message_queue, request.next_offset, True)
            self.pull_service.execute_pull_request_immediately(request)
        else:  # OFFSET_ILLEGAL: drop the queue, fix the offset 10 s later
            request.next_offset = result.next_begin_offset
            pq.dropped = True

            def fix() -> None:
                self.offset_store.update_offset(request.message_queue, request.next_offset, False)
                self.offset_store.persist(request.message_queue)
                self.rebalance.remove_process_queue(request.message_queue)
            self._schedule(OFFSET_ILLEGAL_FIX_DELAY, fix)

    # -- consumption and offsets -------------------------------------------------------------------
    def has_consume_pending(self) -> bool:
        """A consume request is ready."""
        return self.running and self.consume_service.has_pending()

    def consume_step(self, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus) -> ConsumeRecord | None:
        """Run one consume request with the listener's ``status``."""
        if not self.running:
            return None
        return self.consume_service.consume_step(status)

    def consume_begin(self) -> ConsumeRecord | ListenerBatch | None:
        """Hand the next ready batch to the listener (ConsumeMessageService#consume_begin)."""
        if not self.running:
            return None
        return self.consume_service.consume_begin()

    def consume_end(self, index: int, status: ConsumeConcurrentlyStatus | ConsumeOrderlyStatus,
                    body_size: int | None = None) -> ConsumeRecord | None:
        """The listener of the ``index``-th running batch returns ``status``."""
        if not self.running or not self.consume_service.running:
            return None
        return self.consume_service.consume_end(index % len(self.consume_service.running), status, body_size)

    def listeners_running(self) -> int:
        """How many batches are in listeners' hands."""
        return len(self.consume_service.running)

    def running_batches(self) -> tuple[ListenerBatch, ...]:
        """The batches in listeners' hands, in the order they were handed over."""
        return tuple(self.consume_service.running)

    def persist_consumer_offset(self) -> None:
        """persistConsumerOffset (every persistConsumerOffsetInterval): persistAll of the queues
        in the process queue table."""
        if not self.running:
            return
        self.offset_store.persist_all(set(self.process_queue_table))

    def timer_step(self) -> None:
        """The client's scheduled tasks that are due: pull time-outs, delayed fix-ups and
        unlocks, the consume service's timers, and (orderly, clustering) lockAll every
        REBALANCE_LOCK_INTERVAL."""
        if not self.running:
            return
        # NettyRemotingAbstract#scanResponseTable: a pull unanswered for
        # CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND fails with a time-out (onException).
        timeout = self.config.consumer_timeout_millis_when_suspend
        for request_id, (request, sent) in sorted(self._in_flight.items()):
            if self.clock.now() - sent > timeout:
                del self._in_flight[request_id]
                self.pull_service.execute_pull_request_later(request, self.config.pull_time_delay_mills_when_exception)
        while self._timers and self._timers[0][0] <= self.clock.now():
            heapq.heappop(self._timers)[2]()
        self.consume_service.timer_step()
        if self.consume_orderly and self.message_model == "CLUSTERING" and self.clock.now() >= self._next_lock_all:
            self._next_lock_all = self.clock.now() + self.config.rebalance_lock_interval
            self.rebalance.lock_all()
