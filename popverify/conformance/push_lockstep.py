"""Push lockstep: one push schedule on the model and, request by request, on RocketMQ's real
broker processors (issue 15 item 6; spec/conformance.md "Push lockstep").

The model's push consumers run as the push mode runs them (popverify/sim/push_driver.py). Every
request they (and the world) send to the model broker is recorded while a step runs -- the
outermost ConsumerBrokerApi call, with its arguments, the model's answer and the model clock --
and then sent to the harness JVM as the same RocketMQ request: PULL_MESSAGE through
PullMessageProcessor, QUERY/UPDATE_CONSUMER_OFFSET and GET_CONSUMER_LIST_BY_GROUP through
ConsumerManageProcessor, HEART_BEAT / UNREGISTER_CLIENT through ClientManageProcessor,
GET_MAX_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP and LOCK/UNLOCK_BATCH_MQ through AdminBrokerProcessor,
puts through the store, retention as ConsumeQueue#correctMinOffset, PullRequestHoldService#checkHoldRequest for ``hold``, a restart and an offset flush as
the POP replay does them. Each answer is compared (code; found status, nextBeginOffset, min /
max offset, suggested broker; the messages by topic, queue, offset, UNIQ_KEY, reconsume times;
the woken held pulls), then the broker state after the step (committed offsets of the group,
queue ranges of the topic and the group's retry topic). After each rebalance of a consumer
(its start, a ``rebalance``), the broker-side assignment of that client is compared too:
QUERY_ASSIGNMENT through QueryAssignmentProcessor against the model's do_load_balance. The
first difference is the verdict.

The client side (RebalancePushImpl, ProcessQueue, the offset store, consume services) is the
model's on both sides: Java's answers are compared with the model's, never fed to the model.
Consumer send-back goes through SendMessageProcessor (CONSUMER_SEND_MSG_BACK) into the delay-level
queues; ScheduleMessageService's delivery tasks run when the model's schedule service does
(``timer_step``). What the harness cannot send is "out of scope" with the reason, never
skipped: the client's fallback send to %RETRY% and topic deletion.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from popverify.conformance.confirm import (Diverged, OutOfScope, Verdict, _first_difference, harness_release,
                                          start_queues)
from popverify.conformance.lockstep import RELEASES, LockstepClient, to_java_time
from popverify.sim.push_driver import DLQ_TOPIC, GROUP, RETRY_TOPIC, TOPIC, Client, PushDriver
from popverify.sim.scenario import Action, ScenarioConfig
from reference.common import response_code as rc
from reference.broker.broker import Broker
from reference.broker.config import applicable_options
from reference.broker.consumer_manager import SubscriptionData
from reference.broker.keys import valid_group_name
from reference.broker.query_assignment import (BROADCASTING, BROKER_STRATEGIES, CLUSTERING,
                                               RETRY_GROUP_TOPIC_PREFIX, RequestModes, do_load_balance,
                                               route_queues,
                                               set_message_request_mode_code)
from reference.client.allocation import STRATEGIES
from reference.client.rebalance_impl import STRATEGIES as CLIENT_STRATEGIES
from reference.common.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from reference.client.offset_store import OffsetNotFound
from reference.common.remoting import PullMessageResponse

# The model broker's methods a push run calls from outside the broker; only the outermost call
# of a step is a request (put_message inside a send-back is the broker's own write).
RECORDED = ("put_message", "pull_message", "pull_hold_step", "register_consumer", "unregister_consumer",
            "get_consumer_id_list", "query_consumer_offset", "update_consumer_offset", "get_max_offset",
            "search_offset", "consumer_send_msg_back", "send_message_back_as_normal_message", "lock_batch_mq",
            "unlock_batch_mq", "restart", "delete_topic", "timer_step", "offset_flush_step",
            "roll_commit_log", "delete_commit_log_files", "clean_consume_queues", "reset_offset")
# Calls with no harness counterpart: why (reported as out of scope at the step that makes one).
NOT_DRIVEN = {
    "send_message_back_as_normal_message": "the client's fallback send to %RETRY% (a producer send)",
    "delete_topic": "topic deletion",
}
QUERY_NOT_FOUND = 22  # ResponseCode.QUERY_NOT_FOUND
# popShareQueueNum of the POP-mode assignment probe: 1 reaches each branch of allocate4Pop as
# the membership varies (share all when C <= 2, own plus the next client's when 2 < C <= Q,
# one queue each when C > Q); the broker's default (-1) would always share all.
POP_SHARE_QUEUE_NUM = 1
# The assignment probes' other requests (PushLockstep#_probe_assignment): a group no consumer has
# joined, a strategy name QueryAssignmentProcessor does not register (its constructor registers
# AVG and AVG_BY_CIRCLE: BROKER_STRATEGIES), a topic that has no config on the broker.
ABSENT_GROUP = "GID_popverify_absent"
UNSUPPORTED_STRATEGY = "popverify_unsupported"
ABSENT_TOPIC = "TopicPopverifyAbsent"
# an LMQ topic (MixAll#isLmq) and a client id no consumer of the run has
LMQ_TOPIC = "%LMQ%popverify"
UNREGISTERED_CLIENT = "popverify_unregistered"
# a group name TopicValidator#validateGroup refuses (a blank)
ILLEGAL_GROUP = "GID popverify illegal"
# Pull codes whose remark is the store's GetMessageStatus name (PullMessageProcessor sets it).
_STORE_CODES = frozenset({rc.SUCCESS, rc.PULL_NOT_FOUND, rc.PULL_RETRY_IMMEDIATELY, rc.PULL_OFFSET_MOVED})


@attrs.frozen
class Call:
    """One recorded request: the model broker method, its arguments, the model's answer (or the
    exception it raised), the model clock when it was made."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Any
    error: BaseException | None
    now: int


class _Recorder:
    """The calls of the step in progress (class-level wrappers append here)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.calls: list[Call] = []
        self.depth = 0
        self.clock = clock


_ACTIVE: list[_Recorder] = []


def _wrap(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def recorded(self: Broker, *args: Any, **kwargs: Any) -> Any:
        rec = _ACTIVE[-1] if _ACTIVE else None
        if rec is None or rec.depth > 0:
            return original(self, *args, **kwargs)
        rec.depth += 1
        now = self.clock.now()
        try:
            result = original(self, *args, **kwargs)
        except Exception as err:  # recorded and re-raised: the model's own behaviour is unchanged
            rec.calls.append(Call(name, args, kwargs, None, err, now))
            raise
        finally:
            rec.depth -= 1
        rec.calls.append(Call(name, args, kwargs, result, None, now))
        return result
    recorded.__wrapped__ = original  # type: ignore[attr-defined]
    return recorded


@contextlib.contextmanager
def recording(rec: _Recorder) -> Iterator[_Recorder]:
    """Broker's RECORDED methods record into ``rec`` while the block runs (restored after)."""
    saved = {name: Broker.__dict__[name] for name in RECORDED}
    for name, original in saved.items():
        setattr(Broker, name, _wrap(name, original))
    _ACTIVE.append(rec)
    try:
        yield rec
    finally:
        _ACTIVE.pop()
        for name, original in saved.items():
            setattr(Broker, name, original)


# -- observations ---------------------------------------------------------------------------------

def model_pull(response: PullMessageResponse | None) -> dict[str, Any]:
    """A model pull answer in the harness's form."""
    if response is None:
        return {"suspended": True}
    out: dict[str, Any] = {"suspended": False, "code": response.code,
                           "nextBeginOffset": response.next_begin_offset, "minOffset": response.min_offset,
                           "maxOffset": response.max_offset, "suggestWhichBrokerId": response.suggest_which_broker_id,
                           "messages": [{"topic": m.topic, "queueId": m.queue_id, "queueOffset": m.queue_offset,
                                         "uniqKey": m.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
                                         "reconsumeTimes": m.reconsume_times} for m in response.messages]}
    if response.code in _STORE_CODES:
        out["remark"] = response.remark
    else:  # an early return: the code is compared, its free text is not
        for key in ("nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId"):
            out.pop(key)
    return out


def java_pull(a: dict[str, Any]) -> dict[str, Any]:
    """A harness pull answer in model_pull's form."""
    if "error" in a:
        return {"error": a["error"]}
    if a.get("suspended"):
        return {"suspended": True}
    out = {"suspended": False, "code": a.get("code"), "nextBeginOffset": a.get("nextBeginOffset"),
           "minOffset": a.get("minOffset"), "maxOffset": a.get("maxOffset"),
           "suggestWhichBrokerId": a.get("suggestWhichBrokerId"),
           "messages": [{k: m.get(k) for k in ("topic", "queueId", "queueOffset", "uniqKey", "reconsumeTimes")}
                        for m in a.get("messages") or []]}
    if a.get("code") in _STORE_CODES:
        out["remark"] = a.get("remark")
    else:
        for key in ("nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId"):
            out.pop(key)
    return out


def _woken_key(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True)


def model_state(d: PushDriver) -> dict[str, Any]:
    """Committed offsets of the group and queue ranges of the topic and its retry topic."""
    b = d.broker
    offsets: dict[str, dict[str, int]] = {}
    for (group, topic, qid), off in sorted(b.committed_offsets().items()):
        if group == GROUP:
            offsets.setdefault(f"{topic}@{group}", {})[str(qid)] = off
    topics = {t: [{"queueId": q, "min": b.min_offset(t, q), "max": b.max_offset(t, q)}
                  for q in range(b.topics.get(t, 0))] for t in (TOPIC, RETRY_TOPIC)}
    return {"offsets": {k: dict(sorted(v.items(), key=lambda kv: int(kv[0]))) for k, v in sorted(offsets.items())},
            "topics": topics}


def java_state(s: dict[str, Any]) -> dict[str, Any]:
    """The harness's ``pushState`` in model_state's form."""
    offsets = {k: {str(q): o for q, o in sorted(v.items(), key=lambda kv: int(kv[0]))}
               for k, v in sorted(s.get("offsets", {}).items())}
    return {"offsets": offsets, "topics": {t: list(r) for t, r in s.get("topics", {}).items()}}


# -- the replay -----------------------------------------------------------------------------------

class PushLockstep:
    """One push schedule on the model (a PushDriver) and on a harness JVM, compared request by
    request and state by state."""

    def __init__(self, profile: str, seed: int, config: ScenarioConfig, client: LockstepClient,
                 release: str | None = None) -> None:
        self.profile = profile
        self.release = harness_release(profile, client, release)
        self.config = config
        self.client = client
        self.compared = 0
        self.requests = 0
        self.calls_compared: dict[str, int] = {}  # requests compared, by model broker method
        # the request modes the assignment probes' SET_MESSAGE_REQUEST_MODE store on the broker
        self.request_modes = RequestModes()
        # model commit-log offset -> the same message's on Java (paired in agreeing pull answers):
        # CONSUMER_SEND_MSG_BACK names a message by its commit-log offset, which differs
        self._java_phy: dict[int, int] = {}
        self._sent_back = False  # from the first send-back on, every timer_step steps Java's schedule
        self._java_now: int | None = None
        self.recorder = _Recorder(lambda: 0)
        with recording(self.recorder):
            self.driver = PushDriver(profile, seed, config, True, False)
        b = self.driver.broker
        self._call({"op": "init", "version": self.release, "queues": config.queues,
                    "now": to_java_time(self.driver.clock.now()), "brokerName": b.broker_name,
                    "brokerOptions": list(applicable_options(b.config, config.broker_options))})
        self._java_now = to_java_time(self.driver.clock.now())

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        status, value = self.client.call(request)
        return value if status == "ok" else {"error": value}

    def _at(self, now: int) -> None:
        """The harness clock at the model time ``now`` (TimeAgent's virtual clock)."""
        java_now = to_java_time(now)
        if java_now != self._java_now:
            self._call({"op": "setTime", "now": java_now})
            self._java_now = java_now

    def run(self, schedule: Sequence[Action]) -> Verdict:
        """Replay the initial requests, ``schedule``, then the drain when the config has one."""
        d = self.driver
        step = 0
        try:
            start_queues(self._call, d.broker.store, TOPIC, self.config)
            self._compare_calls(0, Action("start"), self._take())
            for client in d.world.clients:  # the initial members rebalanced as they started
                self._compare_assignment(0, Action("start"), client)
            for step, action in enumerate(schedule):
                with recording(self.recorder):
                    d.step(action)
                if d.model_error is not None:
                    raise OutOfScope(step, action, f"a model exception ({d.model_error.message})")
                self._compare_calls(step, action, self._take())
                if action.kind in ("start", "rebalance"):
                    self._compare_assignment(step, action, d.world.client(action.args[0]))
            step = len(schedule)
            d.step_no = step
            drained = False
            if self.config.drain:
                with recording(self.recorder):
                    drained = d.world.drain()
                self._compare_calls(step, Action("drain"), self._take())
            d.world.finish(drained, step)
        except OutOfScope as oos:
            return self._verdict("out of scope", step=oos.step, action=tuple(oos.action.to_json()), why=oos.why)
        except Diverged as div:
            return self._verdict("diverges", step=div.step, action=tuple(div.action.to_json()), key=div.key,
                                 model=div.model, java=div.java)
        return self._verdict("agrees")

    def _take(self) -> list[Call]:
        calls, self.recorder.calls = self.recorder.calls, []
        return calls

    def _verdict(self, status: str, **fields: Any) -> Verdict:
        ids = tuple(sorted({v.property_id for v in self.driver.checker.violations}))
        return Verdict(self.profile, self.release, status, self.compared, model_violations=ids, **fields)

    def _compare_calls(self, i: int, action: Action, calls: list[Call]) -> None:
        for k, call in enumerate(calls):
            why = NOT_DRIVEN.get(call.name)
            if why is not None:
                raise OutOfScope(i, action, why)
            self._at(call.now)
            model, java = self._observe(i, action, call)
            if model is None:
                continue
            self.calls_compared[call.name] = self.calls_compared.get(call.name, 0) + 1
            found = _first_difference(model, java)
            if found:
                raise Diverged(i, action, f"call[{k}] {call.name}{found[0]}", found[1], found[2])
        self._at(self.driver.clock.now())
        state = self._call({"op": "pushState", "group": GROUP, "topics": [TOPIC, RETRY_TOPIC]})
        if "error" in state:
            raise Diverged(i, action, "state", None, state["error"])
        self.compared += 1
        model, java = model_state(self.driver), java_state(state)
        found = _first_difference(model, java)
        if found:
            raise Diverged(i, action, f"state{found[0]}", found[1], found[2])

    def _compare_assignment(self, i: int, action: Action, client: Client) -> None:
        """After a consumer's rebalance: the broker-side assignment of ``client`` (QUERY_ASSIGNMENT,
        QueryAssignmentProcessor#queryAssignment / doLoadBalance) on Java and on the model
        (do_load_balance over the same members and queues): for every topic the consumer
        subscribes that the model broker has, in the group's request mode, and for the topic
        with the group switched to POP mode for that one query (SET_MESSAGE_REQUEST_MODE, then
        back to PULL; allocate4Pop with POP_SHARE_QUEUE_NUM).
        The model's push client allocates for itself and never sends it; this compares the
        broker's answer, it is not a step of the run."""
        if client.consumer is None:
            return
        b, rebalance = self.driver.broker, client.consumer.rebalance
        name = next(k for k, f in CLIENT_STRATEGIES.items() if f is rebalance.allocate)
        strategy = STRATEGIES[name] if name in BROKER_STRATEGIES else None
        # each subscribed topic the broker routes in PULL mode; the topic once more with the group
        # in POP mode (the retry topic cannot be switched: NO_PERMISSION)
        probes = [(topic, None) for topic in rebalance.subscriptions] + [(TOPIC, POP_SHARE_QUEUE_NUM)]
        cids = b.get_consumer_id_list(GROUP)
        for topic, share in probes:
            mq_set = b.topic_queues(topic)
            if not mq_set:
                continue  # no route for it: the broker would ask the name server
            request = {"op": "queryAssignment", "topic": topic, "group": GROUP, "clientId": client.name,
                       "strategy": name}
            self._compare_query(i, action, f"{topic}{'' if share is None else ' POP'}",
                                request if share is None else {**request, "popShareQueueNum": share},
                                strategy, mq_set, cids)
        self._probe_assignment(i, action, client, strategy, name)

    def _compare_query(self, i: int, action: Action, what: str, request: dict[str, Any], strategy: Any,
                       mq_set: Sequence[Any] | None, cids: Sequence[str] | None) -> None:
        """One QUERY_ASSIGNMENT on Java against the model's do_load_balance over ``mq_set`` and
        ``cids``, in the group's request mode (RequestModes; with "popShareQueueNum", the group
        switched to POP mode for that one query and back to PULL). None: the client keeps its
        assignment."""
        b = self.driver.broker
        topic, group = request["topic"], request["group"]
        model_name = request.get("messageModel", CLUSTERING)
        pop_share = request.get("popShareQueueNum")
        if pop_share is not None:
            self.request_modes.set(topic, group, pop_share)
        share = self.request_modes.share_of(topic, group, b.config.default_message_request_mode_pop)
        model = do_load_balance(model_name, strategy, group, request["clientId"], mq_set, cids, share,
                                server_load_balancer=b.config.server_load_balancer_enable)
        if pop_share is not None:
            self.request_modes.set(topic, group, None)
        a = self._call(request)
        java: Any = a.get("error") or a.get("queues")
        if isinstance(java, list):
            java = sorted(f"{q['topic']}:{q['queueId']}:{q['mode']}" for q in java)
        # queryAssignment:139 gives every assignment the group's mode, broadcasting included
        expected = None if model is None else sorted(f"{mq.topic}:{mq.queue_id}:{'PULL' if share is None else 'POP'}"
                                                     for mq in model)
        if pop_share is not None and "error" not in a:
            # SET_MESSAGE_REQUEST_MODE on a routed topic: SUCCESS both ways
            expected, java = [expected, rc.SUCCESS, rc.SUCCESS], [java, a.get("setMode"), a.get("resetMode")]
        self.calls_compared["query_assignment"] = self.calls_compared.get("query_assignment", 0) + 1
        if expected != java:
            raise Diverged(i, action, f"queryAssignment[{what}]", expected, java)

    def _probe_assignment(self, i: int, action: Action, client: Client, strategy: Any, name: str) -> None:
        """The requests of other clients and admins the model's push client never sends, each
        compared and without effect on either broker: QUERY_ASSIGNMENT of a broadcasting
        consumer, of a group with no consumer and with a strategy the broker does not register
        (QueryAssignmentProcessor#doLoadBalance:170-176, 199-206, 215-219 of 5.5.0), of topics
        without a route (a topic and a retry topic no broker has, clustering and broadcasting:
        :172-176, 185-192), of an LMQ topic (:180-184), and of a client not yet registered with
        the group in POP mode (allocate4Pop:264, allocate:295); and SET_MESSAGE_REQUEST_MODE on
        the retry topic, on a topic without a config and of a group name TopicValidator refuses
        (#setMessageRequestMode)."""
        b = self.driver.broker
        mq_set = b.topic_queues(TOPIC)
        if not mq_set:
            return
        cids = b.get_consumer_id_list(GROUP)
        request = {"op": "queryAssignment", "topic": TOPIC, "group": GROUP, "clientId": client.name, "strategy": name}
        absent_retry = RETRY_GROUP_TOPIC_PREFIX + ABSENT_GROUP
        queries: list[tuple[str, dict[str, Any], Any, Any, Any]] = [
            ("broadcasting", {**request, "messageModel": BROADCASTING}, strategy, mq_set, cids),
            # getConsumerGroupInfo is null: cidAll null (QueryAssignmentProcessor:199-206)
            ("no consumer", {**request, "group": ABSENT_GROUP}, strategy, mq_set, None),
            ("unsupported strategy", {**request, "strategy": UNSUPPORTED_STRATEGY}, None, mq_set, cids),
            # a client whose heartbeat has not reached the broker yet: not in cidAll
            # (popShareQueueNum 1 shares only among 3 or more members: allocate4Pop:260-275)
            ("unregistered POP", {**request, "clientId": UNREGISTERED_CLIENT, "popShareQueueNum": POP_SHARE_QUEUE_NUM},
             strategy, mq_set, cids)]
        for what, topic, model in (("no route", ABSENT_TOPIC, CLUSTERING),
                                   ("no route broadcasting", ABSENT_TOPIC, BROADCASTING),
                                   ("no route retry", absent_retry, CLUSTERING), ("lmq", LMQ_TOPIC, CLUSTERING)):
            # the LMQ shortcut is the clustering branch's only (5.5.0:180)
            routed = route_queues(topic, b.broker_name, b.topic_queues(topic),
                                  model == CLUSTERING and b.config.query_assignment_lmq_queue)
            queries.append((what, {**request, "topic": topic, "messageModel": model}, strategy, routed, cids))
        for what, req, strat, queues, members in queries:
            self._compare_query(i, action, what, req, strat, queues, members)
        # the retry topic, a topic without a config, and a group name TopicValidator refuses
        for topic, group in ((RETRY_TOPIC, GROUP), (ABSENT_TOPIC, GROUP), (TOPIC, ILLEGAL_GROUP)):
            found = not b.config.validate_group_name or valid_group_name(group)
            expected_code = set_message_request_mode_code(topic, topic in b.topics,
                                                          b.config.set_request_mode_checks_topic, found)
            a = self._call({"op": "setMessageRequestMode", "topic": topic, "group": group})
            if expected_code == rc.SUCCESS:
                self.request_modes.set(topic, group, None)
            self.calls_compared["set_message_request_mode"] = self.calls_compared.get("set_message_request_mode", 0) + 1
            if a.get("code") != expected_code:
                raise Diverged(i, action, f"setMessageRequestMode[{topic}{'' if group == GROUP else ' ' + group}]",
                               expected_code, a.get("error", a.get("code")))

    def _observe(self, i: int, action: Action, call: Call) -> tuple[Any, Any]:
        """(model observation, Java observation) of one call; (None, None) when it sends nothing."""
        name, args, res = call.name, call.args, call.result
        if name == "put_message":
            topic, qid = args[0], args[1]
            uniq = res.uniq_key
            # a refused put has no uniq key: any of the same length (32 hex digits) weighs the same
            put = {"op": "put", "topic": topic, "queueId": qid, "uniqKey": uniq or "0" * 32,
                   "body": call.kwargs.get("body", b"x" * 16).decode()}
            user = {k: v for k, v in (call.kwargs.get("properties") or {}).items()
                    if k != PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX}
            if user:  # produce_sized's padding: the store's size checks see the same lengths
                put["properties"] = user
            if call.kwargs.get("tags"):  # produce_tagged's tag (Message#setTags), or ScenarioConfig.produce_tags
                put["tags"] = call.kwargs["tags"]
            a = self._call(put)
            stored = a.get("status") == "PUT_OK"
            return ({"ok": res.code == rc.SUCCESS, "queueOffset": res.queue_offset if res.code == rc.SUCCESS else None},
                    {"ok": a.get("error", stored), "queueOffset": a.get("queueOffset") if stored else None})
        if name == "pull_message":
            h = args[0]
            a = self._call({"op": "pull", "clientId": h.client_id or "client", "group": h.consumer_group,
                            "topic": h.topic, "queueId": h.queue_id, "queueOffset": h.queue_offset,
                            "maxMsgNums": h.max_msg_nums, "sysFlag": h.sys_flag, "commitOffset": h.commit_offset,
                            "suspendTimeoutMillis": h.suspend_timeout_millis, "subscription": h.subscription,
                            "subVersion": h.sub_version, "expressionType": h.expression_type,
                            "lite": h.lite_pull})
            model, java = model_pull(res), java_pull(a)
            if res is not None and model == java:
                for m, j in zip(res.messages, a.get("messages") or []):
                    self._java_phy[m.commit_log_offset] = j["commitLogOffset"]
            return model, java
        if name == "pull_hold_step":
            a = self._call({"op": "pullHeld"})
            model = sorted((_woken_key({"clientId": h.client_id or "client", "topic": h.topic, "queueId": h.queue_id,
                                        "queueOffset": h.queue_offset, "response": model_pull(r)}) for h, r in res))
            if "error" in a:
                return model, {"error": a["error"]}
            by_request = {(h.client_id or "client", h.topic, h.queue_id, h.queue_offset): r for h, r in res}
            for w in a.get("woken") or []:
                q = w.get("request") or {}
                r = by_request.get((w.get("clientId"), q.get("topic"), q.get("queueId"), q.get("queueOffset")))
                if r is not None:
                    for m, j in zip(r.messages, (w.get("response") or {}).get("messages") or []):
                        self._java_phy[m.commit_log_offset] = j["commitLogOffset"]
            java = sorted(_woken_key({**{k: (w.get("request") or {}).get(k)
                                         for k in ("topic", "queueId", "queueOffset")},
                                      "clientId": w.get("clientId"), "response": java_pull(w.get("response") or {})})
                          for w in a.get("woken") or [])
            return [json.loads(x) for x in model], [json.loads(x) for x in java]
        if name == "register_consumer":
            group, client_id, topics = args[0], args[1], args[2]
            sub = call.kwargs.get("subscription") or SubscriptionData()
            a = self._call({"op": "heartbeat", "clientId": client_id, "group": group, "topics": list(topics),
                            "messageModel": "BROADCASTING" if call.kwargs.get("broadcast") else "CLUSTERING",
                            "consumeType": "CONSUME_ACTIVELY" if call.kwargs.get("active") else "CONSUME_PASSIVELY",
                            "subString": sub.sub_string, "expressionType": sub.expression_type,
                            "subVersion": sub.sub_version})
            return {"code": res}, {"code": a.get("code", a.get("error"))}
        if name == "unregister_consumer":
            group, client_id = args[0], args[1]
            a = self._call({"op": "unregister", "clientId": client_id, "group": group})
            return {"code": res}, {"code": a.get("code", a.get("error"))}
        if name == "get_consumer_id_list":
            a = self._call({"op": "consumerList", "clientId": "client", "group": args[0]})
            return {"ids": sorted(res)}, {"ids": a.get("consumerIdList", a.get("error"))}
        if name == "query_consumer_offset":
            group, mq = args[0], args[1]
            a = self._call({"op": "queryOffset", "clientId": "client", "group": group, "topic": mq.topic,
                            "queueId": mq.queue_id})
            model = {"code": QUERY_NOT_FOUND} if isinstance(call.error, OffsetNotFound) else {"code": rc.SUCCESS,
                                                                                          "offset": res}
            if call.error is not None and not isinstance(call.error, OffsetNotFound):
                model = {"error": type(call.error).__name__}
            java = {"code": a.get("code", a.get("error"))}
            if a.get("code") == rc.SUCCESS:
                java["offset"] = a.get("offset")
            return model, java
        if name == "update_consumer_offset":
            group, mq, offset = args[0], args[1], args[2]
            a = self._call({"op": "updateOffset", "clientId": "client", "group": group, "topic": mq.topic,
                            "queueId": mq.queue_id, "commitOffset": offset})
            return {"code": rc.SUCCESS}, {"code": a.get("code", a.get("error"))}
        if name == "get_max_offset":
            mq = args[0]
            a = self._call({"op": "maxOffset", "topic": mq.topic, "queueId": mq.queue_id})
            return {"offset": res}, {"offset": a.get("offset", a.get("error"))}
        if name == "search_offset":
            mq, ts = args[0], args[1]
            # a model time on the harness clock; 0 ("before everything") stays 0
            a = self._call({"op": "searchOffset", "topic": mq.topic, "queueId": mq.queue_id,
                            "timestamp": to_java_time(ts) if ts > 0 else 0})
            return {"offset": res}, {"offset": a.get("offset", a.get("error"))}
        if name in ("lock_batch_mq", "unlock_batch_mq"):
            group, client_id, mqs = args[0], args[1], args[2]
            mq_set = [{"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id} for mq in mqs]
            a = self._call({"op": "lockBatch" if name == "lock_batch_mq" else "unlockBatch", "clientId": client_id,
                            "group": group, "mqSet": mq_set})
            if name == "unlock_batch_mq":
                return {"code": rc.SUCCESS}, {"code": a.get("code", a.get("error"))}
            return ({"code": rc.SUCCESS, "locked": sorted(f"{mq.topic}:{mq.queue_id}" for mq in res)},
                    {"code": a.get("code", a.get("error")), "locked": a.get("locked")})
        if name == "roll_commit_log":
            # the model's produce ends the commit log's file before each put, as the POP replay
            # does (spec/conformance.md "Retention and topic deletion")
            a = self._call({"op": "rollCommitLog"})
            return {}, ({"error": a["error"]} if "error" in a else {})
        if name == "delete_commit_log_files":
            # retention's commit-log stage (the expire fault, popverify/sim/retention.py): the
            # `count` oldest files, never the newest (RetentionOps, CommitLog#deleteExpiredFile)
            a = self._call({"op": "deleteCommitLogFiles", "files": args[0]})
            return {"deleted": res}, {"deleted": a.get("deleted", a.get("error"))}
        if name == "clean_consume_queues":
            # retention's consume-queue stage (CleanConsumeQueueService#deleteExpiredFiles); the
            # min offsets it sets are compared in the state after the step
            a = self._call({"op": "cleanConsumeQueues"})
            return {"ran": res}, {"ran": a.get("ran", a.get("error"))}
        if name == "reset_offset":
            # offsets2: an admin's reset of one queue of the push group (AdminGroupOps#resetOffset:
            # INVOKE_BROKER_TO_RESET_OFFSET with server_side_reset_offset, else UPDATE_CONSUMER_OFFSET)
            topic, group, qid, offset = args
            a = self._call({"op": "resetOffset", "topic": topic, "group": group, "queueId": qid, "offset": offset,
                            "serverSide": self.driver.broker.config.server_side_reset_offset})
            return {"code": res}, {"code": a.get("code", a.get("error"))}
        if name == "restart":
            a = self._call({"op": "restart"})
            return {}, ({"error": a["error"]} if "error" in a else {})
        if name == "offset_flush_step":
            if not res:
                return None, None
            a = self._call({"op": "flush"})
            return {}, ({"error": a["error"]} if "error" in a else {})
        if name == "consumer_send_msg_back":
            group, msg, delay_level, max_times = args[0], args[1], args[2], args[3]
            phy = self._java_phy.get(msg.commit_log_offset)
            if phy is None:
                raise OutOfScope(i, action, "send-back of a message Java never delivered to this run")
            a = self._call({"op": "sendBack", "clientId": "client", "group": group, "offset": phy,
                            "delayLevel": delay_level, "originTopic": msg.topic,
                            "originMsgId": msg.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or "",
                            "maxReconsumeTimes": 16 if max_times is None else max_times})
            self._sent_back = True
            return {"code": res}, {"code": a.get("code", a.get("error"))}
        if name == "timer_step":
            if not res and not self._sent_back:
                return None, None  # nothing sent back: nothing in ScheduleMessageService's queues
            a = self._call({"op": "scheduleStep", "topics": [RETRY_TOPIC, DLQ_TOPIC]})
            return {"delivered": res}, {"delivered": a.get("delivered", a.get("error"))}
        raise OutOfScope(i, action, f"no harness counterpart for {name}")


def run_push_lockstep(profile: str, seed: int, config: ScenarioConfig, schedule: Sequence[Action],
                      client: LockstepClient, release: str | None = None) -> Verdict:
    """Replay one push schedule on the model and on ``client``'s release; the verdict."""
    return PushLockstep(profile, seed, config, client, release).run(schedule)


def push_differential(profile: str, cases: int, seed: int, steps: int, client: LockstepClient,
                      progress: Callable[[str], None] = lambda _: None, clock: Callable[[], float] | None = None,
                      first_case: int = 0) -> Any:
    """``cases`` push swarm schedules of ``steps`` drawn actions on ``profile`` (a StatefulReport:
    agree / diverge / out-of-scope counts, each divergence class with its first example). Case
    k's configuration and schedule depend only on ``seed`` and k (a run in chunks is the same
    run); the schedule is drawn by the model alone first, then replayed in lockstep."""
    from popverify.conformance.confirm import StatefulReport
    from popverify.sim.scenario import run_scenario
    from reference.common.javalang import JavaRandom

    report = StatefulReport(profile, RELEASES[profile])
    for case in range(first_case, first_case + cases):
        rng = JavaRandom(seed * 1_000_003 + case)
        config = ScenarioConfig.draw(rng, mode="push")
        run_seed = rng.next_int(1 << 30)
        drawer = PushDriver(profile, run_seed, config, False, False)
        drawer.run(steps, None)
        schedule = tuple(drawer.schedule)
        t0 = clock() if clock else 0.0
        verdict = run_push_lockstep(profile, run_seed, config, schedule, client)
        if clock is not None:
            t1 = clock()
            run_scenario(profile, run_seed, 0, mode="push", config=config, schedule=schedule)
            report.model_seconds += clock() - t1
            report.seconds += t1 - t0
        report.record(case, run_seed, config, schedule, verdict)
        progress(f"{profile} case {case}: {verdict.headline()}")
    return report
