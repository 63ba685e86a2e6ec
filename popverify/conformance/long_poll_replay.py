"""The POP replay of long polling (popverify/conformance/confirm.py; spec/conformance.md "Long
polling").

A POP with pollTime that finds nothing parks on both sides: the model's PopOperation
(``parked``) and Java's PopRequest in PopMessageProcessor's polling map (the harness answers
``parked`` with the request's opaque). A put's notifyMessageArriving, or the polling service's
timeout scan (the model's ``long_poll`` step, the harness's ``pollingTimeout``), wakes it; the
woken request runs processRequest again. Java's re-run waits in the harness's executor
(``deferWoken``) until the model's re-run of the same request has finished (the model steps it
like any POP: ``pop_step``\\ s), then ``runWoken`` runs exactly that request (by opaque) and the
two answers are compared. A request the model wakes and Java does not is a divergence
(``runWoken`` finds no such task); one Java wakes alone shows in the timeout scan's answer.

A parked POP whose consumer gave up (it crashed; the drain stops waiting) is an *orphan*: the
broker still wakes it, and the model's broker re-runs it when time next passes (PopWorld
settles in-flight requests first), its answer lost; Java's re-run is run at that point.
"""

from __future__ import annotations

from typing import Any

import attrs

from reference.broker.pop_processor import PopOperation


@attrs.define
class Parked:
    """A POP parked on both sides (or woken by the model, its Java re-run not yet compared)."""

    consumer: int
    op: PopOperation
    opaque: int  # Java's request id (RemotingCommand#getOpaque): names the request in wakes
    request: dict[str, Any]


@attrs.define
class LongPolls:
    """The replay's parked and woken POPs, in the model's wake order."""

    parked: list[Parked] = attrs.Factory(list)
    woken: list[Parked] = attrs.Factory(list)  # woken by the model, not yet stepped by the replay
    orphans: list[Parked] = attrs.Factory(list)  # parked, nobody waits for the answer
    orphans_woken: list[Parked] = attrs.Factory(list)  # woken; the model re-runs them when time passes
    _wake_order: list[PopOperation] = attrs.Factory(list)
    _hooked: set[int] = attrs.Factory(set)  # ids of ops whose wake() records the order

    def park(self, consumer: int, op: PopOperation, opaque: int, request: dict[str, Any]) -> None:
        """``op`` parked on both sides (Java's answer named ``opaque``)."""
        if id(op) not in self._hooked:
            self._hooked.add(id(op))
            wake = op.wake

            def recorded() -> None:
                self._wake_order.append(op)
                wake()
            op.wake = recorded  # type: ignore[method-assign]  # the order the model woke them in
        self.parked.append(Parked(consumer, op, opaque, request))

    def just_woken(self) -> list[Parked]:
        """The parked POPs (orphans included) the model woke since the last ``settle``, in
        wake order."""
        by_op = {id(p.op): p for p in self.parked + self.orphans}
        return [by_op[id(op)] for op in self._wake_order if id(op) in by_op]

    def settle(self) -> None:
        """Move what the model woke to ``woken`` (or ``orphans_woken``); forget what it aborted
        (a broker restart: Java's restart loses its polling map too)."""
        for p in self.just_woken():
            live = p in self.parked
            (self.parked if live else self.orphans).remove(p)
            if p.op.in_flight:
                (self.woken if live else self.orphans_woken).append(p)
        self._wake_order.clear()
        self.parked = [p for p in self.parked if p.op.parked]
        self.orphans = [p for p in self.orphans if p.op.parked]

    def orphan(self, op: PopOperation | None) -> None:
        """Nobody waits for ``op``'s answer any more (None, or ``op`` not parked: nothing)."""
        for p in [p for p in self.parked if p.op is op]:
            self.parked.remove(p)
            self.orphans.append(p)

    def orphans_rerun(self) -> list[Parked]:
        """Woken orphans the model has re-run (answered or parked again), taken out; aborted
        ones (a restart) are forgotten."""
        ran = [p for p in self.orphans_woken if not p.op.in_flight]
        self.orphans_woken = [p for p in self.orphans_woken if p.op.in_flight]
        return [p for p in ran if p.op.done or p.op.parked]

    def woken_for(self, op: PopOperation) -> Parked | None:
        """The woken entry of ``op``, taken out of ``woken``."""
        for p in self.woken:
            if p.op is op:
                self.woken.remove(p)
                return p
        return None
