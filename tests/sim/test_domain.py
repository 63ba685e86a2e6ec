"""The input domain (issue 17 item 3): queue counts, long start offsets, sized bodies and
properties, the swarm's late draw and boundary bias (popverify/sim/domain.py)."""

from __future__ import annotations

import attrs
import pytest

from popverify.fuzz.rows import swarm_config
from popverify.sim.actions import MAX_BODY_ARG, MAX_PROPERTY_ARG
from popverify.sim.domain import (MAX_PUSH_QUEUES, MAX_QUEUES, MAX_START_OFFSET, DomainReach, boundaries,
                                  boundary_draw, config_dimensions)
from popverify.sim.engine import Engine
from popverify.sim.pop_driver import POP_MODE, TOPIC
from popverify.sim.scenario import (CAMPAIGN_DOMAIN_BIAS, MODES, POP_ACTIONS, PUSH_ACTIONS, Action, ScenarioConfig,
                                    run_scenario)
from reference.broker.config import BROKER_OPTIONS, OFFSETS_PUSH_OPTIONS, PUSH_OPTIONS
from reference.common.message import MAX_MESSAGE_SIZE, MAX_PROPERTIES_LENGTH
from reference.common.javalang import JavaRandom

SIZED = attrs.evolve(ScenarioConfig(), actions=tuple(POP_ACTIONS) + ("produce_sized",), drain=False)


def test_opt_in_actions_are_not_default_kinds() -> None:
    """produce_sized runs only when a configuration lists it: default configurations (and the
    pinned digests' draws) keep their kinds."""
    assert "produce_sized" not in POP_ACTIONS and "produce_sized" not in PUSH_ACTIONS
    assert "produce_sized" not in ScenarioConfig().actions
    result = run_scenario("v5.5", 3, 200, config=attrs.evolve(ScenarioConfig(), drain=False))
    assert all(a.kind != "produce_sized" for a in result.schedule)
    listed = run_scenario("v5.5", 3, 200, config=SIZED)
    assert any(a.kind == "produce_sized" for a in listed.schedule)


@pytest.mark.parametrize("body,props,stored", [
    (0, 0, False), (1, 0, True), (MAX_MESSAGE_SIZE, 0, True), (MAX_MESSAGE_SIZE + 1, 0, False),
    (16, MAX_PROPERTIES_LENGTH - 200, True), (16, MAX_PROPERTIES_LENGTH, False),
])
def test_sized_messages_meet_the_brokers_limits(body: int, props: int, stored: bool) -> None:
    """Bodies of 1 byte up to maxMessageSize (4 MiB) are stored; an empty one (null once the request
    is decoded) and one byte more are MESSAGE_ILLEGAL; a
    properties string longer than Short.MAX_VALUE likewise (the UNIQ_KEY property counts). A
    refused send is a step that ran (its commit-log roll did), not a skipped one."""
    result = run_scenario("v5.5", 0, 1, config=SIZED, schedule=[Action("produce_sized", (0, body, props))])
    assert result.counts["produced"] == int(stored)
    assert result.counts["skipped"] == 0
    assert f"produce_sized:{'SUCCESS' if stored else 'MESSAGE_ILLEGAL'}" in {p for p in result.coverage}


def test_schedule_sizes_are_bounded_by_their_declaration() -> None:
    with pytest.raises(ValueError, match="body_size"):
        run_scenario("v5.5", 0, 1, config=SIZED, schedule=[Action("produce_sized", (0, MAX_BODY_ARG + 1, 0))])
    with pytest.raises(ValueError, match="property_size"):
        run_scenario("v5.5", 0, 1, config=SIZED, schedule=[Action("produce_sized", (0, 0, MAX_PROPERTY_ARG + 1))])


@pytest.mark.parametrize("start", [1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, MAX_START_OFFSET])
def test_queues_start_anywhere_a_long_allows(start: int) -> None:
    """A queue that starts at a long offset: messages are stored and popped from there, the
    checker's offset properties hold, and no model error."""
    config = attrs.evolve(ScenarioConfig(queues=1, consumers=1), start_offset=start)
    engine = Engine(POP_MODE, "v5.5", 0, config, True, False)
    assert engine.broker.min_offset(TOPIC, 0) == engine.broker.max_offset(TOPIC, 0) == start
    # the advance runs the POP to its end (its answer reaches the consumer) before the acks
    plan = [Action("produce", (0,)), Action("produce", (0,)), Action("pop", (0, 0, False)),
            Action("advance", (10,)), Action("ack", (0, 0)), Action("ack", (0, 0)), Action("advance", (20_000,))]
    for action in plan:
        engine.step(action)
    assert engine.broker.max_offset(TOPIC, 0) == start + 2
    assert engine.counts["popped"] == 2 and engine.counts["acked"] == 2
    assert not engine.checker.violations


def test_start_offset_is_bounded() -> None:
    with pytest.raises(ValueError, match="start_offset"):
        ScenarioConfig(start_offset=MAX_START_OFFSET + 1).validate()
    with pytest.raises(ValueError, match="queues"):
        ScenarioConfig(queues=MAX_QUEUES + 1).validate()
    ScenarioConfig(queues=MAX_QUEUES, start_offset=MAX_START_OFFSET).validate()


def test_late_draw_keeps_the_earlier_fields() -> None:
    """swarm_config draws the domain fields after every other field: what the earlier fields
    were, they still are (only queues may be re-drawn, actions only extended; the long-polling
    limits are domain fields too)."""
    for mode in ("pop", "push"):
        for seed in range(40):
            before = ScenarioConfig.draw(JavaRandom(seed ^ 0x5F3759DF), mode=mode)
            after = swarm_config(seed, mode)
            assert after.actions[:len(before.actions)] == before.actions
            assert after.faults[:len(before.faults)] == before.faults
            assert set(after.faults[len(before.faults):]) <= set(MODES[mode].opt_in(fault=True))
            # (buffer3: the merge may be turned on last of all, never off)
            assert after.enable_pop_buffer_merge >= before.enable_pop_buffer_merge
            assert attrs.evolve(after, queues=before.queues, start_offset=0, actions=before.actions,
                                faults=before.faults, domain_bias=0, pop_polling_size=before.pop_polling_size,
                                max_pop_polling_size=before.max_pop_polling_size, broker_options=(),
                                produce_tags=False, enable_pop_buffer_merge=before.enable_pop_buffer_merge) == before
            assert after.domain_bias == CAMPAIGN_DOMAIN_BIAS
            # broker options, drawn last (spec/profiles.md "Broker options"): push only PUSH_OPTIONS
            # and OFFSETS_PUSH_OPTIONS, POP the others
            drawn = set(after.broker_options)
            push = set(PUSH_OPTIONS) | set(OFFSETS_PUSH_OPTIONS)
            assert drawn <= (push if mode == "push" else set(BROKER_OPTIONS) - push)


def test_swarm_reaches_every_boundary_of_the_config_dimensions() -> None:
    """Over 2000 seeds (a default campaign) the swarm's queue counts and start offsets hit
    every boundary of their domains (POP queues up to 1024, push up to 64, offsets up to the
    CQ file limit)."""
    for mode, top in (("pop", MAX_QUEUES), ("push", MAX_PUSH_QUEUES)):
        reach = DomainReach()
        for seed in range(2000):
            reach.observe_config(mode, swarm_config(seed, mode))
        rows = {r["dimension"]: r for r in reach.rows()}
        assert rows[f"{mode}.config.queues"]["declared"] == [1, top]
        assert rows[f"{mode}.config.start_offset"]["declared"] == [0, MAX_START_OFFSET]
        assert all(r["all_reached"] for r in rows.values()), [r["unreached"] for r in rows.values()]


def test_boundary_draw_stays_in_the_domain_and_hits_the_ends() -> None:
    rng = JavaRandom(5)
    arg = config_dimensions("pop")["start_offset"]
    values = [boundary_draw(rng, arg) for _ in range(2000)]
    assert all(arg.lo <= v <= arg.hi for v in values)
    assert set(boundaries(arg)) <= set(values)
    assert len({v.bit_length() for v in values}) > 40  # spread over the widths, not only the edges


def test_a_run_observes_its_config_dimensions() -> None:
    reach = DomainReach()
    run_scenario("v5.5", 1, 5, config=attrs.evolve(ScenarioConfig(queues=1), start_offset=2 ** 32), domain=reach)
    row = next(r for r in reach.rows() if r["dimension"] == "pop.config.start_offset")
    assert row["reached"] == [2 ** 32, 2 ** 32] and row["boundaries_reached"] == [2 ** 32]
    assert "Long.MAX_VALUE/20" in row["java"]


@pytest.mark.parametrize("profile,queue_id,clean", [("v5.0", 127, True), ("v5.0", 128, False), ("v5.0", 200, False),
                                                    ("v5.5", 200, True)])
def test_a_queue_id_past_a_byte_on_v50_is_redelivered_after_a_clean_ack(profile: str, queue_id: int,
                                                                        clean: bool) -> None:
    """What the wider queue count reached: on v5.0 PopCheckPoint's queueId is a byte
    (``ck.setQueueId((byte) queueId)``, BrokerConfig.ck_queue_id_is_byte, spec/broker.md), so
    the CK of a queue id past 127 names another queue, a clean ack does not finish it, and the
    message is delivered again (NSR-1) and again, forever (PRG-2). v5.5 keeps an int. A finding
    candidate the lead registers (the switch exists; not yet confirmed on the 5.0.0 jars)."""
    config = ScenarioConfig(queues=256, consumers=1)
    plan = [Action("produce", (queue_id,)), Action("pop", (0, queue_id, False)), Action("advance", (10,)),
            Action("ack", (0, 0)), Action("advance", (60_000,))]
    result = run_scenario(profile, 0, len(plan), config=config, schedule=plan)
    fired = {v.property_id for v in result.violations}
    if clean:
        assert not fired and result.counts["redelivered"] == 0
    else:
        assert {"NSR-1", "PRG-2"} <= fired and result.counts["redelivered"] > 100


def test_bias_hits_each_width_limit_as_often_as_the_ends() -> None:
    """Boundary bias picks among a dimension's boundaries uniformly: each Java width limit
    inside the range (0, +-1, byte, short, int) about as often as the range's ends."""
    from collections import Counter

    config = ScenarioConfig(queues=1, consumers=1, actions=("produce", "change_invisible"), faults=("stall",),
                            domain_bias=100)
    engine = Engine(POP_MODE, "v5.5", 3, config, False, False)
    hits: dict[str, Counter] = {"change_invisible": Counter(), "stall": Counter()}
    for _ in range(6000):
        action = engine.draw()
        if action.kind in hits:
            hits[action.kind][action.args[-1]] += 1
    for kind, counter in hits.items():
        edges = boundaries(POP_MODE.spec(kind).args[-1])
        assert set(counter) == set(edges), kind
        mean = sum(counter.values()) / len(edges)
        assert all(mean / 2 <= counter[e] <= mean * 2 for e in edges), (kind, counter)


def test_the_swarm_draws_small_long_polling_limits_in_pop_configurations_only() -> None:
    pop = [swarm_config(seed, "pop") for seed in range(200)]
    small = [c for c in pop if c.max_pop_polling_size <= 2]
    assert 20 <= len(small) <= 80 and {c.pop_polling_size for c in small} == {0, 1}
    assert {c.max_pop_polling_size for c in small} == {0, 1, 2}
    assert all(c.pop_polling_size == 1024 and c.max_pop_polling_size == 100_000 for c in pop if c not in small)
    assert all(swarm_config(seed, "push").max_pop_polling_size == 100_000 for seed in range(40))
    with pytest.raises(ValueError, match="pop_polling_size"):
        ScenarioConfig(pop_polling_size=1025).validate()
    # written only when drawn, so configurations of earlier campaigns keep their JSON
    assert "pop_polling_size" not in ScenarioConfig().to_json()
    assert ScenarioConfig.from_json(small[0].to_json()) == small[0]


def test_persist_restart_is_drawn_last_in_every_orderly_pop_configuration() -> None:
    # order helper's late coin (ScenarioConfig.draw_domain): after the broker options, so a
    # configuration without it is exactly what the swarm drew before it existed
    pop = [swarm_config(seed, "pop") for seed in range(200)]
    listed = [c for c in pop if "persist_restart" in c.faults]
    assert all(c in listed for c in pop if c.pop_orderly)
    assert 60 <= sum(1 for c in listed if not c.pop_orderly) <= 120  # 1/2 of the others
    # after it only the other late faults (ActionSpec.late_coin)
    assert all(set(c.faults[c.faults.index("persist_restart") + 1:]) <= {"processor_put_fail", "flush_timeout",
                                                                         "buffer_put_fail", "graceful_restart"}
               for c in listed)
    assert not any("persist_restart" in swarm_config(seed, "push").faults for seed in range(40))


def test_the_buffer_thresholds_and_buffer_put_fail_are_drawn_last() -> None:
    # buffer helper's draws (ScenarioConfig.draw_domain): after every other field; the short stay
    # time only with the buffer merge on (3 in 4 of those), each size limit 1 in 4
    pop = [swarm_config(seed, "pop") for seed in range(200)]
    stay = [c for c in pop if "popCkStayBufferTime=3000" in c.broker_options]
    assert all(c.enable_pop_buffer_merge for c in stay)
    assert 0.6 <= len(stay) / sum(c.enable_pop_buffer_merge for c in pop) <= 0.9
    assert 30 <= sum("popCkMaxBufferSize=1" in c.broker_options for c in pop) <= 70
    # buffer2: buffer_put_fail in every configuration with the merge on (no coin drawn), 3 in 10
    # of the others; graceful_restart exactly with the merge on, after it, last of all
    listed = [c for c in pop if "buffer_put_fail" in c.faults]
    merge = [c for c in pop if c.enable_pop_buffer_merge]
    assert all(c in listed for c in merge) and 5 <= len(listed) - len(merge) <= 30
    assert all(("graceful_restart" in c.faults) == c.enable_pop_buffer_merge for c in pop)
    assert all(c.faults[-2:] == ("buffer_put_fail", "graceful_restart") for c in merge)
    assert all(c.faults[-1] == "buffer_put_fail" for c in listed if not c.enable_pop_buffer_merge)


def test_the_merge_is_turned_on_last_in_one_of_two_merge_off_configurations() -> None:
    """buffer3 (ScenarioConfig.draw_domain, last of all): a configuration drawn with the merge off
    turns it on one in MERGE_LATE_ONE_IN (2), and then has what a merge-on configuration has: the
    short stay time by its coin, buffer_put_fail and graceful_restart listed; the fields drawn
    before are those of a draw without the flip (its options are extended, never changed). Then
    delete_idle is listed, no coin drawn, by exactly the merge-on configurations with the default
    stay time (ScenarioConfig.merge_long_stay)."""
    flipped, kept = [], []
    for seed in range(200):
        before = ScenarioConfig.draw(JavaRandom(seed ^ 0x5F3759DF), mode="pop")
        if not before.enable_pop_buffer_merge:
            (flipped if swarm_config(seed, "pop").enable_pop_buffer_merge else kept).append(swarm_config(seed, "pop"))
    assert 0.35 <= len(flipped) / (len(flipped) + len(kept)) <= 0.65
    assert all(c.faults[-2:] == ("buffer_put_fail", "graceful_restart") for c in flipped)
    assert not any("graceful_restart" in c.faults for c in kept)
    stay = sum("popCkStayBufferTime=3000" in c.broker_options for c in flipped)
    assert 0.55 <= stay / len(flipped) <= 0.95
    # delete_idle, listed last with no coin, by exactly the merge-on configurations without the short stay
    pop = [swarm_config(seed, "pop") for seed in range(200)]
    assert all(("delete_idle" in c.actions) == c.merge_long_stay for c in pop)
    # (only the drawn_last kinds' coins come after it: topic_revive, revive_topic_put)
    drawn_last = ("topic_revive", "revive_topic_put")
    assert all([a for a in c.actions if a not in drawn_last][-1] == "delete_idle" for c in pop if c.merge_long_stay)
    assert 30 <= sum(c.merge_long_stay for c in pop) <= 80


def test_the_store_helpers_draws_come_last_of_all() -> None:
    """store helper (ScenarioConfig.draw_domain): produce_tagged, push only, on its own coin after
    every other field (the last action listed); a drawn start offset moved one in two to 1..3
    units before its consume-queue file's end; the fields drawn before are those of a draw
    without them (the same generator up to that point)."""
    from popverify.sim.scenario import CQ_FILE_END_UNITS, near_cq_file_end
    from reference.broker.store import CQ_FILE_UNITS

    assert [near_cq_file_end(s, 1) for s in (1, CQ_FILE_UNITS - 1, CQ_FILE_UNITS, 2**31 - 1)] == \
        [CQ_FILE_UNITS - 1, CQ_FILE_UNITS - 1, 2 * CQ_FILE_UNITS - 1, 71_583 * CQ_FILE_UNITS - 1]
    top = near_cq_file_end(MAX_START_OFFSET, CQ_FILE_END_UNITS)
    assert top <= MAX_START_OFFSET and top % CQ_FILE_UNITS == CQ_FILE_UNITS - CQ_FILE_END_UNITS
    push = [swarm_config(seed, "push") for seed in range(120)]
    tagged = [c for c in push if "produce_tagged" in c.actions]
    assert 40 <= len(tagged) <= 80 and all(c.actions[-1] == "produce_tagged" for c in tagged)
    assert not any("produce_tagged" in swarm_config(seed, "pop").actions for seed in range(40))
    for mode in ("pop", "push"):
        starts = [swarm_config(seed, mode).start_offset for seed in range(120)]
        near = [s for s in starts if s % CQ_FILE_UNITS >= CQ_FILE_UNITS - CQ_FILE_END_UNITS]
        assert 15 <= len(near) <= 45, (mode, len(near))
