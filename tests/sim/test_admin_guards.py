"""The admin actions that let time pass wait for the broker's POPs, a crashed consumer's too."""

from __future__ import annotations

from popverify.sim.pop_driver import PopDriver
from popverify.sim.scenario import Action, ScenarioConfig

CONFIG = ScenarioConfig(queues=1, consumers=2, invisible_time=5000, enable_pop_buffer_merge=False, drain=False,
                        actions=("produce", "pop", "pop_step", "ack", "advance", "timer", "revive", "consumer_crash",
                                 "long_poll", "topic_revive"))


def test_topic_revive_waits_for_a_crashed_consumers_parked_pop() -> None:
    """A long-polling POP parked on the empty queue stays in the polling map when its consumer
    crashes; topic_revive's time would re-run it after the deletion on the model and before it on
    the replay's Java side (corpus seed 61, `orphan.response`), so it is not applied until the
    POP has timed out and its re-run is over."""
    d = PopDriver("v5.5", 0, CONFIG, False, False)
    assert d.step(Action("pop", (0, 0, True)))
    while d.step(Action("pop_step", (0,))):
        pass
    assert d.broker.parked_pops() and d.step(Action("consumer_crash", (0,)))
    assert d.broker.parked_pops() and all(c.op is None for c in d.world.consumers)
    assert not d.step(Action("topic_revive", (0, 0, 3000)))
    assert d.step(Action("advance", (30_000,))) and d.step(Action("long_poll", ()))
    assert not d.broker.parked_pops() and d.broker.in_flight_pops()  # woken, its re-run not run yet
    assert not d.step(Action("topic_revive", (0, 0, 3000)))
    assert d.step(Action("advance", (1000,))) and not d.broker.in_flight_pops()
    assert d.step(Action("topic_revive", (0, 0, 3000)))
