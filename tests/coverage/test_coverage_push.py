"""popverify coverage on the push lockstep: a tiny push corpus replayed through PushLockstep on
RocketMQ's real broker classes under JaCoCo (popverify/coverage/push_replay.py)."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from popverify.coverage import push_replay, replay
from popverify.coverage.measure import measure_profile

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")


@needs_jdk
@pytest.mark.slow
def test_a_tiny_push_corpus_covers_branches_of_pull_message_processor(tmp_path: Path) -> None:
    corpus = replay.short_campaign(tmp_path / "corpus", "v5.0", 2, 40, "push")
    schedules = push_replay.load(corpus, "v5.0", 2)
    assert len(schedules) == 2
    result = measure_profile("v5.0", tmp_path / "jacoco", 1, 0, conformance=False,
                             push=functools.partial(push_replay.replay, schedules=schedules))
    source = result["sources"]["push"]
    assert "error" not in source, source
    assert source["schedules"] == 2 and source["actions_run"] > 0
    assert source["requests_compared"].get("pull_message", 0) + source["requests_compared"].get("pull_hold_step", 0) > 0
    assert (tmp_path / "jacoco" / "5.0.0-push.exec").is_file()
    rows = {c["label"]: c for c in result["classes"]}
    assert rows["PullMessageProcessor"]["branch"]["covered"] > 0
    assert rows["ConsumerOffsetManager"]["branch"]["covered"] > 0
    # each consumer's start rebalances: QUERY_ASSIGNMENT is compared after it
    assert source["requests_compared"]["query_assignment"] > 0
    assert rows["QueryAssignmentProcessor"]["branch"]["covered"] > 0
    # no POP request was sent: a POP-only processor stays at 0 %, present in the jars
    assert rows["ChangeInvisibleTimeProcessor"]["present"]
    assert rows["ChangeInvisibleTimeProcessor"]["branch"]["covered"] == 0
