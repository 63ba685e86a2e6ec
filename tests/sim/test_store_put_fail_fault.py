"""The store_put_fail fault of the POP driver: drawn by the swarm, armed on the broker, and
excluded from the properties whose assumptions it breaks."""

from __future__ import annotations

import attrs
import pytest

from popverify.checker.properties import PROPERTIES
from popverify.conformance.confirm import model_state
from popverify.sim.pop_driver import PopDriver
from popverify.sim.scenario import (ALL_POP_FAULTS, FAULTS, LATE_FAULTS, POP_ACTIONS, POP_ALWAYS, Action,
                                    ScenarioConfig)
from reference.common.javalang import JavaRandom


def _draw_before_issue_16(rng: JavaRandom) -> ScenarioConfig:
    """ScenarioConfig.draw as it was before store_put_fail existed (same order of draws)."""
    actions = tuple(a for a in POP_ACTIONS if a in POP_ALWAYS or rng.next_int(10) < 8)
    chosen = tuple(f for f in FAULTS if rng.next_int(10) < 3)
    return ScenarioConfig(queues=1 + rng.next_int(4), consumers=1 + rng.next_int(3),
                          invisible_time=1000 * (1 + rng.next_int(60)), max_msg_nums=1 + rng.next_int(8),
                          enable_pop_buffer_merge=rng.next_boolean(), actions=actions, faults=chosen,
                          services_on_period=rng.next_int(4) != 0)


def test_swarm_draw_keeps_every_earlier_field_and_draws_the_fault_in_about_30_percent() -> None:
    with_fault = 0
    for seed in range(300):
        new = ScenarioConfig.draw(JavaRandom(seed))
        old = _draw_before_issue_16(JavaRandom(seed))
        # (pop_orderly is drawn after the late faults: tests/checker/test_pop_orderly.py)
        assert attrs.evolve(new, faults=tuple(f for f in new.faults if f not in LATE_FAULTS), pop_orderly=False) == old
        with_fault += "store_put_fail" in new.faults
    assert 60 <= with_fault <= 120


def test_the_older_fault_list_is_unchanged_for_its_users() -> None:
    # verify's campaign and mutation runs, simulate --faults all of earlier versions, use FAULTS
    assert FAULTS == ("restart", "expire", "delete_recreate", "clock_jump", "stall")
    assert ALL_POP_FAULTS == FAULTS + ("store_put_fail", "scan_stall", "expire_commit_log", "clean_consume_queue",
                                       "revive_put_fail", "persist_restart", "processor_put_fail", "flush_timeout",
                                       "buffer_put_fail", "graceful_restart")


def test_explicit_faults_are_taken_as_given() -> None:
    assert ScenarioConfig.draw(JavaRandom(1), faults=("restart",)).faults == ("restart",)
    assert ScenarioConfig.draw(JavaRandom(1), faults=("store_put_fail",)).faults == ("store_put_fail",)


def test_the_fault_is_drawn_bounded_and_makes_puts_fail() -> None:
    failed_sites: set[str] = set()
    for seed in range(6):
        config = ScenarioConfig(queues=2, consumers=2, invisible_time=5000, faults=("store_put_fail",),
                                enable_pop_buffer_merge=seed % 2 == 1)
        driver = PopDriver("v5.5", seed, config, True, False)
        drawn = [a for a in (driver.draw() for _ in range(400)) if a.kind == "store_put_fail"]
        assert drawn and all(a.args[0] in (1, 2) for a in drawn)
        driver = PopDriver("v5.5", seed, config, True, False)
        driver.run(300, None)
        assert driver.counts["faults"] > 0
        failed_sites.update(driver.broker.put_faults.failed)
    assert {"ack", "buffer_ck"} <= failed_sites


def test_out_of_range_arming_is_a_no_op() -> None:
    driver = PopDriver("v5.0", 1, ScenarioConfig(faults=("store_put_fail",)), True, False)
    assert driver.world.store_put_fail(0) is False and driver.world.store_put_fail(3) is False
    assert driver.broker.put_faults.pending == 0
    assert driver.world.store_put_fail(2) is True and driver.broker.put_faults.pending == 2


def test_properties_excluding_the_fault() -> None:
    excluding = {pid for pid, p in PROPERTIES.items() if "store_put_fail" in p.excluded_faults}
    assert excluding == {"NSR-1", "INV-1", "CKM-1", "RED-1"}  # a refused ACK put is lost; ALO still holds to it
    assert excluding == {pid for pid, p in PROPERTIES.items() if "revive_put_fail" in p.excluded_faults}
    assert excluding == {pid for pid, p in PROPERTIES.items() if "processor_put_fail" in p.excluded_faults}


def test_processor_put_fail_reaches_both_processor_sites() -> None:
    # armed at a random step, the refusal waits for the site's next put: an ack's or a
    # changeInvisibleTime's ACK, or a changeInvisibleTime's new CK
    failed: set[str] = set()
    for seed in range(4):
        config = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, faults=("processor_put_fail",))
        driver = PopDriver("v5.5", seed, config, True, False)
        driver.run(150, None)
        failed.update(driver.broker.put_faults.failed)
    assert failed == {"ack", "change_invisible_ck"}
    driver = PopDriver("v5.0", 1, ScenarioConfig(faults=("processor_put_fail",)), True, False)
    assert driver.world.processor_put_fail(0, 3) is False and driver.world.processor_put_fail(2, 1) is False
    assert driver.broker.put_faults.processor_pending == 0
    assert driver.world.processor_put_fail(1, 2) is True
    assert (driver.broker.put_faults.processor_site, driver.broker.put_faults.processor_pending) == \
        ("change_invisible_ck", 2)


def test_flush_timeout_writes_the_put_and_changes_nothing_the_model_keeps() -> None:
    # a FLUSH_DISK_TIMEOUT answer is a success to every caller: the run is the run without it,
    # but for the sites recorded
    schedule = [Action("produce", (0,)), Action("flush_timeout", (0, 2)), Action("pop", (0, 0, False)),
                *[Action("pop_step", (0,))] * 3, Action("flush_timeout", (2, 1)), Action("ack", (0, 0))]
    runs = []
    for steps in (schedule, [a for a in schedule if a.kind != "flush_timeout"]):
        driver = PopDriver("v5.5", 1, ScenarioConfig(queues=1, consumers=1, faults=("flush_timeout",)), True, False)
        for action in steps:
            driver.apply(action)
        runs.append(driver)
    assert runs[0].broker.put_faults.timed_out == ["buffer_ck", "ack"] and not runs[0].broker.put_faults.failed
    states = [{k: v for k, v in model_state(d).items() if k != "putRefusals"} for d in runs]
    assert states[0] == states[1] and states[0]["revive"]
    with pytest.raises(ValueError, match="flush timeout site"):
        runs[0].broker.put_faults.arm_flush_timeout("revive_retry", 1)
    assert runs[0].world.flush_timeout(4, 1) is False and runs[0].world.flush_timeout(0, 3) is False


def test_revive_put_fail_waits_for_a_revive_retry_and_reaches_re_put_ck() -> None:
    # armed at a random step, the refusal meets the revive's re-send (the drain's at the latest)
    reached = {"v5.0": 0, "v5.5": 0}
    for profile in reached:
        for seed in range(6):
            config = ScenarioConfig(queues=1, consumers=1, invisible_time=3000, faults=("revive_put_fail",))
            driver = PopDriver(profile, seed, config, True, False)
            driver.run(120, None)
            reached[profile] += driver.broker.put_faults.failed.count("revive_retry")
            if profile == "v5.5":
                assert len(sum((s.re_put_cks for s in driver.broker.revive_services), [])) == \
                    driver.broker.put_faults.failed.count("revive_retry")
    assert reached["v5.0"] > 0 and reached["v5.5"] > 0
    driver = PopDriver("v5.0", 1, ScenarioConfig(faults=("revive_put_fail",)), True, False)
    assert driver.world.revive_put_fail(3) is False and driver.broker.put_faults.retry_pending == 0


def test_scan_stall_is_drawn_bounded_and_stops_serving() -> None:
    stopped = 0
    for seed in range(6):
        config = ScenarioConfig(queues=2, consumers=2, invisible_time=20_000, faults=("scan_stall",),
                                enable_pop_buffer_merge=True)
        driver = PopDriver("v5.0", seed, config, True, True)
        drawn = [a for a in (driver.draw() for _ in range(400)) if a.kind == "scan_stall"]
        assert drawn and all(1000 <= a.args[0] <= 5000 for a in drawn)
        driver = PopDriver("v5.0", seed, config, True, True)
        driver.run(300, None)
        events = [e for s in driver.states for e in s.get("events", []) if e.get("type") == "scan_stall"]
        assert events and driver.counts["faults"] >= len(events)
        stopped += sum(1 for e in events if not e["serving"])
        assert [v.property_id for v in driver.checker.violations if v.property_id == "MODEL-ERROR"] == []
    assert stopped > 0
