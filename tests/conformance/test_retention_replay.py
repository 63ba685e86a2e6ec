"""Retention and topic deletion replayed on RocketMQ's real store (RetentionOps, spec/conformance.md
"Retention and topic deletion"): F6 and F7 on 5.0.0, the stages one at a time, and a model
that reads deleted data differently from Java is caught."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import attrs
import pytest

from lockstep_pool import Pool
from popverify.conformance.confirm import run_lockstep
from popverify.conformance.lockstep import LockstepClient
from popverify.findings.finding_traces import FINDING_TRACES
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker.pop_processor import PopOperation
from reference.broker.store import MessageStore

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

STAGED = ScenarioConfig(consumers=1, queues=1, enable_pop_buffer_merge=False,
                        faults=("expire_commit_log", "clean_consume_queue"), drain=False)


def _pop(queue: int = 0) -> list[Action]:
    return [Action("pop", (0, queue, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]


# Four messages, one commit-log file each; the commit-log stage takes files 0 and 1; a POP
# between the stages; the consume-queue stage; a POP after it.
PHY0 = [Action("produce", (0,))] * 4 + [Action("expire_commit_log", (2,))] + _pop() + \
    [Action("clean_consume_queue", ())] + _pop()


@pytest.fixture(scope="module")
def client(lockstep_pool: Pool) -> Iterator[LockstepClient]:
    yield lockstep_pool.client("5.0.0")  # the session's JVM (tests/conftest.py)


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("fid, prop", [("F6", "OFF-2"), ("F7", "ALO-1")])
def test_finding_reproduces_on_5_0_0(client: LockstepClient, fid: str, prop: str) -> None:
    t = FINDING_TRACES[fid]
    v = run_lockstep("v5.0", 0, t.config, t.schedule, client)
    assert v.status == "agrees", v.to_json()
    assert prop in v.java_violations and prop in v.model_violations, v.to_json()


@needs_jdk
@pytest.mark.slow
def test_stages_one_at_a_time_agree(client: LockstepClient) -> None:
    """Between the stages Java's POP reads the unit at commit-log position 0 from the first
    remaining file: m2 twice in one answer (msgOffsetInfo 0,2,3); the model does the same."""
    v = run_lockstep("v5.0", 0, STAGED, PHY0, client)
    assert v.status == "agrees", v.to_json()
    assert "INV-1" in v.java_violations  # the same message twice in one POP answer


@needs_jdk
@pytest.mark.slow
def test_a_model_that_reads_deleted_data_as_removed_is_caught(client: LockstepClient,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the position-0 oddity the model answers m2, m3 where Java answers m2, m2, m3."""
    monkeypatch.setattr(MessageStore, "_read", lambda self, msg: None if self.is_removed(msg) else msg)
    v = run_lockstep("v5.0", 0, STAGED, PHY0, client)
    assert v.status == "diverges", v.to_json()
    assert v.step == 7 and v.action == ("pop_step", 0), v.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_model_that_deletes_the_newest_file_is_caught(client: LockstepClient,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """MappedFileQueue#deleteExpiredFileByTime keeps the newest file; a model that deletes it
    diverges at the retention step."""
    def delete_all(self: MessageStore, count: int) -> int:
        n = max(0, min(count, self.commit_log_files()))
        self._min_file += n
        self._listed_min += n
        return n
    monkeypatch.setattr(MessageStore, "delete_commit_log_files", delete_all)
    schedule = [Action("produce", (0,)), Action("produce", (0,)), Action("expire_commit_log", (5,))]
    v = run_lockstep("v5.0", 0, STAGED, schedule, client)
    assert v.status == "diverges", v.to_json()
    assert v.step == 2 and v.key == ".response.deleted" and (v.model, v.java) == (2, 1), v.to_json()


# m1 in queue 0 at commit-log position 0, m2 in queue 1 in the next file; the commit-log stage
# takes m1's file; a POP of queue 0 reads position 0 as the first remaining file's first
# message, m2 of queue 1; then the consumer acks what it got.
CROSS_QUEUE = ScenarioConfig(consumers=1, queues=2, enable_pop_buffer_merge=False, faults=("expire_commit_log",),
                             drain=False)
CROSS_QUEUE_SCHEDULE = [Action("produce", (0,)), Action("produce", (1,)), Action("expire_commit_log", (1,)),
                        *_pop(0), Action("ack", (0, 0))]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("fixed", [True, False])
def test_position_zero_read_of_another_queue(client: LockstepClient, monkeypatch: pytest.MonkeyPatch,
                                             fixed: bool) -> None:
    """The decoded message is queue 1's: Java's client keys it by its own queueId, which the
    response's msgOffsetInfo does not name, so no handle (MQClientAPIImpl#processPopResponse);
    the model agrees, the empty handle's ack included. A model that reports the queue it read
    (the old one) diverges at that POP."""
    if not fixed:
        monkeypatch.setattr(PopOperation, "_client_handles", lambda self, messages, *_: messages)
    v = run_lockstep("v5.0", 0, CROSS_QUEUE, CROSS_QUEUE_SCHEDULE, client)
    if fixed:
        assert v.status == "agrees", v.to_json()
    else:
        assert v.status == "diverges" and v.action == ("pop_step", 0), v.to_json()
        assert v.key == ".response.messages[0].handle.brokerName", v.to_json()  # the model's full handle


# Three messages, one commit-log file each; a POP reads all three and, before it answers,
# the commit-log stage asks for three files; after the answer, for one more.
HELD = [Action("produce", (0,))] * 3 + [Action("pop", (0, 0, False)), Action("pop_step", (0,)),
                                        Action("expire_commit_log", (3,)), Action("pop_step", (0,)),
                                        Action("expire_commit_log", (1,))]


@needs_jdk
@pytest.mark.slow
def test_a_file_an_in_flight_pop_holds_is_shut_down_not_deleted(client: LockstepClient,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """MappedFile#destroy refuses a file whose bytes the POP still holds (its read results are
    released when the response is built) and deleteExpiredFileByTime stops there: nothing is
    deleted inside the POP, the shut-down file goes at the next call. A model without the
    holds deletes two files inside the POP and is caught there."""
    v = run_lockstep("v5.0", 0, STAGED, HELD, client)
    assert v.status == "agrees", v.to_json()
    monkeypatch.setattr(PopOperation, "_hold", lambda self, r, is_retry, keep=True: None)
    v = run_lockstep("v5.0", 0, STAGED, HELD, client)
    assert v.status == "diverges" and v.key == ".response.deleted" and (v.model, v.java) == (2, 0), v.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_shut_down_file_is_read_again_after_a_restart(client: LockstepClient,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Only MappedFile#destroy deletes the file on disk: a restart maps the shut-down file again
    (MappedFileQueue#load) and the next POP reads its message; a model that keeps it unreadable
    answers offset 1 where Java answers 0."""
    config = attrs.evolve(STAGED, faults=(*STAGED.faults, "restart"))
    schedule = HELD[:-1] + [Action("restart", ())] + _pop() + [Action("expire_commit_log", (1,))]
    v = run_lockstep("v5.0", 0, config, schedule, client)
    assert v.status == "agrees", v.to_json()
    recover = MessageStore.recover

    def recover_keeping_shut_down(self: MessageStore, redispatch: bool = False) -> None:
        first = self._min_file
        recover(self, redispatch)
        self._min_file = first
    monkeypatch.setattr(MessageStore, "recover", recover_keeping_shut_down)
    v = run_lockstep("v5.0", 0, config, schedule, client)
    assert v.status == "diverges" and v.key == ".response.messages[0].handle.queueOffset", v.to_json()
    assert (v.model, v.java) == ("1", "0"), v.to_json()


# m1 and its CK in file 0; the harness rolls file 0 before a put the store refuses (a 32 KB
# properties string: MessageExtEncoder#encode), so nothing opens file 1; a restart; the ack's
# message; the commit-log stage asks for three files.
ENDED_LAST_FILE = [Action("produce", (0,)), *_pop(), Action("produce_sized", (0, 1, 32768)), Action("restart", ()),
                   Action("ack", (0, 0)), Action("expire_commit_log", (3,))]


@needs_jdk
@pytest.mark.slow
def test_recovery_reopens_a_last_file_ended_before_a_refused_put(client: LockstepClient,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Recovery truncates a last file's END_OF_FILE record when no file follows it, so the ack
    after the restart is written into file 0 and there is one file, which retention keeps
    (corpus seed 39 of both profiles, which stopped at `expire_commit_log .response.deleted`).
    A model that opens a new file for the ack deletes file 0 and is caught there."""
    config = attrs.evolve(STAGED, faults=("expire_commit_log", "restart"))
    v = run_lockstep("v5.0", 0, config, ENDED_LAST_FILE, client)
    assert v.status == "agrees", v.to_json()
    monkeypatch.setattr(MessageStore, "_reopen_ended_last_file", lambda self: None)
    v = run_lockstep("v5.0", 0, config, ENDED_LAST_FILE, client)
    assert v.status == "diverges" and v.key == ".response.deleted" and (v.model, v.java) == (1, 0), v.to_json()
