"""Broker options and the revive's own put failure on the real broker (spec/profiles.md "Broker
options", spec/conformance.md "Store put failures and scan stalls"): a run's ``broker_options``
reach the harness's BrokerConfig (BrokerOptions.java) and the model agrees with 5.5.0 step by
step with each one on; a model that leaves an option off while Java has it on diverges where the
option shows. ``revive_put_fail`` (refuseRetryPuts: the revive's next retry puts are refused
whenever they come) agrees on both releases, and a model that never refuses them diverges in the
revive round."""

from __future__ import annotations

import attrs
import pytest

from popverify.conformance.confirm import model_state, run_lockstep
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.sim import pop_driver
from popverify.sim.actions import PRODUCE_TAG
from popverify.sim.pop_driver import GROUP, TOPIC
from popverify.sim.scenario import ScenarioConfig
from reference.broker import put_failure
from tests.conformance.test_lockstep_put_refusal import _a, _pop, needs_jdk

# LockstepClient(release) lends the session's JVM of the release (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_lockstep")

_REVIVE_ALL = [_a("revive", q) for q in range(8)]
# enablePopBatchAck: two acks merged into the buffered CK; the scan 11 s later (past
# popCkStayBufferTime) stores the CK and the two bits as one BatchAckMsg (putBatchAckToStore),
# which the revive then applies; the third message is revived alone.
BATCH = ScenarioConfig(queues=1, consumers=1, invisible_time=30_000, max_msg_nums=4, enable_pop_buffer_merge=True,
                       services_on_period=False, drain=True, broker_options=("enablePopBatchAck",))
BATCH_SCHEDULE = [_a("produce", 0), _a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("ack", 0, 0),
                  _a("ack", 0, 0), _a("advance", 11_000), _a("scan"), _a("advance", 20_000), _a("timer"),
                  _a("advance", 2000), _a("timer"), *_REVIVE_ALL]
# enableSkipLongAwaitingAck: m0's CK is revived and its revive offset committed; the late ack's
# ACK message has no CK in the next round and is read 181 s after its deliver time: a mock CK
# (mockCkForAck) at its offset, so the revive offset moves past it (without the option it stays).
SKIP = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, max_msg_nums=1, enable_pop_buffer_merge=False,
                      services_on_period=False, drain=True, broker_options=("enableSkipLongAwaitingAck",))
SKIP_SCHEDULE = [_a("produce", 0), *_pop(0, 0, 3), _a("advance", 6000), _a("timer"), _a("advance", 3000),
                 _a("timer"), *_REVIVE_ALL, _a("ack", 0, 0), _a("timer"), _a("advance", 181_000), _a("timer"),
                 *_REVIVE_ALL]
# revive_put_fail, armed before m0's CK is due: the revive's retry put is refused when it comes
# (5.5.0: rePutCK writes a one-message CK, revived by a later round, whose retry put is refused
# too: the arming's second refusal, answered with the END_OF_FILE append result, revive5)
# (revive4: with reviveMaxSlow=1, the loop's back-off ceiling, and tagged messages, whose revived
# copies keep their tags, reviveRetry 5.0.0:94, 5.5.0:115, on both releases)
REVIVE_FAIL = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, max_msg_nums=1,
                             enable_pop_buffer_merge=False, services_on_period=False, drain=True,
                             faults=("revive_put_fail",), broker_options=("reviveMaxSlow=1",), produce_tags=True)
REVIVE_FAIL_SCHEDULE = [_a("produce", 0), *_pop(0, 0, 3), _a("revive_put_fail", 2), _a("produce", 0),
                        _a("advance", 6000), _a("timer"), _a("advance", 3000), _a("timer"), *_REVIVE_ALL]
# useSeparateRetryQueue: the revive of queue 1's two messages creates the retry topic with the
# topic's two queues (addRetryTopicIfNotExist:174-180) and puts both copies into retry queue 1
# (getRetryQueueId:200-205); the drain pops them from there (without the option: queue 0)
SEPARATE = ScenarioConfig(queues=2, consumers=1, invisible_time=5000, max_msg_nums=4, enable_pop_buffer_merge=False,
                          services_on_period=False, drain=True, broker_options=("useSeparateRetryQueue",))
SEPARATE_SCHEDULE = [_a("produce", 0), _a("produce", 1), _a("produce", 1), *_pop(0, 1, 3), _a("advance", 6000),
                     _a("timer"), _a("advance", 3000), _a("timer"), *_REVIVE_ALL]
# buffer helper: popCkStayBufferTime=3000: m0's ack merges into the buffered CK (0.5 s after the
# pop), the scan 3.5 s after the pop stores the CK and m0's bit as an ACK (putAckToStore); m1's
# later ack finds the CK stored and is put by the processor; the revive then re-sends only m2
# (with the default 10 s nothing is stored before the revive round: the CK is still buffered)
STAY = attrs.evolve(BATCH, broker_options=("popCkStayBufferTime=3000",))
STAY_SCHEDULE = [_a("produce", 0), _a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("advance", 500),
                 _a("ack", 0, 0), _a("advance", 3000), _a("scan"), _a("ack", 0, 0), _a("advance", 27_000),
                 _a("timer"), _a("advance", 2000), _a("timer"), *_REVIVE_ALL]
# popCkMaxBufferSize=1 and popCkOffsetMaxQueueSize=1: three one-message POPs of one queue; the
# second CK finds the queue's first pop uncommitted (checkQueueOk) and the third the buffer past
# its size (addCk "max size"): both are put at once (addCkJustOffset), the first stays buffered
SIZES = ScenarioConfig(queues=1, consumers=3, invisible_time=30_000, max_msg_nums=1, enable_pop_buffer_merge=True,
                       services_on_period=False, drain=True,
                       broker_options=("popCkMaxBufferSize=1", "popCkOffsetMaxQueueSize=1"))
SIZES_SCHEDULE = [_a("produce", 0), _a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), *_pop(1, 0, 3),
                  *_pop(2, 0, 3), _a("advance", 31_000), _a("timer"), _a("advance", 2000), _a("timer"), *_REVIVE_ALL]
CASES = {"batch ack": (BATCH, BATCH_SCHEDULE), "skip long-awaiting ack": (SKIP, SKIP_SCHEDULE),
         "separate retry queue": (SEPARATE, SEPARATE_SCHEDULE),
         "short stay time": (STAY, STAY_SCHEDULE), "buffer size limits": (SIZES, SIZES_SCHEDULE),
         # and with the asynchronous puts (AckMessageProcessor, the buffer) on Java
         "async puts": (attrs.evolve(BATCH, broker_options=("enablePopBatchAck", "appendCkAsync", "appendAckAsync")),
                        BATCH_SCHEDULE)}


def test_each_option_changes_what_the_model_writes() -> None:
    # the options are not no-ops: each schedule's final state differs with the option off
    for config, schedule in CASES.values():
        states = []
        for options in (config.broker_options, ()):
            d = pop_driver.PopDriver("v5.5", 3, attrs.evolve(config, broker_options=options), True, True)
            d.run(len(schedule), schedule)
            states.append(model_state(d))
        assert any(states[0][k] != states[1][k] for k in ("revive", "reviveOffsets", "retry"))


def test_the_async_put_options_change_nothing_the_model_sees() -> None:
    # appendCkAsync / appendAckAsync: the store's future completes inside the put (one broker,
    # asynchronous flush), so the model's run is byte for byte the run without them
    config, schedule = CASES["batch ack"]
    runs = [pop_driver.PopDriver("v5.5", 3, attrs.evolve(config, broker_options=options), True, True)
            for options in (config.broker_options, config.broker_options + ("appendCkAsync", "appendAckAsync"))]
    for d in runs:
        d.run(len(schedule), schedule)
    assert model_state(runs[0]) == model_state(runs[1]) and runs[0].counts == runs[1].counts


def test_the_revive_loop_option_changes_nothing_and_tags_reach_the_retry_copy() -> None:
    # revive4: reviveMaxSlow=1 only shortens a wait of the service thread; produce_tags tags the
    # produced messages, and reviveRetry copies the tag into the retry topic (both releases)
    for profile in ("v5.0", "v5.5"):
        runs = {}
        for options, tags in (((), False), (("reviveMaxSlow=1",), False), (("reviveMaxSlow=1",), True)):
            config = attrs.evolve(REVIVE_FAIL, faults=(), broker_options=options, produce_tags=tags)
            d = pop_driver.PopDriver(profile, 3, config, True, True)
            d.run(len(REVIVE_FAIL_SCHEDULE), [a for a in REVIVE_FAIL_SCHEDULE if a.kind != "revive_put_fail"])
            runs[options, tags] = d
        plain, slow, tagged = runs.values()
        assert model_state(plain) == model_state(slow)
        retry = [m.tags for m in tagged.broker.retry_messages(GROUP, TOPIC)]
        assert retry and set(retry) == {PRODUCE_TAG}, retry
        assert {m.tags for m in plain.broker.retry_messages(GROUP, TOPIC)} == {None}


def test_a_release_without_an_option_ignores_it() -> None:
    d = pop_driver.PopDriver("v5.0", 3, SKIP, True, True)
    assert not d.broker.config.enable_skip_long_awaiting_ack
    assert pop_driver.PopDriver("v5.5", 3, SKIP, True, True).broker.config.enable_skip_long_awaiting_ack
    with pytest.raises(ValueError, match="broker_options"):
        attrs.evolve(SKIP, broker_options=("enableNothing",)).validate()


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_broker_options_agree_with_5_5_0(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config, schedule = CASES[name]
    with LockstepClient(RELEASES["v5.5"]) as client:
        verdict = run_lockstep("v5.5", 3, config, schedule, client)
        assert verdict.status == "agrees", verdict.to_json()
        # the model without the option, Java with it (the init request still names it)
        monkeypatch.setattr(pop_driver, "with_options", lambda broker_config, names: broker_config)
        broken = run_lockstep("v5.5", 3, config, schedule, client)
    assert broken.status == "diverges", broken.to_json()


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", sorted(RELEASES))
def test_revive_put_fail_agrees_and_a_model_ignoring_it_diverges(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 3, REVIVE_FAIL, REVIVE_FAIL_SCHEDULE, client)
        assert verdict.status == "agrees", verdict.to_json()
        assert verdict.put_failures[0] == "revive_retry"
        if profile == "v5.5":
            # revive5: the second refusal carries END_OF_FILE on Java (PutRefusal#refused), which
            # reviveRetry's `status != PUT_OK` reads; a model that does not count it diverges
            assert verdict.put_failures == ("revive_retry", "revive_retry"), verdict.to_json()
            with monkeypatch.context() as m:
                m.setattr(put_failure.StorePutFaults, "retry_taken", property(lambda f: 1, lambda f, v: None))
                no_file_end = run_lockstep(profile, 3, REVIVE_FAIL, REVIVE_FAIL_SCHEDULE, client)
            assert no_file_end.status == "diverges" and no_file_end.key.endswith("fileEnd"), no_file_end.to_json()
        # a model that records the arming but never refuses the retry: Java refuses it in the
        # revive round that re-sends m0, the model does not
        take = put_failure.StorePutFaults.take
        monkeypatch.setattr(put_failure.StorePutFaults, "take",
                            lambda faults, site: site != "revive_retry" and take(faults, site))
        broken = run_lockstep(profile, 3, REVIVE_FAIL, REVIVE_FAIL_SCHEDULE, client)
    assert broken.status == "diverges" and broken.step >= REVIVE_FAIL_SCHEDULE.index(_a("revive", 0)), \
        broken.to_json()


# The mock CK replaces a CK read after its ACK (5.5.0 PopReviveService#consumeReviveMessage:466
# `map.putAll(mockPointMap)`): a changeInvisibleTime of an expired handle puts the old handle's
# ACK, due at once, into the revive queue while the old CK still waits in the timer; read over
# 3 minutes after its deliver time the ACK becomes a mock, which then replaces the CK read later
# in the same round, and the CK's other message is never revived (spec/findings/README.md,
# candidate "mock CK"). Shrunk from a v5.5 run (seed 3, clock_jump and restart faults).
MOCK = ScenarioConfig(queues=2, consumers=2, invisible_time=3000, max_msg_nums=4, enable_pop_buffer_merge=False,
                      actions=("produce", "pop", "pop_step", "ack", "change_invisible", "batch_ack", "advance",
                               "scan", "timer", "revive", "flush", "long_poll", "consumer_crash"),
                      faults=("clock_jump", "restart"), broker_options=("enableSkipLongAwaitingAck",))
MOCK_SCHEDULE = [_a("pop", 0, 1, True), _a("produce", 1), _a("produce", 1), _a("clock_jump", 95627),
                 _a("change_invisible", 0, 11, 19000), _a("consumer_crash", 0), _a("clock_jump", 94710)]


@needs_jdk
@pytest.mark.slow
def test_the_mock_ck_loses_a_message_on_5_5_0() -> None:
    with LockstepClient(RELEASES["v5.5"]) as client:
        verdict = run_lockstep("v5.5", 3, MOCK, MOCK_SCHEDULE, client)
        assert verdict.status == "agrees" and verdict.java_violations == ("ALO-2",), verdict.to_json()
        assert verdict.finding == "reproduced on rocketmq-broker 5.5.0", verdict.to_json()
        # the default (option off): the orphan ACK is skipped, the CK revives both messages
        default = run_lockstep("v5.5", 3, attrs.evolve(MOCK, broker_options=()), MOCK_SCHEDULE, client)
    assert default.status == "agrees" and "ALO-2" not in default.java_violations, default.to_json()


@needs_jdk
@pytest.mark.slow
def test_the_harness_refuses_an_option_of_the_wrong_form() -> None:
    # BrokerOptions.java: `<name>=<int>` takes the int setter, a bare name the boolean one
    with LockstepClient(RELEASES["v5.0"]) as client:
        for option, says in (("popCkStayBufferTime=x", "<name>=<int>"), ("popCkStayBufferTime", "no boolean"),
                             ("enablePopBatchAck", "no boolean"), ("enablePopBatchAck=1", "no int"),
                             ("reviveMaxSlow=x", "<name>=<int>"), ("reviveMaxSlow", "no boolean")):
            status, value = client.call({"op": "init", "version": RELEASES["v5.0"], "brokerOptions": [option]})
            assert status == "error" and says in value, (option, value)
        # an int threshold, and revive4's reviveMaxSlow=1 through BrokerConfig's long setter
        assert client.ok({"op": "init", "version": RELEASES["v5.0"],
                          "brokerOptions": ["popCkMaxBufferSize=1", "reviveMaxSlow=1"]})
