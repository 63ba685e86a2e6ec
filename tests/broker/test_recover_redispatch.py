"""5.5.0's restart re-dispatches a deleted topic's trailing messages (CommitLog#recoverNormally
past ConsumeQueueStore#getDispatchFromPhyOffset; switch recover_redispatches_past_cq_max,
spec/profiles.md); 5.0.0's normal recovery dispatches nothing. Found by the retention
differential (case 94 of `benchmarks/lockstep_differential.py --seed 1 --chunk 25
--extra-faults expire,expire_commit_log,clean_consume_queue,delete_recreate`)."""

from __future__ import annotations

import shutil

import pytest

from tests.broker.conftest import make_broker


@pytest.mark.parametrize("profile,max_after", [("v5.0", 0), ("v5.5", 1)])
def test_a_deleted_topics_last_message_comes_back_after_a_restart_on_v55(profile: str, max_after: int) -> None:
    b = make_broker(profile, queues=3)
    b.put_message("T", 2, b"x")
    b.delete_topic("T")
    b.create_topic("T", 3)
    assert b.max_offset("T", 2) == 0
    b.restart()
    assert b.max_offset("T", 2) == max_after
    if max_after:
        assert b.store.look_message_by_offset("T", 2, 0) is not None


def test_a_message_behind_a_later_timer_copy_is_not_dispatched_again() -> None:
    """Only what lies past every consume queue's last position is re-dispatched: a CK written
    after the message (its timer-topic copy is a consume-queue unit) keeps it deleted."""
    from reference.broker.checkpoint import PopCheckPoint

    b = make_broker("v5.5", queues=3)
    b.put_message("T", 2, b"x")
    ck = PopCheckPoint(start_offset=0, pop_time=b.clock.now(), invisible_time=60_000, num=1, queue_id=2, topic="T",
                       cid="G", broker_name=b.config.broker_name)
    assert b.put_ck_message(ck, 0) >= 0  # parked in the timer: a timer-topic copy after the message
    b.delete_topic("T")
    b.create_topic("T", 3)
    b.restart()
    assert b.max_offset("T", 2) == 0


needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")


@needs_jdk
@pytest.mark.slow
@pytest.mark.usefixtures("shared_lockstep")  # the session's JVM per release (tests/conftest.py)
def test_retention_case_94_agrees_on_550() -> None:
    """It diverged at its restart (`.state.topics.TopicTest[2].max`, model 0, Java 1)."""
    from popverify.conformance.confirm import stateful_differential
    from popverify.conformance.lockstep import RELEASES, LockstepClient

    with LockstepClient(RELEASES["v5.5"]) as client:
        report = stateful_differential("v5.5", 1, 1, 50, client, first_case=94,
                                       extra_faults=("expire", "expire_commit_log", "clean_consume_queue",
                                                     "delete_recreate"))
    assert report.agree == 1, report.classes
