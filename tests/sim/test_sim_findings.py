"""Expected findings kept executable (spec/properties.md, Known findings)."""

from __future__ import annotations

from popverify.checker.expectations import expected, is_unexpected
from popverify.checker.properties import PROPERTIES
from popverify.sim.pop_driver import REQUEST_TIME_BOUND_MS
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario


def _f1_schedule(gap: list[Action]) -> list[Action]:
    """A pop takes popTime, ``gap`` lets time pass inside the request, a message is stored,
    the request reads it, and the consumer crashes before it sees the response."""
    return [Action("pop", (0, 0, False)), *gap, Action("produce", (0,)), Action("pop_step", (0,)),
            Action("consumer_crash", (0,))]


F1_CONFIG = ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=False)


def _alo(profile: str, schedule: list[Action]) -> set[str]:
    result = run_scenario(profile, 0, 0, config=F1_CONFIG, schedule=schedule)
    return {v.property_id for v in result.violations} & {"ALO-1", "ALO-2"}


def test_f1_v50_loses_a_message_stored_a_few_ms_after_poptime() -> None:
    """F1 with a realistic interleaving: the put lands 3 ms after popTime, inside
    REQUEST_TIME_BOUND_MS, and is read by the same request (PopReviveService#reviveMsgFromCk
    at 5.0.0 then skips it: popTime < storeTimestamp)."""
    schedule = _f1_schedule([Action("advance", (3,))])
    assert _alo("v5.0", schedule) == {"ALO-1"}
    assert not _alo("v5.5", schedule)  # v5.5 revives it
    # Same millisecond (popTime == storeTimestamp): not skipped, nothing lost.
    assert not _alo("v5.0", _f1_schedule([]))


def test_f1_with_a_stall_and_its_bound() -> None:
    """A longer gap needs the ``stall`` fault; an ordinary advance past the bound first
    completes the request (it reads the queue before the put), so nothing is lost."""
    assert _alo("v5.0", _f1_schedule([Action("stall", (0, 2000))])) == {"ALO-1"}
    assert not _alo("v5.5", _f1_schedule([Action("stall", (0, 2000))]))
    assert not _alo("v5.0", _f1_schedule([Action("advance", (REQUEST_TIME_BOUND_MS + 1,))]))


def test_f1_seed_command_of_the_readme() -> None:
    """`popverify simulate --profile v5.0 --seed 1 --steps 2000` (README, spec/properties.md):
    fault-free and without a stall, F1 shows on v5.0 through a put a few ms after a popTime;
    the same schedule on v5.5 loses nothing."""
    config = ScenarioConfig()
    v50 = run_scenario("v5.0", 1, 2000, config=config)
    assert v50.counts["faults"] == 0 and v50.counts["stalls"] == 0
    assert {v.property_id for v in v50.violations} & {"ALO-1", "ALO-2"}
    replayed = run_scenario("v5.5", 1, 0, config=config, schedule=v50.schedule)
    assert not {v.property_id for v in replayed.violations} & {"ALO-1", "ALO-2"}


def test_expectations_cover_every_checked_property() -> None:
    for profile in ("v5.0", "v5.5"):
        for pid in PROPERTIES:
            assert expected(profile, pid) in ("holds", "holds-fault-free", "violated", "unknown")
    assert expected("v5.0", "ALO-1") == "violated"
    assert is_unexpected("v5.5", "OFF-1", faults_fired=3)
    assert is_unexpected("v5.5", "ALO-1", faults_fired=0)
    assert not is_unexpected("v5.5", "ALO-1", faults_fired=1)
    assert not is_unexpected("v5.0", "ALO-1", faults_fired=0)


def test_properties_expected_to_hold_are_clean_on_fault_free_default_runs() -> None:
    for profile in ("v5.0", "v5.5"):
        for seed in range(6):
            result = run_scenario(profile, seed, 800)
            bad = [v for v in result.violations if is_unexpected(profile, v.property_id, result.counts["faults"])]
            assert not bad, bad


def test_f6_scan_commit_offset_undoes_a_retention_correction() -> None:
    """F6: an OFFSET_TOO_SMALL correction commits the min offset; the buffer's older
    nextBeginOffset is committed after it and the offset moves back (OFF-2)."""
    config = ScenarioConfig(consumers=1, queues=2, enable_pop_buffer_merge=True, faults=("expire",), drain=False)

    def pop() -> list[Action]:
        return [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]

    schedule = [Action("produce", (0,)), *pop(), Action("ack", (0, 0)), Action("advance", (200,)),  # committed 1
                Action("produce", (0,)), *pop(),  # CK of offset 1 in the buffer, nextBeginOffset 2 queued
                Action("produce", (0,)), Action("produce", (1,)),  # offset 2; a newer commit-log file (queue 1)
                Action("expire", (0, 3)),  # retention: files of offsets 0..2 (never the newest): min offset 3
                *pop(),  # OFFSET_TOO_SMALL at 2: commits 3
                Action("advance", (10_000,))]  # the CK is stored; scanCommitOffset commits 2
    for profile in ("v5.0", "v5.5"):
        result = run_scenario(profile, 0, 0, config=config, schedule=schedule)
        off2 = [v for v in result.violations if v.property_id == "OFF-2"]
        assert [v.message for v in off2] == ["committed offset of queue 0 moved back from 3 to 2"], result.violations
        assert not is_unexpected(profile, "OFF-2", result.counts["faults"])
        # without retention nothing needs correcting and the offset only moves forward
        clean = run_scenario(profile, 0, 0, config=config, schedule=[a for a in schedule if a.kind != "expire"])
        assert not [v for v in clean.violations if v.property_id == "OFF-2"]


def test_f6_also_happens_with_buffer_merge_off() -> None:
    """F6 without buffer merge: appendCheckPoint → addCkJustOffset (5.0.0 and 5.5.0) still
    queues nextBeginOffset in PopBufferMergeService's commit queue, committed by the next
    scanCommitOffset (every 5 ms). A retention correction between the pop and that scan is
    undone the same way; the window is one scan period instead of the CK's buffer time."""
    config = ScenarioConfig(consumers=1, queues=2, enable_pop_buffer_merge=False, faults=("expire",), drain=False)

    def pop() -> list[Action]:
        return [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]

    schedule = [Action("produce", (0,)), *pop(), Action("ack", (0, 0)), Action("advance", (200,)),  # committed 1
                Action("produce", (0,)), *pop(),  # CK of offset 1 stored; nextBeginOffset 2 queued, no scan yet
                Action("produce", (0,)), Action("produce", (1,)),  # offset 2; a newer commit-log file (queue 1)
                Action("expire", (0, 3)),  # retention: files of offsets 0..2 (never the newest): min offset 3
                *pop(),  # OFFSET_TOO_SMALL at 2: commits 3
                Action("scan")]  # scanCommitOffset commits the queued 2
    for profile in ("v5.0", "v5.5"):
        result = run_scenario(profile, 0, 0, config=config, schedule=schedule)
        assert [v.message for v in result.violations if v.property_id == "OFF-2"] == \
            ["committed offset of queue 0 moved back from 3 to 2"]
        # a scan between the second pop and the correction commits 2 first: no regression
        scanned = schedule[:10] + [Action("scan")] + schedule[10:]
        result = run_scenario(profile, 0, 0, config=config, schedule=scanned)
        assert not [v for v in result.violations if v.property_id == "OFF-2"]


F7_SCHEDULE = [Action("produce", (0,)), Action("pop", (0, 0, False)), Action("pop_step", (0,)),
               Action("delete_recreate", ()), Action("produce", (0,))]


def test_f7_deleted_topic_commit_queue_skips_the_recreated_topics_first_message() -> None:
    """F7 (both profiles, buffer merge on and off): AdminBrokerProcessor#deleteTopic leaves
    PopBufferMergeService's commit-offset queue; getPopOffset of the re-created queue starts at
    the old nextBeginOffset (1), so the new message at offset 0 is never delivered. Removing the
    mechanism (switch delete_topic_keeps_buffer_offsets) clears it."""
    from popverify.findings.attribution import removed

    for merge in (False, True):
        config = ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=merge, faults=("delete_recreate",))
        for profile in ("v5.0", "v5.5"):
            result = run_scenario(profile, 0, 0, config=config, schedule=F7_SCHEDULE)
            assert [v.property_id for v in result.violations] == ["ALO-1"], (merge, profile, result.violations)
            with removed(("F7",)):
                assert not run_scenario(profile, 0, 0, config=config, schedule=F7_SCHEDULE).violations


def test_the_drain_checks_offsets_as_a_step_does() -> None:
    """F6 with its last scan left to the drain: the drain's first round runs scanCommitOffset,
    which commits the queued 2 over the correction's 3. The drain checks OFF-2 as every step
    does (until 26 November 2026 it checked nothing, and this run was clean)."""
    config = ScenarioConfig(consumers=1, queues=2, enable_pop_buffer_merge=False, faults=("expire",), drain=True)

    def pop() -> list[Action]:
        return [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]

    schedule = [Action("produce", (0,)), *pop(), Action("ack", (0, 0)), Action("advance", (200,)),
                Action("produce", (0,)), *pop(), Action("produce", (0,)), Action("produce", (1,)),
                Action("expire", (0, 3)), *pop()]  # committed 3 by the correction; 2 still queued
    for profile in ("v5.0", "v5.5"):
        result = run_scenario(profile, 0, 0, config=config, schedule=schedule)
        assert [(v.message, v.step) for v in result.violations if v.property_id == "OFF-2"] == \
            [("committed offset of queue 0 moved back from 3 to 2", len(schedule))], result.violations
