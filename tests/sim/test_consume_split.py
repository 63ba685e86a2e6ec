"""Push mode with the opt-in consume_begin / consume_end kinds: the properties hold with
listeners at work while other steps run, and a broken end is caught (issue 17 item 3)."""

from __future__ import annotations

import attrs
import pytest

from popverify.sim.scenario import PUSH_FAULTS, ScenarioConfig, run_scenario
from popverify.trace.schedule import Action
from reference.client import consume_concurrently
from reference.client.consume_api import ListenerBatch

SPLIT = ("consume_begin", "consume_end")
SEEDS = range(6)
# every push fault but retention, whose runs show finding F5 (ALO-3) with or without the split
FAULTS = tuple(f for f in PUSH_FAULTS if f != "expire")


def _config(orderly: bool, faults: tuple[str, ...] = FAULTS) -> ScenarioConfig:
    base = ScenarioConfig.default_for("push")
    return attrs.evolve(base, actions=base.actions + SPLIT, faults=faults, consume_orderly=orderly,
                        consume_fail_percent=20)


def _unchanged_bodies(schedule: tuple[Action, ...]) -> list[Action]:
    """The same schedule with every listener leaving the bodies as they were."""
    return [Action(a.kind, tuple(a.args[:3]) + (-1,)) if a.kind == "consume_end" else a for a in schedule]


def _interleaved(trace: dict) -> bool:
    """Some other step was applied while a listener worked (after a consume_begin that handed
    a batch over, before the next consume_end)."""
    working = False
    for state in trace["states"]:
        action = state.get("action", {})
        if not action.get("applied"):
            continue
        kind = action["kind"]
        if kind == "consume_begin" and any(e["type"] == "consume_begin" for e in state["events"]):
            working = True
        elif kind == "consume_end":
            working = False
        elif working and kind not in ("consume", "drain"):
            return True
    return False


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
@pytest.mark.parametrize("orderly", [False, True])
def test_push_properties_hold_with_listeners_at_work(profile: str, orderly: bool) -> None:
    """ALO-3, OFF-3, DUP-1, ORD-1, PQ-1 ... hold with split consumption on (every push fault
    but expire too); the only violation is PQ-2 of a run whose listener changed a body, which the same
    schedule without the body changes does not have (a real Java drift: ProcessQueue#
    removeMessage subtracts the changed length, spec/push.md)."""
    interleaved = 0
    for seed in SEEDS:
        config = _config(orderly)
        result = run_scenario(profile, seed, 400, mode="push", config=config, record_trace=True)
        interleaved += _interleaved(result.trace)
        assert {v.property_id for v in result.violations} <= {"PQ-2"}, result.violations
        if result.violations:
            replayed = run_scenario(profile, seed, 0, mode="push", config=config,
                                    schedule=_unchanged_bodies(result.schedule))
            assert replayed.violations == ()
    assert interleaved >= len(SEEDS) // 2  # the split is exercised


def test_split_runs_are_replayable_and_leave_atomic_runs_alone() -> None:
    config = _config(False)
    first = run_scenario("v5.5", 4, 300, mode="push", config=config, record_trace=True)
    assert first.trace == run_scenario("v5.5", 4, 300, mode="push", config=config, record_trace=True).trace
    assert {"consume_begin", "consume_end"} <= {a.kind for a in first.schedule}
    replayed = run_scenario("v5.5", 4, 0, mode="push", config=config, schedule=first.schedule)
    assert (replayed.violations, replayed.counts) == (first.violations, first.counts)
    with pytest.raises(ValueError, match="body_size"):
        run_scenario("v5.5", 4, 0, mode="push", config=config, schedule=[Action("consume_end", (0, 0, False, -2))])


def _remove_at_hand_over() -> object:
    """Mutant: ProcessQueue#removeMessage runs when the batch is handed to the listener, not
    when its status comes back."""
    original = consume_concurrently.ConsumeMessageConcurrentlyService.consume_begin

    def consume_begin(self: consume_concurrently.ConsumeMessageConcurrentlyService) -> object:
        begun = original(self)
        if isinstance(begun, ListenerBatch):
            begun.request.process_queue.remove_message(begun.msgs)
        return begun
    return consume_begin


def test_a_broken_end_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With removeMessage at the hand-over, another batch's end moves the offset past a message
    a listener still holds: OFF-3 reports it (an in-flight message is not consumed); the correct
    model on the same runs reports nothing but PQ-2."""
    def off3(seed: int) -> int:
        result = run_scenario("v5.5", seed, 400, mode="push", config=_config(False, ()))
        return sum(v.property_id == "OFF-3" for v in result.violations)

    assert sum(off3(seed) for seed in SEEDS) == 0
    monkeypatch.setattr(consume_concurrently.ConsumeMessageConcurrentlyService, "consume_begin",
                        _remove_at_hand_over())
    assert sum(off3(seed) for seed in SEEDS) > 0
