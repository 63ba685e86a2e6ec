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
