"""PRG-2 and the drain's horizon (triage of what boundary bias showed, spec/fuzzing.md "The
input domain"): an invisibleTime past the drain's horizon is no lack of progress; a stuck
revive offset still is. Two days: the longest the timer takes (MessageStoreConfig#timerMaxDelaySec
is three days; a longer one -- the Integer.MAX_VALUE bias showed -- is refused by
HookUtils#transformTimerMessage, tests/broker/test_request_domain.py)."""

from __future__ import annotations

import pytest

from popverify.sim.scenario import Action, ScenarioConfig, run_scenario

CONFIG = ScenarioConfig(queues=1, consumers=1)
TWO_DAYS_MS = 2 * 24 * 3600 * 1000
PLAN = [Action("produce", (0,)), Action("pop", (0, 0, False)), Action("advance", (10,))]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_an_invisibility_past_the_drain_is_not_a_prg2_violation(profile: str) -> None:
    plan = PLAN + [Action("change_invisible", (0, 0, TWO_DAYS_MS))]
    result = run_scenario(profile, 0, len(plan), config=CONFIG, schedule=plan)
    assert result.counts["changed_invisible"] == 1
    assert not result.violations
    assert "drain:due-beyond-horizon" in result.coverage


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_stuck_revive_offset_is_still_prg2_beside_such_a_checkpoint(profile: str) -> None:
    plan = PLAN + [Action("change_invisible", (0, 0, TWO_DAYS_MS))]
    result = run_scenario(profile, 0, len(plan), config=CONFIG, schedule=plan, mutant="revive-offset-stuck")
    assert "PRG-2" in {v.property_id for v in result.violations}


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_an_invisibility_inside_the_drain_is_judged(profile: str) -> None:
    """A 30 s invisibility falls due inside the drain: the drain reaches quiescence (no
    set-aside), and the stuck-offset mutant is caught there too."""
    plan = PLAN + [Action("change_invisible", (0, 0, 30_000))]
    result = run_scenario(profile, 0, len(plan), config=CONFIG, schedule=plan)
    assert not result.violations and "drain:due-beyond-horizon" not in result.coverage
    stuck = run_scenario(profile, 0, len(plan), config=CONFIG, schedule=plan, mutant="revive-offset-stuck")
    assert "PRG-2" in {v.property_id for v in stuck.violations}


ORDERLY = ScenarioConfig(queues=1, consumers=1, pop_orderly=True)


def _orderly_plan(millis: int) -> list[Action]:
    # the consumer crashes holding the batch: nothing acks it, only its next visible time
    return PLAN + [Action("change_invisible", (0, 0, millis)), Action("consumer_crash", (0,))]


def test_an_orderly_batch_invisible_past_the_drain_is_not_a_prg2_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    """5.5.0 keeps an orderly batch's next visible time (QueueLevelConsumerManager), and an
    orderly POP writes no CK: a changeInvisibleTime of two days blocks the queue past the drain's
    horizon -- the consumer's own request, not a stall (swarm v5.5 seed 12 of 400 steps, with
    Integer.MAX_VALUE; the lockstep replay agreed with 5.5.0 on all its steps). Without the
    orderly bound the same run is PRG-2."""
    plan = _orderly_plan(TWO_DAYS_MS)
    result = run_scenario("v5.5", 0, len(plan), config=ORDERLY, schedule=plan)
    assert result.counts["changed_invisible"] == 1
    assert not result.violations and "drain:due-beyond-horizon" in result.coverage
    from popverify.checker import progress
    monkeypatch.setattr(progress, "_orderly_unblocked_at", lambda broker, topic, group: [])
    unbounded = run_scenario("v5.5", 0, len(plan), config=ORDERLY, schedule=plan)
    assert "PRG-2" in {v.property_id for v in unbounded.violations}


def test_an_orderly_batch_invisible_inside_the_drain_is_judged() -> None:
    """30 s falls due inside the drain: it reaches quiescence, nothing set aside."""
    plan = _orderly_plan(30_000)
    result = run_scenario("v5.5", 0, len(plan), config=ORDERLY, schedule=plan)
    assert not result.violations and "drain:due-beyond-horizon" not in result.coverage
