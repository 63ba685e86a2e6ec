"""Stateful machines over the POP broker: (1) consumers, acks, changeInvisibleTime, time,
services and faults with the property checker as invariant; (2) buffer merge on versus off
fed the same inputs.

Receipt handles live in a Bundle, so Hypothesis shrinks failures to the few pops, acks and
time steps that matter. Ghost state is the checker's history (popverify.checker.pop).
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, consumes, initialize, invariant, multiple,
                                 precondition, rule, run_state_machine_as_test)

from popverify.checker.expectations import is_unexpected
from popverify.mutants import applied
from popverify.sim.events import Acked, Event
from popverify.sim.pop_driver import InFlight, PopDriver
from popverify.sim.scenario import Action, ScenarioConfig
from reference.common import response_code as rc

CONSUMERS = st.integers(0, 1)


class EngineRules:
    """Steps through the engine's public API: ``Engine.step`` with an Action, and the ack
    codes read from the typed events the engine publishes."""

    engine: PopDriver

    def _open(self, config: ScenarioConfig) -> PopDriver:
        engine = PopDriver(self.profile, 0, config, check=True, record_trace=False)  # type: ignore[attr-defined]
        self.codes: list[int] = []
        engine.subscribe(self._on_event)
        return engine

    def _on_event(self, event: Event, step: int, now: int) -> None:
        if isinstance(event, Acked):
            self.codes.append(event.code)

    def _pop_all(self, engine: PopDriver, c: int, queue: int, stall_ms: int = 0) -> list[InFlight]:
        """Consumer ``c`` pops ``queue`` (its request stalled ``stall_ms`` when > 0) until the
        answer; the messages it got, taken out of its hands."""
        consumer = engine.world.consumers[c]
        before = len(consumer.held)
        if consumer.op is None:
            engine.step(Action("pop", (c, queue, False)))
        if stall_ms:
            engine.step(Action("stall", (c, stall_ms)))  # not applied when the pop already answered
        while consumer.op is not None and engine.step(Action("pop_step", (c,))):
            pass
        got = consumer.held[before:]
        del consumer.held[before:]
        return got

    def _ack(self, engine: PopDriver, c: int, held: InFlight) -> int:
        """Consumer ``c`` acks ``held`` (handed back to it first); the response code."""
        consumer = engine.world.consumers[c]
        consumer.held.append(held)
        engine.step(Action("ack", (c, len(consumer.held) - 1)))
        return self.codes[-1]


class PopBrokerMachine(EngineRules, RuleBasedStateMachine):
    """Machine 1: a POP broker with buffer merge and revive under consumers and faults."""

    profile = "v5.5"
    merge = False
    handles = Bundle("handles")

    @initialize(merge=st.booleans())
    def start(self, merge: bool) -> None:
        config = ScenarioConfig(queues=2, consumers=2, invisible_time=5000, max_msg_nums=3,
                                enable_pop_buffer_merge=merge, faults=("restart", "clock_jump"))
        self.engine = self._open(config)
        self.faults = 0

    def _step(self, kind: str, *args: int) -> bool:
        return self.engine.step(Action(kind, args))

    @rule(queue=st.integers(0, 1), n=st.integers(1, 3))
    def produce(self, queue: int, n: int) -> None:
        for _ in range(n):
            self._step("produce", queue)

    @rule(target=handles, c=CONSUMERS, queue=st.sampled_from([-1, 0, 1]))
    def pop(self, c: int, queue: int):
        return multiple(*[(c, h) for h in self._pop_all(self.engine, c, queue)])

    @rule(target=handles, c=CONSUMERS, queue=st.sampled_from([-1, 0, 1]), ms=st.integers(10, 10_000))
    def pop_with_stall(self, c: int, queue: int, ms: int):
        """A pop whose broker thread stalls after taking popTime (the ``stall`` fault): the
        properties expected to hold must survive a late response."""
        return multiple(*[(c, h) for h in self._pop_all(self.engine, c, queue, stall_ms=ms)])

    @rule(entry=consumes(handles))
    def ack(self, entry: tuple[int, InFlight]) -> None:
        c, held = entry
        code = self._ack(self.engine, c, held)
        assert code == rc.SUCCESS, f"ack of a delivered handle answered {rc.NAMES.get(code, code)}"

    @rule(entry=handles)
    def ack_twice_is_idempotent(self, entry: tuple[int, InFlight]) -> None:
        c, held = entry
        first = self._ack(self.engine, c, held)
        offsets = self.engine.broker.committed_offsets()
        second = self._ack(self.engine, c, held)
        assert first == second == rc.SUCCESS
        assert self.engine.broker.committed_offsets() == offsets

    @rule(entry=handles, seconds=st.integers(1, 20))
    def change_invisible(self, entry: tuple[int, InFlight], seconds: int) -> None:
        c, held = entry
        consumer = self.engine.world.consumers[c]
        consumer.held.append(held)
        self._step("change_invisible", c, len(consumer.held) - 1, seconds * 1000)
        consumer.held.pop()

    @rule(ms=st.integers(1, 4000))
    def advance(self, ms: int) -> None:
        self._step("advance", ms)

    @rule(qid=st.integers(0, 7))
    def revive(self, qid: int) -> None:
        self._step("revive", qid)

    @rule()
    def timer_and_scan(self) -> None:
        self._step("timer")
        self._step("scan")
        self._step("flush")

    @precondition(lambda self: self.faults < 2)
    @rule()
    def restart(self) -> None:
        self.faults += 1
        self._step("restart")

    @invariant()
    def no_unexpected_violation(self) -> None:
        if not hasattr(self, "engine"):
            return
        bad = [v for v in self.engine.checker.violations
               if is_unexpected(self.profile, v.property_id, self.faults)]
        assert not bad, bad

    def teardown(self) -> None:
        if not hasattr(self, "engine"):
            return
        for consumer in self.engine.world.consumers:
            consumer.held.clear()
        drained = self.engine.world.drain()
        assert drained, "the drain did not reach quiescence"
        self.engine.checker.finish(drained, self.engine.step_no)
        self.no_unexpected_violation()


class PopBrokerMachineV50(PopBrokerMachine):
    profile = "v5.0"


TestPopBrokerV55 = PopBrokerMachine.TestCase
TestPopBrokerV50 = PopBrokerMachineV50.TestCase


class MergeEquivalenceMachine(EngineRules, RuleBasedStateMachine):
    """Machine 2: buffer merge on and off, same inputs: same deliveries, same ack answers,
    and in the end every message delivered and acked by both."""

    profile = "v5.5"

    @initialize()
    def start(self) -> None:
        self.engines = {
            merge: self._open(ScenarioConfig(queues=2, consumers=1, invisible_time=8000, max_msg_nums=3,
                                             enable_pop_buffer_merge=merge))
            for merge in (False, True)
        }
        self.deliveries: dict[bool, list[tuple[str, str, int, int]]] = {False: [], True: []}

    def _both(self, fn) -> list:
        return [fn(merge, e) for merge, e in self.engines.items()]

    @rule(queue=st.integers(0, 1))
    def produce(self, queue: int) -> None:
        self._both(lambda m, e: e.step(Action("produce", (queue,))))

    @rule(queue=st.sampled_from([-1, 0, 1]))
    def pop(self, queue: int) -> None:
        def go(merge: bool, e: PopDriver) -> None:
            got = self._pop_all(e, 0, queue)
            self.deliveries[merge].extend((h.uniq, h.ack_topic, h.queue_id, h.offset) for h in got)
            e.world.consumers[0].held.extend(got)
        self._both(go)
        assert self.deliveries[False] == self.deliveries[True]

    @rule(index=st.integers(0, 30))
    def ack(self, index: int) -> None:
        def go(merge: bool, e: PopDriver) -> int | None:
            if not e.world.consumers[0].held:
                return None
            e.step(Action("ack", (0, index)))
            return self.codes[-1]
        codes = self._both(go)
        assert codes[0] == codes[1]

    @rule(ms=st.integers(1, 3000))
    def advance(self, ms: int) -> None:
        self._both(lambda m, e: e.step(Action("advance", (ms,))))

    @rule()
    def revive_all(self) -> None:
        self._both(lambda m, e: [e.step(Action("revive", (q,))) for q in range(e.broker.config.revive_queue_num)])

    def teardown(self) -> None:
        if not hasattr(self, "engines"):
            return
        delivered, acked = [], []
        for e in self.engines.values():
            e.world.consumers[0].held.clear()
            assert e.world.drain()
            delivered.append({u for u, r in e.checker.messages.items() if r.deliveries})
            acked.append({u for u, r in e.checker.messages.items() if r.acked})
        assert delivered[0] == delivered[1] == set(self.engines[False].checker.messages)
        assert acked[0] == acked[1]


TestMergeEquivalence = MergeEquivalenceMachine.TestCase


def test_machine_catches_a_broken_ack() -> None:
    """The machine is not vacuous: with the drop-ack mutant it finds a counterexample. Finding
    it is what is tested, so Hypothesis does not shrink it (shrinking took minutes in CI)."""
    from hypothesis import Phase, settings
    with applied("drop-ack"):
        with pytest.raises(AssertionError):
            run_state_machine_as_test(PopBrokerMachine, settings=settings(max_examples=200, stateful_step_count=30,
                                                                          deadline=None, derandomize=True,
                                                                          database=None,
                                                                          phases=[Phase.explicit, Phase.generate]))
