"""The POP mode: producers, POP consumers, broker services and faults (a world + its actions).

Every step is one action (popverify/sim/actions.py), drawn by the engine from the kinds the
ScenarioConfig enables (or taken from a given schedule). A POP request is begun by ``pop``
and advanced queue by queue by ``pop_step``, so puts, acks, scans and revive passes
interleave between the queues of one request as the Java lock regions allow. After the
steps, an optional drain (consumers pop and ack to quiescence while time and services
advance) gives the eventual properties (ALO) their fairness.

Requests are time-atomic up to REQUEST_TIME_BOUND_MS: Java serves a POP in one thread
(PopMessageProcessor#processRequest → popMsgFromQueue, queue lock released in ``finally``),
so other threads' work interleaves with it but virtual time does not run on for seconds
inside it. Before time passes (``advance``, ``clock_jump``, the drain), every in-flight
request whose popTime would fall more than the bound behind is run to its end first. Only
the ``stall`` fault (a GC pause or a slow disk under one broker thread) keeps a request in
flight across a longer passage of time (spec/broker.md, "Time inside a request").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from popverify.checker.pop import PopChecker
from popverify.checker.progress import check_after_drain, drain_not_quiet
from popverify.findings.strategies import HandleKeys, key_witnesses
from popverify.sim.admin import (ADMIN_ACTIONS, DELETE_GROUP_PERSIST, DELETE_IDLE, DELETE_OTHER, DELETE_POLL,
                                 TOPIC_REVIVE, TOPIC_SHRINK_PERSIST)
from popverify.sim.actions import (PRODUCE, PRODUCE_SIZED, ActionSpec, Arg, clock_jump_draw, consumer_draw, fault, flag, index,
                                   millis, opt_in)
from popverify.sim.domain import start_queues
from popverify.sim.engine import Coverage, Engine, Mode
from popverify.sim.pop_shapes import POP_SHAPE
from popverify.sim.request_domain import BATCH_ACK_REQUEST, ORDERLY_STRAY, REQUEST_DOMAIN_ACTIONS, REVIVE_TOPIC_PUT
from popverify.sim.events import (Acked, BrokerRestarted, ClockJumped, ConsumerCrashed, Event, InvisibleTimeChanged,
                                  MessagePopped, MessageStored, PopAnswered, PopBegun, PopParked, PutFailuresArmed, Revived, ScanStalled, Stalled, Subscriber, TimeAdvanced, TopicRecreated,
                                  pop_checker_subscriber)
from popverify.sim.retention import CLEAN_CONSUME_QUEUE, EXPIRE, EXPIRE_COMMIT_LOG
from reference.broker.broker import Broker
from reference.broker.config import with_options
from reference.broker.extra_info import get_queue_offset, split
from reference.broker.keys import REVIVE_GROUP, build_pop_retry_topic
from reference.broker.pop_processor import PopOperation
from reference.broker.put_failure import BUFFER_SITES, FLUSH_TIMEOUT_SITES, PROCESSOR_SITES
from reference.common import response_code as rc
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from reference.common.pop import AckEntry, PopRequest
from reference.profile import get_profile

if TYPE_CHECKING:
    from popverify.sim.scenario import ScenarioConfig

TOPIC = "TopicTest"
GROUP = "GID_popverify"
RETRY_TOPIC = build_pop_retry_topic(TOPIC, GROUP)
DRAIN_ROUNDS = 400
# PRG-2's horizon past the drain's end plus its POPs' invisibleTime: one timer slot and a revive
# round (popverify/checker/progress.py#drain_not_quiet).
DRAIN_HORIZON_SLACK_MS = 2000
# Longest gap, in virtual ms, between two runs of a periodic broker service while time passes.
SERVICE_SLICE = 100
# How much virtual time may pass inside one POP request (popTime to its last queue read)
# without a ``stall``: a request does in-memory work and consume-queue/commit-log reads from
# the page cache plus at most one CK put per queue visited (a few queues), which a healthy
# broker serves in well under a millisecond to a few milliseconds (spec/broker.md).
REQUEST_TIME_BOUND_MS = 5
# A ``stall`` lasts 10..10000 ms, log-uniformly by decade (GC pauses, slow disks).
STALL_DECADES = (10, 100, 1000)
# The longest stall (the lockstep's bounded stall fault): the declaration's range, 1..10 s, so
# every boundary of pop.stall.ms is a stall the world performs (a schedule outside is refused).
MAX_STALL_MS = 10_000
COUNTS = ("produced", "popped", "acked", "revived", "redelivered", "changed_invisible", "restarts", "faults",
          "stalls", "skipped")


@attrs.define
class InFlight:
    """A delivered message the consumer holds: its receipt handle and invisibility deadline."""

    uniq: str
    ack_topic: str
    queue_id: int
    offset: int
    extra_info: str
    deadline: int

    @property
    def request_offset(self) -> int:
        """The offset an ack, batch ack or changeInvisibleTime names: the handle's queue offset
        (ExtraInfoUtil.getQueueOffset in DefaultMQPushConsumerImpl#ackAsync and
        #changePopInvisibleTimeAsync, MQClientAPIImpl#batchAckMessageAsync), not the message's
        stored one; they differ when a read returned another message (F11)."""
        if not self.extra_info:  # no handle (processPopResponse could not build one): the stored offset
            return self.offset
        return get_queue_offset(split(self.extra_info))


@attrs.define
class Consumer:
    """A POP consumer client: one outstanding request at most, and what it holds."""

    name: str
    op: PopOperation | None = None
    held: list[InFlight] = attrs.Factory(list)


class PopWorld:
    """A fresh broker with the consumed topic and group, its POP consumers and the checker."""

    topic = TOPIC
    group = GROUP

    def __init__(self, profile: str, seed: int, config: "ScenarioConfig", check: bool,
                 publish: Callable[[Event], None], coverage: Coverage) -> None:
        prof = get_profile(profile)
        self.config = config
        self.publish = publish
        self.coverage = coverage
        self.clock = VirtualClock()
        broker_config = with_options(attrs.evolve(prof.broker, enable_pop_buffer_merge=config.enable_pop_buffer_merge,
                                                  pop_polling_size=config.pop_polling_size,
                                                  max_pop_polling_size=config.max_pop_polling_size),
                                     config.broker_options)
        self.broker = Broker(broker_config, self.clock, JavaRandom(seed * 0x9E3779B1 + 1))
        self.broker.create_topic(TOPIC, config.queues)
        self.broker.create_group(GROUP)
        start_queues(self.broker, TOPIC, config)  # issue 17 item 3: offsets anywhere a long allows
        self.consumers = [Consumer(f"c{i}") for i in range(config.consumers)]
        self.checker = PopChecker(TOPIC, GROUP, enabled=check)
        self.handle_keys = HandleKeys(GROUP)
        self._delivered: set[str] = set()  # uniq keys delivered so far (redelivery count)
        self.drain_ended = True  # whether the last graceful_restart's buffer drain ended

    # -- what the engine asks of a world ---------------------------------------------------------
    def subscriber(self) -> Subscriber:
        """The property checker's subscription to the events."""
        return pop_checker_subscriber(self.checker)

    def check_state(self, step: int) -> None:
        """OFF-1 / OFF-2 after every step."""
        self.checker.check_offsets(step, self.broker, self.config.queues)

    def observe(self) -> None:
        """POP traces carry no observed state."""
        return None

    def cover_step(self, kind: str, applied: bool) -> None:
        """Coverage signal (spec/fuzzing.md): a coarse abstract state of the consumers, and the
        abstract state of the broker's checkpoint pipeline reached by each action kind
        (buffer, timer, unrevived revive-queue backlog, retry backlog)."""
        b = self.broker
        held = sum(len(c.held) for c in self.consumers)
        pending = sum(1 for c in self.consumers if c.op is not None)
        buffered = len(b.buffer_merge.buffer)
        timer = len(b.timer_pending())
        revive_lag = sum(b.max_offset(b.revive_topic, q) - 1 - b.committed_offset(REVIVE_GROUP, b.revive_topic, q)
                         for q in range(b.config.revive_queue_num))
        retry = sum(b.max_offset(RETRY_TOPIC, q) - max(b.committed_offset(GROUP, RETRY_TOPIC, q), 0)
                    for q in range(max(b.topics.get(RETRY_TOPIC, 0), 1)))
        pipeline = f"buf{min(buffered, 3)}:timer{min(timer, 3)}:revive{min(max(revive_lag, 0), 3)}:retry{min(retry, 2)}"
        self.coverage.add(f"state:held{min(held, 3)}:pending{pending}:buffer{min(buffered, 2)}")
        self.coverage.add(f"pipeline:{kind}:{pipeline}")

    def finish(self, drained: bool, step: int) -> None:
        """ALO after the drain, the z3 key witnesses reached, progress and quiescence."""
        self.checker.finish(drained, step)
        # z3 witnesses of proofs/keys.py this run reached (delivered handles, stored CKs)
        for name in sorted(self.handle_keys.reached | set(key_witnesses(self.broker))):
            self.coverage.add(f"key-witness:{name}")
        if self.config.drain and self.checker.enabled:
            if drained:
                check_after_drain(self.checker, self.broker, self.config.queues, RETRY_TOPIC, step)
            else:
                # the drain's own POPs fall due by its end plus their invisibleTime (and a timer slot)
                horizon = self.clock.now() + self.config.invisible_time + DRAIN_HORIZON_SLACK_MS
                if not drain_not_quiet(self.checker, self.broker, DRAIN_ROUNDS, step, horizon):
                    self.coverage.add("drain:due-beyond-horizon")

    def consumer(self, c: int) -> Consumer:
        """Consumer ``c`` (modulo their number)."""
        return self.consumers[c % len(self.consumers)]

    # -- consumers ---------------------------------------------------------------------------
    def begin_pop(self, c: int, queue_id: int, long_poll: bool) -> bool:
        """Consumer ``c`` sends a POP (queue -1: all queues) and the broker serves its first part."""
        consumer = self.consumer(c)
        if consumer.op is not None:
            return False
        qid = -1 if queue_id < 0 else queue_id % self.config.queues
        request = PopRequest(topic=TOPIC, group=GROUP, queue_id=qid, max_msg_nums=self.config.max_msg_nums,
                             invisible_time=self.config.invisible_time, poll_time=5000 if long_poll else 0,
                             client=consumer.name, order=self.config.pop_orderly)
        consumer.op = self.broker.begin_pop(request)
        self.publish(PopBegun(consumer.name, qid))
        return self._advance_op(consumer)

    def pop_step(self, c: int) -> bool:
        """The broker goes on with consumer ``c``'s POP request (its next queue)."""
        consumer = self.consumer(c)
        if consumer.op is None:
            return False
        return self._advance_op(consumer)

    def _advance_op(self, consumer: Consumer) -> bool:
        op = consumer.op
        assert op is not None
        progressed = op.step()
        if op.done:
            self.collect(consumer, op)
            consumer.op = None
        elif op.parked:
            if progressed:
                self.publish(PopParked(consumer.name))
        elif not progressed:
            consumer.op = None  # aborted by a restart: the response never comes
        return progressed or op.done

    def collect(self, consumer: Consumer, op: PopOperation) -> None:
        """The POP response reaches ``consumer``: it holds every message it got."""
        result = op.result
        assert result is not None
        self.coverage.add(f"pop:{rc.NAMES.get(result.code, result.code)}:{min(len(result.messages), 2)}")
        self.publish(PopAnswered(consumer.name, len(result.messages), op.request.max_msg_nums))
        for popped in result.messages:
            uniq = popped.message.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, "")
            deadline = result.pop_time + result.invisible_time
            redelivery = uniq in self._delivered
            self._delivered.add(uniq)
            consumer.held.append(InFlight(uniq, popped.ack_topic, popped.queue_id, popped.queue_offset,
                                          popped.extra_info, deadline))
            if popped.extra_info:  # 5.0.0 orderly after a restart: no handle (spec/broker.md)
                self.handle_keys.observe(popped.ack_topic, popped.queue_id, popped.extra_info)
            retry = popped.ack_topic != TOPIC
            self.coverage.add(f"deliver:{'retry' if retry else 'normal'}")
            self.publish(MessagePopped(consumer.name, uniq, popped.ack_topic, popped.queue_id, popped.queue_offset,
                                       result.pop_time, result.invisible_time, popped.extra_info, redelivery,
                                       popped.message.reconsume_times, op.request.order))

    def ack_index(self, c: int, index: int) -> bool:
        """Consumer ``c`` acks the message it holds at ``index`` (modulo how many it holds)."""
        consumer = self.consumer(c)
        if not consumer.held:
            return False
        self.ack(consumer, consumer.held.pop(self._pick(consumer, index)))
        return True

    def _pick(self, consumer: Consumer, index: int) -> int:
        return pick_held([(h.ack_topic, h.queue_id, h.offset) for h in consumer.held], index, self.config.pop_orderly)

    def ack(self, consumer: Consumer, held: InFlight) -> int:
        """One ACK_MESSAGE request for ``held``; the response code."""
        code = self.broker.ack(GROUP, held.ack_topic, held.queue_id, held.request_offset, held.extra_info)
        late = self.clock.now() >= held.deadline
        self.coverage.add(f"ack:{rc.NAMES.get(code, code)}:{'late' if late else 'intime'}")
        self.publish(Acked(consumer.name, held.uniq, held.ack_topic, held.queue_id, held.offset, code,
                           held.extra_info, held.deadline))
        return code

    def batch_ack(self, c: int) -> bool:
        """Consumer ``c`` acks everything it holds in one BATCH_ACK_MESSAGE."""
        consumer = self.consumer(c)
        if not consumer.held:
            return False
        held, consumer.held = consumer.held, []
        entries = [AckEntry(h.ack_topic, h.queue_id, h.request_offset, h.extra_info) for h in held]
        codes = self.broker.batch_ack(GROUP, entries)
        for h, code in zip(held, codes):
            self.publish(Acked(consumer.name, h.uniq, h.ack_topic, h.queue_id, h.offset, code, h.extra_info,
                               h.deadline))
        self.coverage.add(f"batch_ack:{rc.NAMES.get(codes[0], codes[0]) if codes else 'none'}")
        return True

    def change_invisible(self, c: int, index: int, invisible_time: int) -> bool:
        """Consumer ``c`` changes the invisible time of the message it holds at ``index``."""
        consumer = self.consumer(c)
        if not consumer.held:
            return False
        held = consumer.held[self._pick(consumer, index)]
        result = self.broker.change_invisible_time(GROUP, held.ack_topic, held.queue_id, held.request_offset,
                                                   held.extra_info, invisible_time)
        new_deadline = result.pop_time + result.invisible_time
        old_deadline = held.deadline
        renewed = result.code == rc.SUCCESS and result.extra_info is not None
        if renewed:
            held.extra_info = result.extra_info
            held.deadline = new_deadline
        self.coverage.add(f"change_invisible:{rc.NAMES.get(result.code, result.code)}")
        self.publish(InvisibleTimeChanged(consumer.name, held.uniq, result.code, invisible_time, held.extra_info,
                                          new_deadline, renewed, old_deadline))
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
                self.collect(consumer, op)
                consumer.op = None
            elif op.parked:
                self.publish(PopParked(consumer.name))

    def crash(self, c: int) -> bool:
        """Consumer ``c`` crashes: what it holds and its response in flight are lost."""
        consumer = self.consumer(c)
        if not consumer.held and consumer.op is None:
            return False
        consumer.held.clear()
        if consumer.op is not None:
            # The broker thread serving the request goes on (and releases its queue lock);
            # only the response is lost with the client.
            consumer.op.run_to_end()
            consumer.op = None
        self.publish(ConsumerCrashed(consumer.name))
        return True

    def close(self, c: int) -> bool:
        """Consumer ``c``'s process exits (a crash the OS sees, or a shutdown): as ``crash``, and
        its connection closes, so the broker's channel of its request in flight goes inactive.
        ``crash`` is a host gone silently: its channel stays active (until the idle timeout)."""
        op = self.consumer(c).op
        if not self.crash(c):
            return False
        if op is not None:
            op.close_channel()
        return True

    # -- time and services -------------------------------------------------------------------
    def advance(self, ms: int) -> bool:
        """``ms`` of virtual time pass (services on their periods)."""
        self.pass_time(ms)
        self.publish(TimeAdvanced(ms, self.clock.now()))
        return True

    def pass_time(self, ms: int, stalled: PopOperation | None = None) -> None:
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
            # Fast-forward: whole slices ending before the services' next work would only move
            # the clock (an hour's advance is 36,000 slices); one timer step at the last of them
            # sets its read time, so the state is the same as slice by slice.
            quiet = self.broker.services_quiet_until()
            skip = 0 if quiet is None else min(ms, quiet - self.clock.now() - 1) // SERVICE_SLICE
            if skip > 0:
                self.clock.advance(skip * SERVICE_SLICE)
                ms -= skip * SERVICE_SLICE
                self.broker.timer_step()
                continue
            chunk = min(ms, SERVICE_SLICE)
            self.clock.advance(chunk)
            ms -= chunk
            self.broker.buffer_merge_scan()
            self.broker.timer_step()

    def scan(self) -> bool:
        """PopBufferMergeService#scan once."""
        self.broker.buffer_merge_scan()
        return True

    def timer(self) -> bool:
        """The timer delivers what is due."""
        n = self.broker.timer_step()
        self.coverage.add(f"timer:{min(n, 2)}")
        return True

    def revive(self, qid: int) -> bool:
        """One pass of PopReviveService over revive queue ``qid``."""
        revived = self.broker.revive_step(qid % self.broker.config.revive_queue_num)
        for r in revived:
            self.publish(Revived(r.uniq_key, r.ck_topic, r.ck_queue_id, r.msg_offset, r.retry_offset,
                                 r.ck_topic == TOPIC, r.retry_queue_id))
        self.coverage.add(f"revive:{min(len(revived), 2)}")
        return True

    def flush(self) -> bool:
        """The consumer-offset flush (a no-op until its period has passed)."""
        self.broker.offset_flush_step()
        return True

    def long_poll(self) -> bool:
        """The long-polling service wakes what it can."""
        self.broker.long_polling_step()
        return True

    # -- faults ------------------------------------------------------------------------------
    def restart(self) -> bool:
        """The broker restarts."""
        self.broker.restart()
        self.publish(BrokerRestarted())
        return True

    def persist_restart(self) -> bool:
        """The broker restarts right after persisting its offsets and order info."""
        self.broker.persist_then_restart()
        self.publish(BrokerRestarted())
        return True

    def graceful_restart(self) -> bool:
        """The broker shuts down gracefully and starts again: the merge thread's tail drains the
        buffer, the offsets and order info are persisted, then the restart (Broker#graceful_restart).
        ``drain_ended`` keeps whether the drain ended (the lockstep replay runs only those).
        Not applied while a POP is in flight: the drain's commitOffset waits for the queue lock
        the POP holds (a graceful shutdown lets the requests in flight end first)."""
        if self.broker.in_flight_pops():
            return False
        self.drain_ended = self.broker.graceful_restart()
        self.publish(BrokerRestarted())
        return True

    def delete_recreate(self) -> bool:
        """The consumed topic is deleted and created again. In an orderly configuration the
        order info's 10 s persist runs in between (order3): its autoClean meets the topic gone
        (5.0.0 ConsumerOrderInfoManager#autoClean:218, 5.5.0 QueueLevelConsumerManager
        #autoClean:313) and drops its order info; a run without orderly POP has none to drop."""
        self.broker.delete_topic(TOPIC)
        if self.config.pop_orderly:
            self.broker.persist_order_info()
        self.broker.create_topic(TOPIC, self.config.queues)
        self.publish(TopicRecreated())
        return True

    def clock_jump(self, ms: int) -> bool:
        """The clock jumps ``ms`` forward; no service runs in between."""
        self._settle_requests(self.clock.now() + ms)
        self.clock.advance(ms)
        self.publish(ClockJumped(ms, self.clock.now()))
        return True

    def stall(self, c: int, ms: int) -> bool:
        """The broker thread serving consumer ``c``'s request stalls ``ms`` (GC pause, slow
        disk) wherever that request is; the rest of the broker runs on meanwhile."""
        op = self.consumer(c).op
        if op is None or not op.in_flight:
            return False
        self.pass_time(ms, stalled=op)
        self.publish(Stalled(self.consumer(c).name, ms, op.pop_time, self.clock.now()))
        return True

    def store_put_fail(self, count: int) -> bool:
        """The store refuses the next ``count`` (1..2) puts of the consumption path (CK, ACK,
        revive retry); what each processor does with it is the model's (spec/broker.md)."""
        if not 1 <= count <= 2:
            return False
        self.broker.put_faults.arm(count)
        self.publish(PutFailuresArmed(count))
        return True

    def revive_put_fail(self, count: int) -> bool:
        """The store refuses the next ``count`` (1..2) retry puts of the revive, whenever they
        come (5.0.0: the round ends uncommitted; 5.5.0: rePutCK). store_put_fail's refusal
        meets a revive's re-send almost never: a POP's CK or an ACK takes it first."""
        if not 1 <= count <= 2:
            return False
        self.broker.put_faults.arm_retry(count)
        return True

    def processor_put_fail(self, site: int, count: int) -> bool:
        """The store refuses the next ``count`` (1..2) puts of one processor site, whenever they
        come: ``site`` 0 the ACK message (AckMessageProcessor's, ChangeInvisibleTimeProcessor#
        ackOrigin's), 1 changeInvisibleTime's new CK (put_failure.PROCESSOR_SITES)."""
        return self._arm_site(PROCESSOR_SITES, site, count, self.broker.put_faults.arm_processor)

    def buffer_put_fail(self, site: int, count: int) -> bool:
        """The store refuses the next ``count`` (1..2) puts of one of the buffer's sites, whenever
        they come: ``site`` 0 its CK (PopBufferMergeService#putCkToStore), 1 its ACK or BatchAckMsg
        (#putAckToStore, #putBatchAckToStore) (put_failure.BUFFER_SITES); scan puts them again."""
        return self._arm_site(BUFFER_SITES, site, count, self.broker.put_faults.arm_processor)

    def flush_timeout(self, site: int, count: int) -> bool:
        """The next ``count`` (1..2) puts of one site (put_failure.FLUSH_TIMEOUT_SITES: the
        buffer's CK, the buffer's ACK, an ack's ACK, changeInvisibleTime's CK) are written and
        answered FLUSH_DISK_TIMEOUT (a SYNC_FLUSH store's slow flush), whenever they come."""
        return self._arm_site(FLUSH_TIMEOUT_SITES, site, count, self.broker.put_faults.arm_flush_timeout)

    @staticmethod
    def _arm_site(sites: tuple[str, ...], site: int, count: int, arm: Callable[[str, int], None]) -> bool:
        """``arm`` the site of index ``site`` for ``count`` puts; False (not applied) when the
        index or the count (1..2, the faults' draw) is out of range."""
        if not 1 <= count <= 2 or not 0 <= site < len(sites):
            return False
        arm(sites[site], count)
        return True

    def scan_stall(self, ms: int) -> bool:
        """One PopBufferMergeService scan takes ``ms`` (1..5 s: GC pause, slow disk); past
        popCkStayBufferTimeOut - 1000 ms the buffer stops serving until it is empty. The scan's
        work is done at its start, then the time passes (approximation, spec/broker.md)."""
        if not 1000 <= ms <= 5000:
            return False
        self.broker.buffer_merge_scan(elapsed_ms=ms)
        self.publish(ScanStalled(ms, self.broker.buffer_merge.serving))
        self.pass_time(ms)
        return True

    # -- drain -------------------------------------------------------------------------------
    def drain(self) -> bool:
        """Consumers pop and ack everything while time and services run; True at quiescence."""
        for consumer in self.consumers:
            if consumer.op is not None:
                consumer.op.run_to_end()
                if consumer.op.done:
                    self.collect(consumer, consumer.op)
                consumer.op = None
        quiet = 0
        drainer = self.consumers[0]
        # OFF-1 / OFF-2 are checked after each of the drain's requests and services, as after
        # every step of the run (an offset moved back and forth within one round is seen)
        step = self.coverage.step
        for _ in range(DRAIN_ROUNDS):
            for consumer in self.consumers:
                while consumer.held:
                    self.ack(consumer, consumer.held.pop(0))
                    self.check_state(step)
            self.pass_time(1000)
            self.check_state(step)
            self.broker.timer_step()
            self.broker.buffer_merge_scan()
            self.check_state(step)
            for qid in range(self.broker.config.revive_queue_num):
                self.revive(qid)
            self.broker.offset_flush_step()
            self.broker.long_polling_step()
            self.check_state(step)
            request = PopRequest(topic=TOPIC, group=GROUP, queue_id=-1, max_msg_nums=32,
                                 invisible_time=self.config.invisible_time, client=drainer.name,
                                 order=self.config.pop_orderly)
            op = self.broker.pop(request)
            got = bool(op.result and op.result.messages)
            if op.done:
                self.collect(drainer, op)
            self.check_state(step)
            busy = got or self.broker.timer_pending() or self.broker.buffered_checkpoints() \
                or self.broker.stored_checkpoints() or self.orderly_behind()
            quiet = 0 if busy else quiet + 1
            if quiet >= 5:
                return True
        return False


    def orderly_behind(self) -> bool:
        """An orderly queue's committed offset is below its max offset: its un-acked batch is
        blocked (checkBlock) until its invisible time ends, and no CK tells the drain so."""
        if not self.config.pop_orderly:
            return False
        b = self.broker
        return any(max(b.committed_offset(GROUP, TOPIC, q), b.min_offset(TOPIC, q)) < b.max_offset(TOPIC, q)
                   for q in range(self.config.queues))


def pick_held(held: list[tuple[str, int, int]], index: int, orderly: bool) -> int:
    """Which of the held messages (topic, queueId, offset) an ack or changeInvisibleTime drawn
    with ``index`` is for. An orderly consumer (ScenarioConfig.pop_orderly) works through a
    queue's messages in offset order: the lowest offset it holds of the drawn message's queue."""
    i = index % len(held)
    if not orderly:
        return i
    same = [j for j, h in enumerate(held) if h[:2] == held[i][:2]]
    return min(same, key=lambda j: held[j][2])


def _advance_draw(rng: JavaRandom, world: Any) -> tuple:
    # One advance in four is a short tick that can fall inside a request's time bound (a put
    # stored a few ms after a popTime, as on a real broker: finding F1).
    if rng.next_int(4) == 0:
        return (1 + rng.next_int(REQUEST_TIME_BOUND_MS),)
    return (1 + rng.next_int(1500),)


def _pop_draw(rng: JavaRandom, world: Any) -> tuple:
    qid = -1 if rng.next_int(3) == 0 else rng.next_int(world.config.queues)
    return (rng.next_int(world.config.consumers), qid, rng.next_int(4) == 0)


def _buffer_put_fail_draw(rng: JavaRandom, world: Any) -> tuple:
    # buffer2: the ACK site (1) in 3 of 4 drawings. The CK site's refusal and re-put are reached
    # by most runs that list the fault; a refused ACK needs the arming to come before one of
    # the few ACK puts a run makes (a partly acked CK stored by the scan).
    return (0 if rng.next_int(4) == 0 else 1, 1 + rng.next_int(2))


def _stall_draw(rng: JavaRandom, world: Any) -> tuple:
    base = STALL_DECADES[rng.next_int(len(STALL_DECADES))]
    return (rng.next_int(world.config.consumers), base + rng.next_int(9 * base + 1))


def _close_draw(rng: JavaRandom, world: Any) -> tuple:
    # a consumer with a request in flight or parked when there is one: closing an idle one is a
    # plain crash (consumer_crash's)
    busy = [i for i, c in enumerate(world.consumers) if c.op is not None]
    return (busy[rng.next_int(len(busy))] if busy else rng.next_int(world.config.consumers),)


# persist_restart's weight (3 in about 90: some three times per 100 steps); graceful_restart's too
PERSIST_RESTART_WEIGHT = 3
# buffer_put_fail's weight (buffer2): armed about three times per 100 steps, so that nearly
# every run listing it has a site armed when the scan stores a partly acked CK's ACKs (at the
# fault weight, 1, about a third of the runs never arm it)
BUFFER_PUT_FAIL_WEIGHT = 3
# The POP mode's actions, in the weighted choice's order (weights: spec/fuzzing.md).
POP_MODE_ACTIONS: tuple[ActionSpec, ...] = (
    PRODUCE,
    ActionSpec("pop", 10, "begin_pop", (index("c"), index("queue_id"), flag("long_poll")), _pop_draw,
               always=True),
    ActionSpec("pop_step", 10, "pop_step", (index("c"),), consumer_draw, always=True),
    ActionSpec("ack", 10, "ack_index", (index("c"), index("index")),
               lambda rng, w: (rng.next_int(w.config.consumers), rng.next_int(64)), always=True),
    ActionSpec("change_invisible", 3, "change_invisible",
               (index("c"), index("index"), Arg("invisible_time")),
               lambda rng, w: (rng.next_int(w.config.consumers), rng.next_int(64), 1000 * (1 + rng.next_int(30)))),
    ActionSpec("batch_ack", 2, "batch_ack", (index("c"),), consumer_draw),
    ActionSpec("advance", 8, "advance", (millis("ms"),), _advance_draw, always=True),
    ActionSpec("scan", 6, "scan"),
    ActionSpec("timer", 4, "timer"),
    ActionSpec("revive", 5, "revive", (index("qid"),),
               lambda rng, w: (rng.next_int(w.broker.config.revive_queue_num),)),
    ActionSpec("flush", 2, "flush"),
    ActionSpec("long_poll", 1, "long_poll"),
    ActionSpec("consumer_crash", 1, "crash", (index("c"),), consumer_draw),
    # faults
    fault("restart", "restart"),
    EXPIRE,
    fault("delete_recreate", "delete_recreate"),
    fault("clock_jump", "clock_jump", (millis("ms"),), clock_jump_draw),
    fault("stall", "stall", (index("c"), Arg("ms", int, 1, MAX_STALL_MS)), _stall_draw),
    # issue 16's faults (LATE_FAULTS in scenario.py: drawn after every other config field)
    fault("store_put_fail", "store_put_fail", (Arg("count", int, 1, 2),), lambda rng, w: (1 + rng.next_int(2),)),
    fault("scan_stall", "scan_stall", (Arg("ms", int, 1000, 5000),), lambda rng, w: (1000 + rng.next_int(4001),)),
    # retention's stages one at a time (opt-in faults: popverify/sim/retention.py)
    EXPIRE_COMMIT_LOG,
    CLEAN_CONSUME_QUEUE,
    # issue 17 item 3's opt-in actions (listed by the swarm's late draw, ScenarioConfig.draw_domain)
    PRODUCE_SIZED,
    # issue 17 item 3's requests over the API's argument domain (opt-in: popverify/sim/request_domain.py)
    *REQUEST_DOMAIN_ACTIONS,
    # issue 16 (revive): a put failure at the revive's retry put (opt-in: the swarm's late draw)
    fault("revive_put_fail", "revive_put_fail", (Arg("count", int, 1, 2, value=False),),
          lambda rng, w: (1 + rng.next_int(2),), opt_in=True),
    # an admin's group deletion and offset reset (opt-in: popverify/sim/admin.py)
    *ADMIN_ACTIONS,
    # a restart right after the persist tasks (opt-in, its swarm coin after every other field:
    # ScenarioConfig.draw_domain): the restart reloads what was just written (the order info's
    # recover, the offsets' decode), where a plain restart reloads what the last 10 s task wrote.
    # Weight PERSIST_RESTART_WEIGHT: most runs that list it restart so at least once (1 in 100 steps
    # at the fault weight: a third of them never did in a 60-run campaign)
    ActionSpec("persist_restart", PERSIST_RESTART_WEIGHT, "persist_restart", fault=True, opt_in=True, late=True,
               late_if="pop_orderly"),
    # revive2 (issue 16): a put failure at an ack's or changeInvisibleTime's own put (opt-in,
    # late: its swarm coin after the broker options, ScenarioConfig.draw_domain)
    fault("processor_put_fail", "processor_put_fail", (Arg("site", int, 0, 1, value=False),
                                                       Arg("count", int, 1, 2, value=False)),
          lambda rng, w: (rng.next_int(2), 1 + rng.next_int(2)), opt_in=True, late=True, late_percent=30),
    # and a put written but answered FLUSH_DISK_TIMEOUT (a SYNC_FLUSH store's slow flush)
    fault("flush_timeout", "flush_timeout", (Arg("site", int, 0, 3, value=False), Arg("count", int, 1, 2, value=False)),
          lambda rng, w: (rng.next_int(4), 1 + rng.next_int(2)), opt_in=True, late=True, late_percent=30),
    # issue 16 (pop): POP requests of shapes the run's consumers never send (opt-in, drawn after
    # every other field: popverify/sim/pop_shapes.py)
    POP_SHAPE,
    # buffer helper (issue 16): a put failure at the buffer's CK or ACK put (opt-in, late: its
    # swarm coin after the buffer threshold options', last of all, ScenarioConfig.draw_domain)
    # (buffer2: listed in every configuration with the merge on, no coin drawn, else by its
    # coin; weight BUFFER_PUT_FAIL_WEIGHT)
    ActionSpec("buffer_put_fail", BUFFER_PUT_FAIL_WEIGHT, "buffer_put_fail",
               (Arg("site", int, 0, 1, value=False), Arg("count", int, 1, 2, value=False)), _buffer_put_fail_draw,
               fault=True, opt_in=True, late=True, late_percent=30, after_options=True,
               late_if="enable_pop_buffer_merge"),
    # revive3 (issue 16): batch acks with a body no client sends (opt-in, drawn last:
    # popverify/sim/request_domain.py)
    BATCH_ACK_REQUEST,
    # polling helper (issue 16): a consumer's connection closes (opt-in, its swarm coin last of
    # all, after pop_shape's): its parked POP is dropped, never re-run (spec/broker.md `consumer_close`)
    opt_in("consumer_close", 3, "close", (index("c"),), _close_draw, after_options=True),
    # order2: a group deletion the order info's next persist sees (opt-in, its swarm coin after
    # pop_shape's: popverify/sim/admin.py)
    DELETE_GROUP_PERSIST,
    # buffer2 (issue 16): a graceful shutdown and start, whose merge thread drains the buffer
    # (opt-in, late: listed in every configuration with the merge on, no coin drawn, and never
    # without it; its draw last of all, after buffer_put_fail's; as often as persist_restart)
    ActionSpec("graceful_restart", PERSIST_RESTART_WEIGHT, "graceful_restart", fault=True, opt_in=True, late=True,
               late_percent=0, after_options=True, late_if="enable_pop_buffer_merge"),
    # order3: a topic update the order info's next persist sees (opt-in, listed by the orderly
    # configurations after delete_group_persist, no coin: popverify/sim/admin.py)
    TOPIC_SHRINK_PERSIST,
    # offsets helper (issue 16): an admin deletes a topic or group the run does not consume
    # (opt-in, drawn with delete_group: no coin of its own; popverify/sim/admin.py)
    DELETE_OTHER,
    # polling3: a group or topic deletion the long-polling clean-up sees (opt-in, its swarm coin
    # last of all: popverify/sim/admin.py)
    DELETE_POLL,
    # buffer3: a group or topic deletion the merge buffer's garbage scan sees (opt-in, listed last
    # by the merge-on configurations with the default stay time, no coin: popverify/sim/admin.py)
    DELETE_IDLE,
    # order4: odd requests of an orderly consumer (opt-in, listed by the orderly configurations,
    # no coin: popverify/sim/request_domain.py)
    ORDERLY_STRAY,
    # revive5: a topic deleted (or given a queue more) while a revive round runs (opt-in, its
    # swarm coin last of all: drawn_last; popverify/sim/admin.py)
    TOPIC_REVIVE,
    # revive6 (issue 16): a producer's message to the revive topic that no broker writes (opt-in,
    # its swarm coin last of all, after topic_revive's: drawn_last; popverify/sim/request_domain.py)
    REVIVE_TOPIC_PUT,
)

# What each event adds to the run's counts (the engine adds "faults" and "skipped").
POP_COUNTERS: dict[type, Callable[[Any], tuple[tuple[str, int], ...]]] = {
    MessageStored: lambda e: (("produced", 1),),
    MessagePopped: lambda e: (("popped", 1), ("redelivered", int(e.redelivery))),
    Acked: lambda e: (("acked", int(e.code == rc.SUCCESS)),),
    Revived: lambda e: (("revived", 1),),
    InvisibleTimeChanged: lambda e: (("changed_invisible", int(e.renewed)),),
    BrokerRestarted: lambda e: (("restarts", 1),),
    Stalled: lambda e: (("stalls", 1),),
}

POP_MODE = Mode("pop", POP_MODE_ACTIONS, PopWorld, COUNTS, POP_COUNTERS,
                ignores=("consume_orderly", "consume_fail_percent"))


class PopDriver(Engine):
    """The engine over a POP world (the name step-by-step drivers and tests use)."""

    def __init__(self, profile: str, seed: int, config: "ScenarioConfig", check: bool, record_trace: bool) -> None:
        super().__init__(POP_MODE, profile, seed, config, check, record_trace)
