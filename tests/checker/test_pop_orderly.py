"""Orderly POP in the swarm (ScenarioConfig.pop_orderly) and its property POP-ORD-1 (issue 16):
drawn late, carried by traces, holding on both profiles, and caught when checkBlock is off."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from lockstep_pool import Pool
from popverify.checker.orderly import OrderlyBlockCheck
from popverify.checker.pop import PopChecker
from popverify.conformance.confirm import run_lockstep
from popverify.fuzz.rows import swarm_config
from popverify.sim.pop_driver import pick_held
from popverify.sim.scenario import FAULTS, LATE_FAULTS, POP_ACTIONS, POP_ALWAYS, Action, ScenarioConfig, run_scenario, run_spec
from popverify.trace.itf import read_trace, write_trace
from reference.common.javalang import JavaRandom

SEEDS = range(6)
ADMIN_KINDS = ("delete_group", "reset_offset", "delete_group_persist", "topic_shrink_persist", "delete_poll", "delete_idle",
               "topic_revive")
# order4's orderly_stray left out of the mutant's runs too: with it, seed 11's run meets no
# delivery past a held batch (not analysed; 26 November 2026)
UNEXCUSED_LEFT_OUT = (*ADMIN_KINDS, "orderly_stray")


def _orderly(seed: int) -> ScenarioConfig:
    # the admin's reset_offset included (order2: the POP that takes a 5.5.0 reset is blocked by no
    # batch before it, RESET_RACE below; revive2's v5.5 seed 1 was that race)
    return attrs.evolve(swarm_config(seed), pop_orderly=True)


def _orderly_unexcused(seed: int) -> ScenarioConfig:
    # without the admin's requests whose events forget the batches in flight (on_delete_group,
    # on_reset_offset): the mutant's deliveries past a batch are then never excused
    config = _orderly(seed)
    return attrs.evolve(config, actions=tuple(a for a in config.actions if a not in UNEXCUSED_LEFT_OUT))


def _draw_before_orderly(rng: JavaRandom) -> ScenarioConfig:
    """ScenarioConfig.draw as it was before pop_orderly existed (same order of draws)."""
    actions = tuple(a for a in POP_ACTIONS if a in POP_ALWAYS or rng.next_int(10) < 8)
    chosen = tuple(f for f in FAULTS if rng.next_int(10) < 3)
    queues, consumers = 1 + rng.next_int(4), 1 + rng.next_int(3)
    invisible_time, max_msg_nums = 1000 * (1 + rng.next_int(60)), 1 + rng.next_int(8)
    merge, on_period = rng.next_boolean(), rng.next_int(4) != 0
    chosen += tuple(f for f in LATE_FAULTS if rng.next_int(10) < 3)
    return ScenarioConfig(queues=queues, consumers=consumers, invisible_time=invisible_time, max_msg_nums=max_msg_nums,
                          enable_pop_buffer_merge=merge, actions=actions, faults=chosen, services_on_period=on_period)


def test_the_swarm_draws_orderly_last_and_in_about_a_quarter_of_the_configurations() -> None:
    orderly = 0
    for seed in range(400):
        new = ScenarioConfig.draw(JavaRandom(seed))
        assert attrs.evolve(new, pop_orderly=False) == _draw_before_orderly(JavaRandom(seed))
        orderly += new.pop_orderly
    assert 70 <= orderly <= 130
    # explicit faults (conformance --stateful, request-domain replays) draw no orderly flag
    assert not any(ScenarioConfig.draw(JavaRandom(s), faults=()).pop_orderly for s in range(50))
    assert "pop_orderly" not in ScenarioConfig().to_json()  # earlier configurations keep their bytes
    assert ScenarioConfig.from_json(ScenarioConfig(pop_orderly=True).to_json()).pop_orderly


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_pop_ord_1_holds_on_orderly_swarm_runs(profile: str) -> None:
    orderly_deliveries = 0
    for seed in SEEDS:
        result = run_scenario(profile, seed, 400, config=_orderly(seed))
        assert not [v for v in result.violations if v.property_id == "POP-ORD-1"], result.violations
        assert result.counts["popped"] > 0
        orderly_deliveries += result.counts["popped"]
    assert orderly_deliveries > 100


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_checkblock_off_is_caught_by_pop_ord_1(profile: str) -> None:
    caught = sum(1 for seed in range(12)
                 if any(v.property_id == "POP-ORD-1" for v in
                        run_scenario(profile, seed, 400, config=_orderly_unexcused(seed),
                                     mutant="order-check-block-off").violations))
    assert caught >= 2  # seeds 1 and 11 (of 0..39 also 16, 18, 21, 25, 36)


def test_a_second_pop_inside_the_invisible_time_is_blocked_until_the_ack() -> None:
    """A hand-written schedule: the second consumer's POP of the queue is blocked while the first
    holds the batch, served after the ack; with checkBlock off it is served at once (violation)."""
    config = ScenarioConfig(queues=1, consumers=2, invisible_time=10_000, max_msg_nums=2, drain=False,
                            pop_orderly=True)
    schedule = [Action("produce", (0,)), Action("produce", (0,)), Action("produce", (0,)), Action("pop", (0, 0, False)),
                Action("pop_step", (0,)), Action("pop_step", (0,)), Action("advance", (1000,)),
                Action("pop", (1, 0, False)), Action("pop_step", (1,)), Action("pop_step", (1,))]
    for profile in ("v5.0", "v5.5"):
        clean = run_scenario(profile, 1, 0, config=config, schedule=schedule)
        assert clean.counts["popped"] == 2 and not clean.violations, (profile, clean.violations)
        broken = run_scenario(profile, 1, 0, config=config, schedule=schedule, mutant="order-check-block-off")
        assert broken.counts["popped"] == 4
        assert [v.property_id for v in broken.violations].count("POP-ORD-1") == 1, broken.violations
        acked = schedule[:6] + [Action("ack", (0, 1)), Action("ack", (0, 0))] + schedule[6:]
        after_ack = run_scenario(profile, 1, 0, config=config, schedule=acked)
        # acked in offset order (the drawn index 1 picks the lowest offset): the queue is free
        assert after_ack.counts["acked"] == 2 and after_ack.counts["popped"] == 3, after_ack.counts
        assert not after_ack.violations, after_ack.violations


def test_the_block_ends_at_the_earliest_release_bound() -> None:
    check = OrderlyBlockCheck()
    assert check.deliver(100, "c0", "m0", "T", 0, 0, 100, 10_000) is None
    assert check.deliver(100, "c0", "m1", "T", 0, 1, 100, 10_000) is None  # same response
    # 5.0.0's checkBlock compares with the asking request's invisibleTime (here 1 s)
    assert check.deliver(1_200, "c1", "m0", "T", 0, 0, 1_200, 1_000) is None
    assert check.deliver(1_300, "c0", "m0", "T", 0, 0, 1_300, 10_000) is not None
    check = OrderlyBlockCheck()
    check.deliver(100, "c0", "m0", "T", 0, 0, 100, 10_000)
    check.change_invisible("m0", 500)  # 5.5.0 makes it visible again sooner
    assert check.deliver(600, "c1", "m0", "T", 0, 0, 600, 10_000) is None
    check.ack("m0", 650)
    assert check.deliver(700, "c0", "m0", "T", 0, 0, 700, 10_000) is None
    assert check.deliver(700, "c1", "m5", "T", 1, 5, 700, 10_000) is None  # another queue


def test_an_ack_racing_the_redelivery_counts_for_the_new_batch() -> None:
    """A stale handle's ack answered between a POP's read (its popTime) and its response: 5.0.0
    set the bit on the new batch's order info, so the next message may be served; an ack
    before the new batch's popTime cannot have been taken as its own."""
    check = OrderlyBlockCheck()
    check.deliver(100, "c0", "m0", "T", 0, 0, 100, 1_000)
    check.ack("m0", 2_000)  # the first handle, while the re-delivering POP (popTime 2_000) is in flight
    assert check.deliver(2_001, "c0", "m0", "T", 0, 0, 2_000, 1_000) is None
    assert check.deliver(2_002, "c1", "m1", "T", 0, 1, 2_002, 1_000) is None
    check = OrderlyBlockCheck()
    check.deliver(100, "c0", "m0", "T", 0, 0, 100, 1_000)
    check.ack("m0", 1_999)
    check.deliver(2_001, "c0", "m0", "T", 0, 0, 2_000, 1_000)
    assert check.deliver(2_002, "c1", "m1", "T", 0, 1, 2_002, 1_000) is not None


# order2: c0's POP reads offsets 4..6 before an admin's reset of the queue to 2 and answers after
# it; c1's POP takes the reset (5.5.0 resetPopOffset: clearBlock) and delivers 2.. while c0's batch
# is in flight. The lockstep replay on rocketmq-broker 5.5.0 agrees step by step (both deliver so),
# so POP-ORD-1 excuses the POP that takes a reset (OrderlyBlockCheck#took_reset), no other.
RESET_RACE = [Action("produce", (0,))] * 4 + [Action("pop", (0, 0, False)), Action("pop_step", (0,)),
                                               Action("pop_step", (0,))] + [Action("ack", (0, 0))] * 4 + \
    [Action("produce", (0,))] * 3 + [Action("advance", (10,)), Action("pop", (0, 0, False)), Action("pop_step", (0,)),
                                     Action("reset_offset", (0, 2)), Action("pop_step", (0,)), Action("pop_step", (0,)),
                                     Action("advance", (10,)), Action("pop", (1, 0, False)), Action("pop_step", (1,)),
                                     Action("pop_step", (1,)), Action("pop_step", (1,))]
RESET_CONFIG = ScenarioConfig(consumers=2, queues=1, enable_pop_buffer_merge=False, drain=False, pop_orderly=True,
                              max_msg_nums=8, actions=("produce", "pop", "pop_step", "ack", "advance", "reset_offset"))


def test_the_pop_that_takes_a_reset_is_not_blocked_by_a_batch_read_before_it() -> None:
    result = run_scenario("v5.5", 0, 0, config=RESET_CONFIG, schedule=RESET_RACE)
    assert result.counts["popped"] == 12 and not result.violations, result.violations
    check = OrderlyBlockCheck()
    check.reset("T", 0, 2)
    check.deliver(100, "c0", "m4", "T", 0, 4, 100, 10_000)  # read before the reset, answered after
    # only a delivery from the reset offset took the reset; one from elsewhere is still blocked
    assert check.deliver(200, "c1", "m3", "T", 0, 3, 200, 10_000) is not None
    assert check.deliver(300, "c1", "m2", "T", 0, 2, 300, 10_000) is None
    assert check.deliver(400, "c0", "m3", "T", 0, 3, 400, 10_000) is not None  # taken once


@pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                    reason="the lockstep harness needs a JDK and Maven")
@pytest.mark.slow
def test_rocketmq_5_5_delivers_from_the_reset_while_a_batch_read_before_it_is_in_flight(lockstep_pool: Pool) -> None:
    """Both sides deliver so, and POP-ORD-1 excuses it on both (it fired on both before
    OrderlyBlockCheck#took_reset)."""
    v = run_lockstep("v5.5", 0, RESET_CONFIG, RESET_RACE, lockstep_pool.client("5.5.0"))
    assert v.status == "agrees", v.to_json()
    assert not v.model_violations and not v.java_violations, v.to_json()


def test_a_batch_popped_by_a_group_deletion_blocks_no_one() -> None:
    """order2 (v5.5 seed 4 of its corpus): a POP in flight across delete_group_persist answers
    after it; the clean-up may have dropped its order info, so its batch is not tracked. A batch
    popped after the deletion is."""
    check = OrderlyBlockCheck()
    check.forget(150)
    check.deliver(170, "c0", "m0", "T", 0, 0, 150, 10_000)  # popped at the deletion, answered after
    assert check.deliver(200, "c1", "m0", "T", 0, 0, 200, 10_000) is None
    assert check.deliver(300, "c0", "m1", "T", 0, 1, 300, 10_000) is not None  # c1's batch of 200 blocks


def test_an_orderly_consumer_acks_a_queue_in_offset_order() -> None:
    held = [("T", 0, 7), ("T", 1, 2), ("T", 0, 5), ("T", 0, 6)]
    assert pick_held(held, 0, orderly=False) == 0
    assert pick_held(held, 0, orderly=True) == 2
    assert pick_held(held, 3, orderly=True) == 2
    assert pick_held(held, 5, orderly=True) == 1


def test_the_trace_of_an_orderly_run_replays_to_the_same_run(tmp_path: Path) -> None:
    result = run_scenario("v5.5", 3, 200, config=_orderly(3), record_trace=True)
    assert result.trace is not None
    path = tmp_path / "orderly.json"
    write_trace(path, result.trace)
    spec = run_spec(read_trace(path))
    assert spec["config"].pop_orderly
    again = run_scenario(spec["profile"], spec["seed"], 0, mode=spec["mode"], config=spec["config"],
                         schedule=spec["schedule"], mutant=spec["mutant"])
    assert (again.schedule, again.counts, again.violations) == (result.schedule, result.counts, result.violations)
    assert again.counts["popped"] > 0


def test_a_shrunk_topics_re_read_is_excused_and_only_that() -> None:
    """order3: after topic_shrink_persist drops queue 1's order info, the second consumer's POP
    re-reads the first one's batch in flight: TopicShrunk excuses it (one re-read credit, the
    batches forgotten); a checker that ignores the event reports the re-read."""
    config = ScenarioConfig(queues=2, consumers=2, enable_pop_buffer_merge=False, drain=False, pop_orderly=True,
                            actions=("produce", "pop", "pop_step", "ack", "advance", "topic_shrink_persist"))
    schedule = [Action("produce", (1,))] * 2 + [Action("pop", (0, 1, False)), *[Action("pop_step", (0,))] * 2,
                                                Action("topic_shrink_persist", ()), Action("pop", (1, 1, False)),
                                                *[Action("pop_step", (1,))] * 2]
    result = run_scenario("v5.5", 0, 0, config=config, schedule=schedule)
    assert result.counts["redelivered"] == 2 and not result.violations, result.violations
    with pytest.MonkeyPatch.context() as m:
        m.setattr(PopChecker, "on_order_info_dropped", lambda self, from_queue, now: None)
        unexcused = run_scenario("v5.5", 0, 0, config=config, schedule=schedule)
    assert unexcused.violations, "the re-read of a batch in flight must be reported without the excuse"

