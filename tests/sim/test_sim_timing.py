"""POP requests are time-atomic up to REQUEST_TIME_BOUND_MS; only ``stall`` stretches one."""

from __future__ import annotations

import inspect

import attrs
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
    # out-of-range lengths in a foreign schedule are refused before the model (declared 1..10000)
    for ms in (10_001, 0):
        with pytest.raises(ValueError, match="outside 1..10000"):
            run_scenario("v5.0", 0, 0, config=ScenarioConfig(queues=1, consumers=1, drain=False),
                         schedule=schedule[1:3] + [Action("stall", (0, ms))])



def _state(obj: object, seen: set[int] | None = None) -> object:
    """Every value reachable from ``obj`` (object fields, containers, in their order), callables
    left out: two worlds built the same way and in the same state give equal results."""
    seen = set() if seen is None else seen
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if inspect.isroutine(obj) or id(obj) in seen:
        return type(obj).__name__
    seen.add(id(obj))
    if isinstance(obj, dict):
        return [(_state(k, seen), _state(v, seen)) for k, v in obj.items()]
    if isinstance(obj, (list, tuple, set, frozenset)) or type(obj).__name__ == "deque":
        return [_state(v, seen) for v in obj]
    fields = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        fields.update((n, getattr(obj, n)) for n in getattr(cls, "__slots__", ()) if hasattr(obj, n))
    return type(obj).__name__, [(k, _state(v, seen)) for k, v in fields.items() if not inspect.isroutine(v)]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_fast_forward_leaves_the_broker_as_slice_by_slice_services_do(profile: str) -> None:
    """pass_time jumps over the whole service slices that end before the buffer scan or the
    timer has work (Broker.services_quiet_until); the broker after any pass of time is the
    one that running both services every slice gives (timer read time, delivery times,
    counter reset and garbage scan times included)."""
    from popverify.fuzz.rows import swarm_config
    from popverify.sim.engine import Engine
    from popverify.sim.pop_driver import POP_MODE

    compared = 0
    for seed in range(3):
        config = attrs.evolve(swarm_config(seed), drain=False, services_on_period=True)
        for steps in (40, 120):
            # a slice and around it, a few, past a garbage scan (30 s), past counter resets (60 s)
            for ms in (99, 100, 101, 950, 31_000, 130_000):
                worlds = []
                for fast in (True, False):
                    engine = Engine(POP_MODE, profile, seed, config, False, False)
                    engine.run(steps, None)
                    if not fast:
                        engine.world.broker.services_quiet_until = lambda: None
                    engine.world.pass_time(ms)
                    worlds.append(_state(engine.world.broker))
                assert worlds[0] == worlds[1], (seed, steps, ms)
                compared += 1
    assert compared == 3 * 2 * 6

