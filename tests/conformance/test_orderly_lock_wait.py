"""An orderly ack or changeInvisibleTime waits for the queue lock in a busy loop on Java
(`while (!tryLock(...))`), and an orderly POP holds that lock at its interleave points: the
replay steps such a POP to its end before it (confirm.runs_inside), or the harness thread
would spin for ever."""

from __future__ import annotations

from typing import Any

import pytest

from popverify.conformance.confirm import ORDERLY_LOCK_WAITERS, runs_inside
from popverify.sim.scenario import Action


class _Pending:
    def __init__(self, order: bool) -> None:
        self.request: dict[str, Any] = {"order": order}
        self.consumer = 0
        self.woken = None


@pytest.mark.parametrize("kind", sorted(ORDERLY_LOCK_WAITERS))
def test_an_orderly_lock_waiter_runs_after_an_orderly_pop(kind: str) -> None:
    action = Action(kind, (1, 0))
    assert not runs_inside(_Pending(order=True), action, 2)  # type: ignore[arg-type]
    assert runs_inside(_Pending(order=False), action, 2)  # type: ignore[arg-type]
