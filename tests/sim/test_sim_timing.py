"""POP requests are time-atomic up to REQUEST_TIME_BOUND_MS; only ``stall`` stretches one."""

from __future__ import annotations

import pytest

from popverify.sim import pop_driver
from popverify.sim.pop_driver import REQUEST_TIME_BOUND_MS, PopDriver, PopWorld
from popverify.sim.scenario import FAULTS, Action, ScenarioConfig, run_scenario
from reference.common.javalang import JavaRandom


def _latencies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record now - popTime of every response the driver collects."""
    seen: list[int] = []
    original = PopWorld.collect

    def collect(self: PopWorld, consumer: pop_driver.Consumer, op: pop_driver.PopOperation) -> None:
        assert op.result is not None
        if op.pop_time is not None:  # a refused request (isTimeoutTooMuch) answers before reading popTime
            seen.append(self.clock.now() - op.result.pop_time)
        original(self, consumer, op)

    monkeypatch.setattr(PopWorld, "collect", collect)
    return seen


def test_advance_completes_an_in_flight_request_first(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _latencies(monkeypatch)
    config = ScenarioConfig(queues=2, consumers=1, drain=False)
    # pop over all queues: popTime taken, queue 0 visited, then a long advance
    schedule = [Action("produce", (0,)), Action("produce", (1,)), Action("pop", (0, -1, False)),
                Action("advance", (1000,))]
    result = run_scenario("v5.5", 0, 0, config=config, schedule=schedule, record_trace=True)
    assert result.counts["popped"] == 2 and seen == [0]
    step = result.trace["states"][3]
    assert [e["type"] for e in step["events"]] == ["deliver", "deliver", "advance"]
    # a short tick stays inside the bound: the request is still in flight afterwards
    seen.clear()
    short = schedule[:3] + [Action("advance", (REQUEST_TIME_BOUND_MS,)), Action("pop_step", (0,)),
                            Action("pop_step", (0,)), Action("pop_step", (0,))]
    result = run_scenario("v5.5", 0, 0, config=config, schedule=short)
    assert result.counts["popped"] == 2 and seen == [REQUEST_TIME_BOUND_MS]


def test_no_request_spans_more_than_the_bound_without_a_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _latencies(monkeypatch)
    for seed in range(8):
        config = ScenarioConfig.draw(JavaRandom(seed), faults=tuple(f for f in FAULTS if f != "stall"))
        run_scenario("v5.0", seed, 300, config=config)
    assert len(seen) > 100 and max(seen) <= REQUEST_TIME_BOUND_MS
    # ... and the check can fail: with stalls, requests span seconds
    seen.clear()
    stalled = 0
    for seed in range(8):
        config = ScenarioConfig.draw(JavaRandom(seed), faults=("stall",))
        stalled += run_scenario("v5.0", seed, 300, config=config).counts["stalls"]
    assert stalled > 0 and max(seen) > REQUEST_TIME_BOUND_MS


def test_stall_is_drawn_bounded_and_recorded() -> None:
    config = ScenarioConfig(faults=("stall",))
    driver = PopDriver("v5.0", 3, config, check=True, record_trace=False)
    lengths = [a.args[1] for a in (driver.draw() for _ in range(3000)) if a.kind == "stall"]
    assert lengths and all(10 <= ms <= 10_000 for ms in lengths)
    assert min(lengths) < 100 and max(lengths) >= 1000  # every decade is reached
    schedule = [Action("stall", (0, 50)),  # nothing in flight: not applied
                Action("produce", (0,)), Action("pop", (0, 0, False)), Action("stall", (0, 2500)),
                Action("pop_step", (0,)), Action("pop_step", (0,))]
    result = run_scenario("v5.0", 0, 0, config=ScenarioConfig(queues=1, consumers=1, faults=("stall",),
                                                               drain=False), schedule=schedule, record_trace=True)
    assert result.counts["stalls"] == 1 and result.counts["faults"] == 1 and result.counts["skipped"] == 1
    states = result.trace["states"]
    assert states[0]["action"]["applied"] is False
    stall = [e for e in states[3]["events"] if e["type"] == "stall"]
    assert stall == [{"type": "stall", "consumer": "c0", "ms": 2500, "pop_time": states[2]["now"],
                      "now": states[2]["now"] + 2500}]
    # the stalled request answers with its old popTime
    deliver = [e for s in states for e in s["events"] if e["type"] == "deliver"]
    assert [d["pop_time"] for d in deliver] == [states[2]["now"]]
    # out-of-range lengths in a foreign schedule are not applied
    bad = schedule[1:3] + [Action("stall", (0, 10_001)), Action("stall", (0, 0))]
    assert run_scenario("v5.0", 0, 0, config=ScenarioConfig(queues=1, consumers=1, drain=False),
                        schedule=bad).counts["stalls"] == 0
