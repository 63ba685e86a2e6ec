"""Progress and resource properties (PRG-1, PRG-2, QUI-1): clean on the correct model, and
each fails on a mutant that breaks only progress (no safety property sees those)."""

from __future__ import annotations

import attrs
import pytest

from popverify.sim.scenario import ScenarioConfig, run_scenario
from popverify.findings.attribution import attribute
from popverify.fuzz.rows import swarm_config

PROGRESS = ("PRG-1", "PRG-2", "QUI-1")


def _fired(mutant: str | None, seeds: range, merge: bool = True) -> dict[str, str]:
    out: dict[str, str] = {}
    for seed in seeds:
        result = run_scenario("v5.5", seed, 400, config=ScenarioConfig(enable_pop_buffer_merge=merge),
                              mutant=mutant)
        for v in result.violations:
            out.setdefault(v.property_id, v.message)
    return out


def test_progress_properties_hold_on_the_correct_model_with_and_without_faults() -> None:
    for profile in ("v5.0", "v5.5"):
        for seed in range(12):
            config = swarm_config(seed)
            if profile == "v5.0" and config.queues > 128:
                # v5.0's byte PopCheckPoint.queueId redelivers queue ids past 127 forever (PRG-2;
                # tests/sim/test_domain.py): a known v5.0 mechanism, not this test's subject
                config = attrs.evolve(config, queues=128)
            result = run_scenario(profile, seed, 300, config=config)
            progress = [v for v in result.violations if v.property_id in PROGRESS]
            # a known finding may stop progress (v5.0 seed 9: F20's shared stored offset after a
            # restart leaves an orderly batch un-ackable, PRG-2/F20); an unexplained stop fails
            unexplained = [s for s in attribute(result) if s.property_id in PROGRESS and not s.explained] \
                if progress else []
            assert not unexplained, (profile, seed, result.violations)


@pytest.mark.parametrize("mutant, pid, words", [
    ("commit-queue-stuck", "PRG-1", "not its max offset"),
    ("commit-queue-stuck", "QUI-1", "commit-offset queue entries"),
    ("unlock-dropped", "QUI-1", "queue locks held"),
    ("revive-offset-stuck", "PRG-2", "revive queues behind their checkpoints"),
])
def test_each_progress_property_fails_on_its_mutant(mutant: str, pid: str, words: str) -> None:
    fired = _fired(mutant, range(2))
    assert pid in fired and words in fired[pid], fired


def test_a_stuck_commit_queue_is_invisible_to_the_safety_properties() -> None:
    """Why the progress properties exist: the stuck commit queue breaks no safety property."""
    fired = _fired("commit-queue-stuck", range(2))
    # RED-1 fires wherever NSR-1 does (a delivery after a clean ack has no abandoned delivery to pay for it)
    assert set(fired) - {"CKM-1", "NSR-1", "RED-1"} == {"PRG-1", "QUI-1"}, fired


def test_progress_is_not_judged_without_a_drain() -> None:
    result = run_scenario("v5.5", 0, 200, config=ScenarioConfig(enable_pop_buffer_merge=True, drain=False),
                          mutant="commit-queue-stuck")
    assert not [v for v in result.violations if v.property_id in PROGRESS]


PUSH_PROGRESS = ("PSH-1", "PRG-3")


def test_push_progress_holds_on_the_correct_model() -> None:
    for profile in ("v5.0", "v5.5"):
        for seed in range(10):
            result = run_scenario(profile, seed, 300, mode="push", config=swarm_config(seed, "push"))
            assert not [v for v in result.violations if v.property_id in PUSH_PROGRESS], (profile, seed)


@pytest.mark.parametrize("mutant, pid, words", [
    ("pull-stops-when-idle", "PSH-1", "is held but has no PullRequest"),
    ("offset-never-updated", "PRG-3", "committed offset -1, max offset"),
])
def test_each_push_progress_property_fails_on_its_mutant(mutant: str, pid: str, words: str) -> None:
    fired: dict[str, str] = {}
    for seed in range(2):
        result = run_scenario("v5.5", seed, 300, mode="push", config=swarm_config(seed, "push"), mutant=mutant)
        for v in result.violations:
            fired.setdefault(v.property_id, v.message)
    assert pid in fired and words in fired[pid], fired
