"""Machine 3: push consumers (ProcessQueue, pull path, offsets) under crash, restart and
rebalance, with the push checker (ALO-3, OFF-3, PQ-1, PQ-2) as invariant.

Pull responses in flight live in a Bundle: Hypothesis chooses which response arrives when,
which is lost and which is delivered twice, and shrinks a failure to the few pulls, consumes
and membership changes that matter. Ghost state is the checker's history
(popverify.checker.push).
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, multiple, rule

from popverify.checker.expectations import is_unexpected
from popverify.mutants import applied
from popverify.sim.push_driver import PushDriver
from popverify.sim.scenario import Action, ScenarioConfig

CONSUMERS = st.integers(0, 2)


class PushConsumerMachine(RuleBasedStateMachine):
    """Three consumer slots of one group on a 3-queue topic."""

    profile = "v5.5"
    responses = Bundle("responses")

    @initialize(orderly=st.booleans())
    def start(self, orderly: bool) -> None:
        config = ScenarioConfig(queues=3, consumers=3, consume_orderly=orderly,
                                actions=ScenarioConfig.default_for("push").actions + ("consume_begin", "consume_end"))
        self.engine = PushDriver(self.profile, 0, config, check=True, record_trace=False)
        self.world = self.engine.world

    def _step(self, kind: str, *args: int | bool) -> bool:
        """One action through the engine (it checks the state after it)."""
        return self.engine.step(Action(kind, args))

    def _after(self) -> None:
        """After a step the machine plays itself (a response handed over): the state check."""
        self.world.check_state(self.engine.step_no)

    @rule(target=responses, queue=st.integers(0, 2), n=st.integers(1, 3))
    def produce(self, queue: int, n: int):
        for _ in range(n):
            self._step("produce", queue)
        # notifyMessageArriving answers the pulls held on that queue right after the put.
        return self._woken()

    def _woken(self):
        woken = self.engine.broker.pull_hold_step()
        return multiple(*[(slot, client.consumer, header, response) for header, response in woken
                          for slot, client in enumerate(self.world.clients)
                          if client.name == header.client_id and client.consumer is not None])

    @rule(target=responses, c=CONSUMERS)
    def pull(self, c: int):
        client = self.world.client(c)
        due = client.consumer.next_pull_due() if client.consumer is not None else None
        if due is not None and due > self.engine.clock.now():
            self._step("advance", due - self.engine.clock.now())  # the pull thread waits for it
        before = len(client.inbox)
        self._step("pull", c)
        got = client.inbox[before:]
        del client.inbox[before:]
        # A response belongs to the consumer instance that sent the request.
        return multiple(*[(c, client.consumer, h, r) for h, r in got])

    @rule(entry=consumes(responses))
    def deliver(self, entry) -> None:
        c, consumer, header, response = entry
        if consumer is not None and consumer is self.world.client(c).consumer:
            consumer.on_pull_response(header, response)
        self._after()

    @rule(entry=consumes(responses))
    def lose(self, entry) -> None:
        c, consumer, header, _ = entry
        if consumer is not None and consumer is self.world.client(c).consumer:
            consumer.on_pull_response(header, None)  # the request times out
        self._after()

    @rule(entry=responses)
    def deliver_duplicate(self, entry) -> None:
        # The same response again (the Bundle entry stays): a stale one must change nothing.
        c, consumer, header, response = entry
        if consumer is not None and consumer is self.world.client(c).consumer:
            consumer.on_pull_response(header, response)
        self._after()

    @rule(target=responses)
    def hold(self):
        # PullRequestHoldService#checkHoldRequest answers the held pulls whose time is up.
        self._after()
        return self._woken()

    @rule(c=CONSUMERS, fail=st.booleans())
    def consume(self, c: int, fail: bool) -> None:
        self._step("consume", c, fail)

    # Consumption in two steps: any rule may run while a listener works (spec/push.md). The
    # listener keeps the bodies here: a changed body is PQ-2's known drift (tests/sim/test_consume_split.py).
    @rule(c=CONSUMERS)
    def consume_begin(self, c: int) -> None:
        self._step("consume_begin", c)

    @rule(c=CONSUMERS, index=st.integers(0, 3), fail=st.booleans())
    def consume_end(self, c: int, index: int, fail: bool) -> None:
        self._step("consume_end", c, index, fail, -1)

    @rule(c=CONSUMERS)
    def rebalance(self, c: int) -> None:
        self._step("rebalance", c)

    @rule(c=CONSUMERS)
    def persist(self, c: int) -> None:
        self._step("persist", c)

    # Membership changes and failures share one rule, so they are as likely as one ordinary
    # step and the consumers spend most steps alive and working.
    @rule(kind=st.sampled_from(["start", "shutdown", "crash", "broker_restart"]), c=CONSUMERS)
    def membership_or_fault(self, kind: str, c: int) -> None:
        if kind == "broker_restart":
            self._step("restart")
        else:
            self._step("consumer_crash" if kind == "crash" else kind, c)

    @rule(ms=st.integers(1, 5000))
    def advance(self, ms: int) -> None:
        self._step("advance", ms)

    @invariant()
    def no_unexpected_violation(self) -> None:
        if not hasattr(self, "engine"):
            return
        bad = [v for v in self.engine.checker.violations if is_unexpected(self.profile, v.property_id, 0)]
        assert not bad, bad[0]

    def teardown(self) -> None:
        if not hasattr(self, "engine"):
            return
        drained = self.world.drain()
        assert drained, "the drain did not reach quiescence"
        self.engine.checker.finish(drained, self.engine.step_no)
        bad = [v for v in self.engine.checker.violations if is_unexpected(self.profile, v.property_id, 0)]
        assert not bad, bad[0]


class PushConsumerMachineV50(PushConsumerMachine):
    """The same machine on the seed-era code."""

    profile = "v5.0"


TestPushConsumer = PushConsumerMachine.TestCase
TestPushConsumerV50 = PushConsumerMachineV50.TestCase


def _commit_scenario(machine: PushConsumerMachine) -> None:
    """Three messages pulled by c0, the first consumed: the rules and invariant of the machine,
    in the order Hypothesis found when searching for this mutant."""
    machine.start(orderly=False)
    machine.produce(queue=0, n=3)
    [response] = machine.pull(c=0).values
    machine.deliver(entry=response)
    machine.consume(c=0, fail=False)
    machine.no_unexpected_violation()


def test_machine_catches_a_commit_past_unconsumed_messages() -> None:
    """Not vacuous: with the push-commit-max mutant (removeMessage answers queueOffsetMax + 1
    while messages are still held) the machine's invariant fails on the sequence a search
    finds; the same sequence passes on the correct model. (A fixed sequence, because
    Hypothesis's generation depends on which modules the session has loaded.)"""
    _commit_scenario(PushConsumerMachine())
    with applied("push-commit-max"):
        with pytest.raises(AssertionError, match="OFF-3"):
            _commit_scenario(PushConsumerMachine())
