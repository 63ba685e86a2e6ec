"""Push lockstep (popverify/conformance/push_lockstep.py): a push schedule's broker requests on
PullMessageProcessor, ConsumerManageProcessor, ClientManageProcessor and AdminBrokerProcessor of
the real releases. The JVM tests are slow (one harness JVM per release, cached build); the
bad-input and recording tests start no JVM."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from lockstep_pool import Pool
from popverify.cli import main
from popverify.conformance import push_lockstep as pl
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.sim.pull_request import PULL_KINDS
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario, run_spec
from popverify.trace.itf import read_trace, write_trace
from reference.broker import pull_processor
from reference.broker.broker import Broker
from reference.common import response_code as rc
from reference.common.remoting import PullMessageResponse

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")
TRACES = Path(__file__).resolve().parents[2] / "spec" / "findings" / "traces"
# LockstepClient(release) lends the session's JVM of the release (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_lockstep")

# Two queues, two consumers, no listener failure (a send-back is out of scope): puts, pulls with
# messages, consumption, offset commits (persist and the pull's commit flag), a pull that the
# broker holds and a put that wakes it, a broker restart with re-registration, time passing.
CONFIG = ScenarioConfig(queues=2, consumers=2, consume_fail_percent=0, faults=("restart",), drain=True,
                        actions=("produce", "start", "shutdown", "rebalance", "pull", "deliver", "hold", "consume",
                                 "persist", "consumer_timer", "advance", "pull_request"))
SCHEDULE = [Action("produce", (0,)), Action("produce", (1,)), Action("rebalance", (0,)), Action("advance", (600,)),
            Action("pull", (0,)), Action("pull", (1,)), Action("deliver", (0, 0)), Action("deliver", (1, 0)),
            Action("consume", (0, False)), Action("consume", (1, False)), Action("persist", (0,)),
            Action("persist", (1,)),
            # c1's next pull finds queue 1 empty: held; the put wakes it; hold hands the answer over
            Action("pull", (1,)), Action("produce", (1,)), Action("hold",), Action("deliver", (1, 0)),
            Action("consume", (1, False)),
            # held again, and answered by checkHoldRequest once its 15 s suspend time is up
            Action("pull", (1,)), Action("advance", (16000,)), Action("hold",),
            Action("restart",), Action("rebalance", (0,)), Action("advance", (600,)), Action("pull", (0,)),
            Action("deliver", (0, 0)), Action("advance", (1000,)),
            # every pull_request kind (popverify/sim/pull_request.py) on queue 1: validation,
            # a pull's own subscription, offsets out of range, a broadcast group's pull
            *(Action("pull_request", (1, 1, k)) for k in range(len(PULL_KINDS)))]


@pytest.fixture(scope="module")
def harness(lockstep_pool: Pool) -> Iterator[Callable[[str], LockstepClient]]:
    """The session's harness JVM of a release (tests/conftest.py; each replay resets its broker
    with `init`)."""
    yield lockstep_pool.client


def _trace(tmp_path: Path, profile: str, schedule: list[Action], config: ScenarioConfig = CONFIG,
           name: str = "push.json") -> Path:
    result = run_scenario(profile, 11, len(schedule), mode="push", config=config, schedule=schedule,
                          record_trace=True)
    assert result.trace is not None
    path = tmp_path / name
    write_trace(path, result.trace)
    return path


def test_recording_restores_the_broker_and_records_only_outermost_calls() -> None:
    originals = {name: Broker.__dict__[name] for name in pl.RECORDED}
    rec = pl._Recorder(lambda: 0)
    from popverify.sim.push_driver import PushDriver

    with pl.recording(rec):
        d = PushDriver("v5.0", 1, CONFIG, False, False)
        d.step(Action("produce", (0,)))
    assert {name: Broker.__dict__[name] for name in pl.RECORDED} == originals
    names = [c.name for c in rec.calls]
    assert names[0] == "register_consumer" and names[-1] == "put_message", names
    assert names.count("put_message") == 1


def test_pull_observations_keep_what_java_answers_and_drop_free_text_of_early_returns() -> None:
    found = PullMessageResponse(0, "FOUND", 3, 0, 5, 0)
    assert pl.model_pull(found) == {"suspended": False, "code": 0, "nextBeginOffset": 3, "minOffset": 0,
                                    "maxOffset": 5, "suggestWhichBrokerId": 0, "messages": [], "remark": "FOUND"}
    assert pl.model_pull(None) == {"suspended": True}
    java = {"suspended": False, "code": 24, "remark": "the consumer's subscription not exist", "nextBeginOffset": None,
            "minOffset": None, "maxOffset": None, "suggestWhichBrokerId": None, "messages": []}
    assert pl.java_pull(java) == {"suspended": False, "code": 24, "messages": []}


def test_bad_push_input_exits_2_before_any_jvm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((TRACES / "F5-5.0.0.itf.json").read_text())
    data["#meta"]["popverify"]["mutant"] = "no-such-mutant"
    mutant = tmp_path / "mutant.json"
    mutant.write_text(json.dumps(data))
    assert main(["confirm", str(mutant)]) == 2
    assert "mutant" in capsys.readouterr().err
    data["#meta"]["popverify"]["mutant"] = None
    data["#meta"]["popverify"]["schedule"] = [["pull", "x"]]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    assert main(["confirm", str(broken)]) == 2


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_push_schedule_agrees_on_the_real_broker(tmp_path: Path, profile: str,
                                                   harness: Callable[[str], LockstepClient],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace(tmp_path, profile, SCHEDULE)
    spec = run_spec(read_trace(path))
    woken: list[tuple[int, int, int]] = []
    observe = pl.PushLockstep._observe

    def spy(self: pl.PushLockstep, i: int, action: Action, call: pl.Call) -> tuple[object, object]:
        model, java = observe(self, i, action, call)
        if call.name == "pull_hold_step" and java and action.kind == "hold":
            woken.append((i, len(java), java[0]["response"]["code"]))  # type: ignore[index]
        return model, java
    client = harness(RELEASES[profile])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pl.PushLockstep, "_observe", spy)
        ls = pl.PushLockstep(profile, spec["seed"], spec["config"], client)
        verdict = ls.run(spec["schedule"])
    assert verdict.status == "agrees", verdict.to_json()
    assert verdict.steps == len(SCHEDULE) + 2  # the start, every step, the drain
    # the requests that make the push path were all compared (GET_MAX_OFFSET: the F5 test)
    for name in ("register_consumer", "query_consumer_offset", "put_message", "pull_message",
                 "pull_hold_step", "update_consumer_offset", "restart", "get_consumer_id_list"):
        assert ls.calls_compared.get(name, 0) > 0, (name, ls.calls_compared)
    assert woken == [(14, 1, 0), (19, 1, 19)], woken  # (step, answers, code): the put's wake, the time-out's
    # the CLI: exit 0, and the same trace gives the same bytes
    assert main(["confirm", str(path), "--json"]) == 0
    first = capsys.readouterr().out
    assert json.loads(first)[0]["status"] == "agrees"
    assert main(["confirm", str(path), "--json"]) == 0
    assert capsys.readouterr().out == first


@needs_jdk
@pytest.mark.slow
def test_a_model_answering_5_0_0s_illegal_queue_code_diverges_on_5_5_0(
        monkeypatch: pytest.MonkeyPatch, harness: Callable[[str], LockstepClient]) -> None:
    """The profile switch pull_illegal_queue_invalid_parameter is what makes queue -1 agree on
    5.5.0: without it the model answers SYSTEM_ERROR and Java INVALID_PARAMETER."""
    from reference.broker.config import RELEASE_SWITCHES

    monkeypatch.setitem(RELEASE_SWITCHES["v5.5"], "pull_illegal_queue_invalid_parameter", False)
    schedule = [Action("produce", (0,)), Action("rebalance", (0,)),
                Action("pull_request", (0, 0, PULL_KINDS.index("queue_minus_one")))]
    verdict = pl.run_push_lockstep("v5.5", 3, CONFIG, schedule, harness("5.5.0"))
    assert verdict.status == "diverges" and verdict.step == 2, verdict.to_json()
    assert verdict.key is not None and verdict.key.endswith("pull_message.code")
    assert (verdict.model, verdict.java) == (1, 29)  # SYSTEM_ERROR, INVALID_PARAMETER


@needs_jdk
@pytest.mark.slow
def test_a_wrong_model_answer_is_a_divergence(monkeypatch: pytest.MonkeyPatch,
                                              harness: Callable[[str], LockstepClient]) -> None:
    """F5's drain asks the max offset after QUERY_NOT_FOUND; a model answering one more than
    the store holds diverges there, with both values."""
    spec = run_spec(read_trace(TRACES / "F5-5.0.0.itf.json"))
    original = Broker.get_max_offset
    monkeypatch.setattr(Broker, "get_max_offset", lambda self, mq: original(self, mq) + 1)
    client = harness("5.0.0")
    verdict = pl.run_push_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"], client)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.action == ("drain",) and verdict.key is not None and "get_max_offset.offset" in verdict.key
    assert (verdict.model, verdict.java) == (3, 2)


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("release", ["5.0.0", "5.5.0"])
def test_f5_broker_answers_agree_on_java(release: str, monkeypatch: pytest.MonkeyPatch,
                                        harness: Callable[[str], LockstepClient]) -> None:
    """F5's broker side on Java: after retention moves the min offset to 1, QUERY_CONSUMER_OFFSET
    answers QUERY_NOT_FOUND and GET_MAX_OFFSET 2 -- the answers RebalancePushImpl#computePullFromWhere
    (CONSUME_FROM_LAST_OFFSET) turns into a start at 2, past the unconsumed offset 1."""
    spec = run_spec(read_trace(TRACES / f"F5-{release}.itf.json"))
    seen: list[tuple[str, object, object]] = []
    observe = pl.PushLockstep._observe

    def spy(self: pl.PushLockstep, i: int, action: Action, call: pl.Call) -> tuple[object, object]:
        model, java = observe(self, i, action, call)
        seen.append((call.name, model, java))
        return model, java
    monkeypatch.setattr(pl.PushLockstep, "_observe", spy)
    client = harness(release)
    verdict = pl.run_push_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"], client)
    assert verdict.status == "agrees", verdict.to_json()
    assert "ALO-3" in verdict.model_violations
    # retention's two stages (the expire fault): the oldest commit-log file, then the consume queues
    assert ("delete_commit_log_files", {"deleted": 1}, {"deleted": 1}) in seen
    assert ("clean_consume_queues", {"ran": True}, {"ran": True}) in seen
    assert ("query_consumer_offset", {"code": pl.QUERY_NOT_FOUND}, {"code": pl.QUERY_NOT_FOUND}) in seen
    assert ("get_max_offset", {"offset": 2}, {"offset": 2}) in seen


@needs_jdk
@pytest.mark.slow
def test_confirm_says_which_part_of_f5_ran_on_java(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", str(TRACES / "F5-5.0.0.itf.json"), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)[0]
    assert verdict["status"] == "agrees" and verdict["mode"] == "push" and "ALO-3" in verdict["model_violations"]
    assert verdict["finding"] == ("every broker answer the model's push consumers acted on agrees with "
                                  "rocketmq-broker 5.0.0; the client side is the model's (not run on Java)")


SEND_BACK_CONFIG = ScenarioConfig(queues=1, consumers=1, consume_fail_percent=0, faults=(), drain=True,
                                  actions=CONFIG.actions)


def _send_back_schedule(late_ms: int) -> list[Action]:
    """A message pulled, its listener failing ``late_ms`` before a whole second (a send-back
    at delay level 3: 10 s), then 11 s passing; the drain consumes the retry copy."""
    return [Action("produce", (0,)), Action("advance", (600,)), Action("pull", (0,)), Action("deliver", (0, 0)),
            Action("advance", (400 - late_ms,)), Action("consume", (0, True)), Action("advance", (10_000,)),
            Action("advance", (1000,))]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_send_back_and_its_delayed_delivery_agree(profile: str, harness: Callable[[str], LockstepClient]) -> None:
    """CONSUMER_SEND_MSG_BACK through SendMessageProcessor, the copy delivered by
    ScheduleMessageService at store time + 10 s, pulled from %RETRY% by the drain."""
    client = harness(RELEASES[profile])
    ls = pl.PushLockstep(profile, 5, SEND_BACK_CONFIG, client)
    verdict = ls.run(_send_back_schedule(0))
    assert verdict.status == "agrees", verdict.to_json()
    assert ls.calls_compared.get("consumer_send_msg_back") == 1 and ls.calls_compared.get("timer_step", 0) > 10


@needs_jdk
@pytest.mark.slow
def test_a_delay_level_copy_is_delivered_at_its_deliver_time_as_by_schedule_message_service(
        harness: Callable[[str], LockstepClient]) -> None:
    """Was a model defect (spec/conformance.md "Push lockstep", class `advance
    call[] timer_step.delivered`): the model parked a sent-back copy in its 1 s-precision timer
    wheel, ScheduleMessageService delivers it at its deliver time. A send-back 100 ms before a
    whole second is now delivered 10 s later by both; the retry topic, created by HEART_BEAT on
    both, is compared from the first step on."""
    client = harness("5.0.0")
    ls = pl.PushLockstep("v5.0", 5, SEND_BACK_CONFIG, client)
    verdict = ls.run(_send_back_schedule(100))
    assert verdict.status == "agrees", verdict.to_json()
    assert ls.calls_compared.get("consumer_send_msg_back") == 1


@needs_jdk
@pytest.mark.slow
def test_retention_survives_a_restart_as_on_a_broker_whose_files_were_deleted(
        harness: Callable[[str], LockstepClient]) -> None:
    """Found by the push differential (class `restart state.topics.TopicTest[].min`): a restart
    recomputes the queue's min offset from the commit log (recoverTopicQueueTable), so retention
    must really delete commit-log files (RetentionOps), as the model's expire does."""
    config = ScenarioConfig(queues=1, consumers=1, consume_fail_percent=0, faults=("expire", "restart"), drain=True,
                            actions=CONFIG.actions)
    schedule = [Action("produce", (0,)), Action("produce", (0,)), Action("expire", (0, 1)), Action("restart",),
                Action("advance", (600,)), Action("pull", (0,))]
    client = harness("5.5.0")
    verdict = pl.run_push_lockstep("v5.5", 3, config, schedule, client)
    assert verdict.status == "agrees", verdict.to_json()


def _benchmark() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "lockstep_differential.py"
    spec = importlib.util.spec_from_file_location("lockstep_differential_push", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_refuses_an_unknown_mode() -> None:
    with pytest.raises(SystemExit) as exit_:
        _benchmark().main(["--mode", "pull", "--cases", "1"])
    assert exit_.value.code == 2


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_query_assignment_agrees_after_each_rebalance(profile: str, monkeypatch: pytest.MonkeyPatch,
                                                      harness: Callable[[str], LockstepClient]) -> None:
    """After each rebalance, QueryAssignmentProcessor#queryAssignment (doLoadBalance, AVG)
    gives the rebalancing client the queues the model's do_load_balance gives it over the same
    two members: in PULL mode one queue each, of the topic and its retry topic; with the group
    switched to POP mode (SET_MESSAGE_REQUEST_MODE), allocate4Pop's answer."""
    seen: list[tuple[str, object, object]] = []
    original = pl.do_load_balance

    def spy(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        seen.append((args[3], args[6], None if result is None else sorted(mq.queue_id for mq in result)))
        return result
    monkeypatch.setattr(pl, "do_load_balance", spy)
    client = harness(RELEASES[profile])
    ls = pl.PushLockstep(profile, 1, CONFIG, client)
    verdict = ls.run(SCHEDULE)
    assert verdict.status == "agrees", verdict.to_json()
    assert ls.calls_compared.get("query_assignment", 0) == len(seen) > 0
    assert ("c0", None, [0]) in seen  # c0 of two members: queue 0 of TopicTest
    # in POP mode with popShareQueueNum 1 >= members - 1, every member pops every queue (-1)
    assert ("c0", pl.POP_SHARE_QUEUE_NUM, [-1]) in seen
    # the probes: a broadcasting query gets every queue, no consumer / an unsupported strategy null;
    # SET_MESSAGE_REQUEST_MODE thrice (the retry topic, a topic without a config, an illegal group)
    assert ("c0", None, [0, 1]) in seen and ("c0", None, None) in seen
    assert ls.calls_compared["set_message_request_mode"] == 3 * sum(
        1 for cid, share, _ in seen if share and cid != pl.UNREGISTERED_CLIENT)


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize(("profile", "queues"), [("v5.0", 2), ("v5.5", 4)])
def test_the_assignment_probes_of_three_members_agree(profile: str, queues: int, monkeypatch: pytest.MonkeyPatch,
                                                      harness: Callable[[str], LockstepClient]) -> None:
    """Three members: the POP probe of a client not yet registered reaches allocate (more
    members than queues: QueryAssignmentProcessor#allocate's cid check) on 5.0.0 and
    allocate4Pop's own-plus-next share (index < 0) on 5.5.0, no queue either way; topics without
    a route answer null; an LMQ topic one queue on 5.5.0, null (no route) on 5.0.0."""
    seen: dict[tuple[str, str], Any] = {}
    answers: list[Any] = []
    original, original_balance = pl.PushLockstep._compare_query, pl.do_load_balance

    def balance(*args: Any, **kwargs: Any) -> Any:
        answers.append(original_balance(*args, **kwargs))
        return answers[-1]

    def spy(self: pl.PushLockstep, i: int, action: Action, what: str, request: dict[str, Any], *rest: Any) -> None:
        original(self, i, action, what, request, *rest)
        seen[(what, request["clientId"])] = None if answers[-1] is None else sorted(mq.queue_id for mq in answers[-1])
    monkeypatch.setattr(pl, "do_load_balance", balance)
    monkeypatch.setattr(pl.PushLockstep, "_compare_query", spy)
    config = attrs.evolve(CONFIG, queues=queues, consumers=3, drain=False)
    verdict = pl.PushLockstep(profile, 1, config, harness(RELEASES[profile])).run([])
    assert verdict.status == "agrees", verdict.to_json()
    assert seen[("unregistered POP", pl.UNREGISTERED_CLIENT)] == []
    assert all(seen[(w, "c0")] is None for w in ("no route", "no route broadcasting", "no route retry"))
    assert seen[("lmq", "c0")] == ([0] if profile == "v5.5" else None) and seen[("lmq", "c1")] in ([], None)


@needs_jdk
@pytest.mark.slow
def test_the_push_broker_options_agree_and_a_model_ignoring_them_diverges(
        monkeypatch: pytest.MonkeyPatch, harness: Callable[[str], LockstepClient]) -> None:
    """serverLoadBalancerEnable off gives every clustering query every queue (no consumer, a
    strategy the broker lacks, a client not registered); defaultMessageRequestMode POP answers
    the group's first query in POP mode until a SET_MESSAGE_REQUEST_MODE stores PULL, which a
    restart keeps; litePullMessageEnable off refuses the schedule's lite pull (NO_PERMISSION);
    filterSupportRetry changes no answer of a tag subscription (the consumers' pulls). A
    model that ignores the default mode differs at the first query."""
    options = ("serverLoadBalancerEnable=false", "defaultMessageRequestMode=POP", "litePullMessageEnable=false",
               "filterSupportRetry")
    config = attrs.evolve(CONFIG, drain=False, broker_options=options)
    modes: list[tuple[str, Any]] = []
    original = pl.RequestModes.share_of

    def spy(self: Any, topic: str, group: str, default_pop: bool) -> Any:
        modes.append((topic, original(self, topic, group, default_pop)))
        return modes[-1][1]
    monkeypatch.setattr(pl.RequestModes, "share_of", spy)
    lite = PULL_KINDS.index("lite_all")
    schedule = [Action("restart",), Action("rebalance", (0,)), Action("pull_request", (1, 1, lite))]
    verdict = pl.PushLockstep("v5.5", 1, config, harness("5.5.0")).run(schedule)
    assert verdict.status == "agrees", json.dumps(verdict.to_json())
    assert modes[0] == (pl.TOPIC, -1) and (pl.TOPIC, None) in modes
    monkeypatch.setattr(pl.RequestModes, "share_of", lambda self, topic, group, default_pop: None)
    verdict = pl.PushLockstep("v5.5", 1, config, harness("5.5.0")).run(schedule)
    assert verdict.status == "diverges" and verdict.key == "queryAssignment[TopicTest]", verdict.to_json()
    assert verdict.model == ["TopicTest:0:PULL", "TopicTest:1:PULL"]
    assert verdict.java == ["TopicTest:0:POP", "TopicTest:1:POP"]


@needs_jdk
@pytest.mark.slow
def test_a_model_without_the_lmq_queue_diverges_on_5_5_0(monkeypatch: pytest.MonkeyPatch,
                                                          harness: Callable[[str], LockstepClient]) -> None:
    """5.5.0's doLoadBalance gives an LMQ topic its queue 0 without a route: a model that looks
    it up like any topic (5.0.0's) answers null there."""
    original = pl.route_queues
    monkeypatch.setattr(pl, "route_queues", lambda topic, name, queues, lmq: original(topic, name, queues, False))
    verdict = pl.PushLockstep("v5.5", 1, CONFIG, harness("5.5.0")).run(SCHEDULE)
    assert verdict.status == "diverges" and verdict.key == "queryAssignment[lmq]", verdict.to_json()
    assert verdict.model is None and verdict.java == ["%LMQ%popverify:0:PULL"]


@needs_jdk
@pytest.mark.slow
def test_a_model_wrong_on_a_probe_diverges_there(monkeypatch: pytest.MonkeyPatch,
                                                 harness: Callable[[str], LockstepClient]) -> None:
    """The probes compare: a model that allocates a broadcasting query like a clustering one
    differs from Java at that probe."""
    original = pl.do_load_balance
    monkeypatch.setattr(pl, "do_load_balance", lambda model, *args, **kw: original(pl.CLUSTERING, *args, **kw))
    verdict = pl.PushLockstep("v5.5", 1, CONFIG, harness("5.5.0")).run(SCHEDULE)
    assert verdict.status == "diverges" and verdict.key == "queryAssignment[broadcasting]", verdict.to_json()


def test_set_message_request_mode_answers_by_release() -> None:
    # the probes agree with both releases (test_query_assignment_agrees_after_each_rebalance),
    # where a topic without config answers SUCCESS on 5.0.0 and TOPIC_NOT_EXIST on 5.5.0, a group
    # not found (an illegal name) SUCCESS and SUBSCRIPTION_GROUP_NOT_EXIST
    from reference.broker.config import BrokerConfig
    from reference.broker.query_assignment import set_message_request_mode_code

    codes = {p: [set_message_request_mode_code(t, exists, BrokerConfig.for_profile(p).set_request_mode_checks_topic,
                                               found)
                 for t, exists, found in ((pl.RETRY_TOPIC, False, True), (pl.ABSENT_TOPIC, False, True),
                                          (pl.TOPIC, True, False))] for p in ("v5.0", "v5.5")}
    assert codes == {"v5.0": [16, 0, 0], "v5.5": [16, 17, 26]}


@needs_jdk
@pytest.mark.slow
def test_a_wrong_broker_assignment_is_a_divergence(monkeypatch: pytest.MonkeyPatch,
                                                   harness: Callable[[str], LockstepClient]) -> None:
    """A model doLoadBalance that gives every client every queue (the POP share-all answer in
    PULL mode) differs from Java's at the first comparison (the initial members, one queue
    each), with both assignments."""
    monkeypatch.setattr(pl, "do_load_balance", lambda model, strategy, group, cid, mqs, cids, share, **kw: set(mqs))
    client = harness("5.0.0")
    verdict = pl.PushLockstep("v5.0", 1, CONFIG, client).run(SCHEDULE)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.key == "queryAssignment[TopicTest]" and verdict.action == ("start",) and verdict.step == 0
    assert verdict.model == ["TopicTest:0:PULL", "TopicTest:1:PULL"] and verdict.java == ["TopicTest:0:PULL"]


@needs_jdk
@pytest.mark.slow
def test_a_model_ignoring_the_pop_mode_diverges_on_the_pop_probe(monkeypatch: pytest.MonkeyPatch,
                                                                 harness: Callable[[str], LockstepClient]) -> None:
    """A model doLoadBalance that answers a POP-mode group as a PULL one (no allocate4Pop)
    differs from Java's at the POP probe: one queue against every queue as -1."""
    original = pl.do_load_balance
    monkeypatch.setattr(pl, "do_load_balance", lambda *args, **kw: original(*args[:6], None, **kw))
    client = harness("5.5.0")
    verdict = pl.PushLockstep("v5.5", 1, CONFIG, client).run(SCHEDULE)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.key == "queryAssignment[TopicTest POP]"
    assert verdict.model == [["TopicTest:0:POP"], 0, 0] and verdict.java == [["TopicTest:-1:POP"], 0, 0]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_send_back_of_the_first_message_after_its_file_expired_agrees(
        profile: str, harness: Callable[[str], LockstepClient]) -> None:
    """Was a model defect (push coverage replay, v5.0 seed 94: class `consume call[]
    consumer_send_msg_back.code`, model SYSTEM_ERROR, Java SUCCESS): the store's first message
    (commit-log position 0) is pulled, retention deletes its file, its listener fails. Java's
    lookMessageByOffset(0) reads the first remaining file (CommitLog#getMessage,
    findMappedFileByOffset(offset, offset == 0)), so the send-back succeeds with *that* message."""
    config = ScenarioConfig(queues=1, consumers=1, consume_fail_percent=0, faults=("expire",), drain=True,
                            actions=CONFIG.actions)
    schedule = [Action("produce", (0,)), Action("produce", (0,)), Action("advance", (600,)), Action("pull", (0,)),
                Action("deliver", (0, 0)), Action("expire", (0, 1)), Action("consume", (0, True)),
                Action("advance", (11_000,))]
    client = harness(RELEASES[profile])
    ls = pl.PushLockstep(profile, 5, config, client)
    verdict = ls.run(schedule)
    assert verdict.status == "agrees", verdict.to_json()
    assert ls.calls_compared.get("consumer_send_msg_back") == 1


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile, status", [("v5.5", "agrees"), ("v5.0", "out of scope")])
def test_the_send_back_of_a_retried_message_agrees_on_both_releases(
        profile: str, status: str, harness: Callable[[str], LockstepClient]) -> None:
    """Was a model defect on 5.5.0 (push coverage replay, 8 of 200 v5.5 runs: class `consume
    call[] consumer_send_msg_back.code`, model SYSTEM_ERROR, Java SUCCESS): the retry copy fails
    again and is sent back. 5.0.0 refuses it (its stored topic is %RETRY%, not the origin
    topic: BrokerConfig.send_back_checks_origin_topic) on both sides, and the client's fallback
    send is out of scope; 5.5.0 has no such check and takes it back."""
    schedule = [Action("produce", (0,)), Action("advance", (600,)), Action("pull", (0,)), Action("deliver", (0, 0)),
                Action("consume", (0, True)), Action("advance", (10_000,)), Action("advance", (1000,)),
                Action("pull", (0,)), Action("deliver", (0, 0)), Action("pull", (0,)), Action("deliver", (0, 0)),
                Action("consume", (0, True)), Action("advance", (1000,))]
    ls = pl.PushLockstep(profile, 5, SEND_BACK_CONFIG, harness(RELEASES[profile]))
    verdict = ls.run(schedule)
    assert verdict.status == status, verdict.to_json()
    assert ls.calls_compared.get("consumer_send_msg_back") == 2


BURN_CONFIG = ScenarioConfig(queues=1, consumers=2, max_msg_nums=4, consume_fail_percent=0, faults=(), drain=True,
                             actions=(*CONFIG.actions, "produce_sized"))
# a refused put (properties over Short.MAX_VALUE) between two produces, both consumed, a third
# produce, a clean shutdown: the other consumer starts at the committed stored offset
BURN_SCHEDULE = [Action("produce", (0,)), Action("produce_sized", (0, 1, 32768)), Action("produce", (0,)),
                 Action("advance", (1000,)), Action("pull", (0,)), Action("deliver", (0, 4)),
                 Action("consume", (0, False)), Action("consume", (0, False)), Action("produce", (0,)),
                 Action("shutdown", (0,))]


def _observations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, Action, pl.Call, Any, Any]]:
    """Every comparison PushLockstep#_observe makes from now on: (step, action, call, model's
    answer, Java's answer), in order."""
    seen: list[tuple[int, Action, pl.Call, Any, Any]] = []
    observe = pl.PushLockstep._observe

    def spy(self: pl.PushLockstep, i: int, action: Action, call: pl.Call) -> tuple[object, object]:
        model, java = observe(self, i, action, call)
        seen.append((i, action, call, model, java))
        return model, java
    monkeypatch.setattr(pl.PushLockstep, "_observe", spy)
    return seen


@needs_jdk
@pytest.mark.slow
def test_a_refused_put_burns_a_queue_offset_on_5_0_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    harness: Callable[[str], LockstepClient]) -> None:
    """5.0.0 CommitLog#asyncPutMessage:846-851: the refused put took queue offset 1, so the next
    put answers queueOffset 2 while its consume-queue unit is 1, and the third 3 at unit 2; the
    client commits 3 = the max offset and the next owner never reads unit 2 (ALO-3, every broker
    answer agreeing). Without the switch the model answers 1 where Java answers 2."""
    spec = run_spec(read_trace(_trace(tmp_path, "v5.0", BURN_SCHEDULE, BURN_CONFIG)))
    seen = _observations(monkeypatch)
    verdict = pl.run_push_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"], harness("5.0.0"))
    assert verdict.status == "agrees", verdict.to_json()
    assert {"ALO-3", "OFF-3"} <= set(verdict.model_violations)
    puts = [(model, java) for _, _, call, model, java in seen if call.name == "put_message"]
    assert [m["queueOffset"] for m, _ in puts if m["ok"]] == [0, 2, 3] and all(m == j for m, j in puts)
    from reference.broker import config as broker_config
    monkeypatch.setitem(broker_config.RELEASE_SWITCHES["v5.0"], "refused_put_burns_offset", False)
    verdict = pl.run_push_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"], harness("5.0.0"))
    assert verdict.status == "diverges" and (verdict.model, verdict.java) == (1, 2), verdict.to_json()


# store helper: DefaultMessageStore#getMessage's filters. Both queues begin 2 units before the
# end of their first consume-queue file (the harness's 30000 units): queue 0 holds two untagged
# messages there and a tagged one past the file's end; queue 1 a tagged message, then an
# untagged one, in the file's last two units. The broker option enablePropertyFilter lets the
# SQL92 pull through (PullMessageProcessor 5.5.0:478-484).
FILTER_CONFIG = attrs.evolve(CONFIG, drain=False, start_offset=29_998, broker_options=("enablePropertyFilter",),
                             actions=CONFIG.actions + ("produce_tagged",))
_SUB_TAG, _SUB_SQL = PULL_KINDS.index("sub_tag"), PULL_KINDS.index("sub_sql")
FILTER_SCHEDULE = [Action("produce", (0,)), Action("produce", (0,)), Action("produce_tagged", (0,)),
                   Action("produce", (0,)), Action("produce_tagged", (1,)), Action("produce", (1,)),
                   Action("rebalance", (0,)),
                   # queue 0: nothing matches up to the file's end (getMessage 5.5.0:928-930: the
                   # one file read, nextBeginOffset 30000 short of the max), by tags, then by SQL92
                   Action("pull_request", (0, 0, _SUB_TAG)), Action("pull_request", (0, 0, _SUB_SQL)),
                   # queue 1: the tagged message found, the untagged one after it filtered out
                   # (5.5.0:978 and 1001 with something read)
                   Action("pull_request", (0, 1, _SUB_TAG)), Action("pull_request", (0, 1, _SUB_SQL))]


@needs_jdk
@pytest.mark.slow
def test_tag_and_sql92_filters_agree_and_a_model_ignoring_sql92_diverges(
        monkeypatch: pytest.MonkeyPatch, harness: Callable[[str], LockstepClient]) -> None:
    """The four filtering pulls agree on 5.5.0: queue 0's stop at the consume-queue file's end
    with NO_MATCHED_MESSAGE (PULL_RETRY_IMMEDIATELY, nextBeginOffset 30000); queue 1's find the
    tagged message alone. A model that lets every message through the SQL92 filter
    (isMatchedByCommitLog) answers the untagged ones too."""
    seen = _observations(monkeypatch)
    verdict = pl.run_push_lockstep("v5.5", 1, FILTER_CONFIG, FILTER_SCHEDULE, harness("5.5.0"))
    assert verdict.status == "agrees", verdict.to_json()
    pulls = {i: java for i, action, _, _, java in seen if action.kind == "pull_request"}
    assert [pulls[i]["code"] for i in (7, 8, 9, 10)] == [rc.PULL_RETRY_IMMEDIATELY] * 2 + [rc.SUCCESS] * 2, pulls
    assert pulls[7]["nextBeginOffset"] == pulls[8]["nextBeginOffset"] == 30_000
    assert [len(pulls[i]["messages"]) for i in (9, 10)] == [1, 1]
    monkeypatch.setattr(pull_processor.Subscription, "commit_log_filter", lambda self: None)
    verdict = pl.run_push_lockstep("v5.5", 1, FILTER_CONFIG, FILTER_SCHEDULE, harness("5.5.0"))
    assert verdict.status == "diverges" and verdict.step == 8, verdict.to_json()


@needs_jdk
@pytest.mark.slow
def test_sql92_filter_data_and_the_offsets_options_agree_and_a_model_matching_every_message_diverges(
        monkeypatch: pytest.MonkeyPatch, harness: Callable[[str], LockstepClient]) -> None:
    """Every pull_request kind with enablePropertyFilter on, 5.5.0's broadcast offset store off
    (offsets helper) and its server-side reset off (offsets2: the harness refuses a name the
    release's BrokerConfig has no setter for, and every pull takes PullMessageProcessor:542's
    switch-off side): the SQL92 pulls (the request's own "a > 1", the heartbeat's held one)
    reach getMessage and match no message (none has the property: PULL_RETRY_IMMEDIATELY), the
    held "a >" has no filter data (FILTER_DATA_NOT_EXIST). A model whose SQL92 filter lets every
    message through answers the first SQL92 pull with messages."""
    config = attrs.evolve(CONFIG, broker_options=("enablePropertyFilter", "enableBroadcastOffsetStore=false",
                                                  "useServerSideResetOffset=false"))
    verdict = pl.PushLockstep("v5.5", 1, config, harness("5.5.0")).run(SCHEDULE)
    assert verdict.status == "agrees", json.dumps(verdict.to_json())
    monkeypatch.setattr(pull_processor.Subscription, "commit_log_filter", lambda self: None)
    verdict = pl.PushLockstep("v5.5", 1, config, harness("5.5.0")).run(SCHEDULE)
    first_sql = SCHEDULE.index(Action("pull_request", (1, 1, PULL_KINDS.index("sub_sql"))))
    assert verdict.status == "diverges" and verdict.step == first_sql, verdict.to_json()
    assert verdict.key is not None and verdict.key.endswith("pull_message.code")
    assert (verdict.model, verdict.java) == (0, 20)  # SUCCESS, PULL_RETRY_IMMEDIATELY


# offsets2: c0 pulls queue 0's three messages and commits offset 1 after consuming the first; an
# admin resets the queue forward to 4 (one past the end, as 5.5.0 accepts); c0's next pull of the
# queue (step 16, after its retry topic's pulls) takes the pending reset; the fix-up 10 s later
# commits 4 and the skipped messages 1 and 2 are the admin's, not owed
RESET_CONFIG = attrs.evolve(CONFIG, actions=CONFIG.actions + ("reset_offset",))
RESET_SCHEDULE = [Action("produce", (0,)), Action("produce", (0,)), Action("produce", (0,)), Action("rebalance", (0,)),
                  Action("advance", (600,)), Action("pull", (0,)), Action("deliver", (0, 0)),
                  Action("consume", (0, False)), Action("persist", (0,)), Action("reset_offset", (0, 4)),
                  *[Action("pull", (0,)), Action("deliver", (0, 0))] * 2, Action("advance", (11000,)),
                  Action("rebalance", (0,)), *[Action("pull", (0,)), Action("deliver", (0, 0))] * 2,
                  Action("consume", (0, False)), Action("advance", (11000,)), Action("persist", (0,))]


@needs_jdk
@pytest.mark.slow
def test_a_server_side_reset_is_taken_by_the_next_pull_and_a_model_ignoring_it_diverges(
        monkeypatch: pytest.MonkeyPatch, harness: Callable[[str], LockstepClient]) -> None:
    """5.5.0's admin reset of a push group's queue (AdminBrokerProcessor#resetOffsetInner) is
    pending until the queue's next pull, which answers OFFSET_RESET at the reset offset
    (PullMessageProcessor#processRequest:542-552, composeResponseHeader:672 PULL_OFFSET_MOVED);
    the consumer drops the queue and commits the offset 10 s later. A model whose pull never
    takes the reset reads on and diverges at that pull."""
    seen = _observations(monkeypatch)
    verdict = pl.PushLockstep("v5.5", 1, RESET_CONFIG, harness("5.5.0")).run(RESET_SCHEDULE)
    assert verdict.status == "agrees" and not verdict.model_violations, json.dumps(verdict.to_json())
    pulls = [(java["code"], java.get("remark"), java.get("nextBeginOffset"))
             for i, _, call, _, java in seen if call.name == "pull_message" and i == 16]
    assert pulls == [(rc.PULL_OFFSET_MOVED, "OFFSET_RESET", 4)], pulls
    monkeypatch.setattr(pull_processor.PullMessageProcessor, "_take_reset", lambda self, header: None)
    verdict = pl.PushLockstep("v5.5", 1, RESET_CONFIG, harness("5.5.0")).run(RESET_SCHEDULE)
    assert verdict.status == "diverges" and verdict.step == 16, verdict.to_json()
