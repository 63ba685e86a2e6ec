"""The POP-mode scenario driver: producers, POP consumers, broker services and faults.

Every step is one action, drawn by a seeded JavaRandom from the kinds the ScenarioConfig
enables (or taken from a given schedule). A POP request is begun by ``pop`` and advanced
queue by queue by ``pop_step``, so puts, acks, scans and revive passes interleave between
the queues of one request as the Java lock regions allow. After the steps, an optional
drain (consumers pop and ack to quiescence while time and services advance) gives the
eventual properties (ALO) their fairness.

Requests are time-atomic up to REQUEST_TIME_BOUND_MS: Java serves a POP in one thread
(PopMessageProcessor#processRequest → popMsgFromQueue, queue lock released in ``finally``),
so other threads' work interleaves with it but virtual time does not run on for seconds
inside it. Before time passes (``advance``, ``clock_jump``, the drain), every in-flight
request whose popTime would fall more than the bound behind is run to its end first. Only
the ``stall`` fault (a GC pause or a slow disk under one broker thread) keeps a request in
flight across a longer passage of time (spec/broker.md, "Time inside a request").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from popverify.checker.pop import PopChecker
from popverify.checker.progress import check_after_drain, drain_not_quiet
from popverify.findings.model_error import MODEL_ERROR, ModelError, call_model, check_arguments
from popverify.findings.strategies import HandleKeys, key_witnesses
from popverify.sim.scenario import (ALL_POP_FAULTS, Action, Coverage, FAULT_WEIGHT, POP_ACTIONS, RunResult,
                                    ScenarioConfig, Violation)
from reference.broker import response_code as rc
from reference.broker.ack_processor import AckEntry
from reference.broker.broker import Broker
from reference.broker.keys import REVIVE_GROUP, build_pop_retry_topic
from reference.broker.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from reference.broker.pop_processor import PopOperation, PopRequest
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.profile import get_profile

TOPIC = "TopicTest"
GROUP = "GID_popverify"
RETRY_TOPIC = build_pop_retry_topic(TOPIC, GROUP)
DRAIN_ROUNDS = 400
# Longest gap, in virtual ms, between two runs of a periodic broker service while time passes.
SERVICE_SLICE = 100
# How much virtual time may pass inside one POP request (popTime to its last queue read)
# without a ``stall``: a request does in-memory work and consume-queue/commit-log reads from
# the page cache plus at most one CK put per queue visited (a few queues), which a healthy
# broker serves in well under a millisecond to a few milliseconds (spec/broker.md).
REQUEST_TIME_BOUND_MS = 5
# A ``stall`` lasts 10..10000 ms, log-uniformly by decade (GC pauses, slow disks).
STALL_DECADES = (10, 100, 1000)


@attrs.define
class InFlight:
    """A delivered message the consumer holds: its receipt handle and invisibility deadline."""

    uniq: str
    ack_topic: str
    queue_id: int
    offset: int
    extra_info: str
    deadline: int


@attrs.define
class Consumer:
    """A POP consumer client: one outstanding request at most, and what it holds."""

    name: str
    op: PopOperation | None = None
    held: list[InFlight] = attrs.Factory(list)


class PopDriver:
    """One POP scenario over a fresh broker."""

    def __init__(self, profile: str, seed: int, config: ScenarioConfig, check: bool, record_trace: bool) -> None:
        prof = get_profile(profile)
        self.profile = prof.name  # canonical, also when called with an alias such as "develop"
        self.seed = seed
        self.config = config
        self.clock = VirtualClock()
        self.rng = JavaRandom(seed)
        broker_config = attrs.evolve(prof.broker, enable_pop_buffer_merge=config.enable_pop_buffer_merge)
        self.broker = Broker(broker_config, self.clock, JavaRandom(seed * 0x9E3779B1 + 1))
        self.broker.create_topic(TOPIC, config.queues)
        self.broker.create_group(GROUP)
        self.consumers = [Consumer(f"c{i}") for i in range(config.consumers)]
        self.checker = PopChecker(TOPIC, GROUP, enabled=check)
        self.handle_keys = HandleKeys(GROUP)
        self.counts: dict[str, int] = {k: 0 for k in ("produced", "popped", "acked", "revived", "redelivered",
                                                      "changed_invisible", "restarts", "faults", "stalls", "skipped")}
        self.coverage = Coverage()
        self.schedule: list[Action] = []
        self.record_trace = record_trace
        self.states: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.step_no = 0
        self.model_error: ModelError | None = None
        self._prev_kind = "start"
        weights = [(k, w) for k, w in POP_ACTIONS.items() if k in config.actions]
        weights += [(f, FAULT_WEIGHT) for f in config.faults]
        self._kinds = [k for k, _ in weights]
        self._cumulative: list[int] = []
        total = 0
        for _, w in weights:
            total += w
            self._cumulative.append(total)
        self._total = total

    # -- drawing -----------------------------------------------------------------------------
    def draw(self) -> Action:
        """Draw the next action and its arguments from the run's generator."""
        r = self.rng.next_int(self._total)
        kind = next(k for k, c in zip(self._kinds, self._cumulative) if r < c)
        cfg, rng = self.config, self.rng
        if kind == "produce":
            return Action(kind, (rng.next_int(cfg.queues),))
        if kind == "pop":
            qid = -1 if rng.next_int(3) == 0 else rng.next_int(cfg.queues)
            return Action(kind, (rng.next_int(cfg.consumers), qid, rng.next_int(4) == 0))
        if kind in ("pop_step", "consumer_crash", "batch_ack"):
            return Action(kind, (rng.next_int(cfg.consumers),))
        if kind == "ack":
            return Action(kind, (rng.next_int(cfg.consumers), rng.next_int(64)))
        if kind == "change_invisible":
            return Action(kind, (rng.next_int(cfg.consumers), rng.next_int(64), 1000 * (1 + rng.next_int(30))))
        if kind == "advance":
            # One advance in four is a short tick that can fall inside a request's time bound
            # (a put stored a few ms after a popTime, as on a real broker: finding F1).
            if rng.next_int(4) == 0:
                return Action(kind, (1 + rng.next_int(REQUEST_TIME_BOUND_MS),))
            return Action(kind, (1 + rng.next_int(1500),))
        if kind == "stall":
            base = STALL_DECADES[rng.next_int(len(STALL_DECADES))]
            return Action(kind, (rng.next_int(cfg.consumers), base + rng.next_int(9 * base + 1)))
        if kind == "revive":
            return Action(kind, (rng.next_int(self.broker.config.revive_queue_num),))
        if kind == "expire":
            return Action(kind, (rng.next_int(cfg.queues), 1 + rng.next_int(3)))
        if kind == "clock_jump":
            return Action(kind, (30_000 + rng.next_int(90_000),))
        if kind == "store_put_fail":  # H3 (issue 16): the next 1..2 consumption-path puts fail
            return Action(kind, (1 + rng.next_int(2),))
        if kind == "scan_stall":  # H3 (issue 16): one buffer scan takes 1..5 s
            return Action(kind, (1000 + rng.next_int(4001),))
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
            self.checker.check_offsets(i, self.broker, self.config.queues)
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
            if self.record_trace:
                self._record(Action("drain"), drained)
        self.checker.finish(drained, total)
        # z3 witnesses of proofs/keys.py this run reached (delivered handles, stored CKs)
        for name in sorted(self.handle_keys.reached | set(key_witnesses(self.broker))):
            self.coverage.add(f"key-witness:{name}")
        if self.config.drain and self.checker.enabled:
            if drained:
                check_after_drain(self.checker, self.broker, self.config.queues, RETRY_TOPIC, total)
            else:
                drain_not_quiet(self.checker, self.broker, DRAIN_ROUNDS, total)

    def _cover_step(self, kind: str, applied: bool) -> None:
        """Coverage signal (spec/fuzzing.md): action-pair edges, a coarse abstract state of the
        consumers, and the abstract state of the broker's checkpoint pipeline reached by each
        action kind (buffer, timer, unrevived revive-queue backlog, retry backlog)."""
        b = self.broker
        held = sum(len(c.held) for c in self.consumers)
        pending = sum(1 for c in self.consumers if c.op is not None)
        buffered = len(b.buffer_merge.buffer)
        timer = len(b.timer_pending())
        revive_lag = sum(b.max_offset(b.revive_topic, q) - 1 - b.committed_offset(REVIVE_GROUP, b.revive_topic, q)
                         for q in range(b.config.revive_queue_num))
        retry = b.max_offset(RETRY_TOPIC, 0) - max(b.committed_offset(GROUP, RETRY_TOPIC, 0), 0)
        pipeline = f"buf{min(buffered, 3)}:timer{min(timer, 3)}:revive{min(max(revive_lag, 0), 3)}:retry{min(retry, 2)}"
        self.coverage.add(f"edge:{self._prev_kind}>{kind}:{int(applied)}")
        self.coverage.add(f"state:held{min(held, 3)}:pending{pending}:buffer{min(buffered, 2)}")
        self.coverage.add(f"pipeline:{kind}:{pipeline}")
        self._prev_kind = kind

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
        if ok and action.kind in ALL_POP_FAULTS:
            self.counts["faults"] += 1
        self.coverage.add(f"action:{action.kind}:{'ok' if ok else 'skip'}")
        return bool(ok)

    def _model_error(self, error: ModelError) -> None:
        """A model exception: the run ends with a MODEL-ERROR violation at this step (loud even
        with the checker off); the traceback goes into the result and the trace."""
        self.model_error = error
        self.checker.violations.append(Violation(MODEL_ERROR, error.message, self.step_no))
        self._event("model_error", message=error.message, traceback=error.traceback)

    def _consumer(self, c: int) -> Consumer:
        return self.consumers[c % len(self.consumers)]

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

    # -- consumers ---------------------------------------------------------------------------
    def _do_pop(self, c: int, queue_id: int, long_poll: bool) -> bool:
        consumer = self._consumer(c)
        if consumer.op is not None:
            return False
        qid = -1 if queue_id < 0 else queue_id % self.config.queues
        request = PopRequest(topic=TOPIC, group=GROUP, queue_id=qid, max_msg_nums=self.config.max_msg_nums,
                             invisible_time=self.config.invisible_time, poll_time=5000 if long_poll else 0,
                             client=consumer.name)
        consumer.op = self.broker.begin_pop(request)
        self._event("pop_begin", consumer=consumer.name, queue=qid)
        return self._advance_op(consumer)

    def _do_pop_step(self, c: int) -> bool:
        consumer = self._consumer(c)
        if consumer.op is None:
            return False
        return self._advance_op(consumer)

    def _advance_op(self, consumer: Consumer) -> bool:
        op = consumer.op
        assert op is not None
        progressed = op.step()
        if op.done:
            self._collect(consumer, op)
            consumer.op = None
        elif not progressed and not op.parked:
            consumer.op = None  # aborted by a restart: the response never comes
        return progressed or op.done

    def _collect(self, consumer: Consumer, op: PopOperation) -> None:
        result = op.result
        assert result is not None
        self.coverage.add(f"pop:{rc.NAMES.get(result.code, result.code)}:{min(len(result.messages), 2)}")
        now = self.clock.now()
        for popped in result.messages:
            uniq = popped.message.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, "")
            deadline = result.pop_time + result.invisible_time
            rec = self.checker.messages.get(uniq)
            if rec is not None and rec.deliveries > 0:
                self.counts["redelivered"] += 1
            self.checker.on_deliver(self.step_no, now, uniq, deadline)
            consumer.held.append(InFlight(uniq, popped.ack_topic, popped.queue_id, popped.queue_offset,
                                          popped.extra_info, deadline))
            self.handle_keys.observe(popped.ack_topic, popped.queue_id, popped.extra_info)
            self.counts["popped"] += 1
            retry = popped.ack_topic != TOPIC
            self.coverage.add(f"deliver:{'retry' if retry else 'normal'}")
            self._event("deliver", consumer=consumer.name, uniq=uniq, topic=popped.ack_topic,
                        queue=popped.queue_id, offset=popped.queue_offset, pop_time=result.pop_time,
                        invisible_time=result.invisible_time, handle=popped.extra_info)

    def _take(self, c: int, index: int) -> tuple[Consumer, InFlight] | None:
        consumer = self._consumer(c)
        if not consumer.held:
            return None
        return consumer, consumer.held.pop(index % len(consumer.held))

    def _do_ack(self, c: int, index: int) -> bool:
        taken = self._take(c, index)
        if taken is None:
            return False
        consumer, held = taken
        self._ack(consumer, held)
        return True

    def _ack(self, consumer: Consumer, held: InFlight) -> int:
        code = self.broker.ack(GROUP, held.ack_topic, held.queue_id, held.offset, held.extra_info)
        self.checker.on_ack(self.step_no, self.clock.now(), held.uniq, code, held.deadline)
        if code == rc.SUCCESS:
            self.counts["acked"] += 1
        self.coverage.add(f"ack:{rc.NAMES.get(code, code)}:{'late' if self.clock.now() >= held.deadline else 'intime'}")
        self._event("ack", consumer=consumer.name, uniq=held.uniq, topic=held.ack_topic, queue=held.queue_id,
                    offset=held.offset, code=code, handle=held.extra_info)
        return code

    def _do_batch_ack(self, c: int) -> bool:
        consumer = self._consumer(c)
        if not consumer.held:
            return False
        held, consumer.held = consumer.held, []
        entries = [AckEntry(h.ack_topic, h.queue_id, h.offset, h.extra_info) for h in held]
        codes = self.broker.batch_ack(GROUP, entries)
        for h, code in zip(held, codes):
            self.checker.on_ack(self.step_no, self.clock.now(), h.uniq, code, h.deadline)
            if code == rc.SUCCESS:
                self.counts["acked"] += 1
            self._event("ack", consumer=consumer.name, uniq=h.uniq, topic=h.ack_topic, queue=h.queue_id,
                        offset=h.offset, code=code, handle=h.extra_info)
        self.coverage.add(f"batch_ack:{rc.NAMES.get(codes[0], codes[0]) if codes else 'none'}")
        return True

    def _do_change_invisible(self, c: int, index: int, invisible_time: int) -> bool:
        consumer = self._consumer(c)
        if not consumer.held:
            return False
        held = consumer.held[index % len(consumer.held)]
        result = self.broker.change_invisible_time(GROUP, held.ack_topic, held.queue_id, held.offset,
                                                   held.extra_info, invisible_time)
        new_deadline = result.pop_time + result.invisible_time
        self.checker.on_change_invisible(held.uniq, result.code, new_deadline)
        if result.code == rc.SUCCESS and result.extra_info is not None:
            held.extra_info = result.extra_info
            held.deadline = new_deadline
            self.counts["changed_invisible"] += 1
        self.coverage.add(f"change_invisible:{rc.NAMES.get(result.code, result.code)}")
        self._event("change_invisible", consumer=consumer.name, uniq=held.uniq, code=result.code,
                    invisible_time=invisible_time, handle=held.extra_info)
        return True

    def _settle_requests(self, until: int, stalled: PopOperation | None = None) -> None:
        """Run to their end the in-flight requests that time reaching ``until`` would stretch
        past REQUEST_TIME_BOUND_MS (all but ``stalled``); responses go to their consumers."""
        owners = {id(c.op): c for c in self.consumers if c.op is not None}
        for op in self.broker.in_flight_pops():
            if op is stalled:
                continue
            if op.pop_time is not None and until - op.pop_time <= REQUEST_TIME_BOUND_MS:
                continue
            op.run_to_end()
            consumer = owners.get(id(op))
            if consumer is None:
                continue  # its client crashed: the broker still serves it, the response is lost
            if op.done:
                self._collect(consumer, op)
                consumer.op = None

    def _do_consumer_crash(self, c: int) -> bool:
        consumer = self._consumer(c)
        if not consumer.held and consumer.op is None:
            return False
        consumer.held.clear()
        if consumer.op is not None:
            # The broker thread serving the request goes on (and releases its queue lock);
            # only the response is lost with the client.
            consumer.op.run_to_end()
            consumer.op = None
        self._event("consumer_crash", consumer=consumer.name)
        return True

    # -- time and services -------------------------------------------------------------------
    def _do_advance(self, ms: int) -> bool:
        self._pass_time(ms)
        self._event("advance", ms=ms, now=self.clock.now())
        return True

    def _pass_time(self, ms: int, stalled: PopOperation | None = None) -> None:
        """Let ``ms`` of virtual time pass (in-flight requests settled first, but ``stalled``).

        With ``services_on_period`` the broker's own threads keep their periods while time
        passes: PopBufferMergeService#scan (every 5 ms) and the timer's delivery run at
        least every SERVICE_SLICE ms, so a CK leaves the buffer within that slice of its
        threshold. Without it, only the scheduler's explicit service actions run them (a
        starved or paused service thread).
        """
        self._settle_requests(self.clock.now() + ms, stalled)
        if not self.config.services_on_period:
            self.clock.advance(ms)
            return
        while ms > 0:
            chunk = min(ms, SERVICE_SLICE)
            self.clock.advance(chunk)
            ms -= chunk
            self.broker.buffer_merge_scan()
            self.broker.timer_step()

    def _do_scan(self) -> bool:
        self.broker.buffer_merge_scan()
        return True

    def _do_timer(self) -> bool:
        n = self.broker.timer_step()
        self.coverage.add(f"timer:{min(n, 2)}")
        return True

    def _do_revive(self, qid: int) -> bool:
        revived = self.broker.revive_step(qid % self.broker.config.revive_queue_num)
        for r in revived:
            self.counts["revived"] += 1
            self.checker.on_revive(self.step_no, r.uniq_key, r.ck_queue_id, r.msg_offset, r.ck_topic == TOPIC)
            self._event("revive", uniq=r.uniq_key, topic=r.ck_topic, queue=r.ck_queue_id, offset=r.msg_offset,
                        retry_offset=r.retry_offset)
        self.coverage.add(f"revive:{min(len(revived), 2)}")
        return True

    def _do_flush(self) -> bool:
        self.broker.offset_flush_step()  # a no-op until the flush period has passed
        return True

    def _do_long_poll(self) -> bool:
        self.broker.long_polling_step()
        return True

    # -- faults ------------------------------------------------------------------------------
    def _do_restart(self) -> bool:
        self.broker.restart()
        self.checker.on_restart()
        self.checker.on_fault("restart")
        self.counts["restarts"] += 1
        self._event("restart")
        return True

    def _do_expire(self, queue_id: int, count: int) -> bool:
        qid = queue_id % self.config.queues
        below = min(self.broker.min_offset(TOPIC, qid) + count, self.broker.max_offset(TOPIC, qid))
        if below <= self.broker.min_offset(TOPIC, qid):
            return False
        self.checker.on_expire(qid, below)
        self.checker.on_fault("expire")
        self.broker.expire(TOPIC, qid, below)
        self._event("expire", queue=qid, below=below)
        return True

    def _do_delete_recreate(self) -> bool:
        self.checker.on_delete_topic()
        self.checker.on_fault("delete_recreate")
        self.broker.delete_topic(TOPIC)
        self.broker.create_topic(TOPIC, self.config.queues)
        self._event("delete_recreate")
        return True

    def _do_clock_jump(self, ms: int) -> bool:
        self.checker.on_fault("clock_jump")
        self._settle_requests(self.clock.now() + ms)
        self.clock.advance(ms)  # a jump: no service runs in between
        self._event("clock_jump", ms=ms, now=self.clock.now())
        return True

    def _do_stall(self, c: int, ms: int) -> bool:
        """The broker thread serving consumer ``c``'s request stalls ``ms`` (GC pause, slow
        disk) wherever that request is; the rest of the broker runs on meanwhile."""
        op = self._consumer(c).op
        if op is None or not op.in_flight or not 0 < ms <= 10_000:
            return False
        self.checker.on_fault("stall")
        self.counts["stalls"] += 1
        self._pass_time(ms, stalled=op)
        self._event("stall", consumer=self._consumer(c).name, ms=ms, pop_time=op.pop_time, now=self.clock.now())
        return True

    # H3 (issue 16): store put failures (reference/broker/put_failure.py) ------------------
    def _do_store_put_fail(self, count: int) -> bool:
        """The store refuses the next ``count`` (1..2) puts of the consumption path (CK, ACK,
        revive retry); what each processor does with it is the model's (spec/broker.md)."""
        if not 1 <= count <= 2:
            return False
        self.checker.on_fault("store_put_fail")
        self.broker.put_faults.arm(count)
        self._event("store_put_fail", count=count)
        return True

    def _do_scan_stall(self, ms: int) -> bool:
        """One PopBufferMergeService scan takes ``ms`` (1..5 s: GC pause, slow disk); past
        popCkStayBufferTimeOut - 1000 ms the buffer stops serving until it is empty. The scan's
        work is done at its start, then the time passes (approximation, spec/broker.md)."""
        if not 1000 <= ms <= 5000:
            return False
        self.checker.on_fault("scan_stall")
        self.broker.buffer_merge_scan(elapsed_ms=ms)
        self._event("scan_stall", ms=ms, serving=self.broker.buffer_merge.serving)
        self._pass_time(ms)
        return True

    # -- drain -------------------------------------------------------------------------------
    def drain(self) -> bool:
        """Consumers pop and ack everything while time and services run; True at quiescence."""
        for consumer in self.consumers:
            if consumer.op is not None:
                consumer.op.run_to_end()
                if consumer.op.done:
                    self._collect(consumer, consumer.op)
                consumer.op = None
        quiet = 0
        drainer = self.consumers[0]
        for _ in range(DRAIN_ROUNDS):
            for consumer in self.consumers:
                while consumer.held:
                    self._ack(consumer, consumer.held.pop(0))
            self._pass_time(1000)
            self.broker.timer_step()
            self.broker.buffer_merge_scan()
            for qid in range(self.broker.config.revive_queue_num):
                self._do_revive(qid)
            self.broker.offset_flush_step()
            self.broker.long_polling_step()
            request = PopRequest(topic=TOPIC, group=GROUP, queue_id=-1, max_msg_nums=32,
                                 invisible_time=self.config.invisible_time, client=drainer.name)
            op = self.broker.pop(request)
            got = bool(op.result and op.result.messages)
            if op.done:
                self._collect(drainer, op)
            busy = got or self.broker.timer_pending() or self.broker.buffered_checkpoints() \
                or self.broker.stored_checkpoints()
            quiet = 0 if busy else quiet + 1
            if quiet >= 5:
                return True
        return False

    # -- trace -------------------------------------------------------------------------------
    def _event(self, kind: str, **fields: Any) -> None:
        if self.record_trace:
            self.events.append({"type": kind, **fields})

    def _record(self, action: Action, applied: bool) -> None:
        self.states.append({"step": self.step_no, "now": self.clock.now(),
                            "action": {"kind": action.kind, "args": list(action.args), "applied": applied},
                            "events": self.events})

    def result(self, mutant: str | None) -> RunResult:
        """The RunResult of the finished run (trace in ITF when recorded)."""
        result = RunResult(seed=self.seed, profile=self.profile, mode="pop", steps=len(self.schedule),
                           config=self.config, counts=dict(self.counts),
                           violations=tuple(self.checker.violations), coverage=self.coverage.points(),
                           first_step=dict(self.coverage.first_step),
                           schedule=tuple(self.schedule), mutant=mutant,
                           model_traceback=self.model_error.traceback if self.model_error else None)
        if self.record_trace:
            from popverify.trace.itf import trace_of
            result = attrs.evolve(result, trace=trace_of(result, self.states))
        return result


def run(profile: str, seed: int, steps: int, *, config: ScenarioConfig | None, schedule: Sequence[Action] | None,
        check: bool, mutant: str | None, record_trace: bool) -> RunResult:
    """run_scenario for mode "pop"."""
    driver = PopDriver(profile, seed, config or ScenarioConfig(), check, record_trace)
    driver.run(steps, schedule)
    return driver.result(mutant)

