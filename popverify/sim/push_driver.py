"""The push mode: producers, push consumers, the pull path and its faults (a world + its actions).

Consumers c0..c{n-1} are DefaultMQPushConsumer models of one group subscribed to one topic
(and, clustering, to %RETRY%group). The world is their network and their threads: ``pull``
runs one due PullRequest (flow control or a PULL_MESSAGE request the broker serves at once
or holds for long polling), ``deliver`` hands a response back, ``consume`` runs one consume
request with a listener status the engine draws (or, opt-in, ``consume_begin`` hands a batch
to the listener and a later ``consume_end`` returns its status, other steps running between),
and rebalance, offset persistence, joining, leaving, crashes and broker restarts happen when
drawn. After the steps, the drain keeps the
live consumers pulling and consuming successfully to quiescence (ALO-3's fairness).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from popverify.checker.progress import check_push_after_drain
from popverify.checker.push import PushChecker
from popverify.sim.actions import (MAX_BODY_ARG, PRODUCE, PRODUCE_SIZED, ActionSpec, Arg, clock_jump_draw, consumer_draw,
                                   fault, flag, index, millis, opt_in, size_draw)
from popverify.sim.admin import RESET_OFFSET
from popverify.sim.domain import start_queues
from popverify.sim.engine import Coverage, Engine, Mode
from popverify.sim.events import (BrokerRestarted, ClockJumped, Consumed, ConsumerCrashed, ConsumerShutdown,
                                  ConsumerStarted, Event, ExpiredSentBack, ListenerCalled, MessageStored, OffsetPersisted, PullAnswered,
                                  PullSent, PullSized, Rebalanced, ResponseDuplicated, ResponseLost, Subscriber, TimeAdvanced, push_checker_subscriber)
from popverify.sim.pull_request import PRODUCE_TAGGED, PULL_REQUEST
from popverify.sim.retention import EXPIRE
from reference.broker.broker import Broker
from reference.broker.config import with_options
from reference.client.consume_api import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus, ConsumeRecord, ListenerBatch
from reference.client.push_consumer import DefaultMQPushConsumer
from reference.common import response_code as rc
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.message_queue import MessageQueue
from reference.common.remoting import PullMessageRequestHeader, PullMessageResponse
from reference.profile import get_profile

if TYPE_CHECKING:
    from popverify.sim.scenario import ScenarioConfig

TOPIC = "TopicTest"
GROUP = "GID_popverify_push"
RETRY_TOPIC = "%RETRY%" + GROUP   # MixAll#getRetryTopic
DLQ_TOPIC = "%DLQ%" + GROUP       # MixAll#getDLQTopic
MAX_RECONSUME_TIMES = 16          # DefaultMQPushConsumer maxReconsumeTimes -1 → 16 (concurrent)
DRAIN_ROUNDS = 800
DRAIN_SLICE = 1000                # virtual ms per drain round
# Quiet rounds before the drain calls it quiescent: longer than every wait a live consumer can
# be in -- a lost response's time-out and retry (30 s + 3 s), a held pull (15 s), and an
# orderly queue still locked on the broker by a crashed client (60 s lease).
QUIET_ROUNDS = 75
COUNTS = ("produced", "pulled", "consumed", "reconsume_later", "sent_back", "rebalances", "crashes", "restarts",
          "faults", "skipped")
SUCCESS_STATUSES = ("CONSUME_SUCCESS", "SUCCESS", "COMMIT")


@attrs.define
class Client:
    """One consumer slot: its consumer model while alive, and the responses in flight to it."""

    name: str
    consumer: DefaultMQPushConsumer | None = None
    inbox: list[tuple[PullMessageRequestHeader, PullMessageResponse | None]] = attrs.Factory(list)
    # Pulls this incarnation sent that the broker suspended (long polling). A woken one answers
    # on the channel it came in on (PullRequestHoldService#notifyMessageArriving ->
    # executeRequestWhenWakeup), so only the incarnation that sent it can receive it: a consumer
    # that crashed or shut down has a closed channel, and its successor under the same client
    # id never sees the answer.
    suspended: list[PullMessageRequestHeader] = attrs.Factory(list)

    def reset_channel(self) -> None:
        """The connection closed (crash, shutdown, start of a new incarnation, broker restart)."""
        self.inbox.clear()
        self.suspended.clear()


class PushWorld:
    """A fresh broker with the topic and group, the consumer slots and the push checker."""

    topic = TOPIC
    group = GROUP  # (the admin's reset_offset resets a queue of this group)

    def __init__(self, profile: str, seed: int, config: "ScenarioConfig", check: bool,
                 publish: Callable[[Event], None], coverage: Coverage) -> None:
        self.prof = get_profile(profile)
        self.config = config
        self.publish = publish
        self.coverage = coverage
        self.clock = VirtualClock()
        self.broker = Broker(with_options(self.prof.broker, config.broker_options), self.clock,
                             JavaRandom(seed * 0x9E3779B1 + 1))
        self.broker.create_topic(TOPIC, config.queues)
        self.broker.create_group(GROUP)
        start_queues(self.broker, TOPIC, config)  # issue 17 item 3: offsets anywhere a long allows
        self.clients = [Client(f"c{i}") for i in range(config.consumers)]
        self.checker = PushChecker(GROUP, (TOPIC, RETRY_TOPIC), enabled=check)
        # Ghost of PushConsumerOffsets' ``consumed`` per queue of TOPIC: offsets whose consume
        # result was processed (success, or sent back to %RETRY%) -- see spec/trace-validation.md.
        self._handled: list[set[int]] = [set() for _ in range(config.queues)]
        # The broker's lock holder of an orderly batch's queue when it was handed to the listener
        # (ORD-1 is about the hand-over: the lock may lapse while the listener works).
        self._holder_at_begin: dict[ListenerBatch, str | None] = {}
        for client in self.clients:
            self._start(client)

    # -- what the engine asks of a world ---------------------------------------------------------
    def subscriber(self) -> Subscriber:
        """The property checker's subscription to the events."""
        return push_checker_subscriber(self.checker)

    def check_state(self, step: int) -> None:
        """OFF-3, PQ-1 and PQ-2 over the broker, the live clients' offset tables and queues."""
        live = [(c.name, c.consumer) for c in self.clients if c.consumer is not None]
        tables = [(name, consumer.offset_store.offset_table) for name, consumer in live]
        pqs = [(name, mq, pq) for name, consumer in live
               for mq, pq in sorted(consumer.process_queue_table.items(), key=lambda kv: (kv[0].topic, kv[0].queue_id))]
        self.checker.check_state(step, self.broker, tables, pqs)
        self.checker.check_suspended(step, self.clock.now(), self.broker)

    def cover_step(self, kind: str, applied: bool) -> None:
        """Coverage signal: a coarse abstract state and each queue's state (spec/fuzzing.md)."""
        live = [c.consumer for c in self.clients if c.consumer is not None]
        held = sum(pq.msg_count for consumer in live for pq in consumer.process_queue_table.values())
        inflight = sum(len(c.inbox) for c in self.clients)
        self.coverage.add(f"state:live{len(live)}:held{min(held, 3)}:inflight{min(inflight, 2)}")
        for qid in range(self.config.queues):
            self.coverage.add(f"queue:{kind}:{self._queue_state(live, qid)}")

    def _queue_state(self, live: list[DefaultMQPushConsumer], qid: int) -> str:
        """PushConsumerOffsets' view of one queue, bucketed: owners, the largest ProcessQueue,
        the first owner's client offset against the broker's, and the broker's lag."""
        mq = MessageQueue(TOPIC, self.broker.broker_name, qid)
        owners = [(c, pq) for c in live if (pq := c.process_queue_table.get(mq)) is not None and not pq.dropped]
        committed = self.broker.offsets.query_offset(GROUP, TOPIC, qid)
        lag = self.broker.max_offset(TOPIC, qid) - max(committed, 0)
        relation = "none"
        if owners:
            local = owners[0][0].offset_store.offset_table.get(mq, -1)
            relation = "absent" if local < 0 else "<" if local < committed else "=" if local == committed else ">"
        largest = max((pq.msg_count for _, pq in owners), default=0)
        return f"o{min(len(owners), 2)}:pq{min(largest, 2)}:local{relation}:lag{min(lag, 2)}"

    def finish(self, drained: bool, step: int) -> None:
        """State after the drain, dead letters, ALO-3, progress after the drain."""
        if self.config.drain:
            self.check_state(step)
        for msg in self.broker.store.snapshot_queue(DLQ_TOPIC, 0):
            self.checker.on_dead_letter(msg.uniq_key)
        # ConsumeMessageConcurrentlyService#getMaxReconsumeTimes: 16 unless configured; orderly
        # consumers pass Integer.MAX_VALUE, so only the lower bound applies to them.
        limit = None if self.config.consume_orderly else MAX_RECONSUME_TIMES
        for msg in self.broker.store.snapshot_queue(RETRY_TOPIC, 0):
            self.checker.on_retry_copy(step, msg.uniq_key, msg.queue_offset, msg.reconsume_times, limit)
        self.checker.finish(drained, step)
        if self.config.drain and self.checker.enabled:
            live = [(c.name, c.consumer) for c in self.clients if c.consumer is not None]
            check_push_after_drain(self.checker, self.broker, live, TOPIC, drained, step)

    def client(self, c: int) -> Client:
        """Consumer slot ``c`` (modulo their number)."""
        return self.clients[c % len(self.clients)]

    def _live(self, c: int) -> tuple[Client, DefaultMQPushConsumer] | None:
        client = self.client(c)
        return None if client.consumer is None else (client, client.consumer)

    # -- membership --------------------------------------------------------------------------
    def _start(self, client: Client) -> None:
        client.consumer = DefaultMQPushConsumer(
            client.name, GROUP, TOPIC, self.broker, self.clock, self.prof.client,
            consume_orderly=self.config.consume_orderly)
        client.reset_channel()
        client.consumer.start()
        # start() ends with rebalanceImmediately: the new member takes its queues at once (the
        # others learn of it from NOTIFY_CONSUMER_IDS_CHANGED, i.e. their next rebalance).
        result = client.consumer.do_rebalance()
        self.checker.on_rebalance(client.name, result.added + result.removed)

    def start(self, c: int) -> bool:
        """Consumer slot ``c`` starts a consumer if none runs there."""
        client = self.client(c)
        if client.consumer is not None:
            return False
        self._start(client)
        self.publish(ConsumerStarted(client.name))
        return True

    def shutdown(self, c: int) -> bool:
        """Consumer ``c`` shuts down (one consumer always stays)."""
        live = self._live(c)
        if live is None or sum(cl.consumer is not None for cl in self.clients) <= 1:
            return False  # keep one consumer: a group with none consumes nothing by definition
        client, consumer = live
        self._forget_listeners(consumer)
        consumer.shutdown()
        client.consumer = None
        client.reset_channel()
        self.publish(ConsumerShutdown(client.name))
        return True

    def crash(self, c: int) -> bool:
        """Consumer ``c`` crashes: no shutdown work, its channel closes."""
        live = self._live(c)
        if live is None:
            return False
        client, consumer = live
        self._forget_listeners(consumer)
        consumer.crash()
        # The TCP connection closes with the process: ConsumerManager#doChannelCloseEvent.
        self.broker.unregister_consumer(GROUP, client.name)
        client.consumer = None
        client.reset_channel()
        self.publish(ConsumerCrashed(client.name))
        return True

    def rebalance(self, c: int) -> bool:
        """Consumer ``c`` runs RebalanceImpl#doRebalance."""
        live = self._live(c)
        if live is None:
            return False
        client, consumer = live
        result = consumer.do_rebalance()
        self.checker.on_rebalance(client.name, result.added + result.removed)
        self.coverage.add(f"rebalance:+{min(len(result.added), 2)}:-{min(len(result.removed), 2)}")
        self.publish(Rebalanced(client.name, [f"{mq.topic}:{mq.queue_id}" for mq in result.added],
                                [f"{mq.topic}:{mq.queue_id}" for mq in result.removed]))
        return True

    # -- the pull path -----------------------------------------------------------------------
    def pull(self, c: int) -> bool:
        """Consumer ``c`` runs its next due PullRequest."""
        live = self._live(c)
        if live is None:
            return False
        client, consumer = live
        due = consumer.next_pull_due()
        if due is None or due > self.clock.now():
            return False
        header = consumer.pull_step()
        if header is None:
            self.coverage.add("pull:flow_control")
            return True
        response = self.broker.pull_message(header)
        self._answered(header, response)
        if response is None:
            client.suspended.append(header)
            self.coverage.add("pull:suspended")
        else:
            client.inbox.append((header, response))
            self.coverage.add(f"pull:{rc.name_of(response.code)}:{min(len(response.messages), 2)}")
        self.publish(PullSent(client.name, f"{header.topic}:{header.queue_id}", header.queue_offset,
                              header.commit_offset, None if response is None else response.code))
        return True

    def hold(self) -> bool:
        """PullRequestHoldService wakes the suspended pulls it can answer."""
        woken = self.broker.pull_hold_step()
        for header, response in woken:
            self._answered(header, response)
            client = next((cl for cl in self.clients if any(h is header for h in cl.suspended)), None)
            if client is not None and client.consumer is not None:
                client.suspended = [h for h in client.suspended if h is not header]
                client.inbox.append((header, response))
        self.coverage.add(f"hold:{min(len(woken), 2)}")
        return bool(woken)

    def _answered(self, header: PullMessageRequestHeader, response: PullMessageResponse | None) -> None:
        """The broker answered a pull (BAT-1 checks the size against maxMsgNums)."""
        if response is not None:
            self.publish(PullSized(f"{header.topic}:{header.queue_id}", len(response.messages),
                                   header.max_msg_nums))

    def _take_response(self, c: int, index: int) -> tuple[Client, DefaultMQPushConsumer,
                                                           PullMessageRequestHeader, PullMessageResponse | None] | None:
        live = self._live(c)
        if live is None or not live[0].inbox:
            return None
        client, consumer = live
        header, response = client.inbox.pop(index % len(client.inbox))
        return client, consumer, header, response

    def deliver(self, c: int, index: int) -> bool:
        """The response at ``index`` of consumer ``c``'s inbox reaches it."""
        taken = self._take_response(c, index)
        if taken is None:
            return False
        client, consumer, header, response = taken
        consumer.on_pull_response(header, response)
        self.publish(PullAnswered(client.name, f"{header.topic}:{header.queue_id}",
                                  None if response is None else response.code,
                                  [] if response is None else [m.queue_offset for m in response.messages]))
        return True

    def lose_response(self, c: int, index: int) -> bool:
        """The response at ``index`` is lost: the invokeAsync timeout fires onException."""
        taken = self._take_response(c, index)
        if taken is None:
            return False
        client, consumer, header, _ = taken
        consumer.on_pull_response(header, None)
        self.publish(ResponseLost(client.name, f"{header.topic}:{header.queue_id}"))
        return True

    def dup_response(self, c: int, index: int) -> bool:
        """The response at ``index`` arrives a second time."""
        live = self._live(c)
        if live is None or not live[0].inbox:
            return False
        client = live[0]
        client.inbox.append(client.inbox[index % len(client.inbox)])
        self.publish(ResponseDuplicated(client.name))
        return True

    # -- consumption and offsets -------------------------------------------------------------
    def consume(self, c: int, fail: bool) -> bool:
        """Consumer ``c`` runs one consume request; the listener fails when ``fail``."""
        live = self._live(c)
        if live is None or not live[1].has_consume_pending():
            return False
        client, consumer = live
        before = dict(consumer.offset_store.offset_table)
        record = consumer.consume_step(self._status(fail))
        if record is None:
            return False
        self._on_record(client, record, before, self._lock_holder(record.mq))
        return True

    def consume_begin(self, c: int) -> bool:
        """Consumer ``c`` hands its next ready batch to the listener (ConsumeRequest#run up to
        listener.consumeMessage); a request that ends before the listener (dropped queue,
        orderly lock checks) is published as a consume step, as ``consume`` does."""
        live = self._live(c)
        if live is None or not live[1].has_consume_pending():
            return False
        client, consumer = live
        before = dict(consumer.offset_store.offset_table)
        begun = consumer.consume_begin()
        if begun is None:
            return False
        if isinstance(begun, ConsumeRecord):
            self._on_record(client, begun, before, self._lock_holder(begun.mq))
            return True
        self._holder_at_begin[begun] = self._lock_holder(begun.mq)
        self.coverage.add(f"consume_begin:{min(consumer.listeners_running(), 3)}")
        self.publish(ListenerCalled(client.name, f"{begun.mq.topic}:{begun.mq.queue_id}",
                                    [m.queue_offset for m in begun.msgs]))
        return True

    def consume_end(self, c: int, index: int, fail: bool, body_size: int) -> bool:
        """The listener of consumer ``c``'s ``index``-th running batch returns (failing when
        ``fail``), having set each body to ``body_size`` bytes (-1: bodies unchanged)."""
        live = self._live(c)
        if live is None or not live[1].listeners_running():
            return False
        self._end(live[0], live[1], index, fail, None if body_size < 0 else body_size)
        return True

    def _end(self, client: Client, consumer: DefaultMQPushConsumer, index: int, fail: bool,
             body_size: int | None) -> None:
        running = consumer.running_batches()
        batch = running[index % len(running)]
        before = dict(consumer.offset_store.offset_table)
        record = consumer.consume_end(index, self._status(fail), body_size)
        assert record is not None  # a running consumer with a running batch
        if body_size is not None:
            self.coverage.add(f"consume_end:body_changed:{record.status}")
        self._on_record(client, record, before, self._holder_at_begin.pop(batch, None))

    def _forget_listeners(self, consumer: DefaultMQPushConsumer) -> None:
        """The consumer stops: what its listeners return is never applied."""
        for batch in consumer.running_batches():
            self._holder_at_begin.pop(batch, None)

    def _status(self, fail: bool) -> ConsumeConcurrentlyStatus | ConsumeOrderlyStatus:
        if self.config.consume_orderly:
            return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT if fail else ConsumeOrderlyStatus.SUCCESS
        return ConsumeConcurrentlyStatus.RECONSUME_LATER if fail else ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def _lock_holder(self, mq: MessageQueue) -> str | None:
        return self.broker.rebalance_locks.holder(GROUP, mq) if self.config.consume_orderly else None

    def _on_record(self, client: Client, record: ConsumeRecord, before: dict[MessageQueue, int],
                   holder: str | None) -> None:
        """Publish one consume step; ``before`` is the consumer's offset table just before it
        (DUP-1 compares with it and the broker's committed offset); ``holder`` is the queue's
        broker lock holder (orderly) when the batch was handed to the listener (ORD-1)."""
        floor = max(before.get(record.mq, -1),
                    self.broker.committed_offset(GROUP, record.mq.topic, record.mq.queue_id))
        ok = record.status in SUCCESS_STATUSES
        if record.mq.topic == TOPIC and not record.dropped:
            self._handled[record.mq.queue_id].update(record.offsets if ok else record.sent_back)
        if record.dropped:
            self.coverage.add("consume:dropped")
        self.coverage.add(f"consume:{record.status}:{'retry' if record.mq.topic == RETRY_TOPIC else 'normal'}"
                          f":{'commit' if record.committed_offset is not None else 'nocommit'}")
        self.publish(Consumed(client.name, f"{record.mq.topic}:{record.mq.queue_id}", list(record.offsets),
                              list(record.uniq_keys), record.status, record.committed_offset,
                              list(record.sent_back), record.dropped, record, floor,
                              self.config.consume_orderly, holder))

    def persist(self, c: int) -> bool:
        """Consumer ``c`` persists its offsets (persistConsumerOffset)."""
        live = self._live(c)
        if live is None:
            return False
        live[1].persist_consumer_offset()
        self.publish(OffsetPersisted(live[0].name))
        return True

    def consumer_timer(self, c: int) -> bool:
        """Consumer ``c``'s periodic work (cleanExpiredMsg and the like)."""
        live = self._live(c)
        if live is None:
            return False
        self._timer_step(live[1])
        return True

    def _timer_step(self, consumer: DefaultMQPushConsumer) -> None:
        """The consumer's timer step; what cleanExpiredMsg sent back (and removed) from a live
        ProcessQueue is handled, for the driver's record and the checker (ExpiredSentBack)."""
        before = {mq: (pq, set(pq.msg_tree_map)) for mq, pq in consumer.process_queue_table.items()
                  if not pq.dropped}
        consumer.timer_step()
        for mq, (pq, offsets) in sorted(before.items(), key=lambda kv: kv[0].sort_key()):
            if consumer.process_queue_table.get(mq) is pq and not pq.dropped:
                gone = offsets - set(pq.msg_tree_map)
                if gone and mq.topic == TOPIC:
                    self._handled[mq.queue_id].update(gone)
                if gone:
                    self.publish(ExpiredSentBack(mq.topic, mq.queue_id, sorted(gone)))

    # -- time and faults ---------------------------------------------------------------------
    def advance(self, ms: int) -> bool:
        """``ms`` pass; the schedule service delivers due retry messages."""
        self.clock.advance(ms)
        self.broker.timer_step()
        self.publish(TimeAdvanced(ms, self.clock.now()))
        return True

    def clock_jump(self, ms: int) -> bool:
        """The clock jumps ``ms`` forward."""
        self.clock.advance(ms)
        self.publish(ClockJumped(ms, self.clock.now()))
        return True

    def restart(self) -> bool:
        """The broker restarts; clients reconnect and register again with their next heartbeat."""
        self.broker.restart()
        for client in self.clients:
            client.reset_channel()
            if client.consumer is not None:
                self.broker.register_consumer(GROUP, client.name, (TOPIC, RETRY_TOPIC))
        self.publish(BrokerRestarted())
        return True

    # -- drain -------------------------------------------------------------------------------
    def drain(self) -> bool:
        """Live consumers rebalance, pull and consume successfully while time passes; True once
        nothing moved for QUIET_ROUNDS rounds with nothing in flight or in the timer."""
        if all(c.consumer is None for c in self.clients):
            self._start(self.clients[0])
        quiet = 0
        for _ in range(DRAIN_ROUNDS):
            moved = False
            for client in self.clients:
                if client.consumer is not None:
                    result = client.consumer.do_rebalance()
                    self.checker.on_rebalance(client.name, result.added + result.removed)
            for client in self.clients:
                if client.consumer is not None:
                    moved |= self._drain_client(client, client.consumer)
            self.clock.advance(DRAIN_SLICE)
            self.broker.timer_step()
            self.broker.offset_flush_step()
            self.checker.check_suspended(self.coverage.step, self.clock.now(), self.broker)
            self.check_state(self.coverage.step)  # OFF-3, PQ-1, PQ-2 hold in the drain as after every step
            busy = moved or bool(self.broker.timer_pending())
            quiet = 0 if busy else quiet + 1
            if quiet >= QUIET_ROUNDS:
                return True
        return False

    def _drain_client(self, client: Client, consumer: DefaultMQPushConsumer) -> bool:
        """One drain round of one live consumer: its due pulls, answers, consumption, timer and
        offset persistence. True when a message moved."""
        moved = False
        while consumer.listeners_running():  # the listeners at work return successfully
            self._end(client, consumer, 0, False, None)
            moved = True
        for _guard in range(64):
            due = consumer.next_pull_due()
            if due is None or due > self.clock.now():
                break
            header = consumer.pull_step()
            if header is None:
                continue
            response = self.broker.pull_message(header)
            self._answered(header, response)
            if response is None:
                client.suspended.append(header)
            else:
                client.inbox.append((header, response))
        self.hold()
        while client.inbox:
            header, response = client.inbox.pop(0)
            moved |= response is not None and bool(response.messages)
            consumer.on_pull_response(header, response)
        while consumer.has_consume_pending():
            before = dict(consumer.offset_store.offset_table)
            record = consumer.consume_step(self._status(False))
            if record is None:
                break
            moved = True
            self._on_record(client, record, before, self._lock_holder(record.mq))
        self._timer_step(consumer)
        consumer.persist_consumer_offset()
        return moved

    # -- trace -------------------------------------------------------------------------------
    def observe(self) -> dict[str, Any]:
        """The state in PushConsumerOffsets' variables, per queue of TOPIC (what ``popverify tlc
        --validate`` checks against the spec): who is alive, who holds a live ProcessQueue for
        the queue, its offsets, the pull cursor, the client and broker offsets, what was handled."""
        queues = []
        for qid in range(self.config.queues):
            mq = MessageQueue(TOPIC, self.broker.broker_name, qid)
            alive, owns, pq, nxt, local = {}, {}, {}, {}, {}
            for client in self.clients:
                consumer = client.consumer
                alive[client.name] = consumer is not None
                table_pq = None if consumer is None else consumer.process_queue_table.get(mq)
                held = table_pq is not None and not table_pq.dropped
                owns[client.name] = held
                pq[client.name] = sorted(table_pq.msg_tree_map) if held else []
                local[client.name] = -1 if consumer is None else consumer.offset_store.offset_table.get(mq, -1)
                cursor = consumer.pull_cursor(mq) if held else None
                if cursor is not None:
                    nxt[client.name] = cursor
            committed = self.broker.offsets.query_offset(GROUP, TOPIC, qid)
            queues.append({"queue": qid, "alive": alive, "owns": owns, "pq": pq, "next": nxt, "local": local,
                           "committed": committed, "consumed": sorted(self._handled[qid])})
        return {"queues": queues}


def _consume_draw(rng: JavaRandom, world: Any) -> tuple:
    return (rng.next_int(world.config.consumers), rng.next_int(100) < world.config.consume_fail_percent)


def _response_draw(rng: JavaRandom, world: Any) -> tuple:
    return (rng.next_int(world.config.consumers), rng.next_int(8))


def _consume_end_draw(rng: JavaRandom, world: Any) -> tuple:
    c, fail = _consume_draw(rng, world)
    index = rng.next_int(8)
    # one listener in eight changes the bodies, to any size up to one past the broker's limit
    return c, index, fail, size_draw(rng, MAX_BODY_ARG) if rng.next_int(8) == 0 else -1


# The push mode's actions, in the weighted choice's order (weights: spec/fuzzing.md).
PUSH_MODE_ACTIONS: tuple[ActionSpec, ...] = (
    PRODUCE,
    ActionSpec("start", 2, "start", (index("c"),), consumer_draw, always=True),
    ActionSpec("shutdown", 1, "shutdown", (index("c"),), consumer_draw),
    ActionSpec("rebalance", 4, "rebalance", (index("c"),), consumer_draw, always=True),
    ActionSpec("pull", 12, "pull", (index("c"),), consumer_draw, always=True),
    ActionSpec("deliver", 12, "deliver", (index("c"), index("index")), _response_draw, always=True),
    ActionSpec("hold", 3, "hold"),
    ActionSpec("consume", 14, "consume", (index("c"), flag("fail")), _consume_draw, always=True),
    ActionSpec("persist", 3, "persist", (index("c"),), consumer_draw),
    ActionSpec("consumer_timer", 2, "consumer_timer", (index("c"),), consumer_draw),
    ActionSpec("advance", 6, "advance", (millis("ms"),), lambda rng, w: (1 + rng.next_int(3000),),
               always=True),
    # faults
    fault("consumer_crash", "crash", (index("c"),), consumer_draw),
    fault("restart", "restart"),
    fault("lose_response", "lose_response", (index("c"), index("index")), _response_draw),
    fault("dup_response", "dup_response", (index("c"), index("index")), _response_draw),
    EXPIRE,
    fault("clock_jump", "clock_jump", (millis("ms"),), clock_jump_draw),
    # issue 17 item 3's opt-in actions (listed by the swarm's late draw, ScenarioConfig.draw_domain)
    PRODUCE_SIZED,
    # consumption in two steps (issue 17 item 3): the listener works while other steps run
    opt_in("consume_begin", 7, "consume_begin", (index("c"),), consumer_draw),
    # one coin for both: a listener begun and never ended holds its batch (and the queue) for good
    opt_in("consume_end", 7, "consume_end", (index("c"), index("index"), flag("fail"),
                                              Arg("body_size", int, -1, MAX_BODY_ARG)), _consume_end_draw,
           drawn_with="consume_begin"),
    # requests over the pull's domain (issue 16): the late coin, after every other field's draw
    PULL_REQUEST,
    # store helper: tagged messages for the filtering pulls; its coin last of all
    PRODUCE_TAGGED,
    # offsets2: an admin's offset reset of one queue of the push group (the POP mode's action,
    # popverify/sim/admin.py); on 5.5.0 the queue's next pull takes it (OFFSET_RESET), the
    # consumer drops the queue and fixes its offset (OFFSET_ILLEGAL). Late opt-in: its coin
    # follows pull_request's among the late kinds.
    RESET_OFFSET,
)

def _consumed(e: Consumed) -> tuple[tuple[str, int], ...]:
    handled = () if e.dropped else (("consumed" if e.status in SUCCESS_STATUSES else "reconsume_later", len(e.offsets)),)
    return handled + (("sent_back", len(e.sent_back)),)


# What each event adds to the run's counts (the engine adds "faults" and "skipped").
PUSH_COUNTERS: dict[type, Callable[[Any], tuple[tuple[str, int], ...]]] = {
    MessageStored: lambda e: (("produced", 1),),
    PullSent: lambda e: (("pulled", 1),),
    Consumed: _consumed,
    Rebalanced: lambda e: (("rebalances", 1),),
    ConsumerCrashed: lambda e: (("crashes", 1),),
    BrokerRestarted: lambda e: (("restarts", 1),),
}

PUSH_MODE = Mode("push", PUSH_MODE_ACTIONS, PushWorld, COUNTS, PUSH_COUNTERS,
                 ignores=("invisible_time", "max_msg_nums", "enable_pop_buffer_merge", "services_on_period",
                          "pop_orderly", "pop_polling_size", "max_pop_polling_size"))


class PushDriver(Engine):
    """The engine over a push world (the name step-by-step drivers and tests use)."""

    def __init__(self, profile: str, seed: int, config: "ScenarioConfig", check: bool, record_trace: bool) -> None:
        super().__init__(PUSH_MODE, profile, seed, config, check, record_trace)
