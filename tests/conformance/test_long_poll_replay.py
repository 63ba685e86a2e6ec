"""Long polling on the lockstep harness (popverify/conformance/long_poll_replay.py, LongPollOps,
QueueLockOps, OrderLockTimer): a parked POP woken by a put or by the timeout scan, compared with
RocketMQ's own PopMessageProcessor; QueueLockManager's clean-up pass; 5.5.0's lock-free timer
kept off the wall clock. The session's harness JVM of each release (tests/conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import attrs
import pytest

from lockstep_pool import Pool
from popverify.conformance.confirm import LOCKSTEP_KINDS, Lockstep, Verdict
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.coverage.replay import Adapted
from popverify.sim import pop_shapes
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker.broker import Broker
from reference.broker.pop_processor import PopLongPollingService, PopOperation

pytestmark = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                                reason="the lockstep harness needs a JDK and Maven")

CONFIG = ScenarioConfig(queues=1, consumers=1, invisible_time=8000, max_msg_nums=4, drain=False)
# A long-polling POP and the steps that take it to its park (popTime, the queue visit, polling):
# what follows runs after the park, on the model and, in the replay's interleave order, on Java.
# (Extra pop_steps of a parked POP do nothing on either side.)
PARK = [Action("pop", (0, 0, True)), *[Action("pop_step", (0,))] * 3]


@pytest.fixture(scope="module", params=sorted(RELEASES))
def profile_client(request: pytest.FixtureRequest, lockstep_pool: Pool) -> Iterator[tuple[str, LockstepClient]]:
    yield request.param, lockstep_pool.client(RELEASES[request.param])  # the session's JVM (tests/conftest.py)


def _replay(profile: str, client: LockstepClient, actions: list[Action],
            config: ScenarioConfig = CONFIG) -> tuple[Verdict, Lockstep, Adapted]:
    ls = Lockstep(profile, 7, config, client)
    plan = Adapted(tuple(actions), ls, config.consumers, LOCKSTEP_KINDS)
    return ls.run(plan), ls, plan


def test_a_parked_pop_woken_by_a_put_delivers_it_on_both_sides(profile_client: tuple[str, LockstepClient]) -> None:
    profile, client = profile_client
    verdict, ls, plan = _replay(profile, client, [*PARK, Action("produce", (0,)),
                                                  Action("advance", (1000,))])
    assert verdict.status == "agrees", verdict.headline()
    # the put woke the parked POP: its re-run was stepped (pop_steps after the produce) and both
    # consumers hold the message
    assert [a.kind for a in plan.ran].index("produce") < len(plan.ran) - 2
    assert len(ls.driver.world.consumers[0].held) == len(ls.java_held[0]) == 1
    assert not ls.long_polls.parked and not ls.long_polls.woken


def test_a_late_timeout_wake_answers_polling_timeout_on_both_sides(profile_client: tuple[str, LockstepClient]) -> None:
    # 6 s after a 5 s poll: the timeout scan wakes it (a long_poll follows the advance), and the
    # re-run is PopMessageRequestHeader#isTimeoutTooMuch's POLLING_TIMEOUT with an empty header
    profile, client = profile_client
    verdict, ls, plan = _replay(profile, client, [*PARK, Action("advance", (6000,)),
                                                  Action("produce", (0,))])
    assert verdict.status == "agrees", verdict.headline()
    assert plan.polls == 1 and "pop:POLLING_TIMEOUT:0" in ls.driver.coverage.points()
    assert ls.driver.world.consumers[0].op is None and not ls.driver.world.consumers[0].held


def test_a_model_that_misses_the_wake_diverges(profile_client: tuple[str, LockstepClient],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Java's put wakes the parked POP; a model whose notifyMessageArriving wakes nothing keeps
    # it parked until the timeout scan, which then wakes on the model what Java no longer has
    profile, client = profile_client
    monkeypatch.setattr(PopLongPollingService, "notify_message_arriving", lambda *args: None)
    verdict, _, _ = _replay(profile, client, [*PARK, Action("produce", (0,)),
                                              Action("advance", (5000,))])
    assert verdict.status == "diverges" and verdict.action[0] == "long_poll" and verdict.key == ".response.woken.length"


def test_an_orphaned_parked_pop_is_re_run_when_time_passes(profile_client: tuple[str, LockstepClient]) -> None:
    # the consumer crashes while its POP is parked; a put wakes it and the broker re-runs it when
    # time next passes, the answer lost: Java's re-run runs at that point and answers the same
    profile, client = profile_client
    verdict, ls, _ = _replay(profile, client, [*PARK, Action("consumer_crash", (0,)),
                                               Action("produce", (0,)), Action("advance", (1000,)),
                                               Action("advance", (9000,)), Action("revive", (0,))])
    assert verdict.status == "agrees", verdict.headline()
    assert not ls.long_polls.orphans and not ls.long_polls.orphans_woken


def test_queue_lock_clean_up_drops_entries_older_than_60_s(profile_client: tuple[str, LockstepClient]) -> None:
    profile, client = profile_client
    ls = Lockstep(profile, 7, CONFIG, client)  # its init: a fresh broker
    ls.run([Action("produce", (0,)), Action("pop", (0, 0, False)), Action("pop_step", (0,)),
            Action("pop_step", (0,))])
    status, fresh = client.call({"op": "cleanQueueLocks"})
    assert status == "ok" and fresh["entries"] > 0  # the POP's queue locks, just used
    client.call({"op": "advance", "ms": 61_000, "servicesOnPeriod": False})
    assert client.call({"op": "cleanQueueLocks"}) == ("ok", {"entries": 0})


def test_the_5_5_0_lock_free_timer_starts_no_wall_clock_thread(profile_client: tuple[str, LockstepClient]) -> None:
    profile, client = profile_client
    orderly = ScenarioConfig(queues=1, consumers=1, invisible_time=8000, max_msg_nums=4, drain=False, pop_orderly=True)
    verdict, _, _ = _replay(profile, client, [Action("produce", (0,)), Action("pop", (0, 0, False)),
                                              Action("ack", (0, 0))], orderly)
    assert verdict.status == "agrees", verdict.headline()
    _, jvm = client.call({"op": "jvm"})
    # HashedWheelTimer's thread (ThreadFactoryImpl "ConsumerOrderInfoLockManager_") starts on
    # its first timeout: with OrderLockTimer installed there is none
    assert not [n for n in jvm["names"] if n.startswith("ConsumerOrderInfoLockManager")]


ORDERLY = ScenarioConfig(queues=1, consumers=1, invisible_time=3000, max_msg_nums=4, drain=False, pop_orderly=True)
# an orderly POP is blocked while the queue's popped message is invisible: it parks; at the
# queue's lock-free time (3 s) 5.5.0's lock manager notifies long polling and the re-run gets
# the message again (5.0.0 has no lock manager: the POP stays parked)
LOCK_FREE = [Action("produce", (0,)), Action("pop", (0, 0, False)), *PARK,
             Action("advance", (3100,)), Action("scan",)]


def test_the_lock_free_notification_wakes_a_parked_orderly_pop(profile_client: tuple[str, LockstepClient]) -> None:
    profile, client = profile_client
    verdict, ls, plan = _replay(profile, client, LOCK_FREE, ORDERLY)
    assert verdict.status == "agrees", verdict.headline()
    assert plan.polls == 1
    held = len(ls.driver.world.consumers[0].held)
    assert (held, len(ls.long_polls.parked)) == ((2, 0) if profile == "v5.5" else (1, 1))
    assert len(ls.java_held[0]) == held


def test_a_model_without_the_lock_free_notification_diverges_on_5_5_0(
        profile_client: tuple[str, LockstepClient], monkeypatch: pytest.MonkeyPatch) -> None:
    from reference.broker.broker import Broker

    profile, client = profile_client
    if profile != "v5.5":
        pytest.skip("5.0.0 has no lock-free notification")
    monkeypatch.setattr(Broker, "notify_long_polling_request_if_need", lambda *args: None)
    verdict, _, _ = _replay(profile, client, LOCK_FREE, ORDERLY)
    assert verdict.status == "diverges" and verdict.action[0] == "long_poll", verdict.headline()


REVIVE_CONFIG = ScenarioConfig(queues=1, consumers=2, invisible_time=1000, max_msg_nums=4, drain=False)


def _revive_wake(queue: int) -> list[Action]:
    """Consumer 1 pops the message and crashes; consumer 0's long-polling POP of ``queue`` parks;
    the CK comes due and every revive queue runs, 4.3 s into the 5 s poll."""
    return [Action("produce", (0,)), Action("pop", (1, 0, False)), *[Action("pop_step", (1,))] * 3,
            Action("consumer_crash", (1,)), Action("pop", (0, queue, True)), *[Action("pop_step", (0,))] * 3,
            Action("advance", (4200,)), Action("timer", ()), *[Action("revive", (k,)) for k in range(8)],
            Action("advance", (100,))]


@pytest.mark.parametrize("queue", [-1, 0])
def test_a_revive_wakes_the_groups_parked_pop(profile_client: tuple[str, LockstepClient], queue: int) -> None:
    # the retry put wakes a POP of all queues on both releases (5.0.0 reviveRetry's
    # notifyMessageArriving(topic, cid, -1)); 5.5.0's notifyMessageArrivingFromRetry also wakes
    # the one parked on queue 0, the retry message's queue id
    profile, client = profile_client
    verdict, ls, _ = _replay(profile, client, _revive_wake(queue), REVIVE_CONFIG)
    assert verdict.status == "agrees", verdict.headline()
    woken = queue == -1 or profile == "v5.5"
    assert bool(ls.long_polls.parked) is not woken
    assert len(ls.java_held[0]) == len(ls.driver.world.consumers[0].held) == (1 if woken else 0)


def test_a_model_whose_revive_wakes_nothing_diverges(profile_client: tuple[str, LockstepClient],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Java woke the POP at the revive; the model's timeout scan wakes it later, Java has none
    profile, client = profile_client
    monkeypatch.setattr(Broker, "notify_retry_arriving", lambda *args: None)
    verdict, _, _ = _replay(profile, client, [*_revive_wake(-1), Action("advance", (1000,))], REVIVE_CONFIG)
    assert verdict.status == "diverges" and verdict.action[0] == "long_poll" and verdict.key == ".response.woken.length"


TWO = ScenarioConfig(queues=1, consumers=2, invisible_time=8000, max_msg_nums=4, drain=False)
# consumer 0's POP parks; consumer 1's POP takes its popTime, a put inside it wakes the parked
# one, then time passes (v5.5 corpus seed 12, orderly there)
WAKE_INSIDE = [Action("pop", (0, 0, True)), *[Action("pop_step", (0,))] * 3, Action("pop", (1, 0, False)),
               Action("produce", (0,)), Action("advance", (1000,))]


def _v55_client(profile_client: tuple[str, LockstepClient]) -> LockstepClient:
    profile, client = profile_client
    if profile != "v5.5":
        pytest.skip("the replay's adaptation is release-independent: one release")
    return client


def test_a_pop_in_flight_answers_before_a_re_run_woken_inside_it(profile_client: tuple[str, LockstepClient]) -> None:
    client = _v55_client(profile_client)
    verdict, ls, plan = _replay("v5.5", client, WAKE_INSIDE, TWO)
    assert verdict.status == "agrees", verdict.headline()
    # consumer 1's POP is stepped to its answer before the advance (it gets the message on both
    # sides); the woken re-run then finds nothing and parks again
    kinds = [a.to_json() for a in plan.ran]
    assert kinds.index(["pop_step", 1]) < kinds.index(["advance", 1000])
    assert len(ls.driver.world.consumers[1].held) == len(ls.java_held[1]) == 1


def test_without_that_order_the_model_re_runs_the_woken_pop_first_and_diverges(
        profile_client: tuple[str, LockstepClient], monkeypatch: pytest.MonkeyPatch) -> None:
    client = _v55_client(profile_client)
    monkeypatch.setattr(Adapted, "_reruns_woken", lambda self, action: False)
    verdict, _, _ = _replay("v5.5", client, WAKE_INSIDE, TWO)
    assert verdict.status == "diverges" and verdict.action[0] == "advance", verdict.headline()


def test_a_consumer_crash_while_its_pop_parks_leaves_an_orphan_on_both_sides(
        profile_client: tuple[str, LockstepClient]) -> None:
    # the crash runs the POP to its park (model: run_to_end); Java's POP parks too, and the
    # put's wake re-runs it on both sides when time passes (was "out of scope")
    client = _v55_client(profile_client)
    verdict, ls, _ = _replay("v5.5", client, [Action("pop", (0, 0, True)), Action("consumer_crash", (0,)),
                                              Action("produce", (0,)), Action("advance", (1000,))])
    assert verdict.status == "agrees", verdict.headline()
    assert not ls.long_polls.orphans and not ls.long_polls.orphans_woken


ORDERLY_DRAIN = ScenarioConfig(queues=1, consumers=2, invisible_time=8000, max_msg_nums=1, drain=True,
                               pop_orderly=True)


def test_a_drain_ack_that_wakes_an_orphan_re_runs_it_on_both_sides(profile_client: tuple[str, LockstepClient]) -> None:
    # consumer 1 holds m0 of the orderly queue; consumer 0's POP parks behind it; the drain acks
    # m0, which wakes the (now orphaned) POP: both re-run it, so both drain POPs see m1 taken
    # (v5.5 corpus seed 42: the re-run was lost on Java, the drain POP got m1 there only)
    client = _v55_client(profile_client)
    verdict, _, _ = _replay("v5.5", client, [Action("produce", (0,)), Action("produce", (0,)),
                                             Action("pop", (1, 0, False)), *[Action("pop_step", (1,))] * 3,
                                             *PARK], ORDERLY_DRAIN)
    assert verdict.status == "agrees", verdict.headline()


# consumer 0's long-polling POP parks; consumer 1's, on the same key (queue 0) or on another
# (-1), finds the polling map full: popPollingSize 0 (per key) or maxPopPollingSize 1 (in all)
SMALL_POLLING = ScenarioConfig(queues=1, consumers=2, invisible_time=8000, max_msg_nums=4, drain=False,
                               pop_polling_size=0, max_pop_polling_size=3)


@pytest.mark.parametrize("queue,limits", [(0, {}), (-1, {"pop_polling_size": 1024, "max_pop_polling_size": 1})])
def test_a_full_polling_map_answers_polling_full_on_both_sides(
        profile_client: tuple[str, LockstepClient], queue: int, limits: dict[str, int]) -> None:
    client = _v55_client(profile_client)
    verdict, ls, _ = _replay("v5.5", client, [*PARK, Action("pop", (1, queue, True)), *[Action("pop_step", (1,))] * 3,
                                              Action("produce", (0,)), Action("advance", (1000,))],
                                attrs.evolve(SMALL_POLLING, **limits))
    assert verdict.status == "agrees", verdict.headline()
    assert "pop:POLLING_FULL:0" in ls.driver.coverage.points()
    assert len(ls.driver.world.consumers[0].held) == len(ls.java_held[0]) == 1  # the parked one got m0


def test_a_harness_left_at_the_default_limits_diverges(profile_client: tuple[str, LockstepClient],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # the limits reach Java through init: without them Java parks the second POP too
    client = _v55_client(profile_client)
    call = Lockstep._call

    def without_limits(self: Lockstep, request: dict[str, object]) -> dict[str, object]:
        if request.get("op") == "init":
            request = {k: v for k, v in request.items() if k not in ("popPollingSize", "maxPopPollingSize")}
        return call(self, request)
    monkeypatch.setattr(Lockstep, "_call", without_limits)
    verdict, _, _ = _replay("v5.5", client, [*PARK, Action("pop", (1, 0, True)), *[Action("pop_step", (1,))] * 3],
                            SMALL_POLLING)
    assert verdict.status == "diverges", verdict.headline()


# persist_restart: the order info written just before the restart is what the new broker loads;
# on 5.5.0 QueueLevelConsumerOrderInfoLockManager#recover schedules the queue's lock-free time
# again, so the POP after the restart is blocked, parks and is woken by the recovered timer
# (a plain restart here reloads an empty table: nothing was persisted in the first 10 s)
RECOVER = [Action("produce", (0,)), Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,)),
           Action("persist_restart", ()), *PARK, Action("advance", (3100,)), Action("scan",)]
RECOVER_CONFIG = attrs.evolve(ORDERLY, faults=("persist_restart",))


def _held_after_park(schedule: list[Action], config: ScenarioConfig) -> int:
    """How many messages the model's consumer holds once its POP after the first ``schedule``
    steps up to the park ran (the advance and what follows left out): 1 while it parks."""
    from popverify.sim import pop_driver

    steps = schedule.index(Action("advance", (3100,)))
    d = pop_driver.PopDriver("v5.5", 7, config, True, True)
    d.run(steps, schedule[:steps])
    return len(d.world.consumers[0].held)


def test_the_order_info_persisted_before_a_restart_is_recovered(profile_client: tuple[str, LockstepClient],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    profile, client = profile_client
    if profile != "v5.5":
        pytest.skip("one release: 5.5.0 has the lock manager's recover")
    verdict, ls, plan = _replay(profile, client, RECOVER, RECOVER_CONFIG)
    assert verdict.status == "agrees", verdict.headline()
    assert plan.polls == 1 and not ls.long_polls.parked  # parked after the restart, woken at 3 s
    # a model whose restart loses the order info pops m0 at once after it, where Java (above) parks
    assert _held_after_park(RECOVER, RECOVER_CONFIG) == 1
    monkeypatch.setattr(Broker, "persist_then_restart", Broker.restart)
    assert _held_after_park(RECOVER, RECOVER_CONFIG) == 2


def test_with_the_lock_free_notification_switched_off_the_orderly_pop_stays_parked(
        profile_client: tuple[str, LockstepClient], monkeypatch: pytest.MonkeyPatch) -> None:
    from popverify.sim import pop_driver

    profile, client = profile_client
    if profile != "v5.5":
        pytest.skip("one release: 5.0.0 has no such switch")
    off = attrs.evolve(ORDERLY, broker_options=("enableNotifyAfterPopOrderLockRelease=false",))
    verdict, ls, _ = _replay(profile, client, LOCK_FREE, off)
    assert verdict.status == "agrees", verdict.headline()
    assert (len(ls.driver.world.consumers[0].held), len(ls.long_polls.parked)) == (1, 1)  # as on 5.0.0
    # a model that keeps the notification on while Java (above) has it off schedules the queue's
    # lock-free time, which the replay's long poll fires (a wake Java never makes)
    parked = LOCK_FREE.index(Action("advance", (3100,)))
    d = pop_driver.PopDriver("v5.5", 7, off, True, True)
    d.run(parked, LOCK_FREE[:parked])
    assert not d.broker.order_info.lock_free_timestamps
    monkeypatch.setattr(pop_driver, "with_options", lambda broker_config, names: broker_config)
    d = pop_driver.PopDriver("v5.5", 7, off, True, True)
    d.run(parked, LOCK_FREE[:parked])
    assert d.broker.order_info.lock_free_timestamps


# polling helper: the parked POP's client closes its connection; a put finds the request's
# channel inactive and drops it (5.0.0 notifyMessageArriving, 5.5.0 pollRemotingCommands), so the
# message stays for the client's next POP; a second park's close is dropped by the timeout scan
CLOSED = [*PARK, Action("consumer_close", (0,)), Action("produce", (0,)), Action("advance", (100,)),
          Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,)), Action("ack", (0, 0)),
          *PARK, Action("consumer_close", (0,)), Action("advance", (6000,)), Action("long_poll", ())]


def test_a_closed_clients_parked_pop_is_dropped_on_both_sides(profile_client: tuple[str, LockstepClient],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    profile, client = profile_client
    config = attrs.evolve(CONFIG, actions=CONFIG.actions + ("consumer_close",))
    verdict, ls, plan = _replay(profile, client, CLOSED, config)
    assert verdict.status == "agrees", verdict.headline()
    assert [a.kind for a in plan.ran].count("consumer_close") == 2
    assert not ls.long_polls.parked and not ls.long_polls.orphans
    if profile == "v5.5":
        return  # the mutant's divergence is release-independent: one release
    # a model that re-runs the closed client's request pops the message for nobody
    monkeypatch.setattr(PopOperation, "close_channel", lambda self: None)
    verdict, _, _ = _replay(profile, client, CLOSED, config)
    assert verdict.status == "diverges", verdict.headline()


# polling4: two long polls of SHAPE_GROUP with a tag no message has (pop_shape tag_poll) park on
# queue 0 at the same ms (equal expiry); 5.0.0's put wakes the first, whose re-run finds no match
# and parks again as a new PopRequest (a new op: after the other); the next put wakes the other
TAG_POLL = pop_shapes.SHAPES.index("tag_poll")
REPARK = [Action("pop_shape", (0, TAG_POLL, 0)), *[Action("pop_step", (0,))] * 3,
          Action("pop_shape", (1, TAG_POLL, 0)), *[Action("pop_step", (1,))] * 3,
          Action("produce", (0,)), *[Action("pop_step", (0,))] * 3,
          Action("produce", (0,)), *[Action("pop_step", (1,))] * 3, *[Action("pop_step", (0,))] * 3]
REPARK_CONFIG = attrs.evolve(TWO, actions=TWO.actions + ("pop_shape",))


def _v50_client(profile_client: tuple[str, LockstepClient]) -> LockstepClient:
    profile, client = profile_client
    if profile != "v5.0":
        pytest.skip("5.0.0 wakes a filtered long poll on every put (5.5.0 tests the filter first)")
    return client


def test_a_re_parked_pop_goes_after_those_of_equal_expiry(profile_client: tuple[str, LockstepClient],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    client = _v50_client(profile_client)
    verdict, _, plan = _replay("v5.0", client, REPARK, REPARK_CONFIG)
    assert verdict.status == "agrees", verdict.headline()
    assert [a.kind for a in plan.ran].count("produce") == 2
    # a model that keeps a request's first place when it parks again wakes it a second time
    first_place = property(lambda self: self.op_id, lambda self, v: None)
    monkeypatch.setattr(PopOperation, "park_seq", first_place, raising=False)
    verdict, _, _ = _replay("v5.0", client, REPARK, REPARK_CONFIG)
    assert verdict.status == "diverges" and verdict.key == "woken", verdict.headline()


# consumer 0's long poll parks; consumer 1's POP is in flight when a put (inside it) wakes it;
# consumer 0 closes: the model runs the woken re-run to its end at the close, Java only once
# consumer 1's POP has answered with the put inside it: the replay steps that POP first
CLOSE_WOKEN = [*PARK, Action("pop", (1, 0, False)), Action("produce", (0,)), Action("consumer_close", (0,)),
               Action("advance", (1000,))]


def test_closing_a_consumer_woken_inside_another_pop_steps_that_pop_first(
        profile_client: tuple[str, LockstepClient], monkeypatch: pytest.MonkeyPatch) -> None:
    client = _v55_client(profile_client)
    config = attrs.evolve(TWO, actions=TWO.actions + ("consumer_close",))
    verdict, _, plan = _replay("v5.5", client, CLOSE_WOKEN, config)
    assert verdict.status == "agrees", verdict.headline()
    assert plan.inserted >= 1
    monkeypatch.setattr(Adapted, "_reruns_woken", lambda self, action: False)
    verdict, _, _ = _replay("v5.5", client, CLOSE_WOKEN, config)
    assert verdict.status == "diverges" and verdict.key == "woken", verdict.headline()
