"""The request-domain actions replayed on RocketMQ's real broker classes (lockstep harness):
every refused request answers as the model does, and a wrong response code is caught."""

from __future__ import annotations

import shutil

import attrs
import pytest

from lockstep_pool import Pool
from popverify.conformance.confirm import run_lockstep
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.conformance.request_domain import code_of, java_pop_answer
from popverify.sim.pop_driver import PopDriver
from popverify.sim import pop_shapes
from popverify.sim.pop_shapes import SHAPES
from popverify.sim.request_domain import CHANGE_KINDS, HANDLE_KINDS, REVIVE_PUT_KINDS
from popverify.sim.scenario import POP_ACTIONS, Action, ScenarioConfig, run_scenario
from reference.broker import broker as broker_module
from reference.broker.ack_processor import BATCH_ACK_BODY_KINDS
from reference.broker.config import BROKER_OPTIONS, INIT_OFFSET_OPTION, RELEASE_SWITCHES
from reference.broker.consumer_order_info import QueueLevelConsumerManager55
from reference.common import response_code as rc

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

# LockstepClient(release) lends the session's JVM of the release (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_lockstep")

OPT = ("pop_request", "ack_request", "change_invisible_request", "batch_ack_request", "revive_topic_put")
CONFIG = ScenarioConfig(queues=2, consumers=1, invisible_time=8000, max_msg_nums=4, drain=False,
                        actions=tuple(POP_ACTIONS) + OPT)
_INT_MAX = 2 ** 31 - 1


# order3: changeInvisibleTime requests of a consumer holding nothing: the three refused before
# the handle is read are sent (queue 0, offset 0, an empty handle), a garbled one is not
UNHELD = [Action("change_invisible_request", (0, 0, CHANGE_KINDS.index(k), 1000))
          for k in ("queue_past_end", "queue_minus_one", "no_topic", "garbled")]


def _schedule() -> list[Action]:
    s = UNHELD + [Action("produce", (0,)), Action("produce", (0,)), Action("produce", (1,)),
         Action("pop", (0, 0, False)), *[Action("pop_step", (0,))] * 3]
    # POPs the processor refuses or reads nothing for (each answers at its first step)
    # (5.0.0 serves maxMsgNums <= 0 queue by queue: pop_steps until it answers; no-ops otherwise)
    for q, n, t in ((2, 4, 1000), (_INT_MAX, 4, 1000), (0, 33, 1000), (-1, _INT_MAX, 1000), (-1, -1, 1000),
                    (0, 0, 1000)):
        s += [Action("pop_request", (0, q, n, t)), *[Action("pop_step", (0,))] * 4]
    # every altered ack and changeInvisibleTime of the held message, the duplicate last
    s += [Action("ack_request", (0, 0, HANDLE_KINDS.index(k))) for k in HANDLE_KINDS if k != "duplicate"]
    s += [Action("change_invisible_request", (0, 0, CHANGE_KINDS.index(k), t)) for k in CHANGE_KINDS
          for t in (0,)]
    # batch acks with no body, no acks list, an empty list (5.0.0: no such request)
    s += [Action("batch_ack_request", (b,)) for b in range(len(BATCH_ACK_BODY_KINDS))]
    # revive6: a producer's messages to revive queue 0 that no broker writes, the one without a
    # deliver time last (5.0.0's round throws there: the skips before it run on both releases)
    s += [Action("revive_topic_put", (0, REVIVE_PUT_KINDS.index(k))) for k in REVIVE_PUT_KINDS]
    s += [Action("ack_request", (0, 0, HANDLE_KINDS.index("duplicate"))), Action("advance", (20,)),
          Action("timer",), Action("revive", (0,))]
    # a POP of every queue with invisibleTime 0 and -1: accepted as sent
    s += [Action("pop_request", (0, -2, 1, 0)), *[Action("pop_step", (0,))] * 4]
    return s


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_the_schedule_sends_every_refusal(profile: str) -> None:
    """(On the model) the replayed schedule really sends each altered request to a held message."""
    cov = run_scenario(profile, 5, 0, config=CONFIG, schedule=_schedule()).coverage
    assert {f"ack_request:{k}:" for k in HANDLE_KINDS} <= {k[:k.rindex(":") + 1] for k in cov if "_request:" in k}
    assert {f"change_invisible_request:{k}:" for k in CHANGE_KINDS} <= \
        {k[:k.rindex(":") + 1] for k in cov if "_request:" in k}
    batch = "NO_MESSAGE" if profile == "v5.5" else "REQUEST_CODE_NOT_SUPPORTED"
    assert {f"batch_ack_request:{k}:{batch}" for k in BATCH_ACK_BODY_KINDS} <= cov
    refused = "INVALID_PARAMETER" if profile == "v5.5" else "SYSTEM_ERROR"
    assert f"pop:{refused}:0" in cov and "pop:SUCCESS:1" in cov
    assert {f"revive_topic_put:{k}:SUCCESS" for k in REVIVE_PUT_KINDS} <= cov


def test_a_consumer_holding_nothing_sends_only_the_refusals_before_the_handle() -> None:
    """(On the model) queue past the end, queue -1 and a missing topic are answered without a held
    message; a garbled handle needs one: skipped."""
    r = run_scenario("v5.5", 5, 0, config=CONFIG, schedule=UNHELD)
    assert not any(p.startswith("change_invisible_request:garbled") for p in r.coverage)
    assert {"change_invisible_request:queue_past_end:MESSAGE_ILLEGAL",
            "change_invisible_request:queue_minus_one:MESSAGE_ILLEGAL",
            "change_invisible_request:no_topic:TOPIC_NOT_EXIST"} <= r.coverage


def test_processor_exceptions_are_system_error_and_harness_refusals_stay_errors() -> None:
    assert code_of({"error": "java.lang.NumberFormatException: For input string: \"x0\""}) == rc.SYSTEM_ERROR
    assert code_of({"error": "queueId must be in 0..1023, got 5000"}) == "queueId must be in 0..1023, got 5000"
    assert code_of({"code": 29}) == 29
    assert java_pop_answer({"error": "java.lang.IllegalArgumentException: Illegal Capacity: -1"})["code"] == \
        rc.SYSTEM_ERROR


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_refused_requests_agree_on_the_real_broker(profile: str) -> None:
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 5, CONFIG, _schedule(), client)
    assert verdict.status == "agrees", verdict.to_json()
    assert verdict.steps >= 30


@needs_jdk
@pytest.mark.slow
def test_a_wrong_response_code_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model answering 5.5.0's refused POP with SYSTEM_ERROR instead of INVALID_PARAMETER
    diverges at that POP, on the response code."""
    monkeypatch.setattr(rc, "INVALID_PARAMETER", rc.SYSTEM_ERROR)
    with LockstepClient(RELEASES["v5.5"]) as client:
        verdict = run_lockstep("v5.5", 5, CONFIG, _schedule(), client)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.action == ("pop_request", 0, 2, 4, 1000) and verdict.key == ".response.code"
    assert (verdict.model, verdict.java) == (rc.SYSTEM_ERROR, 29)


@needs_jdk
@pytest.mark.slow
def test_a_batch_ack_without_acks_answered_success_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that takes a batch ack without acks as done (SUCCESS) diverges at the first one:
    5.5.0 answers NO_MESSAGE (AckMessageProcessor#processRequest:179)."""
    monkeypatch.setattr(broker_module, "batch_ack_without_acks", lambda broker, body: rc.SUCCESS)
    schedule = [Action("batch_ack_request", (b,)) for b in range(len(BATCH_ACK_BODY_KINDS))]
    with LockstepClient(RELEASES["v5.5"]) as client:
        verdict = run_lockstep("v5.5", 5, CONFIG, schedule, client)
    assert verdict.status == "diverges" and verdict.step == 0, verdict.to_json()
    assert (verdict.key, verdict.model, verdict.java) == (".response.code", rc.SUCCESS, rc.NO_MESSAGE)


def test_a_revive_round_reaching_an_untimed_message_throws_on_5_0_only() -> None:
    """(On the model) revive6: revive queue 0's round reads the CK without a topic, the CK without a
    group, the ACK without a broker name and a timed message of another tag, skips them, then
    reaches the untimed one: 5.0.0's getDeliverTimeMs throws (the round ends, nothing committed),
    5.5.0 skips it too."""
    schedule = [Action("revive_topic_put", (0, REVIVE_PUT_KINDS.index(k))) for k in REVIVE_PUT_KINDS]
    schedule += [Action("advance", (20,)), Action("timer",), Action("revive", (0,))]
    for profile, throws in (("v5.0", 1), ("v5.5", 0)):
        driver = PopDriver(profile, 5, CONFIG, True, False)
        driver.run(0, schedule)
        assert driver.broker.revive_services[0].rounds_failed_reading == throws
        assert driver.broker.stored_checkpoints() == []  # the CKs the revive skips are not pending


@needs_jdk
@pytest.mark.slow
def test_a_5_0_revive_that_skips_an_untimed_message_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """revive6: a 5.0.0 model whose getDeliverTimeMs answers 0 without the property (5.5.0's)
    diverges at the revive that reaches the producer's message without a deliver time: Java's
    round throws NumberFormatException."""
    monkeypatch.setitem(RELEASE_SWITCHES["v5.0"], "deliver_time_answers_zero", True)
    schedule = [Action("revive_topic_put", (0, REVIVE_PUT_KINDS.index("untimed_tag"))), Action("advance", (20,)),
                Action("timer",), Action("revive", (0,))]
    with LockstepClient(RELEASES["v5.0"]) as client:
        verdict = run_lockstep("v5.0", 5, CONFIG, schedule, client)
    assert verdict.status == "diverges" and verdict.action == ("revive", 0), verdict.to_json()
    assert (verdict.key, verdict.java) == (".response.reviveError", True), verdict.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_raw_pop_in_an_orderly_group_is_checked_as_non_orderly_on_both_sides() -> None:
    """v5.0 sweep seed 108: an orderly POP holds m1; a raw (non-orderly) pop_request of the group
    re-delivers it. Both sides' checkers take the delivery's order flag from its request, so
    Java's own history violates INV-1 and RED-1 as the model's does (Java's checker used to
    exempt it as orderly, by the configuration). The sweep's invisibleTime was Integer.MIN_VALUE;
    a raw POP with invisibleTime <= 0 of an orderly configuration is orderly since 26 November
    2026 (request_domain.raw_pop_is_orderly), so this one asks for 10 s."""
    config = ScenarioConfig(queues=1, consumers=1, invisible_time=3000, enable_pop_buffer_merge=False,
                            pop_orderly=True, drain=False,
                            actions=("produce", "pop", "pop_step", "ack", "advance", "pop_request"))
    schedule = [Action("produce", (0,)), Action("pop", (0, 0, False)), Action("pop_step", (0,)),
                Action("pop_step", (0,)), Action("pop_request", (0, 0, 27, 10_000)),
                *[Action("pop_step", (0,))] * 3]
    with LockstepClient(RELEASES["v5.0"]) as client:
        v = run_lockstep("v5.0", 0, config, schedule, client)
    assert v.status == "agrees", v.to_json()
    assert {"INV-1", "RED-1"} <= set(v.java_violations) and {"INV-1", "RED-1"} <= set(v.model_violations)


# pop_shape (popverify/sim/pop_shapes.py): every shape on all queues and on one, then the
# consumed group's own POP (the shapes took none of its messages)
SHAPE_CONFIG = attrs.evolve(CONFIG, actions=tuple(POP_ACTIONS) + ("pop_shape", "produce_sized"))


def _shape_schedule() -> list[Action]:
    s = [Action("produce", (0,)), Action("produce", (1,)), Action("produce", (1,))]
    for k, shape in enumerate(SHAPES):
        for q in (-1, 1):
            s += [Action("pop_shape", (0, k, q)), *[Action("pop_step", (0,))] * 3]
            if shape == "poll_expired":  # 5.0.0 parked it (for 1 s): its timeout answers it
                s += [Action("advance", (2000,)), Action("long_poll",), *[Action("pop_step", (0,))] * 3]
            if shape == "tag_poll":  # parked: a put wakes it on 5.0.0 only (5.5.0 tests its filter)
                s += [Action("produce", (1,)), *[Action("pop_step", (0,))] * 3, Action("advance", (2000,)),
                      Action("long_poll",), *[Action("pop_step", (0,))] * 3]
    # and a produce_sized of an empty body: null once decoded, refused by the store's put hook
    # (HookUtils#checkBeforePutMessage: MESSAGE_ILLEGAL) on both sides
    return s + [Action("produce_sized", (0, 0, 0)), Action("scan",), Action("pop", (0, -1, False)),
                *[Action("pop_step", (0,))] * 3]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_the_shapes_answer_as_each_release_does(profile: str) -> None:
    """(On the model) each shape's answer; the consumed group still gets its three messages."""
    cov = run_scenario(profile, 5, 0, config=SHAPE_CONFIG, schedule=_shape_schedule()).coverage
    assert {f"pop_shape:{s}" for s in SHAPES} <= set(cov)
    assert {"pop:TOPIC_NOT_EXIST:0", "pop:SUBSCRIPTION_PARSE_FAILED:0", "pop:NO_PERMISSION:0", "pop:SUCCESS:2"} <= set(cov)
    # 5.5.0 refuses a group name TopicValidator refuses; 5.0.0 creates the group
    assert ("pop:SUBSCRIPTION_GROUP_NOT_EXIST:0" in cov) == (profile == "v5.5")


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_pop_shapes_agree_on_the_real_broker(profile: str) -> None:
    """Each release's bornTime (5.0.0 overwrites it at arrival: born_stale is a plain POP and
    poll_expired parks), group-name check, filter, init mode and an admin's permissions (the
    disabled group would read the run's messages if its POP were not refused), on the real
    processor."""
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 5, SHAPE_CONFIG, _shape_schedule(), client)
    assert verdict.status == "agrees", verdict.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_model_keeping_the_client_born_time_on_5_0_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A v5.0 model that kept the client's bornTime (5.5.0's rule) answers born_stale with
    POLLING_TIMEOUT where 5.0.0 serves it."""
    v50 = dict(RELEASE_SWITCHES["v5.0"], pop_keeps_client_born_time=True)
    monkeypatch.setitem(RELEASE_SWITCHES, "v5.0", v50)
    with LockstepClient(RELEASES["v5.0"]) as client:
        verdict = run_lockstep("v5.0", 5, SHAPE_CONFIG, _shape_schedule(), client)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.action[:3] == ("pop_shape", 0, SHAPES.index("born_stale"))


# polling3: the tag_poll shape parks on queue 0; a put on queue 0 (no tags) meets its filter
# (5.5.0 PopLongPollingService#notifyMessageArriving:239-249: back into its queue) unless
# popLongPollingForceNotifyInterval forces the arrival (1: every offset); its timeout ends it.
TAG_POLL = [Action("pop_shape", (0, SHAPES.index("tag_poll"), 0)), *[Action("pop_step", (0,))] * 3,
            Action("produce", (0,)), *[Action("pop_step", (0,))] * 3, Action("advance", (2000,)),
            Action("long_poll",), *[Action("pop_step", (0,))] * 3]


@needs_jdk
@pytest.mark.slow
def test_a_parked_filtered_pop_meets_the_arrival_test_unless_forced(lockstep_pool: Pool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    plain = attrs.evolve(SHAPE_CONFIG, drain=False)
    forced = attrs.evolve(plain, broker_options=("popLongPollingForceNotifyInterval=1",))
    client = lockstep_pool.client("5.5.0")
    for config in (plain, forced):
        v = run_lockstep("v5.5", 0, config, TAG_POLL, client)
        assert v.status == "agrees", v.to_json()
    # a model that wakes it whatever the message (5.0.0's rule) diverges at its re-run
    with monkeypatch.context() as m:
        m.setitem(RELEASE_SWITCHES["v5.5"], "polling_filters_arrival", False)
        v = run_lockstep("v5.5", 0, plain, TAG_POLL, client)
        assert v.status == "diverges" and v.step == 7 and v.key == "woken", v.to_json()
    # and one blind to the interval option keeps it parked where Java wakes it
    monkeypatch.setitem(BROKER_OPTIONS, "popLongPollingForceNotifyInterval=1", None)
    v = run_lockstep("v5.5", 0, forced, TAG_POLL, client)
    assert v.status == "diverges" and v.action == ("long_poll",) and v.key == ".response.woken.length", v.to_json()


# polling3: a MAX-mode group's first POP of a queue holding two messages: getInitOffset starts it
# at 0 (offset 0 in memory) by default, at maxOffset - 1 with initPopOffsetByCheckMsgInMem off.
# The shape's filter then reads to the queue's end either way (no answer shows the start): the
# replay shows the release takes the option (a name its BrokerConfig lacks is refused) and agrees.
INIT_MAX = [Action("produce", (0,)), Action("produce", (0,)), Action("pop_shape", (0, SHAPES.index("init_max"), 0)),
            *[Action("pop_step", (0,))] * 3]


@needs_jdk
@pytest.mark.slow
def test_the_init_offset_option_is_taken_by_5_5(lockstep_pool: Pool) -> None:
    config = attrs.evolve(SHAPE_CONFIG, drain=False, broker_options=(INIT_OFFSET_OPTION,))
    v = run_lockstep("v5.5", 0, config, INIT_MAX, lockstep_pool.client("5.5.0"))
    assert v.status == "agrees", v.to_json()


# order4: an orderly batch of three on queue 0; a change by the '@' group before any of its acks
# (no map: 5.5.0 updateNextVisibleTime:276), its ack (ackOrderly commits for it; checkBlock puts
# the empty topic@GID@stray map), a change after it (the empty map: :281), an ack of the queue's
# max offset with the batch's handle (commitAndNext's loop finds nothing: :237/249,
# MESSAGE_ILLEGAL), a change with an earlier pop's handle (:285); a persist and restart
# (autoClean :306 and recover :63 skip the three-part key), then the batch acked and the queue
# popped again.
STRAY = [Action("produce", (0,))] * 3 + [Action("pop", (0, 0, False)), Action("pop_step", (0,)),
                                         Action("pop_step", (0,))] + \
    [Action("orderly_stray", (0, 0, 2)), Action("orderly_stray", (0, 1, 1)), Action("orderly_stray", (0, 0, 2)),
     Action("orderly_stray", (0, 2, 0)), Action("orderly_stray", (0, 1, 3)), Action("persist_restart", ())] + \
    [Action("ack", (0, 0))] * 3 + [Action("produce", (0,)), Action("pop", (0, 0, False)), Action("pop_step", (0,)),
                                   Action("pop_step", (0,))]
STRAY_CONFIG = ScenarioConfig(queues=1, consumers=1, max_msg_nums=4, drain=False, pop_orderly=True,
                              enable_pop_buffer_merge=False, faults=("persist_restart",),
                              actions=("produce", "pop", "pop_step", "ack", "orderly_stray"))


def test_orderly_stray_requests_answer_as_the_model_says() -> None:
    """(On the model) the '@' group's requests and the earlier pop's change succeed, the max
    offset's ack is refused; a non-orderly POP's messages are skipped (every kind)."""
    for profile in RELEASES:
        r = run_scenario(profile, 0, 0, config=STRAY_CONFIG, schedule=STRAY)
        assert {p for p in r.coverage if p.startswith("orderly_stray:")} == {
            "orderly_stray:at_group_change:SUCCESS", "orderly_stray:at_group_ack:SUCCESS",
            "orderly_stray:offset_at_max:MESSAGE_ILLEGAL", "orderly_stray:stale_change:SUCCESS"}, r.coverage
        assert not r.violations, r.violations
    r = run_scenario("v5.5", 0, 0, config=attrs.evolve(STRAY_CONFIG, pop_orderly=False), schedule=STRAY)
    assert not any(p.startswith("orderly_stray:") for p in r.coverage)


# polling4: MAX-mode's first POP of an admin-created empty topic: max offset - 1 is -1, so
# getInitOffset starts (and commits) 0 (5.5.0 #getInitOffset:929, 5.0.0 #getPopOffset:570). The
# committed start shows in no answer (the replay's state is the consumed topic's), as for
# INIT_MAX above: the test shows the shape reaches the queue on both sides and agrees.
INIT_MAX_EMPTY = [Action("pop_shape", (0, SHAPES.index("init_max_empty"), 0)), *[Action("pop_step", (0,))] * 3]


@needs_jdk
@pytest.mark.slow
def test_orderly_stray_requests_agree_on_5_5(monkeypatch: pytest.MonkeyPatch) -> None:
    v = run_lockstep("v5.5", 0, STRAY_CONFIG, STRAY, LockstepClient("5.5.0"))
    assert v.status == "agrees", v.to_json()
    # a model whose commitAndNext answers "no need to commit" for an offset it does not find
    # answers the max offset's ack SUCCESS where Java refuses it
    commit = QueueLevelConsumerManager55.commit_and_next

    def not_found_is_no_commit(self, *args):  # type: ignore[no-untyped-def]
        nxt = commit(self, *args)
        return -2 if nxt == -1 else nxt
    monkeypatch.setattr(QueueLevelConsumerManager55, "commit_and_next", not_found_is_no_commit)
    v = run_lockstep("v5.5", 0, STRAY_CONFIG, STRAY, LockstepClient("5.5.0"))
    assert v.status == "diverges" and v.step == STRAY.index(Action("orderly_stray", (0, 2, 0))), v.to_json()


@needs_jdk
@pytest.mark.slow
def test_a_max_mode_pop_of_an_empty_queue_agrees(lockstep_pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    config = attrs.evolve(SHAPE_CONFIG, drain=False)
    client = lockstep_pool.client("5.5.0")
    v = run_lockstep("v5.5", 0, config, INIT_MAX_EMPTY, client)
    assert v.status == "agrees", v.to_json()
    # a model whose admin did not create the topic answers TOPIC_NOT_EXIST where Java reads it
    monkeypatch.setattr(pop_shapes, "_admin_setup", lambda broker, shape: None)
    v = run_lockstep("v5.5", 0, config, INIT_MAX_EMPTY, client)
    assert v.status == "diverges" and v.action[0] == "pop_shape", v.to_json()
