"""An admin's group deletion and offset reset replayed on RocketMQ's own broker (AdminGroupOps,
spec/profiles.md "Group deletion and offset reset"): the reset as each release does it (5.0.0's
UPDATE_CONSUMER_OFFSET, 5.5.0's server-side reset taken by the next POP), a group deleted with its
offsets, and models that get either wrong are caught."""

from __future__ import annotations

import shutil

import attrs
import pytest

from lockstep_pool import Pool
from popverify.conformance.confirm import run_lockstep
from popverify.sim.admin import OTHER_DELETIONS, topic_revive_draw, reset_target
from popverify.sim.pop_driver import PopDriver
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker.broker import Broker
from reference.broker.config import RELEASE_SWITCHES
from reference.broker.consumer_order_info import ConsumerOrderInfoManager
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.pop_processor import PopLongPollingService
from reference.common.javalang import JavaRandom

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

CONFIG = ScenarioConfig(consumers=1, queues=1, enable_pop_buffer_merge=False, drain=False,
                        actions=("produce", "pop", "pop_step", "ack", "advance", "delete_group", "reset_offset",
                                 "delete_other"))


def _pop() -> list[Action]:
    return [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]


def _acks(n: int) -> list[Action]:
    return [Action("ack", (0, 0))] * n


# four messages popped and acked (committed offset 4), a reset back to offset 2 (to = 2: the
# choice over max(min - 1, 0) .. max + 2 = 0..6), a POP that re-reads 2 and 3, a reset to max + 2
# (to = 6: 5.5.0 refuses it, 5.0.0 commits it), a POP, then the group deleted with its offsets
# and popped again (re-created by the POP, started anew); before the deletion (offsets helper)
# the admin deletes a topic named by a prefix of TopicTest, another topic and another group, which
# leave every offset of the run in place
RESET = [Action("produce", (0,))] * 4 + _pop() + _acks(4) + [Action("advance", (200,))] + \
    [Action("reset_offset", (0, 2))] + _pop() + _acks(3) + [Action("reset_offset", (0, 6))] + _pop() + \
    [Action("produce", (0,))] + [Action("delete_other", (k,)) for k in range(len(OTHER_DELETIONS))] + \
    [Action("delete_group", (True,))] + _pop()


def test_reset_targets_cover_both_refusals() -> None:
    assert [reset_target(0, 4, to) for to in range(8)] == [0, 1, 2, 3, 4, 5, 6, 0]
    assert [reset_target(3, 4, to) for to in range(5)] == [2, 3, 4, 5, 6]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile, release", [("v5.0", "5.0.0"), ("v5.5", "5.5.0")])
def test_reset_and_delete_agree(lockstep_pool: Pool, profile: str, release: str) -> None:
    v = run_lockstep(profile, 0, CONFIG, RESET, lockstep_pool.client(release))
    assert v.status == "agrees", v.to_json()
    # the admin's re-reads and skips are deliberate on both sides
    assert not v.model_violations and not v.java_violations, v.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_model_that_resets_at_once_on_5_5_is_caught(lockstep_pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    """5.5.0 answers a reset past max + 1 SYSTEM_ERROR and leaves the offset; a model that
    commits every reset as 5.0.0 does diverges at that step."""
    monkeypatch.setattr(Broker, "reset_offset", lambda self, topic, group, queue_id, offset:
                        self.offsets.commit_offset("admin", group, topic, queue_id, offset) or 0)
    v = run_lockstep("v5.5", 0, CONFIG, RESET, lockstep_pool.client("5.5.0"))
    assert v.status == "diverges", v.to_json()
    assert v.action == ("reset_offset", 0, 6), v.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_model_that_keeps_offsets_of_a_deleted_group_is_caught(lockstep_pool: Pool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """removeOffset drops the group's offsets: a model that keeps them diverges (the offset
    table, compared after the step)."""
    monkeypatch.setattr(ConsumerOffsetManager, "remove_offset", lambda self, group: False)
    v = run_lockstep("v5.5", 0, CONFIG, RESET, lockstep_pool.client("5.5.0"))
    assert v.status == "diverges", v.to_json()
    assert v.action == ("delete_group", True), v.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_model_that_cleans_offsets_by_name_prefix_is_caught(lockstep_pool: Pool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """cleanOffsetByTopic removes a key only when its topic part is the deleted topic: a model
    that removes every key containing the name drops TopicTest's offsets when the admin
    deletes topic "Topic" (the offset table, compared after the step)."""
    def by_contains(self: ConsumerOffsetManager, topic: str, persisted_too: bool = False) -> None:
        for key in [k for k in self._table if topic in k]:
            del self._table[key]
    monkeypatch.setattr(ConsumerOffsetManager, "remove_topic", by_contains)
    v = run_lockstep("v5.0", 0, CONFIG, RESET, lockstep_pool.client("5.0.0"))
    assert v.status == "diverges", v.to_json()
    assert v.action == ("delete_other", list(OTHER_DELETIONS).index("topic_prefix")), v.to_json()


# A long-polling POP parks; its group is deleted; the polling service's next pass drops the
# group's polling key (cleanUnusedResource at its first pass), so the request is never answered
# (v5.0 corpus seed 32 of 26 November 2026: `long_poll .response.woken.length`). The consumer
# gives up on it and pops again.
PARKED = [Action("pop", (0, 0, True)), Action("pop_step", (0,)), Action("pop_step", (0,)),
          Action("delete_group", (False,)), Action("advance", (100,)), Action("long_poll", ()),
          Action("pop_step", (0,)), Action("produce", (0,)), *_pop()]


@needs_jdk
@pytest.mark.slow
def test_a_deleted_groups_parked_pop_is_dropped_on_both_sides(lockstep_pool: Pool,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    config = attrs.evolve(CONFIG, actions=CONFIG.actions + ("long_poll",))
    v = run_lockstep("v5.0", 0, config, PARKED, lockstep_pool.client("5.0.0"))
    assert v.status == "agrees", v.to_json()
    # a model whose polling service never drops a key wakes nothing where Java drops the request
    monkeypatch.setattr(PopLongPollingService, "_clean_unused_resource", lambda self, now: None)
    v = run_lockstep("v5.0", 0, config, PARKED, lockstep_pool.client("5.0.0"))
    assert v.status == "diverges" and v.action == ("long_poll",) and v.key == ".response.woken.length", v.to_json()


# polling3: a long-polling POP parks; `delete_poll` deletes the topic (re-created after) with the
# polling loop's first pass in between: cleanUnusedResource drops the topic's topicCidMap entry
# and polling key (5.5.0:372, 402), so the request is never answered. After a restart (a new
# polling service: its clean-up is due at its first pass again) a POP parks and `delete_poll`
# deletes the group with its offsets: the clean-up drops the group's entries (381, 407). With
# maxPopPollingSize 1 the long poll right after the first clean-up answers POLLING_FULL: the
# clean-up dropped the only key, so the loop's later passes stop at its `continue` and the
# statistics pass never corrects totalPollingNum (run:100, 130-145).
TOPIC_GONE = [Action("pop", (0, 0, True)), Action("pop_step", (0,)), Action("pop_step", (0,)),
              Action("delete_poll", (True,)), Action("pop_step", (0,)), Action("pop", (0, 0, True)),
              Action("pop_step", (0,)), Action("pop_step", (0,)), Action("produce", (0,)), *_pop(),
              Action("restart", ()), *_pop(), Action("pop", (0, 0, True)), Action("pop_step", (0,)),
              Action("pop_step", (0,)), Action("delete_poll", (False,)), Action("pop_step", (0,)),
              Action("produce", (0,)), *_pop()]


@needs_jdk
@pytest.mark.slow
def test_the_polling_clean_up_drops_a_deleted_topic_or_group(lockstep_pool: Pool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    config = attrs.evolve(CONFIG, actions=CONFIG.actions + ("delete_poll",), faults=("restart",), max_pop_polling_size=1)
    v = run_lockstep("v5.5", 0, config, TOPIC_GONE, lockstep_pool.client("5.5.0"))
    assert v.status == "agrees", v.to_json()
    # a model whose every step corrects the count parks that long poll
    with monkeypatch.context() as m:
        step = PopLongPollingService.timeout_step

        def recounted(self: PopLongPollingService, now: int) -> int:
            woken = step(self, now)
            self.total_polling_num = sum(len(q) for q in self.polling_map.values())
            return woken
        m.setattr(PopLongPollingService, "timeout_step", recounted)
        v = run_lockstep("v5.5", 0, config, TOPIC_GONE, lockstep_pool.client("5.5.0"))
        assert v.status == "diverges" and v.action == ("pop_step", 0), v.to_json()
    # a model whose clean-up keeps a deleted topic's key: Java drops the parked request, it does not
    monkeypatch.setattr(PopLongPollingService, "_clean_unused_resource", lambda self, now: None)
    v = run_lockstep("v5.5", 0, config, TOPIC_GONE, lockstep_pool.client("5.5.0"))
    assert v.status == "diverges" and v.action == ("delete_poll", True), v.to_json()
    assert v.key == ".response.woken.length", v.to_json()


# polling helper: a message revived into the POP retry topic (its offset committed by
# initPopRetryOffset), then the topic deleted and re-created (order helper's v5.5 cov2 seed 31)
REVIVE = [Action("advance", (5000,)), Action("timer", ())] + [Action("revive", (q,)) for q in range(8)]
RETRY_DELETED = [Action("produce", (0,))] * 2 + _pop() + REVIVE + REVIVE + \
    [Action("delete_recreate", ()), Action("produce", (0,))] + _pop()
# order2: an orderly batch on each of two queues, the group deleted with its offsets and the order
# info persisted before any POP re-creates the group (delete_group_persist): autoClean drops the
# group's order info (5.5.0 QueueLevelConsumerManager#autoClean:319), so a change and an ack of
# queue 0's batch meet no table entry (updateNextVisibleTime:276, commitAndNext:215) and queue 0's
# next POP is not blocked. Then the group deleted keeping its offsets: 5.5.0 re-creates it
# at once (delete_group_finds_group), so the persist keeps its order info and queue 0's batch
# still blocks the next POP. The reset first, before any POP, finds the group the consumers'
# heartbeat created (the harness's init, as the model's world; Java answered
# SUBSCRIPTION_GROUP_NOT_EXIST before: cov2 v5.5 seeds 32, 33).
ORDERLY = ScenarioConfig(consumers=1, queues=2, enable_pop_buffer_merge=False, drain=False, pop_orderly=True,
                         actions=("produce", "pop", "pop_step", "ack", "change_invisible", "advance",
                                  "reset_offset", "delete_group_persist"))
GONE = [Action("reset_offset", (0, 0))] + [Action("produce", (0,))] * 3 + [Action("produce", (1,))] * 2 + _pop() + \
    [Action("pop", (0, 1, False)), Action("pop_step", (0,)), Action("pop_step", (0,)),
     Action("delete_group_persist", (True,)), Action("change_invisible", (0, 0, 5000)), Action("ack", (0, 0)),
     Action("advance", (100,))] + _pop() + [Action("ack", (0, 4)), Action("change_invisible", (0, 3, 5000)),
                                            Action("delete_group_persist", (False,))] + _pop()


@needs_jdk
@pytest.mark.slow
def test_5_5_deletes_the_pop_retry_topic_with_its_topic(lockstep_pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    """5.5.0's deleteTopic deletes the group's POP retry topic too (clearRetryTopicWhenDeleteTopic):
    the model agrees; one that keeps the retry topic's offsets, as 5.0.0 does, diverges there."""
    config = ScenarioConfig(consumers=1, queues=1, drain=False, invisible_time=2000, faults=("delete_recreate",),
                            actions=("produce", "pop", "pop_step", "ack", "advance", "timer", "revive"))
    v = run_lockstep("v5.5", 0, config, RETRY_DELETED, lockstep_pool.client("5.5.0"))
    assert v.status == "agrees", v.to_json()
    monkeypatch.setitem(RELEASE_SWITCHES["v5.5"], "delete_topic_clears_pop_retry", False)
    v = run_lockstep("v5.5", 0, config, RETRY_DELETED, lockstep_pool.client("5.5.0"))
    assert v.status == "diverges" and v.action == ("delete_recreate",), v.to_json()
    assert v.key.startswith(".state.offsets.%RETRY%"), v.to_json()


def test_a_deleted_groups_order_info_is_cleaned_at_persist(lockstep_pool: Pool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    v = run_lockstep("v5.5", 0, ORDERLY, GONE, lockstep_pool.client("5.5.0"))
    assert v.status == "agrees", v.to_json()
    assert not v.model_violations and not v.java_violations, v.to_json()
    # a model whose clean-up keeps a deleted group's order info still blocks queue 0's POP
    with monkeypatch.context() as m:
        m.setattr(ConsumerOrderInfoManager, "_group_gone", lambda self, group: False)
        v = run_lockstep("v5.5", 0, ORDERLY, GONE, lockstep_pool.client("5.5.0"))
        assert v.status == "diverges" and v.action == ("pop_step", 0), v.to_json()
    # a 5.5.0 model whose deletion without cleanOffset leaves the group gone serves that POP
    monkeypatch.setitem(RELEASE_SWITCHES["v5.5"], "delete_group_finds_group", False)
    v = run_lockstep("v5.5", 0, ORDERLY, GONE, lockstep_pool.client("5.5.0"))
    assert v.status == "diverges" and v.step == len(GONE) - 1, v.to_json()


# order3: an orderly batch held on queue 0, the topic deleted and re-created with the order info's
# persist in between (an orderly configuration's delete_recreate): autoClean meets the topic gone
# (5.0.0 ConsumerOrderInfoManager#autoClean:218) and drops the batch, so the re-created queue's
# first message is served at once; kept, the old batch would block the queue.
RECREATED = [Action("produce", (0,))] * 2 + _pop() + [Action("delete_recreate", ()), Action("produce", (0,))] + \
    _pop()


@needs_jdk
@pytest.mark.slow
def test_a_deleted_topics_order_info_is_cleaned_at_persist(lockstep_pool: Pool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    config = attrs.evolve(ORDERLY, queues=1, faults=("delete_recreate",))
    v = run_lockstep("v5.0", 0, config, RECREATED, lockstep_pool.client("5.0.0"))
    assert v.status == "agrees", v.to_json()
    # a model whose clean-up keeps a deleted topic's order info blocks the re-created queue
    monkeypatch.setattr(ConsumerOrderInfoManager, "auto_clean", lambda self: None)
    v = run_lockstep("v5.0", 0, config, RECREATED, lockstep_pool.client("5.0.0"))
    assert v.status == "diverges" and v.step >= len(RECREATED) - 3, v.to_json()


# order3: an orderly batch held on queue 1 (the last), the topic updated to one queue and back with
# the order info's persist in between (topic_shrink_persist): autoClean drops queue 1's order info
# (5.0.0 ConsumerOrderInfoManager#autoClean:240), so the second consumer's POP of queue 1 re-reads
# the batch in flight; kept, the batch would block that POP.
SHRUNK = [Action("produce", (1,))] * 2 + [Action("pop", (0, 1, False)), Action("pop_step", (0,)),
                                          Action("pop_step", (0,)), Action("topic_shrink_persist", ()),
                                          Action("pop", (1, 1, False)), Action("pop_step", (1,)),
                                          Action("pop_step", (1,))]


@needs_jdk
@pytest.mark.slow
def test_a_shrunk_queues_order_info_is_cleaned_at_persist(lockstep_pool: Pool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    config = attrs.evolve(ORDERLY, consumers=2, actions=ORDERLY.actions + ("topic_shrink_persist",))
    v = run_lockstep("v5.0", 0, config, SHRUNK, lockstep_pool.client("5.0.0"))
    assert v.status == "agrees", v.to_json()
    assert not v.model_violations and not v.java_violations, v.to_json()
    # a model whose clean-up keeps the order info of a queue past the topic's count blocks that POP
    init = ConsumerOrderInfoManager.__init__

    def keeps_queues(self, now, read_queues, group_exists):  # type: ignore[no-untyped-def]
        init(self, now, lambda t: None if read_queues(t) is None else 1 << 20, group_exists)
    monkeypatch.setattr(ConsumerOrderInfoManager, "__init__", keeps_queues)
    v = run_lockstep("v5.0", 0, config, SHRUNK, lockstep_pool.client("5.0.0"))
    assert v.status == "diverges" and v.step >= len(SHRUNK) - 3, v.to_json()


# buffer3: three messages popped into the merge buffer and acked (a scan drops the done CK and
# commits: the buffer is empty, its commit-offset queue stays), then `delete_idle` deletes the
# group with its offsets and 30 s pass (the merge loop's scanGarbage drops the group's queue,
# 5.5.0 PopBufferMergeService:206), a POP re-creates the group and re-reads the three; acked, then
# the topic (201; created again after the idle)
IDLE = [Action("produce", (0,))] * 3 + _pop() + _acks(3) + [Action("scan", ()), Action("delete_idle", (False,))] + \
    _pop() + _acks(3) + [Action("scan", ()), Action("delete_idle", (True,)), Action("produce", (0,))] + _pop()


# revive5: `topic_revive` on 5.5.0 with useSeparateRetryQueue and autoCreateSubscriptionGroup off.
# Queue 1's two messages are revived into retry queue 1 (the retry topic created with 2 queues);
# then, each time with a fresh un-acked POP whose CK the step waits for: the topic given a third
# queue during a revive round (addRetryTopicIfNotExist re-creates the retry topic with 3 queues,
# initPopRetryOffset keeps queues 0 and 1's offsets: 5.5.0:178, 160), the group deleted with its
# offsets (mergeAndRevive skips the CK: 523) and the topic deleted (518). 5.0.0 runs the same
# deletions (373, 378) through the same model code: one release suffices.
TOPIC_REVIVE = ScenarioConfig(queues=2, consumers=1, invisible_time=5000, max_msg_nums=4, enable_pop_buffer_merge=False,
                              services_on_period=False, drain=False,
                              actions=("produce", "pop", "pop_step", "ack", "advance", "timer", "revive", "topic_revive"),
                              broker_options=("useSeparateRetryQueue", "autoCreateSubscriptionGroup=false"))


def _topic_revive_schedule() -> list[Action]:
    """TOPIC_REVIVE's schedule: each topic_revive waits for the CK of the POP before it (its revive
    queue and time, as the swarm draws them: admin.topic_revive_draw)."""
    d = PopDriver("v5.5", 0, TOPIC_REVIVE, False, False)
    out: list[Action] = []

    def run(*actions: Action) -> None:
        for a in actions:
            assert d.step(a), a
            out.append(a)

    def pop(queue: int) -> None:
        run(Action("pop", (0, queue, False)))
        while d.world.consumers[0].op is not None:  # its steps until it is answered
            run(Action("pop_step", (0,)))
    run(Action("produce", (1,)), Action("produce", (1,)))
    pop(1)
    run(Action("advance", (6000,)), Action("timer", ()), Action("advance", (3000,)), Action("timer", ()),
        *[Action("revive", (q,)) for q in range(8)])
    for how, queue in ((1, 1), (2, 0), (0, 0)):
        run(Action("produce", (queue,)))
        pop(queue)
        run(Action("topic_revive", (how, *topic_revive_draw(JavaRandom(0), d.world)[1:])))
    return out


@needs_jdk
@pytest.mark.slow
def test_a_deletion_the_garbage_scan_sees_agrees(lockstep_pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    # (services off their periods: `scan` runs the merge loop's passes, the idle's advance only
    # moves the clock and the pass after it runs scanGarbage; with them on, 30 s pass in slices,
    # slower, and the run agrees too)
    config = attrs.evolve(CONFIG, enable_pop_buffer_merge=True, actions=CONFIG.actions + ("scan", "delete_idle"),
                          services_on_period=False)
    v = run_lockstep("v5.5", 0, config, IDLE, lockstep_pool.client("5.5.0"))
    assert v.status == "agrees", v.to_json()
    # a model whose deletion keeps the group's offsets: Java's are gone after the idle
    monkeypatch.setattr(Broker, "delete_group", lambda self, group, clean_offset: self.groups.discard(group) or 0)
    v = run_lockstep("v5.5", 0, config, IDLE, lockstep_pool.client("5.5.0"))
    assert v.status == "diverges" and v.action == ("delete_idle", False), v.to_json()


@needs_jdk
@pytest.mark.slow
def test_topic_revive_agrees_on_5_5_0_and_models_that_revive_what_is_gone_are_caught(
        lockstep_pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    schedule = _topic_revive_schedule()
    client = lockstep_pool.client("5.5.0")
    v = run_lockstep("v5.5", 0, TOPIC_REVIVE, schedule, client)
    assert v.status == "agrees", v.to_json()
    steps = [i for i, a in enumerate(schedule) if a.kind == "topic_revive"]
    # a model whose revive takes the CK of a deleted group (auto-create left on) re-sends what
    # Java skips, at that step. (A deleted topic's CK skipped or not writes the same: its
    # messages went with the topic's consume queues, so the revive reads none.)
    monkeypatch.setattr(Broker, "find_group", lambda self, group: True)
    broken = run_lockstep("v5.5", 0, TOPIC_REVIVE, schedule, client)
    assert broken.status == "diverges" and broken.step == steps[1], broken.to_json()
