"""popverify coverage on the lockstep harness: a tiny replay of the model's schedules on
RocketMQ's real broker classes under JaCoCo (with the Byte Buddy clock agent behind it)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from popverify.coverage import replay
from popverify.coverage.measure import measure_profile


@pytest.mark.slow
def test_a_tiny_replay_covers_branches_of_pop_message_processor(tmp_path: Path) -> None:
    corpus = replay.short_campaign(tmp_path / "corpus", "v5.0", 2, 30)
    schedules = replay.load_corpus(corpus, "v5.0", 2)
    result = measure_profile("v5.0", tmp_path / "jacoco", 1, 0, conformance=False,
                             lockstep=functools.partial(replay.replay, schedules=schedules))
    source = result["sources"]["lockstep"]
    assert "error" not in source, source
    assert source["schedules"] == 2 and source["actions_run"] > 0
    rows = {c["label"]: c for c in result["classes"]}
    assert rows["PopMessageProcessor"]["branch"]["covered"] > 0
    assert rows["DefaultMessageStore#getMessage"]["line"]["covered"] > 0
    # the lockstep harness runs no push consumer: its classes read 0 %, present in the jars
    assert rows["RebalanceImpl"]["present"] and rows["RebalanceImpl"]["line"]["covered"] == 0


def test_a_drain_that_only_redelivers_stops_on_both_sides_and_is_counted(shared_lockstep: object) -> None:
    """F9 on v5.0: a message of a queue id past 127 is redelivered in every drain round (its
    ack never matches the byte queue id of its checkpoint). The replay's drain stops after
    STALE_DRAIN_ROUNDS such rounds on the model and on Java together -- the verdict agrees --
    and counts the cut; a drain that quiesces (queue 0) is not cut."""
    from popverify.sim.scenario import Action, ScenarioConfig

    config = ScenarioConfig(queues=129, consumers=1, invisible_time=5000, drain=True)
    looping = replay.Schedule(1, config, (Action("produce", (128,)),))
    quiet = replay.Schedule(1, config, (Action("produce", (0,)),))
    cut = replay.replay("5.0.0", "v5.0", [], [looping])
    assert (cut["stale_drain_rounds"], cut["drains_cut"], cut["verdicts"]) == (replay.STALE_DRAIN_ROUNDS, 1,
                                                                                {"agrees": 1})
    # the produce, then the drain's first POP and STALE_DRAIN_ROUNDS rounds that redeliver it, of
    # about ten compared steps each: far from the model's 400 rounds
    assert cut["steps_compared"] < 15 * (replay.STALE_DRAIN_ROUNDS + 2)
    full = replay.replay("5.0.0", "v5.0", [], [quiet])
    assert (full["drains_cut"], full["verdicts"]) == (0, {"agrees": 1})
