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


def test_the_replay_bounds_the_drain_on_both_sides_and_counts_the_drains_it_cut(shared_lockstep: object,
                                                                               tmp_path: Path) -> None:
    """COVERAGE_DRAIN_ROUNDS bounds Lockstep's drain, which runs each round on the model and on
    Java together: a bound below the rounds a drain needs to quiesce stops both sides there (the
    verdict still agrees, fewer steps are compared) and is counted as a drain cut."""
    corpus = replay.short_campaign(tmp_path / "corpus", "v5.5", 1, 20)
    schedules = replay.load_corpus(corpus, "v5.5", 1)
    assert schedules[0].config.drain
    full = replay.replay("5.5.0", "v5.5", [], schedules)
    cut = replay.replay("5.5.0", "v5.5", [], schedules, drain_rounds=2)
    assert (full["drain_rounds"], full["drains_cut"]) == (replay.COVERAGE_DRAIN_ROUNDS, 0)
    assert (cut["drain_rounds"], cut["drains_cut"]) == (2, 1)
    assert cut["verdicts"] == full["verdicts"] == {"agrees": 1}
    # at least the 5 quiet rounds a drain ends with were not run
    assert cut["steps_compared"] <= full["steps_compared"] - 5
