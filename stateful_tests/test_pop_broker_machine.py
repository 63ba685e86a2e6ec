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
from popverify.sim.pop_driver import InFlight, PopDriver
from popverify.sim.scenario import ScenarioConfig
from reference.broker import response_code as rc

CONSUMERS = st.integers(0, 1)


class PopBrokerMachine(RuleBasedStateMachine):
    """Machine 1: a POP broker with buffer merge and revive under consumers and faults."""

    profile = "v5.5"
    merge = False
    handles = Bundle("handles")

    @initialize(merge=st.booleans())
    def start(self, merge: bool) -> None:
        config = ScenarioConfig(queues=2, consumers=2, invisible_time=5000, max_msg_nums=3,
                                enable_pop_buffer_merge=merge, faults=("restart", "clock_jump"))
        self.driver = PopDriver(self.profile, 0, config, check=True, record_trace=False)
        self.steps = 0
        self.faults = 0

    def _after(self) -> None:
        self.driver.checker.check_offsets(self.steps, self.driver.broker, self.driver.config.queues)
        self.steps += 1
        self.driver.step_no = self.steps

    @rule(queue=st.integers(0, 1), n=st.integers(1, 3))
    def produce(self, queue: int, n: int) -> None:
        for _ in range(n):
            self.driver._do_produce(queue)
        self._after()

    @rule(target=handles, c=CONSUMERS, queue=st.sampled_from([-1, 0, 1]))
    def pop(self, c: int, queue: int):
        consumer = self.driver.consumers[c]
        before = len(consumer.held)
        if consumer.op is None:
            self.driver._do_pop(c, queue, False)
        while consumer.op is not None and self.driver._do_pop_step(c):
            pass
        got = consumer.held[before:]
        del consumer.held[before:]
        self._after()
        return multiple(*[(c, h) for h in got])

    @rule(target=handles, c=CONSUMERS, queue=st.sampled_from([-1, 0, 1]), ms=st.integers(10, 10_000))
    def pop_with_stall(self, c: int, queue: int, ms: int):
        """A pop whose broker thread stalls after taking popTime (the ``stall`` fault): the
        properties expected to hold must survive a late response."""
        consumer = self.driver.consumers[c]
        before = len(consumer.held)
        if consumer.op is None:
            self.driver._do_pop(c, queue, False)
        self.driver._do_stall(c, ms)  # not applied when the pop already answered
        while consumer.op is not None and self.driver._do_pop_step(c):
            pass
        got = consumer.held[before:]
        del consumer.held[before:]
        self._after()
        return multiple(*[(c, h) for h in got])

    @rule(entry=consumes(handles))
    def ack(self, entry: tuple[int, InFlight]) -> None:
        c, held = entry
        code = self.driver._ack(self.driver.consumers[c], held)
        assert code == rc.SUCCESS, f"ack of a delivered handle answered {rc.NAMES.get(code, code)}"
        self._after()

    @rule(entry=handles)
    def ack_twice_is_idempotent(self, entry: tuple[int, InFlight]) -> None:
        c, held = entry
        consumer = self.driver.consumers[c]
        first = self.driver._ack(consumer, held)
        offsets = self.driver.broker.committed_offsets()
        second = self.driver._ack(consumer, held)
        assert first == second == rc.SUCCESS
        assert self.driver.broker.committed_offsets() == offsets
        self._after()

    @rule(entry=handles, seconds=st.integers(1, 20))
    def change_invisible(self, entry: tuple[int, InFlight], seconds: int) -> None:
        c, held = entry
        consumer = self.driver.consumers[c]
        consumer.held.append(held)
        self.driver._do_change_invisible(c, len(consumer.held) - 1, seconds * 1000)
        consumer.held.pop()
        self._after()

    @rule(ms=st.integers(1, 4000))
    def advance(self, ms: int) -> None:
        self.driver._do_advance(ms)
        self._after()

    @rule(qid=st.integers(0, 7))
    def revive(self, qid: int) -> None:
        self.driver._do_revive(qid)
        self._after()

    @rule()
    def timer_and_scan(self) -> None:
        self.driver._do_timer()
        self.driver._do_scan()
        self.driver._do_flush()
        self._after()

    @precondition(lambda self: self.faults < 2)
    @rule()
    def restart(self) -> None:
        self.faults += 1
        self.driver._do_restart()
        self._after()

    @invariant()
    def no_unexpected_violation(self) -> None:
        if not hasattr(self, "driver"):
            return
        bad = [v for v in self.driver.checker.violations
               if is_unexpected(self.profile, v.property_id, self.faults)]
        assert not bad, bad

    def teardown(self) -> None:
        if not hasattr(self, "driver"):
            return
        for consumer in self.driver.consumers:
            consumer.held.clear()
        drained = self.driver.drain()
        assert drained, "the drain did not reach quiescence"
        self.driver.checker.finish(drained, self.steps)
        self.no_unexpected_violation()


class PopBrokerMachineV50(PopBrokerMachine):
    profile = "v5.0"


TestPopBrokerV55 = PopBrokerMachine.TestCase
TestPopBrokerV50 = PopBrokerMachineV50.TestCase


class MergeEquivalenceMachine(RuleBasedStateMachine):
    """Machine 2: buffer merge on and off, same inputs: same deliveries, same ack answers,
    and in the end every message delivered and acked by both."""

    profile = "v5.5"

    @initialize()
    def start(self) -> None:
        self.drivers = {
            merge: PopDriver(self.profile, 0, ScenarioConfig(queues=2, consumers=1, invisible_time=8000,
                                                             max_msg_nums=3, enable_pop_buffer_merge=merge),
                             check=True, record_trace=False)
            for merge in (False, True)
        }
        self.deliveries: dict[bool, list[tuple[str, str, int, int]]] = {False: [], True: []}

    def _both(self, fn) -> list:
        return [fn(merge, d) for merge, d in self.drivers.items()]

    @rule(queue=st.integers(0, 1))
    def produce(self, queue: int) -> None:
        self._both(lambda m, d: d._do_produce(queue))

    @rule(queue=st.sampled_from([-1, 0, 1]))
    def pop(self, queue: int) -> None:
        def go(merge: bool, d: PopDriver) -> None:
            held = d.consumers[0].held
            before = len(held)
            d._do_pop(0, queue, False)
            while d.consumers[0].op is not None and d._do_pop_step(0):
                pass
            self.deliveries[merge].extend((h.uniq, h.ack_topic, h.queue_id, h.offset) for h in held[before:])
        self._both(go)
        assert self.deliveries[False] == self.deliveries[True]

    @rule(index=st.integers(0, 30))
    def ack(self, index: int) -> None:
        def go(merge: bool, d: PopDriver) -> int | None:
            held = d.consumers[0].held
            if not held:
                return None
            h = held.pop(index % len(held))
            return d._ack(d.consumers[0], h)
        codes = self._both(go)
        assert codes[0] == codes[1]

    @rule(ms=st.integers(1, 3000))
    def advance(self, ms: int) -> None:
        self._both(lambda m, d: d._do_advance(ms))

    @rule()
    def revive_all(self) -> None:
        self._both(lambda m, d: [d._do_revive(q) for q in range(d.broker.config.revive_queue_num)])

    def teardown(self) -> None:
        if not hasattr(self, "drivers"):
            return
        delivered, acked = [], []
        for d in self.drivers.values():
            d.consumers[0].held.clear()
            assert d.drain()
            delivered.append({u for u, r in d.checker.messages.items() if r.deliveries})
            acked.append({u for u, r in d.checker.messages.items() if r.acked})
        assert delivered[0] == delivered[1] == set(self.drivers[False].checker.messages)
        assert acked[0] == acked[1]


TestMergeEquivalence = MergeEquivalenceMachine.TestCase


def test_machine_catches_a_broken_ack() -> None:
    """The machine is not vacuous: with the drop-ack mutant it finds a counterexample."""
    from hypothesis import settings
    with applied("drop-ack"):
        with pytest.raises(AssertionError):
            run_state_machine_as_test(PopBrokerMachine, settings=settings(max_examples=200, stateful_step_count=30,
                                                                          deadline=None, derandomize=True,
                                                                          database=None))
