"""Expected findings kept executable (spec/properties.md, Known findings)."""

from __future__ import annotations

from popverify.checker.expectations import expected, is_unexpected
from popverify.checker.properties import PROPERTIES
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario


def test_f1_v50_loses_a_message_put_between_poptime_and_the_queue_read() -> None:
    config = ScenarioConfig(enable_pop_buffer_merge=False)
    v50 = run_scenario("v5.0", 1, 2000, config=config)
    develop = run_scenario("develop", 1, 2000, config=config)
    lost = {v.property_id for v in v50.violations}
    assert "ALO-2" in lost or "ALO-1" in lost
    # The same schedule on develop (no last-epoch skip) loses nothing.
    replayed = run_scenario("develop", 1, 0, config=config, schedule=v50.schedule)
    assert not {v.property_id for v in replayed.violations} & {"ALO-1", "ALO-2"}
    assert not {v.property_id for v in develop.violations} & {"ALO-1", "ALO-2"}


def test_expectations_cover_every_checked_property() -> None:
    for profile in ("v5.0", "develop"):
        for pid in PROPERTIES:
            assert expected(profile, pid) in ("holds", "holds-fault-free", "violated", "unknown")
    assert expected("v5.0", "ALO-1") == "violated"
    assert is_unexpected("develop", "OFF-1", faults_fired=3)
    assert is_unexpected("develop", "ALO-1", faults_fired=0)
    assert not is_unexpected("develop", "ALO-1", faults_fired=1)
    assert not is_unexpected("v5.0", "ALO-1", faults_fired=0)


def test_properties_expected_to_hold_are_clean_on_fault_free_default_runs() -> None:
    for profile in ("v5.0", "develop"):
        for seed in range(6):
            result = run_scenario(profile, seed, 800)
            bad = [v for v in result.violations if is_unexpected(profile, v.property_id, result.counts["faults"])]
            assert not bad, bad


def test_f6_scan_commit_offset_undoes_a_retention_correction() -> None:
    """F6: an OFFSET_TOO_SMALL correction commits the min offset; the buffer's older
    nextBeginOffset is committed after it and the offset moves back (OFF-2)."""
    config = ScenarioConfig(consumers=1, queues=1, enable_pop_buffer_merge=True, faults=("expire",), drain=False)

    def pop() -> list[Action]:
        return [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]

    schedule = [Action("produce", (0,)), *pop(), Action("ack", (0, 0)), Action("advance", (200,)),  # committed 1
                Action("produce", (0,)), *pop(),  # CK of offset 1 in the buffer, nextBeginOffset 2 queued
                Action("produce", (0,)), Action("expire", (0, 3)),  # retention: min offset 3
                *pop(),  # OFFSET_TOO_SMALL at 2: commits 3
                Action("advance", (10_000,))]  # the CK is stored; scanCommitOffset commits 2
    for profile in ("v5.0", "develop"):
        result = run_scenario(profile, 0, 0, config=config, schedule=schedule)
        off2 = [v for v in result.violations if v.property_id == "OFF-2"]
        assert [v.message for v in off2] == ["committed offset of queue 0 moved back from 3 to 2"], result.violations
        assert not is_unexpected(profile, "OFF-2", result.counts["faults"])
        # without retention nothing needs correcting and the offset only moves forward
        clean = run_scenario(profile, 0, 0, config=config, schedule=[a for a in schedule if a.kind != "expire"])
        assert not [v for v in clean.violations if v.property_id == "OFF-2"]
