"""Queues that start past offset 0 (ScenarioConfig.start_offset) replayed on RocketMQ's real
store (StartOffsetOps.java, spec/conformance.md "Queues that start past offset 0"): near the int
boundary, at the top of the long domain, across a consume-queue file's end and across
restarts, on each release (5.0.0 builds the state by hand, 5.5.0 through
ConsumeQueue#initializeWithOffset)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import attrs
import pytest
from lockstep_pool import Pool

from popverify.conformance.confirm import run_lockstep
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.sim.domain import MAX_START_OFFSET
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker.store import CQ_FILE_UNITS, ConsumeQueue, MessageStore

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

POP = [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]
# three messages, read, not acked: revived after the invisible time, read again from the retry topic
SCHEDULE = [Action("produce", (0,))] * 3 + POP + [Action("advance", (70_000,)), Action("timer", ()),
                                                  Action("revive", (0,)), *POP]
STARTS = (2**31 - 2, MAX_START_OFFSET, CQ_FILE_UNITS - 2)


def _config(start: int, faults: tuple[str, ...] = ()) -> ScenarioConfig:
    return ScenarioConfig(queues=2, consumers=1, max_msg_nums=8, enable_pop_buffer_merge=False, drain=False,
                          faults=faults, start_offset=start)


@pytest.fixture(scope="module", params=["v5.0", "v5.5"])
def harness(request: pytest.FixtureRequest, lockstep_pool: Pool) -> Iterator[tuple[str, LockstepClient]]:
    yield request.param, lockstep_pool.client(RELEASES[request.param])  # the session's JVM (tests/conftest.py)


@needs_jdk
@pytest.mark.parametrize("start", STARTS)
def test_queues_starting_past_zero_agree(harness: tuple[str, LockstepClient], start: int) -> None:
    profile, client = harness
    verdict = run_lockstep(profile, 5, _config(start), SCHEDULE, client)
    assert verdict.status == "agrees", verdict.to_json()


@needs_jdk
def test_a_model_queue_left_at_zero_is_caught_at_the_start(harness: tuple[str, LockstepClient],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    profile, client = harness
    monkeypatch.setattr(MessageStore, "start_queue_at", lambda self, topic, queue_id, offset: None)
    verdict = run_lockstep(profile, 5, _config(2**31 - 2), SCHEDULE, client)
    assert verdict.status == "diverges" and verdict.step == 0 and verdict.key == "startQueues", verdict.to_json()
    assert verdict.model == {"min": 0, "max": 0} and verdict.java == {"min": 2**31 - 2, "max": 2**31 - 2}


# The consume-queue cleaner's first pass (the commit log's deleted files: it runs), a restart
# (recovery keeps min at the start offset: the blanks point below the commit log), reads after.
RESTARTED = [Action("produce", (0,)), Action("clean_consume_queue", ()), Action("restart", ()),
             Action("produce", (0,)), *POP, Action("restart", ()), Action("produce", (1,)), *POP]


@needs_jdk
@pytest.mark.parametrize("start", (7, 2**31 + 7))
def test_a_restart_keeps_the_start_offset(harness: tuple[str, LockstepClient], start: int) -> None:
    profile, client = harness
    config = _config(start, ("restart", "clean_consume_queue"))
    verdict = run_lockstep(profile, 5, config, RESTARTED, client)
    assert verdict.status == "agrees", verdict.to_json()


# m0 and m1 in two commit-log files, the older deleted, then a read of the queue from its start
EXPIRED = [Action("produce", (0,)), Action("produce", (0,)), Action("expire_commit_log", (1,)), *POP]


@needs_jdk
def test_a_model_whose_commit_log_starts_at_position_zero_is_caught(harness: tuple[str, LockstepClient],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the commit-log half of the history the model stores m0 at commit-log position 0,
    where F11's quirk (CommitLog#getMessage reads position 0 from the oldest remaining file) serves
    m1 for m0's unit once m0's file is gone; on Java m0 is past the deleted files and is skipped."""
    profile, client = harness
    config = _config(7, ("expire_commit_log",))
    assert run_lockstep(profile, 5, config, EXPIRED, client).status == "agrees"

    def queue_only(self: MessageStore, topic: str, queue_id: int, offset: int) -> None:
        cq = self._queues.setdefault((topic, queue_id), ConsumeQueue())
        cq.base = cq.min_offset = offset

    monkeypatch.setattr(MessageStore, "start_queue_at", queue_only)
    verdict = run_lockstep(profile, 5, config, EXPIRED, client)
    assert verdict.status == "diverges" and verdict.key == ".response.messages[0].handle.queueOffset", \
        verdict.to_json()
    assert (verdict.model, verdict.java) == ("7", "8")


def test_a_read_stops_at_the_end_of_its_consume_queue_file() -> None:
    """DefaultMessageStore#getMessage reads one consume-queue file (travelCqFileNumWhenGetMessage
    = 1): a queue started just below a file's end answers its last unit alone, then the next."""
    from reference.common.message import MessageExt

    store = MessageStore(lambda: 0)
    store.start_queue_at("T", 0, CQ_FILE_UNITS - 1)
    for i in range(3):
        store.put_message(MessageExt(topic="T", queue_id=0, body=b"x", properties={"UNIQ_KEY": str(i)}))
    first = store.get_message("g", "T", 0, CQ_FILE_UNITS - 1, 32)
    assert first.queue_offsets == [CQ_FILE_UNITS - 1] and first.next_begin_offset == CQ_FILE_UNITS
    assert store.get_message("g", "T", 0, CQ_FILE_UNITS, 32).queue_offsets == [CQ_FILE_UNITS, CQ_FILE_UNITS + 1]


# store helper (F22): 5.0.0's refused first put (F20) makes the queue start at 1 with a blank unit at 0
# (ConsumeQueue#fillPreBlank); a restart's correctMinOffset takes that blank (offsetPy 0 is not
# below the commit log's min offset): min 0, and a POP from there skips the rest of the first
# commit-log file (MESSAGE_WAS_REMOVING, rollNextFile): the message at 1 is never delivered.
REFUSED_FIRST = [Action("produce_sized", (0, 1, 32_768)), Action("produce", (0,)), Action("produce", (0,)),
                 Action("persist_restart", ()), *POP]


@needs_jdk
def test_a_refused_first_put_then_a_restart_agrees_and_loses_a_message_on_5_0_0(
        lockstep_pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay agrees step by step (the drain, which makes it 200 steps, is left out: the
    model's run with it violates ALO-1: the message at 1 is never delivered; Java's run too)."""
    from popverify.sim.scenario import run_scenario

    config = ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=False, drain=False,
                            faults=("persist_restart",), actions=ScenarioConfig().actions + ("produce_sized",))
    drained = run_scenario("v5.0", 1, 0, config=attrs.evolve(config, drain=True), schedule=REFUSED_FIRST)
    assert "ALO-1" in {v.property_id for v in drained.violations}
    client = lockstep_pool.client("5.0.0")
    verdict = run_lockstep("v5.0", 1, config, REFUSED_FIRST, client)
    assert verdict.status == "agrees", verdict.to_json()
    # a model without the blank units keeps min 1 across the restart
    from reference.broker import config as broker_config  # F22's switch off: the blanks never count

    monkeypatch.setitem(broker_config.RELEASE_SWITCHES["v5.0"], "blank_units_valid_after_restart", False)
    verdict = run_lockstep("v5.0", 1, config, REFUSED_FIRST, client)
    assert verdict.status == "diverges" and verdict.key == ".state.topics.TopicTest[0].min", verdict.to_json()
    assert (verdict.model, verdict.java) == (1, 0)
