"""Machine 4: broker-side rebalance while clients join and leave and topics grow or shrink.

After every step each client computes its assignment from its own copy of the view (the
client list in the order its own heartbeat table happened to list it), as doLoadBalance
does on each QUERY_ASSIGNMENT; the ALLOC properties must hold for the union and all
clients must agree.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from popverify.checker.allocation import check_agreement, check_allocation
from reference.broker.query_assignment import CLUSTERING, do_load_balance
from reference.client.allocation import STRATEGIES
from reference.common.message_queue import MessageQueue

CLIENT_IDS = st.one_of(st.integers(0, 30).map(lambda i: f"c{i}"),
                       st.tuples(st.integers(1, 9), st.integers(1, 99999)).map(lambda t: f"10.0.0.{t[0]}@{t[1]}"))


class RebalanceMachine(RuleBasedStateMachine):
    """Clients join and leave; queues change; every client recomputes its own view."""

    @initialize(strategy=st.sampled_from(["AVG", "AVG_BY_CIRCLE"]), share=st.none() | st.integers(0, 6),
                queues=st.integers(1, 12))
    def start(self, strategy: str, share: int | None, queues: int) -> None:
        self.strategy = STRATEGIES[strategy]
        self.share = share
        self.queues = queues
        self.clients: list[str] = []

    @rule(cid=CLIENT_IDS)
    def join(self, cid: str) -> None:
        if cid not in self.clients:
            self.clients.append(cid)

    @precondition(lambda self: bool(self.clients))
    @rule(index=st.integers(0, 100))
    def leave(self, index: int) -> None:
        self.clients.pop(index % len(self.clients))

    @rule(queues=st.integers(1, 12))
    def resize_topic(self, queues: int) -> None:
        self.queues = queues

    def _assignment(self, cid: str, view: list[str]) -> list[int]:
        mqs = [MessageQueue("T", "broker-a", q) for q in range(self.queues)]
        got = do_load_balance(CLUSTERING, self.strategy, "GID", cid, mqs, view, self.share)
        assert got is not None
        return sorted({mq.queue_id for mq in got})

    @invariant()
    def alloc_properties_hold(self) -> None:
        if not getattr(self, "clients", None):
            return
        view = list(self.clients)
        assignment = {cid: self._assignment(cid, view) for cid in view}
        assert not check_allocation(self.queues, view, self.share, assignment), assignment
        assert not check_agreement(self._assignment, view)


TestRebalance = RebalanceMachine.TestCase
