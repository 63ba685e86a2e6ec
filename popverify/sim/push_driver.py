"""The push-mode scenario driver: producers, push consumers, the pull path and its faults.

Consumers c0..c{n-1} are DefaultMQPushConsumer models of one group subscribed to one topic
(and, clustering, to %RETRY%group). The driver is their network and their threads: ``pull``
runs one due PullRequest (flow control or a PULL_MESSAGE request the broker serves at once
or holds for long polling), ``deliver`` hands a response back, ``consume`` runs one consume
request with a listener status the driver draws, and rebalance, offset persistence, joining,
leaving, crashes and broker restarts happen when drawn. After the steps, the drain keeps the
live consumers pulling and consuming successfully to quiescence (ALO-3's fairness).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from popverify.checker.progress import check_push_after_drain
from popverify.checker.push import PushChecker
from popverify.findings.model_error import MODEL_ERROR, ModelError, call_model, check_arguments
from popverify.sim.scenario import (Action, Coverage, FAULT_WEIGHT, PUSH_ACTIONS, PUSH_FAULTS, RunResult,
                                    ScenarioConfig, Violation)
from reference.broker import response_code as rc
from reference.broker.broker import Broker
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.profile import get_profile
from reference.common.remoting import PullMessageRequestHeader, PullMessageResponse
from reference.client.allocation import MessageQueue
from reference.client.consume_api import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus, ConsumeRecord
from reference.client.push_consumer import DefaultMQPushConsumer

TOPIC = "TopicTest"
GROUP = "GID_popverify_push"
RETRY_TOPIC = "%RETRY%" + GROUP   # MixAll#getRetryTopic
DLQ_TOPIC = "%DLQ%" + GROUP       # MixAll#getDLQTopic
DRAIN_ROUNDS = 800
DRAIN_SLICE = 1000                # virtual ms per drain round
# Quiet rounds before the drain calls it quiescent: longer than every wait a live consumer can
# be in -- a lost response's time-out and retry (30 s + 3 s), a held pull (15 s), and an
# orderly queue still locked on the broker by a crashed client (60 s lease).
QUIET_ROUNDS = 75


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


class PushDriver:
    """One push scenario over a fresh broker."""

    def __init__(self, profile: str, seed: int, config: ScenarioConfig, check: bool, record_trace: bool) -> None:
        prof = get_profile(profile)
        self.profile = prof.name  # canonical, also when called with an alias such as "develop"
        self.prof = prof
        self.seed = seed
        self.config = config
        self.clock = VirtualClock()
        self.rng = JavaRandom(seed)
        self.broker = Broker(prof.broker, self.clock, JavaRandom(seed * 0x9E3779B1 + 1))
        self.broker.create_topic(TOPIC, config.queues)
        self.broker.create_group(GROUP)
        self.clients = [Client(f"c{i}") for i in range(config.consumers)]
        self.checker = PushChecker(GROUP, (TOPIC, RETRY_TOPIC), enabled=check)
        self.counts: dict[str, int] = {k: 0 for k in (
            "produced", "pulled", "consumed", "reconsume_later", "sent_back", "rebalances", "crashes",
            "restarts", "faults", "skipped")}
        self.coverage = Coverage()
        self.schedule: list[Action] = []
        self.record_trace = record_trace
        self.states: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.step_no = 0
        self.model_error: ModelError | None = None
        self._prev_kind = "start"
        # Ghost of PushConsumerOffsets' ``consumed`` per queue of TOPIC: offsets whose consume
        # result was processed (success, or sent back to %RETRY%) -- see spec/trace-validation.md.
        self._handled: list[set[int]] = [set() for _ in range(config.queues)]
        kinds = [k for k in PUSH_ACTIONS if k in config.actions] or list(PUSH_ACTIONS)
        weights = [(k, PUSH_ACTIONS[k]) for k in kinds] + [(f, FAULT_WEIGHT) for f in config.faults
                                                          if f in PUSH_FAULTS]
        self._kinds = [k for k, _ in weights]
        self._cumulative: list[int] = []
        total = 0
        for _, w in weights:
            total += w
            self._cumulative.append(total)
        self._total = total
        for client in self.clients:
            self._start(client)
        self.initial_observed = self.observe() if record_trace else None

    # -- drawing -----------------------------------------------------------------------------
    def draw(self) -> Action:
        """Draw the next action and its arguments from the run's generator."""
        r = self.rng.next_int(self._total)
        kind = next(k for k, c in zip(self._kinds, self._cumulative) if r < c)
        cfg, rng = self.config, self.rng
        if kind == "produce":
            return Action(kind, (rng.next_int(cfg.queues),))
        if kind in ("start", "shutdown", "rebalance", "pull", "persist", "consumer_timer", "consumer_crash"):
            return Action(kind, (rng.next_int(cfg.consumers),))
        if kind in ("deliver", "lose_response", "dup_response"):
            return Action(kind, (rng.next_int(cfg.consumers), rng.next_int(8)))
        if kind == "consume":
            return Action(kind, (rng.next_int(cfg.consumers), rng.next_int(100) < cfg.consume_fail_percent))
        if kind == "advance":
            return Action(kind, (1 + rng.next_int(3000),))
        if kind == "expire":
            return Action(kind, (rng.next_int(cfg.queues), 1 + rng.next_int(3)))
        if kind == "clock_jump":
            return Action(kind, (30_000 + rng.next_int(90_000),))
        return Action(kind)

    # -- running -----------------------------------------------------------------------------
    def run(self, steps: int, schedule: Sequence[Action] | None) -> None:
        """Run the given schedule, continued by drawn actions up to ``steps``, then the drain."""
        plan = list(schedule) if schedule is not None else []
        # A given schedule is followed first; up to ``steps``, drawn actions continue it (how
        # coverage-guided rounds extend a corpus prefix; replay and shrink pass steps <= len).
        total = max(len(plan), steps)
        for i in range(total):
            action = plan[i] if i < len(plan) else self.draw()
            self.step_no = i
            self.coverage.step = i
            self.events = []
            applied = self.apply(action)
            if not applied:
                self.counts["skipped"] += 1
            self._cover_step(action.kind, applied)
            self.schedule.append(action)
            self._check(i)
            if self.record_trace:
                self._record(action, applied)
            if self.model_error is not None:
                return  # a model exception ends the run as a MODEL-ERROR finding
        self.step_no = total
        self.coverage.step = total
        drained = False
        if self.config.drain:
            self.events = []
            drained, error = call_model(self.drain)
            if error is not None:
                self._model_error(error)
                if self.record_trace:
                    self._record(Action("drain"), False)
                return
            self._check(total)
            if self.record_trace:
                self._record(Action("drain"), drained)
        for msg in self.broker.store.snapshot_queue(DLQ_TOPIC, 0):
            self.checker.on_dead_letter(msg.uniq_key)
        self.checker.finish(drained, total)
        if self.config.drain and self.checker.enabled:
            live = [(c.name, c.consumer) for c in self.clients if c.consumer is not None]
            check_push_after_drain(self.checker, self.broker, live, TOPIC, drained, total)

    def _check(self, step: int) -> None:
        live = [(c.name, c.consumer) for c in self.clients if c.consumer is not None]
        tables = [(name, consumer.offset_store.offset_table) for name, consumer in live]
        pqs = [(name, mq, pq) for name, consumer in live
               for mq, pq in sorted(consumer.process_queue_table.items(), key=lambda kv: (kv[0].topic, kv[0].queue_id))]
        self.checker.check_state(step, self.broker, tables, pqs)

    def _cover_step(self, kind: str, applied: bool) -> None:
        """Coverage signal: action-pair edges and a coarse abstract state (spec/fuzzing.md)."""
        live = [c.consumer for c in self.clients if c.consumer is not None]
        held = sum(pq.msg_count for consumer in live for pq in consumer.process_queue_table.values())
        inflight = sum(len(c.inbox) for c in self.clients)
        self.coverage.add(f"edge:{self._prev_kind}>{kind}:{int(applied)}")
        self.coverage.add(f"state:live{len(live)}:held{min(held, 3)}:inflight{min(inflight, 2)}")
        for qid in range(self.config.queues):
            self.coverage.add(f"queue:{kind}:{self._queue_state(live, qid)}")
        self._prev_kind = kind

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

    def apply(self, action: Action) -> bool:
        """Perform one action; False when it does not apply in this state (a no-op)."""
        handler = getattr(self, f"_do_{action.kind}", None)
        if handler is None:
            return False
        # A foreign schedule entry with the wrong arguments is an input error (ValueError),
        # and an exception inside reference/ ends the run as a MODEL-ERROR finding.
        check_arguments(action.kind, handler, action.args)
        ok, error = call_model(lambda: handler(*action.args))
        if error is not None:
            self._model_error(error)
            return False
        if ok and action.kind in PUSH_FAULTS:
            self.counts["faults"] += 1
            self.checker.on_fault(action.kind)
        self.coverage.add(f"action:{action.kind}:{'ok' if ok else 'skip'}")
        return bool(ok)

    def _model_error(self, error: ModelError) -> None:
        """A model exception: the run ends with a MODEL-ERROR violation at this step (loud even
        with the checker off); the traceback goes into the result and the trace."""
        self.model_error = error
        self.checker.violations.append(Violation(MODEL_ERROR, error.message, self.step_no))
        self._event("model_error", message=error.message, traceback=error.traceback)

    def _client(self, c: int) -> Client:
        return self.clients[c % len(self.clients)]

    def _live(self, c: int) -> tuple[Client, DefaultMQPushConsumer] | None:
        client = self._client(c)
        return None if client.consumer is None else (client, client.consumer)

    # -- producers ---------------------------------------------------------------------------
    def _do_produce(self, queue_id: int) -> bool:
        qid = queue_id % self.config.queues
        result = self.broker.put_message(TOPIC, qid, body=b"x" * 16)
        if result.code != rc.SUCCESS:
            return False
        self.counts["produced"] += 1
        self.checker.on_produce(result.uniq_key or "", qid, result.queue_offset)
        self._event("produce", queue=qid, offset=result.queue_offset, uniq=result.uniq_key)
        return True

    # -- membership --------------------------------------------------------------------------
    def _start(self, client: Client) -> None:
        client.consumer = DefaultMQPushConsumer(
            client.name, GROUP, TOPIC, self.broker, self.clock, self.prof.client,
            consume_orderly=self.config.consume_orderly)
        client.reset_channel()
        client.consumer.start()
        # start() ends with rebalanceImmediately: the new member takes its queues at once (the
        # others learn of it from NOTIFY_CONSUMER_IDS_CHANGED, i.e. their next rebalance).
        client.consumer.do_rebalance()

    def _do_start(self, c: int) -> bool:
        client = self._client(c)
        if client.consumer is not None:
            return False
        self._start(client)
        self._event("start", consumer=client.name)
        return True

    def _do_shutdown(self, c: int) -> bool:
        live = self._live(c)
        if live is None or sum(cl.consumer is not None for cl in self.clients) <= 1:
            return False  # keep one consumer: a group with none consumes nothing by definition
        client, consumer = live
        consumer.shutdown()
        client.consumer = None
        client.reset_channel()
        self._event("shutdown", consumer=client.name)
        return True

    def _do_consumer_crash(self, c: int) -> bool:
        live = self._live(c)
        if live is None:
            return False
        client, consumer = live
        consumer.crash()
        # The TCP connection closes with the process: ConsumerManager#doChannelCloseEvent.
        self.broker.unregister_consumer(GROUP, client.name)
        client.consumer = None
        client.reset_channel()
        self.counts["crashes"] += 1
        self._event("consumer_crash", consumer=client.name)
        return True

    def _do_rebalance(self, c: int) -> bool:
        live = self._live(c)
        if live is None:
            return False
        client, consumer = live
        result = consumer.do_rebalance()
        self.counts["rebalances"] += 1
        self.coverage.add(f"rebalance:+{min(len(result.added), 2)}:-{min(len(result.removed), 2)}")
        self._event("rebalance", consumer=client.name,
                    added=[f"{mq.topic}:{mq.queue_id}" for mq in result.added],
                    removed=[f"{mq.topic}:{mq.queue_id}" for mq in result.removed])
        return True

    # -- the pull path -----------------------------------------------------------------------
    def _do_pull(self, c: int) -> bool:
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
        self.counts["pulled"] += 1
        if response is None:
            client.suspended.append(header)
            self.coverage.add("pull:suspended")
        else:
            client.inbox.append((header, response))
            self.coverage.add(f"pull:{rc.name_of(response.code)}:{min(len(response.messages), 2)}")
        self._event("pull", consumer=client.name, queue=f"{header.topic}:{header.queue_id}",
                    offset=header.queue_offset, commit_offset=header.commit_offset,
                    code=None if response is None else response.code)
        return True

    def _do_hold(self) -> bool:
        woken = self.broker.pull_hold_step()
        for header, response in woken:
            client = next((cl for cl in self.clients if any(h is header for h in cl.suspended)), None)
            if client is not None and client.consumer is not None:
                client.suspended = [h for h in client.suspended if h is not header]
                client.inbox.append((header, response))
        self.coverage.add(f"hold:{min(len(woken), 2)}")
        return bool(woken)

    def _take_response(self, c: int, index: int) -> tuple[Client, DefaultMQPushConsumer,
                                                           PullMessageRequestHeader, PullMessageResponse | None] | None:
        live = self._live(c)
        if live is None or not live[0].inbox:
            return None
        client, consumer = live
        header, response = client.inbox.pop(index % len(client.inbox))
        return client, consumer, header, response

    def _do_deliver(self, c: int, index: int) -> bool:
        taken = self._take_response(c, index)
        if taken is None:
            return False
        client, consumer, header, response = taken
        consumer.on_pull_response(header, response)
        self._event("deliver", consumer=client.name, queue=f"{header.topic}:{header.queue_id}",
                    code=None if response is None else response.code,
                    offsets=[] if response is None else [m.queue_offset for m in response.messages])
        return True

    def _do_lose_response(self, c: int, index: int) -> bool:
        taken = self._take_response(c, index)
        if taken is None:
            return False
        client, consumer, header, _ = taken
        consumer.on_pull_response(header, None)  # the invokeAsync timeout fires onException
        self._event("lose_response", consumer=client.name, queue=f"{header.topic}:{header.queue_id}")
        return True

    def _do_dup_response(self, c: int, index: int) -> bool:
        live = self._live(c)
        if live is None or not live[0].inbox:
            return False
        client = live[0]
        client.inbox.append(client.inbox[index % len(client.inbox)])
        self._event("dup_response", consumer=client.name)
        return True

    # -- consumption and offsets -------------------------------------------------------------
    def _do_consume(self, c: int, fail: bool) -> bool:
        live = self._live(c)
        if live is None or not live[1].has_consume_pending():
            return False
        client, consumer = live
        record = consumer.consume_step(self._status(fail))
        if record is None:
            return False
        self._on_record(client, record)
        return True

    def _status(self, fail: bool) -> ConsumeConcurrentlyStatus | ConsumeOrderlyStatus:
        if self.config.consume_orderly:
            return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT if fail else ConsumeOrderlyStatus.SUCCESS
        return ConsumeConcurrentlyStatus.RECONSUME_LATER if fail else ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def _on_record(self, client: Client, record: ConsumeRecord) -> None:
        self.checker.on_consume(record)
        if record.mq.topic == TOPIC and not record.dropped:
            ok = record.status in ("CONSUME_SUCCESS", "SUCCESS", "COMMIT")
            self._handled[record.mq.queue_id].update(record.offsets if ok else record.sent_back)
        if record.dropped:
            self.coverage.add("consume:dropped")
        elif record.status in ("CONSUME_SUCCESS", "SUCCESS", "COMMIT"):
            self.counts["consumed"] += len(record.offsets)
        else:
            self.counts["reconsume_later"] += len(record.offsets)
        self.counts["sent_back"] += len(record.sent_back)
        self.coverage.add(f"consume:{record.status}:{'retry' if record.mq.topic == RETRY_TOPIC else 'normal'}"
                          f":{'commit' if record.committed_offset is not None else 'nocommit'}")
        self._event("consume", consumer=client.name, queue=f"{record.mq.topic}:{record.mq.queue_id}",
                    offsets=list(record.offsets), uniq=list(record.uniq_keys), status=record.status,
                    committed_offset=record.committed_offset, sent_back=list(record.sent_back),
                    dropped=record.dropped)

    def _do_persist(self, c: int) -> bool:
        live = self._live(c)
        if live is None:
            return False
        live[1].persist_consumer_offset()
        self._event("persist", consumer=live[0].name)
        return True

    def _do_consumer_timer(self, c: int) -> bool:
        live = self._live(c)
        if live is None:
            return False
        consumer = live[1]
        before = {mq: (pq, set(pq.msg_tree_map)) for mq, pq in consumer.process_queue_table.items()
                  if mq.topic == TOPIC and not pq.dropped}
        consumer.timer_step()
        # cleanExpiredMsg sent back (and removed) what left a live ProcessQueue: handled.
        for mq, (pq, offsets) in before.items():
            if consumer.process_queue_table.get(mq) is pq and not pq.dropped:
                self._handled[mq.queue_id].update(offsets - set(pq.msg_tree_map))
        return True

    # -- time and faults ---------------------------------------------------------------------
    def _do_advance(self, ms: int) -> bool:
        self.clock.advance(ms)
        self.broker.timer_step()  # the schedule service delivers due retry messages
        self._event("advance", ms=ms, now=self.clock.now())
        return True

    def _do_clock_jump(self, ms: int) -> bool:
        self.clock.advance(ms)
        self._event("clock_jump", ms=ms, now=self.clock.now())
        return True

    def _do_restart(self) -> bool:
        self.broker.restart()
        # Clients reconnect and their next heartbeat registers them again.
        for client in self.clients:
            client.reset_channel()
            if client.consumer is not None:
                self.broker.register_consumer(GROUP, client.name, (TOPIC, RETRY_TOPIC))
        self.counts["restarts"] += 1
        self._event("restart")
        return True

    def _do_expire(self, queue_id: int, count: int) -> bool:
        qid = queue_id % self.config.queues
        below = min(self.broker.min_offset(TOPIC, qid) + count, self.broker.max_offset(TOPIC, qid))
        if below <= self.broker.min_offset(TOPIC, qid):
            return False
        self.checker.on_expire(TOPIC, qid, below)
        self.broker.expire(TOPIC, qid, below)
        self._event("expire", queue=qid, below=below)
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
                    client.consumer.do_rebalance()
            for client in self.clients:
                consumer = client.consumer
                if consumer is None:
                    continue
                for _guard in range(64):
                    due = consumer.next_pull_due()
                    if due is None or due > self.clock.now():
                        break
                    header = consumer.pull_step()
                    if header is None:
                        continue
                    response = self.broker.pull_message(header)
                    if response is None:
                        client.suspended.append(header)
                    else:
                        client.inbox.append((header, response))
                self._do_hold()
                while client.inbox:
                    header, response = client.inbox.pop(0)
                    moved |= response is not None and bool(response.messages)
                    consumer.on_pull_response(header, response)
                while consumer.has_consume_pending():
                    record = consumer.consume_step(self._status(False))
                    if record is None:
                        break
                    moved = True
                    self._on_record(client, record)
                consumer.timer_step()
                consumer.persist_consumer_offset()
            self.clock.advance(DRAIN_SLICE)
            self.broker.timer_step()
            self.broker.offset_flush_step()
            busy = moved or bool(self.broker.timer_pending())
            quiet = 0 if busy else quiet + 1
            if quiet >= QUIET_ROUNDS:
                return True
        return False

    # -- trace -------------------------------------------------------------------------------
    def _event(self, kind: str, **fields: Any) -> None:
        if self.record_trace:
            self.events.append({"type": kind, **fields})

    def _record(self, action: Action, applied: bool) -> None:
        self.states.append({"step": self.step_no, "now": self.clock.now(),
                            "action": {"kind": action.kind, "args": list(action.args), "applied": applied},
                            "events": self.events, "observed": self.observe()})

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

    def result(self, mutant: str | None) -> RunResult:
        """The RunResult of the finished run (trace in ITF when recorded)."""
        result = RunResult(seed=self.seed, profile=self.profile, mode="push", steps=len(self.schedule),
                           config=self.config, counts=dict(self.counts),
                           violations=tuple(self.checker.violations), coverage=self.coverage.points(),
                           first_step=dict(self.coverage.first_step),
                           schedule=tuple(self.schedule), mutant=mutant,
                           model_traceback=self.model_error.traceback if self.model_error else None)
        if self.record_trace:
            from popverify.trace.itf import trace_of
            result = attrs.evolve(result, trace=trace_of(result, self.states, self.initial_observed))
        return result


def run(profile: str, seed: int, steps: int, *, config: ScenarioConfig | None, schedule: Sequence[Action] | None,
        check: bool, mutant: str | None, record_trace: bool) -> RunResult:
    """run_scenario for mode "push"."""
    driver = PushDriver(profile, seed, config or ScenarioConfig.default_for("push"), check, record_trace)
    driver.run(steps, schedule)
    return driver.result(mutant)
