"""A suspended pull answers on the channel it came in on: a crashed consumer's held pull must
never reach the incarnation that replaced it (found as ALO-3/unexplained by verify's push
campaigns, seed 182 on both profiles: the woken answer for queue 1 went to the new consumer,
which put queue 1's message into queue 0's ProcessQueue and consumed it in place of queue 0's)."""

from __future__ import annotations

import pytest

from popverify.sim.scenario import Action, ScenarioConfig, run_scenario

CONFIG = ScenarioConfig.from_json({
    "actions": ["produce", "start", "shutdown", "rebalance", "pull", "deliver", "consume", "persist", "advance"],
    "consume_fail_percent": 15, "consume_orderly": True, "consumers": 1, "drain": True,
    "enable_pop_buffer_merge": False, "faults": ["consumer_crash"], "invisible_time": 10000, "max_msg_nums": 4,
    "queues": 3, "services_on_period": True})
SCHEDULE = [Action.from_json(a) for a in [
    ["produce", 1], ["produce", 0], ["advance", 969], ["pull", 0], ["produce", 0], ["pull", 0], ["pull", 0],
    ["deliver", 0, 0], ["deliver", 0, 6], ["pull", 0], ["pull", 0], ["produce", 1], ["consumer_crash", 0],
    ["start", 0], ["advance", 2609], ["pull", 0], ["pull", 0], ["deliver", 0, 5], ["deliver", 0, 0]]]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_crashed_consumers_held_pull_never_reaches_its_successor(profile: str) -> None:
    result = run_scenario(profile, 182, 0, mode="push", config=CONFIG, schedule=SCHEDULE)
    assert not result.violations, result.violations  # before the fix: ALO-3, queue 0 offset 1 never consumed
