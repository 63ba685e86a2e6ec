"""PQ-2 on push's split consumption: a listener may change the body of a message the
ProcessQueue keeps (spec/properties.md, PQ-1 / PQ-2)."""

from __future__ import annotations

import attrs
import pytest

from popverify.findings.attribution import attribute
from popverify.sim.scenario import PUSH_ACTIONS, Action, ScenarioConfig, run_scenario

@pytest.mark.parametrize("profile, drained", [("v5.0", ["PQ-2/F13"]), ("v5.5", [])])
def test_a_changed_body_still_held_weighs_what_was_put_and_f13_shows_when_it_leaves(profile: str,
                                                                                   drained: list[str]) -> None:
    """An orderly listener changes a body and suspends (push seed 13): the queue keeps the message
    and msgSize rightly still counts the body as put, so PQ-2 holds (it was PQ-2/unexplained when
    the checker weighed the current body). The drain consumes it: 5.0.0 subtracts the new length
    for good (PQ-2/F13), 5.5.0 resets msgSize as the queue empties."""
    config = ScenarioConfig(queues=1, consumers=1, consume_orderly=True, drain=False,
                            actions=tuple(PUSH_ACTIONS) + ("consume_begin", "consume_end"))
    suspended = [Action("produce", (0,)), Action("advance", (2458,)), Action("pull", (0,)), Action("deliver", (0, 0)),
                 Action("consume_begin", (0,)), Action("consume_end", (0, 1, True, 876))]
    held = run_scenario(profile, 13, 0, mode="push", config=config, schedule=suspended)
    assert held.violations == () and held.counts["reconsume_later"] == 1
    consumed = run_scenario(profile, 13, 0, mode="push", config=attrs.evolve(config, drain=True), schedule=suspended)
    assert [s.key for s in attribute(consumed)] == drained
