"""Expected findings kept executable (spec/properties.md, Known findings)."""

from __future__ import annotations

from popverify.checker.expectations import expected, is_unexpected
from popverify.checker.properties import PROPERTIES
from popverify.sim.scenario import ScenarioConfig, run_scenario


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
