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


@pytest.mark.parametrize("valid, min_after", [(True, 0), (False, 1)])
def test_a_second_restart_makes_the_blank_head_of_a_redispatched_queue_valid(valid: bool, min_after: int) -> None:
    """F22 on 5.5.0: the re-dispatch creates the queue at its message's offset 1 (a blank unit
    0 before it, min 1); the next restart loads it with minLogicOffset 0 and correctMinOffset
    keeps 0 while the commit log starts at 0. A read from 0 meets the blank unit, a removed
    message to getMessage, and skips what else lies in commit-log file 0 (here: the message)."""
    from reference.broker.checkpoint import PopCheckPoint

    b = make_broker("v5.5", queues=3)
    b.store._blank_units_valid = valid  # BrokerConfig.blank_units_valid_after_restart
    b.put_message("T", 2, b"x")
    ck = PopCheckPoint(start_offset=0, pop_time=b.clock.now(), invisible_time=60_000, num=1, queue_id=2, topic="T",
                       cid="G", broker_name=b.config.broker_name)
    assert b.put_ck_message(ck, 0) >= 0  # keeps x (offset 0) from the re-dispatch
    b.put_message("T", 2, b"y")
    b.delete_topic("T")
    b.create_topic("T", 3)
    b.restart()
    assert (b.min_offset("T", 2), b.max_offset("T", 2)) == (1, 2)
    b.restart()
    assert (b.min_offset("T", 2), b.max_offset("T", 2)) == (min_after, 2)
    r = b.store.get_message("G", "T", 2, min_after, 4)
    if valid:
        assert (r.status.name, r.next_begin_offset, r.messages) == ("MESSAGE_WAS_REMOVING", 2, [])
    else:
        assert r.status.name == "FOUND" and [m.body for m in r.messages] == [b"y"]


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


@needs_jdk
@pytest.mark.slow
def test_the_second_restarts_min_offset_0_agrees_on_550(lockstep_pool, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The v5.5 coverage corpus's seed 28 stopped at `persist_restart .state.topics.TopicTest[2].min`
    (model 1, Java 0); shrunk and written plainly, with POPs from offset 0 after it: agrees, and a
    model whose loaded queue keeps min 1 is caught at the second restart."""
    from popverify.conformance.confirm import run_lockstep
    from popverify.sim.scenario import Action, ScenarioConfig
    from reference.broker import config as broker_config

    config = ScenarioConfig(consumers=1, queues=3, enable_pop_buffer_merge=False,
                            faults=("delete_recreate", "persist_restart"), drain=False)
    pop = [Action("pop", (0, 2, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]
    schedule = [Action("produce", (2,)), *pop, Action("produce", (2,)), Action("produce", (2,)),
                Action("delete_recreate", ()), Action("persist_restart", ()), Action("persist_restart", ()), *pop]
    client = lockstep_pool.client("5.5.0")
    v = run_lockstep("v5.5", 0, config, schedule, client)
    assert v.status == "agrees", v.to_json()
    monkeypatch.setitem(broker_config.RELEASE_SWITCHES["v5.5"], "blank_units_valid_after_restart", False)
    v = run_lockstep("v5.5", 0, config, schedule, client)
    assert (v.status, v.key, v.model, v.java) == ("diverges", ".state.topics.TopicTest[2].min", 1, 0), v.to_json()
