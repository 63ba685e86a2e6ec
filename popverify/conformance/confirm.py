"""Lockstep replay: one POP schedule on the model and on RocketMQ's real broker classes, step
by step, every observable compared (issue 15; spec/conformance.md "Lockstep replay").

Per step, both sides give an *observation*: the response of the request the action sends
(put offset; POP code, header and every delivered message with its receipt-handle fields;
ack / batch ack / changeInvisibleTime codes and the new handle; the messages a revive round
wrote to the retry topic; timer deliveries), then the broker *state* after the step
(committed offsets of the group, queue min/max offsets of the topic, its retry topic and the
revive topic, revive offsets, the retry topic's messages and the CK/ACK messages of the
revive topic, including those still in the timer). The first step whose observations differ
is the verdict.

A POP the model splits over several steps (``pop`` then ``pop_step``\\ s, other actions in
between) is sent to Java as one request whose ``interleave`` runs the in-between actions at
the matching point of PopMessageProcessor (after popTime is read; before the k-th store
read); their comparisons are made when the POP answers, in step order. What the harness
cannot do is reported as "out of scope: step k (<action>: why)", never skipped.

Java's observations also feed a second PopChecker, so a property the model violates is
"reproduced on rocketmq-broker X.Y.Z" (Java's history violates it too), "not reproduced",
or the run diverged first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from popverify.checker.pop import PopChecker
from popverify.conformance import admin_replay, long_poll_replay, put_refusal, request_domain, retention_replay
from popverify.conformance.lockstep import RELEASES, LockstepClient, to_java_time, to_model_time
from popverify.sim.actions import PADDING_PROPERTY, PRODUCE_TAG
from popverify.sim.domain import boundary_draw, config_dimensions
from popverify.sim import pop_shapes
from popverify.sim.events import PopAnswered, PopParked
from popverify.sim.request_domain import REVIVE_TOPIC_PUTS
from popverify.sim.pop_driver import DRAIN_ROUNDS, GROUP, RETRY_TOPIC, TOPIC, Consumer, PopDriver, pick_held
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker.buffer_merge import GARBAGE_SCAN_PERIOD_MS
from reference.broker.config import applicable_options
from reference.broker.extra_info import get_queue_offset, split
from reference.broker.keys import ACK_TAG, BATCH_ACK_TAG, CK_TAG, REVIVE_GROUP
from reference.broker.pop_processor import PopOperation
from reference.common import response_code as rc
from reference.common.javalang import to_long
from reference.common.message import PROPERTY_TIMER_DELIVER_MS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from reference.common.pop import PopRequest

# Java's PutMessageStatus for a stored message; the model's put answers SUCCESS.
PUT_OK = "PUT_OK"
# PopMessageProcessor$QueueLockManager#run: waitForRunning(60000), then cleanUnusedLock(60000).
QUEUE_LOCK_CLEAN_MS = 60_000
# Fields of the CK / ACK JSON bodies that hold absolute times (shifted between the clocks).
_TIME_KEYS = frozenset({"pt", "popTime", "deliverTime", "reviveTime"})
# Actions that need nothing from the broker when the model applies them.
_CLIENT_ONLY = frozenset({"consumer_crash"})
# The action kinds a Lockstep replays (each has a case in Lockstep#_dispatch / _plan): the one
# declaration of the harness's reach, which the coverage replay imports. Any other kind (the
# model's `stall` of a request thread) is "out of scope: the harness has no counterpart".
LOCKSTEP_KINDS: frozenset[str] = frozenset({
    "produce", "produce_sized", "pop", "pop_step", "ack", "batch_ack", "change_invisible", "consumer_crash", "advance",
    "clock_jump", "scan", "timer", "revive", "scan_stall", "store_put_fail", "flush", "long_poll", "restart",
    "revive_put_fail", "persist_restart", "processor_put_fail", "flush_timeout", "pop_shape", "buffer_put_fail",
    "batch_ack_request", "consumer_close", "graceful_restart", "delete_poll", "delete_idle", "topic_revive",
    "revive_topic_put",
}) | request_domain.KINDS | retention_replay.KINDS | admin_replay.KINDS
# The kinds that send a POP request (pop_request: the request domain's; pop_shape:
# popverify/sim/pop_shapes.py): the consumer's request in flight on both sides.
POP_KINDS = frozenset({"pop", "pop_request", "pop_shape"})


# The broker restarts: a crash, one right after the persist tasks, a graceful shutdown (its
# merge thread's drain first: Broker#graceful_restart).
RESTART_KINDS = frozenset({"restart", "persist_restart", "graceful_restart"})


# What the harness cannot run inside an in-flight POP: a second POP (PopMessageProcessor is not
# re-entered) and a restart. Anything else runs in the POP's interleave, at the point the model
# ran it; a woken long-polling POP's re-run takes nothing inside (Java re-runs it in one go).
INTERLEAVE_BARRIERS = POP_KINDS | RESTART_KINDS


# An orderly ack or changeInvisibleTime waits for the queue lock in a busy loop (5.0.0
# AckMessageProcessor:157; 5.5.0 AckMessageProcessor:411, ChangeInvisibleTimeProcessor:241:
# `while (!tryLock(...))`), and an orderly POP holds that lock at its interleave points: run
# there on the harness's one thread it never gets it.
ORDERLY_LOCK_WAITERS = frozenset({"ack", "change_invisible", "batch_ack", "ack_request", "change_invisible_request",
                                  "orderly_stray"})


# A scan_stall does its scan at once and only then lets the time pass, which settles the POP in
# flight (pop_driver.scan_stall): the model scans before the POP's queue visits, while the
# replay sends Java the settled POP before the action's own requests (Lockstep#_dispatch). So
# the POP answers first, on both sides (v5.5 corpus seed 1099512627786 of 26 November 2026:
# `scan_stall .state.offsets`, the model's scan committed an offset Java's did not).
SCANS_BEFORE_SETTLING = frozenset({"scan_stall"})


def runs_inside(pending: "_Pending", action: Action, consumers: int) -> bool:
    """Whether ``action`` can be replayed while ``pending`` is in flight; otherwise the caller
    steps the POP to its end first (``pop_step`` actions of its consumer)."""
    if action.kind == "pop_step":
        return action.args[0] % consumers == pending.consumer
    if pending.request.get("order") and action.kind in ORDERLY_LOCK_WAITERS:
        return False
    if action.kind in SCANS_BEFORE_SETTLING:
        return False
    return pending.woken is None and action.kind not in INTERLEAVE_BARRIERS


def start_queues(call: Callable[[dict[str, Any]], dict[str, Any]], store: Any, topic: str,
                 config: ScenarioConfig) -> None:
    """Java's queues of ``topic`` begin where the model's do (config start_offset, the swarm's
    domain draw; StartOffsetOps.java, spec/conformance.md "Queues that start past offset 0");
    nothing when they start at 0. Diverged (step 0) when queue 0's min and max offset differ."""
    if not config.start_offset:
        return
    java = call({"op": "startQueues", "topic": topic, "queues": config.queues, "offset": config.start_offset})
    model = {"min": store.get_min_offset_in_queue(topic, 0), "max": store.get_max_offset_in_queue(topic, 0)}
    if java != model:
        raise Diverged(0, Action("start_queues", (config.start_offset,)), "startQueues", model, java)


class OutOfScope(Exception):
    """The schedule needs something the harness cannot do at this step."""

    def __init__(self, step: int, action: Action, why: str) -> None:
        super().__init__(f"step {step} ({action.kind}: {why})")
        self.step = step
        self.action = action
        self.why = why


class Diverged(Exception):
    """The first step whose observations differ."""

    def __init__(self, step: int, action: Action, key: str, model: Any, java: Any) -> None:
        super().__init__(f"step {step} ({action.kind}) {key}")
        self.step, self.action, self.key, self.model, self.java = step, action, key, model, java


@attrs.frozen
class Verdict:
    """The outcome of one lockstep replay (``to_json`` is the ``--json`` form)."""

    profile: str
    release: str
    status: str                      # "agrees" | "diverges" | "out of scope"
    steps: int                       # steps compared (drain rounds count one each)
    step: int | None = None
    action: tuple = ()
    key: str | None = None
    model: Any = None
    java: Any = None
    why: str | None = None
    model_violations: tuple[str, ...] = ()
    java_violations: tuple[str, ...] = ()
    # the sites whose store puts the model refused (store_put_fail), in order; not in to_json
    put_failures: tuple[str, ...] = ()

    @property
    def finding(self) -> str | None:
        """For a run whose model history violates a property: whether Java's does too."""
        if not self.model_violations:
            return None
        if self.status == "diverges":
            return f"diverges at step {self.step}"
        if self.status == "out of scope":
            return f"out of scope: step {self.step} ({self.action[0] if self.action else '?'}: {self.why})"
        same = set(self.model_violations) & set(self.java_violations)
        return f"reproduced on rocketmq-broker {self.release}" if same else "not reproduced"

    def headline(self) -> str:
        """The one-line verdict."""
        if self.status == "agrees":
            return f"agrees ({self.steps} steps)"
        if self.status == "out of scope":
            return f"out of scope: step {self.step} ({self.action[0] if self.action else '?'}: {self.why})"
        return f"diverges at step {self.step}: {list(self.action)} {self.key}"

    def to_json(self) -> dict[str, Any]:
        """JSON-able form, stable key order."""
        return {"profile": self.profile, "release": self.release, "status": self.status, "steps": self.steps,
                "step": self.step, "action": list(self.action), "key": self.key, "model": self.model,
                "java": self.java, "why": self.why, "model_violations": list(self.model_violations),
                "java_violations": list(self.java_violations), "finding": self.finding}


def _first_difference(model: Any, java: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first (key path, model value, java value) where two observations differ."""
    if isinstance(model, dict) and isinstance(java, dict):
        for key in sorted(set(model) | set(java), key=str):
            if key not in model or key not in java:
                return f"{path}.{key}", model.get(key, "<absent>"), java.get(key, "<absent>")
            found = _first_difference(model[key], java[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(model, list) and isinstance(java, list):
        for i, (m, j) in enumerate(zip(model, java)):
            found = _first_difference(m, j, f"{path}[{i}]")
            if found:
                return found
        if len(model) != len(java):
            return f"{path}.length", model, java
        return None
    return None if model == java else (path or ".", model, java)


# -- normalised observations ------------------------------------------------------------------

def _handle(extra_info: str | None, java: bool) -> dict[str, Any] | None:
    """A receipt handle's fields (ExtraInfoUtil order), popTime on the model's clock."""
    if extra_info is None:
        return None
    parts = extra_info.split(" ")
    names = ["ckQueueOffset", "popTime", "invisibleTime", "reviveQid", "retry", "brokerName", "queueId", "queueOffset"]
    out: dict[str, Any] = {n: p for n, p in zip(names, parts)}
    if len(parts) != len(names):
        out["raw"] = extra_info
    if java and "popTime" in out and out["popTime"].lstrip("-").isdigit():
        out["popTime"] = str(to_model_time(int(out["popTime"])))
    return out


def _java_extra_info(extra_info: str) -> str:
    """A model receipt handle as Java's: popTime on the harness's clock."""
    parts = extra_info.split(" ")
    if len(parts) > 1 and parts[1].lstrip("-").isdigit():
        parts[1] = str(to_java_time(int(parts[1])))
    return " ".join(parts)


def _body(text: str, java: bool) -> Any:
    try:
        body = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text
    if java and isinstance(body, dict):
        body = {k: to_model_time(v) if k in _TIME_KEYS and isinstance(v, int) else v for k, v in body.items()}
    return body


def model_state(d: PopDriver) -> dict[str, Any]:
    """The broker state the harness's ``state`` reports, from the model."""
    b = d.broker
    offsets: dict[str, dict[str, int]] = {}
    for (group, topic, qid), off in sorted(b.committed_offsets().items()):
        if group == GROUP:
            offsets.setdefault(f"{topic}@{group}", {})[str(qid)] = off
    topics = {}
    for topic in (TOPIC, RETRY_TOPIC, b.revive_topic):
        # the harness lists the retry topic's one queue (PopAckConstants.retryQueueNum) before it exists
        n = max(b.topics.get(topic, 0), 1 if topic == RETRY_TOPIC else 0)
        topics[topic] = [{"queueId": q, "min": b.min_offset(topic, q), "max": b.max_offset(topic, q)} for q in range(n)]
    retry = [{"queueId": m.queue_id, "queueOffset": m.queue_offset,
              "uniqKey": m.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX), "reconsumeTimes": m.reconsume_times}
             for m in b.retry_messages(GROUP, TOPIC)]
    revive = []
    for qid in range(b.config.revive_queue_num):
        for m in b.store.snapshot_queue(b.revive_topic, qid):
            revive.append(_revive_entry(m.queue_id, m.tags, m.body.decode(), False))
    for m in b.timer_pending(readable_only=True):  # the harness reads the timer topic
        revive.append(_revive_entry(m.queue_id, m.tags, m.body.decode(), False))
    return {"now": d.clock.now(), "offsets": offsets, "topics": topics,
            "reviveOffsets": {str(q): o for q, o in sorted(b.revive_offsets().items())},
            "retry": retry, "revive": sorted(revive, key=lambda e: json.dumps(e, sort_keys=True)),
            "putRefusals": put_refusal.model_refusals(b)}


def _revive_entry(queue_id: int, tags: str | None, body: str, java: bool) -> dict[str, Any]:
    kind = {CK_TAG: "ck", ACK_TAG: "ack", BATCH_ACK_TAG: "batchAck"}.get(tags or "", tags)
    return {"queueId": queue_id, "kind": kind, "body": _body(body, java)}


def java_state(s: dict[str, Any]) -> dict[str, Any]:
    """The harness's ``state`` answer in model_state's form (times on the model's clock)."""
    offsets = {k: {str(q): o for q, o in sorted(v.items(), key=lambda kv: int(kv[0]))}
               for k, v in sorted(s.get("offsets", {}).items()) if k.endswith("@" + GROUP)}
    topics = {t: [{"queueId": e["queueId"], "min": e["min"], "max": e["max"]} for e in ranges]
              for t, ranges in s.get("topics", {}).items()}
    retry = [{"queueId": m["queueId"], "queueOffset": m["queueOffset"], "uniqKey": m.get("uniqKey"),
              "reconsumeTimes": m.get("reconsumeTimes")} for m in s.get("retry", [])]
    revive = [_revive_entry(e["queueId"], e.get("tags"), e.get("body"), True)
              for e in [*s.get("revive", []), *s.get("timer", [])]]
    return {"now": to_model_time(s["now"]), "offsets": offsets, "topics": topics,
            "reviveOffsets": {str(q): o for q, o in sorted(s.get("reviveOffsets", {}).items(), key=lambda kv: int(kv[0]))},
            "retry": retry, "revive": sorted(revive, key=lambda e: json.dumps(e, sort_keys=True)),
            "putRefusals": put_refusal.java_refusals(s)}


def _model_pop(op: PopOperation) -> dict[str, Any]:
    r = op.result
    assert r is not None
    return {"code": r.code, "popTime": r.pop_time if r.messages or r.code != rc.SUCCESS else r.pop_time,
            "invisibleTime": r.invisible_time, "reviveQid": r.revive_qid, "restNum": r.rest_num,
            "startOffsetInfo": r.start_offset_info, "msgOffsetInfo": r.msg_offset_info,
            "orderCountInfo": r.order_count_info or None,
            "messages": [{"uniqKey": p.message.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
                          "topic": p.message.topic, "realTopic": p.ack_topic, "queueId": p.queue_id,
                          "queueOffset": p.queue_offset, "reconsumeTimes": p.message.reconsume_times,
                          "handle": _handle(p.extra_info, False)} for p in r.messages]}


def _java_pop(a: dict[str, Any]) -> dict[str, Any]:
    return {"code": a.get("code"), "popTime": to_model_time(a["popTime"]) if a.get("popTime") else a.get("popTime"),
            "invisibleTime": a.get("invisibleTime"), "reviveQid": a.get("reviveQid"), "restNum": a.get("restNum"),
            "startOffsetInfo": a.get("startOffsetInfo") or "", "msgOffsetInfo": a.get("msgOffsetInfo") or "",
            "orderCountInfo": a.get("orderCountInfo") or None,
            "messages": [{"uniqKey": m.get("uniqKey"), "topic": m.get("topic"), "realTopic": m.get("realTopic"),
                          "queueId": m.get("queueId"), "queueOffset": m.get("queueOffset"),
                          "reconsumeTimes": m.get("reconsumeTimes"), "handle": _handle(m.get("extraInfo"), True)}
                         for m in a.get("messages") or []]}


@attrs.define
class JavaHeld:
    """A message the Java side's consumer holds: what its ack / changeInvisibleTime names."""

    uniq: str
    topic: str
    queue_id: int
    offset: int
    extra_info: str
    deadline: int  # model clock

    @property
    def request_offset(self) -> int:
        """The handle's queue offset, what a Java client's request names (as InFlight's)."""
        if not self.extra_info:  # no handle (processPopResponse could not build one): the stored offset
            return self.offset
        return get_queue_offset(split(self.extra_info))


@attrs.define
class _JavaView:
    """What PopChecker#check_offsets reads from a broker, built from a harness ``state``."""

    state: dict[str, Any]

    def committed_offset(self, group: str, topic: str, queue_id: int) -> int:
        return int(self.state.get("offsets", {}).get(f"{topic}@{group}", {}).get(str(queue_id), -1))

    def buffered_checkpoints(self) -> list[Any]:
        return [_Ck(e.get("ck") or {}) for e in self.state.get("buffer", [])]

    def queue_offset_at(self, topic: str, queue_id: int, index: int) -> int:
        # the harness's state lists no unit's stored offset: a consume-queue index is taken as
        # the queue offset its message carries (they differ only after a 5.0.0 burnt offset)
        return index

    def stored_checkpoints(self) -> list[Any]:
        revive_offsets = self.state.get("reviveOffsets", {})
        out = [_Ck(e.get("body") or {}) for e in self.state.get("timer", []) if e.get("kind") == "ck"]
        for e in self.state.get("revive", []):
            if e.get("kind") == "ck" and e["queueOffset"] > int(revive_offsets.get(str(e["queueId"]), -1)):
                out.append(_Ck(e.get("body") or {}))
        return out


@attrs.define
class _Ck:
    body: dict[str, Any]

    @property
    def ck(self) -> "_Ck":
        return self

    @property
    def topic(self) -> str:
        return self.body.get("t", self.body.get("topic", ""))

    @property
    def queue_id(self) -> int:
        return int(self.body.get("q", self.body.get("queueId", -1)))

    @property
    def start_offset(self) -> int:
        return int(self.body.get("so", self.body.get("startOffset", -1)))

    @property
    def queue_offset_diff(self) -> list[int]:
        return list(self.body.get("d", self.body.get("queueOffsetDiff", [])) or [])


@attrs.define
class _Deferred:
    """A step run inside an in-flight POP: its Java requests go into the POP's interleave."""

    step: int
    action: Action
    model_obs: dict[str, Any]
    requests: list[dict[str, Any]]
    finish: Callable[[list[dict[str, Any]]], dict[str, Any]]
    model_state: dict[str, Any]  # taken when the step ran, not when the POP answers


@attrs.define
class _Pending:
    """A POP the model has begun but not finished (its steps' Java side is deferred)."""

    consumer: int
    op: PopOperation
    step: int
    action: Action
    request: dict[str, Any]
    segments: list[tuple[int, list[_Deferred]]] = attrs.Factory(lambda: [(0, [])])
    # the model state when the POP's response reached its consumer or it parked (a time step
    # that settles the POP runs it before the time passes: PopWorld#_settle_requests)
    answered: tuple[int, dict[str, Any]] | None = None  # (model time, model state)
    woken: int | None = None  # a woken long-polling POP's re-run: Java's request opaque


def _model_revived(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a revive round wrote to the retry topic (the harness reports the retry messages)."""
    return _revived([(e["uniq"], e.get("retry_queue", 0), e["retry_offset"])
                     for e in events if e["type"] == "revive"])


def _revived(copies: list[tuple[str | None, int, int]]) -> list[dict[str, Any]]:
    """(uniqKey, retry queue, retry offset) of a round's copies as both sides report them: by queue
    then offset (the harness reads queue by queue), the queue named only when not 0 (5.5.0's
    useSeparateRetryQueue; without it every copy goes to queue 0)."""
    return [{"uniqKey": u, "retryOffset": off, **({"retryQueue": q} if q else {})}
            for u, q, off in sorted(copies, key=lambda c: (c[1], c[2]))]


def harness_release(profile: str, client: LockstepClient, release: str | None = None) -> str:
    """The RocketMQ release a replay of ``profile`` runs on (``release`` or the profile's own);
    ValueError when the profile has none or ``client``'s harness runs another."""
    if profile not in RELEASES:
        raise ValueError(f"no RocketMQ release for profile {profile!r}; known: {', '.join(RELEASES)}")
    release = release or RELEASES[profile]
    if client.version != release:
        raise ValueError(f"the harness runs RocketMQ {client.version}, not {release}")
    return release


class Lockstep:
    """One schedule on the model (a PopDriver) and on a harness JVM, compared step by step."""

    def __init__(self, profile: str, seed: int, config: ScenarioConfig, client: LockstepClient,
                 release: str | None = None, stale_drain_rounds: int | None = None) -> None:
        self.profile = profile
        # when set, the drain stops (on both sides; drain_cut) after this many rounds in a row whose
        # POP got only messages the drain had got before: the model's own drain has no such stop
        # (coverage sets it: popverify/coverage/replay.py STALE_DRAIN_ROUNDS)
        self.stale_drain_rounds = stale_drain_rounds
        self.drain_cut = False
        self._drain_got: set[tuple[str, int, int]] = set()
        self._last_drain_stale = False
        self.release = harness_release(profile, client, release)
        self.config = config
        self.client = client
        self.driver = PopDriver(profile, seed, config, True, True)
        self.java_checker = PopChecker(TOPIC, GROUP)
        self.java_held: list[list[JavaHeld]] = [[] for _ in range(config.consumers)]
        self.pending: _Pending | None = None
        self.long_polls = long_poll_replay.LongPolls()
        # QueueLockManager's 60 s clean-up (QueueLockOps.java), on the virtual clock: due then
        self._next_lock_clean = self.driver.clock.now() + QUEUE_LOCK_CLEAN_MS
        self.compared = 0
        self.requests = 0
        self.driver.subscribe(self._on_event)
        bc = self.driver.broker.config
        self._java_state: dict[str, Any] = {}
        self._call({"op": "init", "version": self.release, "queues": config.queues,
                    "now": to_java_time(self.driver.clock.now()),
                    # PopMessageProcessor#random becomes new Random(seed): the model's broker rng seed
                    "seed": to_long(seed * 0x9E3779B1 + 1), "brokerName": bc.broker_name,
                    "reviveQueueNum": bc.revive_queue_num, "enablePopBufferMerge": config.enable_pop_buffer_merge,
                    "popCkStayBufferTime": bc.pop_ck_stay_buffer_time,
                    "popCkStayBufferTimeOut": bc.pop_ck_stay_buffer_time_out,
                    "reviveInterval": bc.revive_interval, "reviveScanTime": bc.revive_scan_time,
                    "popPollingSize": bc.pop_polling_size, "maxPopPollingSize": bc.max_pop_polling_size,
                    "brokerOptions": list(applicable_options(bc, config.broker_options))})
        # a woken long-polling POP re-runs on Java when the model's re-run has finished
        self._call({"op": "deferWoken"})
        if not bc.auto_create_subscription_group:  # revive5: the admin creates the group (PopWorld)
            self._call({"op": "createGroup"})

    def _on_event(self, event: Any, step: int, now: int) -> None:
        pending = self.pending
        if (isinstance(event, (PopAnswered, PopParked)) and pending is not None
                and event.consumer == self.driver.world.consumers[pending.consumer].name):
            pending.answered = (now, model_state(self.driver))

    # -- transport ----------------------------------------------------------------------------
    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        status, value = self.client.call(request)
        return value if status == "ok" else {"error": value}

    # -- running ------------------------------------------------------------------------------
    def run(self, schedule: Sequence[Action]) -> Verdict:
        """Replay ``schedule`` (then the drain when the config has one); the verdict."""
        d = self.driver
        step = 0
        try:
            start_queues(self._call, d.broker.store, TOPIC, self.config)
            for step, action in enumerate(schedule):
                self.step(step, action)
            step = len(schedule)
            d.step_no = step
            drained = False
            if self.config.drain:
                drained = self.drain(step)
            elif self.pending is not None:
                self._flush_unfinished(step)
            d.checker.finish(drained, step)
            self.java_checker.finish(drained, step)
        except OutOfScope as oos:
            return self._verdict("out of scope", step=oos.step, action=tuple(oos.action.to_json()), why=oos.why,
                                 model_violations=self._full_model_violations(schedule))
        except Diverged as div:
            return self._verdict("diverges", step=div.step, action=tuple(div.action.to_json()), key=div.key,
                                 model=div.model, java=div.java, model_violations=self._full_model_violations(schedule))
        return self._verdict("agrees")

    def _full_model_violations(self, schedule: Sequence[Action]) -> tuple[str, ...]:
        """The properties the whole schedule violates on the model (a lockstep run stops at its
        verdict, possibly before the violation; the finding line needs the model's outcome)."""
        from popverify.sim.scenario import run_scenario

        result = run_scenario(self.profile, self.driver.seed, 0, config=self.config, schedule=schedule)
        return tuple(sorted({v.property_id for v in result.violations}))

    def _verdict(self, status: str, **fields: Any) -> Verdict:
        def ids(vs: Sequence[Any]) -> tuple[str, ...]:
            return tuple(sorted({v.property_id for v in vs}))
        fields.setdefault("model_violations", ids(self.driver.checker.violations))
        fields.setdefault("put_failures", tuple(self.driver.broker.put_faults.failed))
        return Verdict(self.profile, self.release, status, self.compared,
                       java_violations=ids(self.java_checker.violations), **fields)

    def step(self, i: int, action: Action) -> None:
        """Apply one action on the model, its counterpart on Java; compare (or defer)."""
        d = self.driver
        d.step_no = i
        d.coverage.step = i
        d.events = []
        pre = self._pre(action)
        op_seq = d.broker._op_seq
        self._mark_revive_failures()
        applied = d.apply(action)
        d.schedule.append(action)
        d.checker.check_offsets(i, d.broker, self.config.queues)
        if not applied:
            return  # a no-op on the model sends nothing to the broker
        self._run_orphans(i, action)
        self._dispatch(i, action, pre, op_seq)
        self._follow_long_polls(i, action)

    def _close_parked(self, i: int, action: Action, op: PopOperation | None) -> None:
        """consumer_close: the parked POP of the closed connection gets a closed channel on Java
        too (LongPollOps `closeChannel`); nothing for a crash or a request not parked."""
        if action.kind != "consumer_close" or op is None or not op.parked:
            return
        for p in [p for p in self.long_polls.orphans + self.long_polls.parked if p.op is op]:
            a = self._call({"op": "closeChannel", "opaque": p.opaque})
            if "error" in a or not a.get("closed"):
                raise Diverged(i, action, "closeChannel", p.opaque, a.get("error", "not parked on Java"))

    def _run_orphans(self, i: int, action: Action) -> None:
        """Java's re-runs of the woken orphans the model re-ran in this step (when time began
        to pass, before anything else of the step), compared by their answers alone."""
        for p in self.long_polls.orphans_rerun():
            if self.pending is not None:
                raise OutOfScope(i, action, "a woken orphaned long-polling POP re-runs inside another POP")
            a = self._call({"op": "runWoken", "opaque": p.opaque})
            if "error" in a or not a.get("ran"):
                raise Diverged(i, action, "orphan woken", p.opaque, a.get("error", "not woken on Java"))
            answers = a.get("answers") or []
            model = {"parked": True} if p.op.parked else request_domain.model_pop_observation(_model_pop(p.op))
            java = {"parked": True} if not answers else _java_pop(request_domain.java_pop_answer(answers[0]))
            if model != java:
                raise Diverged(i, action, "orphan.response", model, java)
            if p.op.parked:
                self.long_polls.orphans.append(p)

    def _follow_long_polls(self, i: int, action: Action) -> None:
        """POPs the model woke in this step wait for their re-run, one at a time: the first
        becomes the pending POP (its ``pop_step``\\ s then run it on the model)."""
        lp = self.long_polls
        lp.settle()
        if self.pending is None and lp.woken:
            p = lp.woken.pop(0)
            self.pending = _Pending(p.consumer, p.op, i, action, p.request, woken=p.opaque)

    def _pre(self, action: Action) -> dict[str, Any]:
        """What the action will act on, read before the model applies it."""
        d = self.driver
        if action.kind in ("ack", "change_invisible", "batch_ack", "consumer_crash", "consumer_close", "pop_step",
                           *POP_KINDS,
                           *request_domain.KINDS) and action.args:
            c = action.args[0] % len(d.world.consumers)
            pre = {"c": c, "held": len(d.world.consumers[c].held), "op": d.world.consumers[c].op}
            if action.kind == "pop_shape" and pre["op"] is None:  # an admin's change first, if any
                pre["admin"] = pop_shapes.admin_requests(d.broker, pop_shapes.SHAPES[action.args[1]])
            return pre
        if action.kind == "flush":
            return {"last_flush": d.broker.offsets._last_flush, "last_persist": d.broker.order_info.last_persist}
        if action.kind in retention_replay.KINDS:
            return retention_replay.pre(d, action)
        return {}

    def _dispatch(self, i: int, action: Action, pre: dict[str, Any], op_seq: int) -> None:
        d, kind = self.driver, action.kind
        pending = self.pending
        if kind in POP_KINDS:
            if pending is not None:
                raise OutOfScope(i, action, f"a second POP while the one of step {pending.step} is in flight; "
                                            f"PopMessageProcessor cannot be interleaved with itself")
            op = d.broker._ops[-1] if d.broker._op_seq > op_seq else None
            assert op is not None
            c = pre["c"]
            for admin in pre.get("admin", ()):
                answer = self._call(admin)
                if "error" in answer:
                    raise Diverged(i, action, "admin", "done", answer["error"])
            request = self._pop_request(op)
            if op.done or op.parked:
                self._complete(i, action, c, op, request, [])
                return
            self.pending = _Pending(c, op, i, action, request)
            return
        if kind == "pop_step":
            if pending is None or pre["op"] is not pending.op:
                assert any(p.op is pre["op"] for p in self.long_polls.woken), "pop_step applied without a pending POP"
                raise OutOfScope(i, action, "a woken long-polling POP stepped while another POP is in flight")
            if pending.op.done or pending.op.parked:
                self.pending = None
                self._finish_pending(i, action, pending)
            else:
                # what runs next goes in after this popMsgFromQueue (Hooks: before its unLock)
                pending.segments.append((pending.op.visits, []))
            return
        if kind in ("consumer_crash", "consumer_close"):
            c = pre["c"]
            self.java_held[c].clear()
            if pending is not None and pre["op"] is pending.op:
                # the broker thread finishes the request; the client is gone (model: run_to_end)
                self.pending = None
                self._finish_pending(i, action, pending, collect=False)
                # parked on both sides (compared as such): the broker still wakes and re-runs it
                self.long_polls.orphan(pending.op)
                self._close_parked(i, action, pending.op)
                return
            woken = self.long_polls.woken_for(pre["op"]) if pre["op"] is not None else None
            if woken is not None:  # its re-run ran to its end on the model (run_to_end)
                self._finish_pending(i, action, _Pending(c, woken.op, i, action, woken.request, woken=woken.opaque),
                                     collect=False)
                self._close_parked(i, action, woken.op)
                return
            self.long_polls.orphan(pre["op"])  # parked: the broker still wakes and re-runs it
            self._close_parked(i, action, pre["op"])
            if pending is not None:
                # another consumer's crash sends nothing, but its state is compared where it ran:
                # inside the POP's interleave, after the steps deferred before it
                if pending.woken is not None:
                    raise OutOfScope(i, action, "a step inside a woken long-polling POP's re-run")
                pending.segments[-1][1].append(_Deferred(i, action, {}, [{"op": "state"}], lambda answers: {},
                                                         model_state(d)))
                return
            self._immediate(i, action, {}, [], lambda answers: {})
            return
        if kind not in LOCKSTEP_KINDS:
            raise OutOfScope(i, action, "the harness has no counterpart")
        if pending is not None and (pending.op.done or pending.op.parked):
            # The action let time pass beyond REQUEST_TIME_BOUND_MS of the POP's popTime: the
            # model ran the POP to its answer first (PopWorld#_settle_requests), so Java gets the
            # POP, with what ran inside it, before this action's own requests.
            self.pending = None
            self._finish_pending(i, action, pending)
            pending = None
        if kind in RESTART_KINDS and pending is not None:
            raise OutOfScope(i, action, f"broker restart while the POP of step {pending.step} is in flight")
        model_obs, requests, finish = self._plan(i, action, pre)
        if pending is not None:
            if pending.woken is not None:
                raise OutOfScope(i, action, "a step inside a woken long-polling POP's re-run")
            if any(r["op"] in ("restart", "init", "close", "pop") for r in requests):
                raise OutOfScope(i, action, "not allowed inside a POP's interleave")
            if pending.request.get("order") and kind in ORDERLY_LOCK_WAITERS:
                raise OutOfScope(i, action, "an orderly ack or changeInvisibleTime inside an orderly POP waits "
                                            "for the queue lock the POP holds")
            pending.segments[-1][1].append(_Deferred(i, action, model_obs, requests + [{"op": "state"}], finish,
                                                     model_state(d)))
            return
        self._immediate(i, action, model_obs, requests, finish)

    def _immediate(self, i: int, action: Action, model_obs: dict[str, Any], requests: list[dict[str, Any]],
                   finish: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> None:
        answers = [self._call(r) for r in requests]
        answers.append(self._call({"op": "state"}))
        self._compare(i, action, model_obs, finish, answers)

    def _compare(self, i: int, action: Action, model_obs: dict[str, Any],
                 finish: Callable[[list[dict[str, Any]]], dict[str, Any]], answers: list[dict[str, Any]],
                 state_of_model: dict[str, Any] | None = None) -> None:
        state = answers[-1]
        if "error" in state:
            raise Diverged(i, action, "state", None, state["error"])
        self._java_state = state
        java_obs = finish(answers[:-1])
        model = {"response": model_obs,
                 "state": state_of_model if state_of_model is not None else model_state(self.driver)}
        java = {"response": java_obs, "state": java_state(state)}
        self.compared += 1
        found = _first_difference(model, java)
        if found:
            raise Diverged(i, action, *found)
        self.java_checker.check_offsets(i, _JavaView(state), self.config.queues)  # type: ignore[arg-type]
        # the model's side likewise (a step has checked it already; the drain's compares have not)
        self.driver.checker.check_offsets(i, self.driver.broker, self.config.queues)

    # -- POP ----------------------------------------------------------------------------------
    def _pop_request(self, op: PopOperation) -> dict[str, Any]:
        r: PopRequest = op.request
        req = {"op": "pop", "topic": r.topic, "group": r.group, "queueId": r.queue_id, "maxMsgNums": r.max_msg_nums,
               "invisibleTime": r.invisible_time, "pollTime": r.poll_time, "initMode": r.init_mode, "order": r.order}
        if r.born_time == 0:  # left unset (pop_shape): the broker takes its now
            req["bornTime"] = 0
        elif r.poll_time > 0 or r.born_time is not None:
            # a re-run's isTimeoutTooMuch and the park's expiry count from it
            req["bornTime"] = to_java_time(op.born_time)
        if r.tags is not None:  # a tag filter (pop_shape): the expression the client sends
            req["exp"], req["expType"] = "||".join(sorted(r.tags)), "TAG"
        elif r.exp is not None:
            req["exp"], req["expType"] = r.exp, r.exp_type
        elif r.exp_type is None:
            req["noExp"] = True
        return req

    def _complete(self, i: int, action: Action, c: int, op: PopOperation, request: dict[str, Any],
                  segments: list[tuple[int, list[_Deferred]]], collect: bool = True,
                  answered: tuple[int, dict[str, Any]] | None = None) -> None:
        """Send the POP (with the deferred steps as its interleave) and compare, in step order;
        the POP's own comparison is with ``answered`` (model time and state) when the model
        answered it inside a later action, else with the model now."""
        merged: dict[int, list[_Deferred]] = {}
        for at, steps in segments:
            if steps:
                merged.setdefault(at, []).extend(steps)
        interleave = [{"at": at, "ops": [r for s in steps for r in s.requests]} for at, steps in sorted(merged.items())]
        req = dict(request)
        if interleave:
            req["interleave"] = interleave
        answer = request_domain.java_pop_answer(self._call(req))  # a processor exception: SYSTEM_ERROR
        if "error" in answer:
            raise Diverged(i, action, "pop", _model_pop(op), answer["error"])
        # answers of the deferred steps, by interleave point
        by_at: dict[int, list[dict[str, Any]]] = {}
        for entry in answer.get("interleaved") or []:
            by_at[int(entry["at"])] = [a if ("ok" not in a and "error" not in a) else
                                       (a["ok"] if "ok" in a else {"error": a["error"]}) for a in entry["answers"]]
        missed = [int(m) for m in answer.get("interleaveMissed") or []]
        for at in missed:  # the point was never reached: the steps run after the POP, as in the model
            by_at[at] = [self._call(r) for s in merged[at] for r in s.requests]
        for at, steps in sorted(merged.items()):
            answers = by_at.get(at)
            if answers is None:
                raise Diverged(steps[0].step, steps[0].action, "interleave", "run", "no answers")
            pos = 0
            for s in steps:
                n = len(s.requests)
                self._compare(s.step, s.action, s.model_obs, s.finish, answers[pos:pos + n], s.model_state)
                pos += n
        self._compare_pop(i, action, c, op, request, answer if not answer.get("parked") else None,
                          answer.get("opaque"), collect, answered)

    def _compare_pop(self, i: int, action: Action, c: int, op: PopOperation, request: dict[str, Any],
                     answer: dict[str, Any] | None, opaque: int | None, collect: bool,
                     answered: tuple[int, dict[str, Any]] | None = None) -> None:
        """Compare a POP's outcome (``answer`` None: Java parked it) and keep a park on both
        sides; with the model's state when it answered (``answered``: model time and state,
        when a later action answered it) or now."""
        model_obs = {"parked": True} if op.parked else request_domain.model_pop_observation(_model_pop(op))
        java_obs = {"parked": True} if answer is None else _java_pop(answer)
        now, state = answered if answered is not None else (self.driver.clock.now(), None)
        if collect and answer is not None:
            self._java_collect(i, c, answer, now, bool(request.get("order")))
        self._compare(i, action, model_obs, lambda _answers: java_obs, [self._call({"op": "state"})], state)
        if op.parked:
            assert opaque is not None
            self.long_polls.park(c, op, opaque, request)

    def _finish_pending(self, i: int, action: Action, pending: _Pending, collect: bool = True) -> None:
        """The model has finished ``pending`` (answered or parked): Java's side and the comparison."""
        if pending.woken is None:
            self._complete(i, action, pending.consumer, pending.op, pending.request, pending.segments, collect,
                           pending.answered)
            return
        # Java's re-run of the same request (LongPollOps#runWoken); none queued: Java did not wake it
        a = self._call({"op": "runWoken", "opaque": pending.woken})
        if "error" in a or not a.get("ran"):
            raise Diverged(i, action, "woken", pending.woken, a.get("error", "not woken on Java"))
        answers = a.get("answers") or []
        self._compare_pop(i, action, pending.consumer, pending.op, pending.request,
                          request_domain.java_pop_answer(answers[0]) if answers else None, pending.woken, collect,
                          pending.answered)

    def _java_collect(self, i: int, c: int, answer: dict[str, Any], now: int, order: bool) -> None:
        # ``order``: the request's, as the model's MessagePopped says (a raw pop_request of an
        # orderly configuration is a non-orderly POP, held to INV-1 and RED-1 on both sides)
        for m in answer.get("messages") or []:
            deadline = to_model_time(answer["popTime"]) + answer["invisibleTime"]
            position = (m["realTopic"], m["queueId"], m["queueOffset"])
            self.java_checker.on_deliver(i, now, m.get("uniqKey") or "", deadline, orderly=order)
            if order:
                self.java_checker.on_orderly_deliver(i, now, f"c{c}", m.get("uniqKey") or "", position,
                                                     to_model_time(answer["popTime"]), answer["invisibleTime"])
            self.java_held[c].append(JavaHeld(m.get("uniqKey") or "", m["realTopic"], m["queueId"], m["queueOffset"],
                                              m["extraInfo"], deadline))

    def _flush_unfinished(self, step: int) -> None:
        pending = self.pending
        assert pending is not None
        if any(steps for _, steps in pending.segments):
            raise OutOfScope(pending.step, pending.action,
                             "the POP never finishes in the schedule, and steps ran while it was in flight")
        self.pending = None

    # -- the other actions --------------------------------------------------------------------
    def _plan(self, i: int, action: Action, pre: dict[str, Any]) -> tuple[
            dict[str, Any], list[dict[str, Any]], Callable[[list[dict[str, Any]]], dict[str, Any]]]:
        """(model observation, Java requests, answers -> Java observation) of an applied action."""
        d, kind, args = self.driver, action.kind, action.args
        events = d.events
        if kind == "produce":
            ev = next(e for e in events if e["type"] == "produce")
            self.java_checker.on_produce(ev["uniq"], ev["queue"], ev["offset"])
            # a new commit-log file before each produced message, as the model's produce does
            # (spec/conformance.md "Retention and topic deletion")
            put = {"op": "put", "topic": TOPIC, "queueId": ev["queue"], "uniqKey": ev["uniq"], "body": "x" * 16,
                   **({"tags": PRODUCE_TAG} if self.config.produce_tags else {})}
            return ({"status": PUT_OK, "queueOffset": ev["offset"]}, [{"op": "rollCommitLog"}, put],
                    lambda a: {"error": a[0]["error"]} if "error" in a[0] else
                    {"status": a[1].get("status", a[1].get("error")), "queueOffset": a[1].get("queueOffset")})
        if kind == "produce_sized":
            # the same body and padding property (popverify/sim/actions.py#_produce_sized): the
            # store's size checks refuse the same ones, and 5.0.0 burns the queue offset of a refused
            # one (spec/broker.md "Message sizes"); a refused put names no message: any uniq key of
            # the same length weighs the same
            ev = next((e for e in events if e["type"] == "produce"), None)
            if ev is not None:
                self.java_checker.on_produce(ev["uniq"], ev["queue"], ev["offset"])
            put = {"op": "put", "topic": TOPIC, "queueId": args[0] % self.config.queues,
                   "uniqKey": ev["uniq"] if ev is not None else "0" * 32, "body": "x" * args[1]}
            if args[2]:
                put["properties"] = {PADDING_PROPERTY: "p" * args[2]}

            def java_put(a: list[dict[str, Any]]) -> dict[str, Any]:
                errors = [x["error"] for x in a if "error" in x]
                if errors:
                    return {"error": errors[0]}
                ok = a[1].get("status") == PUT_OK  # any refusal status: the model says "refused"
                return {"status": PUT_OK if ok else "refused", "queueOffset": a[1].get("queueOffset") if ok else None}
            return ({"status": PUT_OK if ev is not None else "refused",
                     "queueOffset": ev["offset"] if ev is not None else None}, [{"op": "rollCommitLog"}, put], java_put)
        if kind in ("ack", "change_invisible") and len(self.java_held[pre["c"]]) != pre["held"]:
            # the model's consumer holds messages the harness's POPs did not deliver (or the
            # reverse): a divergence of the POP answers, seen at the first use of a handle
            raise Diverged(i, action, "held", pre["held"], len(self.java_held[pre["c"]]))
        if kind == "ack":
            c = pre["c"]
            held = self.java_held[c].pop(self._java_pick(c, args[1]))
            ev = next(e for e in events if e["type"] == "ack")
            return ({"code": ev["code"]}, [self._ack_request(held)], lambda a: self._after_ack(i, held, a[0]))
        if kind == "batch_ack":
            c = pre["c"]
            held_list, self.java_held[c] = self.java_held[c], []
            codes = [e["code"] for e in events if e["type"] == "ack"]
            req = {"op": "batchAck", "group": GROUP,
                   "entries": [{"topic": h.topic, "queueId": h.queue_id, "offset": h.request_offset, "extraInfo": h.extra_info}
                               for h in held_list]}

            def after_batch(a: list[dict[str, Any]]) -> dict[str, Any]:
                if "error" in a[0]:
                    java_codes = [request_domain.batch_ack_code(a[0])] * len(held_list)
                else:
                    java_codes = list(a[0].get("codes") or [a[0].get("code")])
                for h, code in zip(held_list, java_codes):
                    self.java_checker.on_ack(i, d.clock.now(), h.uniq, code, h.deadline)
                return {"codes": java_codes}
            return {"codes": codes}, [req], after_batch
        if kind == "change_invisible":
            c = pre["c"]
            held = self.java_held[c][self._java_pick(c, args[1])]
            ev = next(e for e in events if e["type"] == "change_invisible")
            model_obs = {"code": ev["code"], "handle": _handle(ev["handle"], False) if ev["code"] == rc.SUCCESS else None}
            req = {"op": "changeInvisibleTime", "topic": held.topic, "group": GROUP, "queueId": held.queue_id,
                   "offset": held.request_offset, "extraInfo": held.extra_info, "invisibleTime": args[2]}
            if self.pending is not None and ev["code"] == rc.SUCCESS:
                # Inside a POP's interleave Java answers when the POP does, after the requests of
                # the steps that follow are built: a later ack or change of this message sends
                # the new handle the model got. The answers are compared in step order, so a
                # different handle from Java is this step's divergence before it is used.
                held.extra_info = _java_extra_info(ev["handle"])

            def after_change(a: list[dict[str, Any]]) -> dict[str, Any]:
                # a processor exception is SYSTEM_ERROR, as for an ack (5.0.0: the handle-less
                # orderly message popped after a restart reloaded the order info, getReviveQid)
                code = request_domain.code_of(a[0])
                if code == rc.SUCCESS and a[0].get("extraInfo"):
                    held.extra_info = a[0]["extraInfo"]
                    held.deadline = to_model_time(a[0]["popTime"]) + a[0]["invisibleTime"]
                    self.java_checker.on_change_invisible(held.uniq, code, held.deadline)
                return {"code": code, "handle": _handle(a[0].get("extraInfo"), True) if code == rc.SUCCESS else None}
            return model_obs, [req], after_change
        if kind in ("ack_request", "change_invisible_request", "orderly_stray"):
            return request_domain.plan(self, i, action, pre)
        if kind == "revive_topic_put":
            # revive6: the producer's message to the revive topic (request_domain.REVIVE_TOPIC_PUTS),
            # put by the harness's store put as `produce`'s; any uniq key of the same length weighs the same
            ev = next(e for e in d.events if e["type"] == "request")
            # (a timed one's deliver time: the put's, now, in Java's clock)
            tags, body, timed = REVIVE_TOPIC_PUTS[ev["kind"]]
            put = {"op": "put", "topic": ev["topic"], "queueId": ev["queue"], "uniqKey": "0" * 32, "body": body,
                   "tags": tags, **({"properties": {PROPERTY_TIMER_DELIVER_MS: str(to_java_time(d.clock.now()))}}
                                    if timed else {})}
            return ({"status": PUT_OK, "queueOffset": ev["offset"]}, [put],
                    lambda a: {"status": a[0].get("status", a[0].get("error")), "queueOffset": a[0].get("queueOffset")})
        if kind == "batch_ack_request":
            ev = next(e for e in d.events if e["type"] == "request")
            return ({"code": ev["code"]}, [{"op": "batchAckBody", "body": ev["kind"]}],
                    lambda a: {"code": request_domain.batch_ack_code(a[0])})
        if kind in ("advance", "clock_jump"):
            if kind == "clock_jump":
                self.java_checker.on_fault("clock_jump")
            on_period = kind == "advance" and self.config.services_on_period
            return ({"now": d.clock.now()},
                    [{"op": "advance", "ms": args[0], "servicesOnPeriod": on_period}, *self._lock_clean()],
                    lambda a: {"now": to_model_time(a[0]["now"]) if "now" in a[0] else a[0]})
        if kind == "scan":
            return {}, [{"op": "scan"}], lambda a: {"error": a[0]["error"]} if "error" in a[0] else {}
        if kind == "timer":
            return {}, [{"op": "timer"}], lambda a: {"error": a[0]["error"]} if "error" in a[0] else {}
        if kind == "revive":
            qid = args[0] % d.broker.config.revive_queue_num
            return self._revive_obs(_model_revived(events)), [{"op": "revive", "qid": qid}], \
                lambda a: self._after_revive(i, a[0])
        if kind == "scan_stall":
            # PopBufferMergeService#scan with an eclipse of ms (ScanStall.java), then the time
            # passes as pop_driver.scan_stall lets it (an `advance`, services as configured)
            ev = next(e for e in events if e["type"] == "scan_stall")
            return ({"serving": ev["serving"], "errors": []},
                    [{"op": "scanStall", "ms": args[0]},
                     {"op": "advance", "ms": args[0], "servicesOnPeriod": self.config.services_on_period}],
                    lambda a: {"serving": a[0].get("serving", a[0].get("error")),
                               "errors": [x["error"] for x in a if "error" in x]})
        if kind == "store_put_fail":
            self.java_checker.on_fault("store_put_fail")
            return ({"pending": d.broker.put_faults.pending}, [put_refusal.arm_request(args[0])],
                    lambda a: {"pending": a[0].get("pending", a[0].get("error"))})
        if kind == "revive_put_fail":
            self.java_checker.on_fault("revive_put_fail")
            return ({"retryPending": d.broker.put_faults.retry_pending}, [put_refusal.arm_retry_request(args[0])],
                    lambda a: {"retryPending": a[0].get("retryPending", a[0].get("error"))})
        if kind == "processor_put_fail":
            self.java_checker.on_fault("processor_put_fail")
            return (put_refusal.armed(d.broker), [put_refusal.arm_processor_request(*args)],
                    lambda a: put_refusal.armed_java(a[0]))
        if kind == "buffer_put_fail":
            self.java_checker.on_fault("buffer_put_fail")
            return (put_refusal.armed(d.broker), [put_refusal.arm_buffer_request(*args)],
                    lambda a: put_refusal.armed_java(a[0]))
        if kind == "flush_timeout":
            return (put_refusal.armed(d.broker), [put_refusal.flush_timeout_request(*args)],
                    lambda a: put_refusal.armed_java(a[0]))
        if kind == "flush":
            # the model persists only when flushConsumerOffsetInterval has passed; so does Java's
            # scheduled persist, which the harness runs when the model's did.
            flushed = d.broker.offsets._last_flush != pre["last_flush"]
            return {}, _flush_requests(flushed, d.broker.order_info.last_persist != pre["last_persist"]), lambda a: {}
        if kind == "long_poll":
            return self._long_poll_plan()
        if kind in RESTART_KINDS:
            if kind == "graceful_restart" and not d.world.drain_ended:
                raise OutOfScope(i, action, "a graceful shutdown whose buffer drain never ends (Java's merge "
                                            "thread would spin in it)")
            self._next_lock_clean = d.clock.now() + QUEUE_LOCK_CLEAN_MS  # a new, unstarted manager
            self.java_checker.on_restart()
            self.java_checker.on_fault(kind)
            # graceful_restart: the merge thread's tail first (Broker#graceful_restart); then, as
            # persist_restart, both persists (Broker#persist_then_restart)
            drain = [{"op": "mergeShutdown"}] if kind == "graceful_restart" else []
            persist = _flush_requests(True, True) if kind != "restart" else []
            return {}, drain + persist + [{"op": "restart"}], \
                lambda a: next(({"error": x["error"]} for x in a if "error" in x), {})
        if kind in retention_replay.KINDS:
            return retention_replay.plan(d, self.java_checker, action, pre, TOPIC, self.config.queues)
        if kind == "delete_poll":
            return admin_replay.delete_poll_plan(d, self.java_checker, action, TOPIC, self.config.queues,
                                                 self._long_poll_plan())
        if kind == "delete_idle":
            # the idle is an `advance` of GARBAGE_SCAN_PERIOD_MS (services as configured), then a scan
            idle = [{"op": "advance", "ms": GARBAGE_SCAN_PERIOD_MS, "servicesOnPeriod": self.config.services_on_period},
                    *self._lock_clean(), {"op": "scan"}]
            return admin_replay.delete_idle_plan(d, self.java_checker, action, TOPIC, self.config.queues, idle)
        if kind == "topic_revive":
            advance = [{"op": "advance", "ms": args[2], "servicesOnPeriod": self.config.services_on_period},
                       *self._lock_clean()]
            qid = args[1] % d.broker.config.revive_queue_num
            revive = (self._revive_obs(_model_revived(events)), [{"op": "revive", "qid": qid}],
                      lambda a: self._after_revive(i, a[0]))
            return admin_replay.topic_revive_plan(d, self.java_checker, action, TOPIC, self.config.queues, advance,
                                                  revive)
        if kind in admin_replay.KINDS:
            return admin_replay.plan(d, self.java_checker, action)
        raise AssertionError(f"LOCKSTEP_KINDS lists {kind!r} but Lockstep#_plan has no case for it")

    def _long_poll_plan(self) -> tuple[dict[str, Any], list[dict[str, Any]],
                                       Callable[[list[dict[str, Any]]], dict[str, Any]]]:
        """The model's long-polling step on Java: 5.5.0's due lock-free notifications
        (OrderLockTimer), then the polling service's timeout scan; the same requests woken."""
        lp = self.long_polls
        # the harness names every request that left the polling map: woken, or dropped with its
        # key by cleanUnusedResource (a deleted group's; aborted on the model)
        dropped = [p.opaque for p in lp.parked + lp.orphans if not (p.op.parked or p.op.in_flight or p.op.done)]
        woken = sorted([p.opaque for p in lp.just_woken()] + dropped)

        def java(a: list[dict[str, Any]]) -> dict[str, Any]:
            errors = [x["error"] for x in a if "error" in x]
            return {"woken": errors or sorted(a[0]["woken"] + a[1]["woken"])}
        return {"woken": woken}, [{"op": "fireOrderLockTimers"}, {"op": "pollingTimeout"}], java

    def _lock_clean(self) -> list[dict[str, Any]]:
        """QueueLockManager#run's pass when its 60 s are due (after the time passed). Nothing
        of the model answers it: its lock set keeps no lock times, and no POP holds a queue lock
        for 60 s (a request is settled within REQUEST_TIME_BOUND_MS), so Java's clean-up of
        entries older than 60 s changes no tryLock outcome the replay compares."""
        now = self.driver.clock.now()
        if now < self._next_lock_clean:
            return []
        self._next_lock_clean = now + QUEUE_LOCK_CLEAN_MS
        return [{"op": "cleanQueueLocks"}]

    def _ack_request(self, held: JavaHeld) -> dict[str, Any]:
        return {"op": "ack", "topic": held.topic, "group": GROUP, "queueId": held.queue_id, "offset": held.request_offset,
                "extraInfo": held.extra_info}

    def _after_ack(self, i: int, held: JavaHeld, a: dict[str, Any]) -> dict[str, Any]:
        # a processor exception (5.0.0: the empty handle of an orderly message popped after a
        # restart, NumberFormatException) is the remoting layer's SYSTEM_ERROR response
        code = request_domain.code_of(a)
        self.java_checker.on_ack(i, self.driver.clock.now(), held.uniq, code if isinstance(code, int) else -1,
                                 held.deadline)
        return {"code": code}

    def _mark_revive_failures(self) -> None:
        """What the model's revive has failed so far (put_refusal.revive_threw's marks), before
        a step or a drain round's revive: what comes after is that revive's."""
        b = self.driver.broker
        self._failed_before = len(b.put_faults.failed)
        self._too_big_before = put_refusal.copies_too_big(b)
        self._read_failed_before = put_refusal.rounds_failed_reading(b)

    def _revive_obs(self, revived: list[dict[str, Any]]) -> dict[str, Any]:
        """The model's observation of a revive round (5.0.0's refused retry put: the throw)."""
        if put_refusal.revive_threw(self.driver.broker, self._failed_before, self._too_big_before,
                                    self._read_failed_before):
            return {"reviveError": True}
        return {"revived": revived}

    def _after_revive(self, i: int, a: dict[str, Any]) -> dict[str, Any]:
        if put_refusal.java_revive_threw(a):
            self._call({"op": "settle"})  # the throw skipped the dispatch of the round's earlier puts
            return {"reviveError": True}
        if "error" in a:
            return a
        revived = _revived([(r.get("uniqKey"), r.get("retryQueue", 0), r.get("retryOffset"))
                            for r in a.get("revived") or []])
        for r in revived:  # the retry copy carries the UNIQ_KEY, so the position is not needed
            self.java_checker.on_revive(i, r["uniqKey"], -1, -1, False)
        return {"revived": revived}

    def _java_pick(self, c: int, index: int) -> int:
        """The Java consumer's held message an ack or changeInvisibleTime drawn with ``index``
        is for, picked as the model's consumer picks (pop_driver.pick_held)."""
        held = [(h.topic, h.queue_id, h.offset) for h in self.java_held[c]]
        return pick_held(held, index, self.config.pop_orderly)

    # -- drain --------------------------------------------------------------------------------
    def drain(self, step: int) -> bool:
        """PopWorld#drain, round by round on both sides (each round compared as one step)."""
        d = self.driver
        finish = Action("drain", (0, "finish pop"))
        for c, consumer in enumerate(d.world.consumers):
            if consumer.op is not None:
                op = consumer.op
                pending = self.pending
                op.run_to_end()
                if op.done:
                    d.world.collect(consumer, op)
                consumer.op = None
                woken = self.long_polls.woken_for(op)
                if pending is not None and pending.op is op:
                    self.pending = None
                    self._finish_pending(step, finish, pending)
                elif woken is not None:
                    self._finish_pending(step, finish, _Pending(c, op, step, finish, woken.request, woken=woken.opaque))
        # the drain stops waiting for parked POPs (PopWorld#drain): the broker still wakes them
        for p in list(self.long_polls.parked):
            self.long_polls.orphan(p.op)
        quiet = stale = 0
        drainer = d.world.consumers[0]
        for rnd in range(DRAIN_ROUNDS):
            self._drain_round(step, rnd, d, drainer)
            busy = bool(self._last_drain_got) or d.broker.timer_pending() or d.broker.buffered_checkpoints() \
                or d.broker.stored_checkpoints() or d.world.orderly_behind()
            quiet = 0 if busy else quiet + 1
            if quiet >= 5:
                return True
            stale = stale + 1 if self._last_drain_stale else 0
            if self.stale_drain_rounds is not None and stale >= self.stale_drain_rounds:
                self.drain_cut = True
                return False
        return False

    _last_drain_got = False
    _failed_before = 0  # put failures the model had recorded before the current step
    _too_big_before = 0  # and retry copies refused for their size (put_refusal.copies_too_big)
    _read_failed_before = 0  # and revive rounds thrown reading (put_refusal.rounds_failed_reading)

    def _drain_round(self, step: int, rnd: int, d: PopDriver, drainer: Consumer) -> None:
        """One drain round: acks, 1 s with services, timer, scan, every revive queue, flush, a POP."""
        def act(what: str) -> Action:
            return Action("drain", (rnd, what))
        for c, consumer in enumerate(d.world.consumers):
            while consumer.held:
                model_held = consumer.held.pop(0)
                code = d.world.ack(consumer, model_held)
                held = self.java_held[c].pop(0)
                self._immediate(step, act("ack"), {"code": code}, [self._ack_request(held)],
                                lambda a, h=held: self._after_ack(step, h, a[0]))
        # an orderly ack wakes the queue's parked POPs (orphans by now): the time passing next
        # re-runs them on the model, so Java's re-runs must be known to _run_orphans by then
        # (v5.5 corpus seed 42: a re-run the replay lost took the queue's batch on the model only)
        self.long_polls.settle()
        d.world.pass_time(1000)
        self._run_orphans(step, act("advance"))
        self._immediate(step, act("advance"), {"now": d.clock.now()},
                        [{"op": "advance", "ms": 1000, "servicesOnPeriod": self.config.services_on_period},
                         *self._lock_clean()],
                        lambda a: {"now": to_model_time(a[0]["now"]) if "now" in a[0] else a[0]})
        d.broker.timer_step()
        d.broker.buffer_merge_scan()
        self._immediate(step, act("timer+scan"), {"errors": []}, [{"op": "timer"}, {"op": "scan"}],
                        lambda a: {"errors": [x["error"] for x in a if "error" in x]})
        for qid in range(d.broker.config.revive_queue_num):
            d.events = []
            self._mark_revive_failures()
            d.world.revive(qid)
            revived = _model_revived(d.events)
            self._immediate(step, act(f"revive {qid}"), self._revive_obs(revived), [{"op": "revive", "qid": qid}],
                            lambda a: self._after_revive(step, a[0]))
        last_persist = d.broker.order_info.last_persist
        requests = _flush_requests(d.broker.offset_flush_step(), d.broker.order_info.last_persist != last_persist)
        if requests:
            self._immediate(step, act("flush"), {}, requests, lambda a: {})
        self.long_polls.settle()  # what the round's acks woke (orderly acks notify): not the timeout scan
        lock_free = getattr(d.broker.order_info, "lock_free_timestamps", {})
        due = any(t <= d.clock.now() for t in lock_free.values())
        d.broker.long_polling_step()
        if self.long_polls.orphans or due:
            self._immediate(step, act("long poll"), *self._long_poll_plan())
        request = PopRequest(topic=TOPIC, group=GROUP, queue_id=-1, max_msg_nums=32,
                             invisible_time=self.config.invisible_time, client=drainer.name,
                             order=self.config.pop_orderly)
        op = d.broker.pop(request)
        self.long_polls.settle()  # what the drain's long poll and POP woke
        self._last_drain_got = bool(op.result and op.result.messages)
        got = [(m.ack_topic, m.queue_id, m.queue_offset) for m in op.result.messages] if op.result else []
        self._last_drain_stale = bool(got) and all(g in self._drain_got for g in got)
        self._drain_got.update(got)
        if op.done:
            d.world.collect(drainer, op)
        elif op.parked:
            raise OutOfScope(step, act("pop"), "the drain's POP parked")
        self._complete(step, act("pop"), 0, op, self._pop_request(op), [])


def _flush_requests(offsets: bool, order_info: bool) -> list[dict[str, Any]]:
    """The harness requests of the model's flush step: the consumer offsets' persist and the
    consumer order info's (BrokerController's own 10 s task), each when the model's ran."""
    return ([{"op": "flush"}] if offsets else []) + ([{"op": "persistOrderInfo"}] if order_info else [])


def run_lockstep(profile: str, seed: int, config: ScenarioConfig, schedule: Sequence[Action],
                 client: LockstepClient, mutant: str | None = None, release: str | None = None) -> Verdict:
    """Replay one POP schedule on the model and on ``client``'s release; the verdict."""
    from popverify.mutants import applied

    with applied(mutant):
        return Lockstep(profile, seed, config, client, release).run(schedule)


# -- random differential (``popverify conformance --stateful``) ---------------------------------

# Faults the default differential draws (each kept with probability 0.3). Retention and topic
# deletion are replayed too (RetentionOps) and join a campaign through ``extra_faults``: adding
# them here would change every case's draw.
LOCKSTEP_FAULTS: tuple[str, ...] = ("restart", "clock_jump")
# Faults the harness can also inject, opt-in (drawing them changes every later case's draw):
# store put failures (PutRefusal.java) and a slow buffer scan (ScanStall.java); spec/conformance.md
# "Store put failures and scan stalls".
OPT_IN_FAULTS: tuple[str, ...] = ("store_put_fail", "scan_stall")
RETENTION_FAULTS: tuple[str, ...] = ("expire", "expire_commit_log", "clean_consume_queue", "delete_recreate")
MAX_STATEFUL_STEPS = 500


def drawn_schedule_lockstep(profile: str, seed: int, config: ScenarioConfig, steps: int, client: LockstepClient,
                            interleave: bool = False) -> tuple[Verdict, tuple[Action, ...]]:
    """A swarm run whose actions are drawn as ``run_scenario`` draws them, replayed in lockstep.

    Drawn actions are adapted to what the real broker does without a stalled thread: a POP
    runs to its answer before anything else (its ``pop_step``\\ s follow at once) unless
    ``interleave``; with ``interleave`` only what cannot run inside a POP (``runs_inside``) is
    replaced by the next ``pop_step``. Long-polling POPs are sent without pollTime (this draw
    predates the replay of parked POPs, which ``confirm`` and the coverage replay use). The schedule actually run is returned (replayable by the model).
    """
    ls = Lockstep(profile, seed, config, client)
    d = ls.driver
    step = 0
    try:
        start_queues(ls._call, d.broker.store, TOPIC, config)
        for step in range(steps):
            action = d.draw()
            if action.kind == "pop" and action.args[2]:
                action = Action("pop", (action.args[0], action.args[1], False))
            pending = ls.pending
            if pending is not None:
                n = len(d.world.consumers)
                own_step = action.kind == "pop_step" and action.args[0] % n == pending.consumer
                if not (runs_inside(pending, action, n) if interleave else own_step):
                    action = Action("pop_step", (pending.consumer,))
            ls.step(step, action)
        step = steps
        d.step_no = step
        drained = False
        if config.drain:
            drained = ls.drain(step)
        elif ls.pending is not None:
            ls._flush_unfinished(step)
        d.checker.finish(drained, step)
        ls.java_checker.finish(drained, step)
    except OutOfScope as oos:
        return ls._verdict("out of scope", step=oos.step, action=tuple(oos.action.to_json()), why=oos.why), \
            tuple(d.schedule)
    except Diverged as div:
        return ls._verdict("diverges", step=div.step, action=tuple(div.action.to_json()), key=div.key,
                           model=div.model, java=div.java), tuple(d.schedule)
    return ls._verdict("agrees"), tuple(d.schedule)


def divergence_class(v: Verdict) -> str:
    """A divergence's class: the action kind and the observable's path without indices."""
    import re

    kind = v.action[0] if v.action else "?"
    if kind == "drain" and len(v.action) > 2:
        kind = f"drain:{str(v.action[2]).split(' ')[0]}"
    key = re.sub(r"\[\d+\]", "[]", v.key or "")
    return f"{kind} {key}"


@attrs.define
class StatefulReport:
    """The differential's result for one profile."""

    profile: str
    release: str
    cases: int = 0
    agree: int = 0
    diverge: int = 0
    out_of_scope: int = 0
    steps: int = 0
    seconds: float = 0.0          # wall time of the lockstep runs (model + Java + comparison)
    model_seconds: float = 0.0    # the same schedules on the model alone (run_scenario)
    classes: dict[str, dict[str, Any]] = attrs.Factory(dict)
    out_of_scope_reasons: dict[str, int] = attrs.Factory(dict)
    # store puts refused per site over the compared schedules (the store_put_fail fault)
    put_failures: dict[str, int] = attrs.Factory(dict)

    def to_json(self) -> dict[str, Any]:
        """JSON form (seconds left out by the caller for byte-stable output)."""
        return attrs.asdict(self)

    def record(self, case: int, seed: int, config: ScenarioConfig, schedule: Sequence[Action],
               verdict: Verdict) -> None:
        """Count one case's verdict; a divergence class keeps its first example."""
        self.cases += 1
        self.steps += verdict.steps
        for site in verdict.put_failures:
            self.put_failures[site] = self.put_failures.get(site, 0) + 1
        if verdict.status == "agrees":
            self.agree += 1
        elif verdict.status == "out of scope":
            self.out_of_scope += 1
            reason = f"{verdict.action[0] if verdict.action else '?'}: {verdict.why}"
            self.out_of_scope_reasons[reason] = self.out_of_scope_reasons.get(reason, 0) + 1
        else:
            self.diverge += 1
            entry = self.classes.setdefault(divergence_class(verdict), {"count": 0, "example": {
                "case": case, "seed": seed, "config": config.to_json(), "step": verdict.step,
                "action": list(verdict.action), "key": verdict.key, "model": verdict.model, "java": verdict.java,
                "schedule": [a.to_json() for a in schedule[:(verdict.step or 0) + 1]]}})
            entry["count"] += 1


def stateful_differential(profile: str, cases: int, seed: int, steps: int, client: LockstepClient,
                          interleave: bool = False, progress: Callable[[str], None] = lambda _: None,
                          clock: Callable[[], float] | None = None, first_case: int = 0,
                          faults: Sequence[str] = LOCKSTEP_FAULTS,
                          extra_faults: tuple[str, ...] = (), orderly: bool = False,
                          start_offsets: bool = False) -> StatefulReport:
    """``cases`` swarm schedules of ``steps`` actions on ``profile``: agree / diverge / out of
    scope counts, and each divergence class with its first example (seed, config, schedule).
    Case k's draw depends only on ``seed`` and k, so cases ``first_case`` .. ``first_case +
    cases - 1`` in one call are the same as in a longer run from 0 (a run in chunks). ``faults``:
    each is kept with probability 0.3 per case (LOCKSTEP_FAULTS, plus OPT_IN_FAULTS if asked).
    ``extra_faults`` are added to every case's drawn faults (the draw itself is unchanged);
    ``orderly`` makes every case's consumers pop orderly (ScenarioConfig.pop_orderly, set after
    the draw: the same cases, orderly). ``start_offsets`` draws each case's start_offset last (0
    half the time, else across the domain with boundary bias, as ScenarioConfig.draw_domain):
    every other field and the run seed stay those of the case without it."""
    from reference.common.javalang import JavaRandom

    unknown = [f for f in faults if f not in LOCKSTEP_FAULTS + OPT_IN_FAULTS]
    if unknown:
        raise ValueError(f"the harness cannot inject {unknown}; known: {', '.join(LOCKSTEP_FAULTS + OPT_IN_FAULTS)}")
    report = StatefulReport(profile, RELEASES[profile])
    start = clock() if clock else 0.0
    for case in range(first_case, first_case + cases):
        rng = JavaRandom(seed * 1_000_003 + case)
        chosen = tuple(f for f in faults if rng.next_int(10) < 3)
        config = ScenarioConfig.draw(rng, faults=chosen + tuple(f for f in extra_faults if f not in chosen))
        config = attrs.evolve(config, pop_orderly=orderly)
        run_seed = rng.next_int(1 << 30)
        if start_offsets:
            dim = config_dimensions("pop")["start_offset"]
            config = attrs.evolve(config, start_offset=boundary_draw(rng, dim) if rng.next_boolean() else 0)
        verdict, schedule = drawn_schedule_lockstep(profile, run_seed, config, steps, client, interleave)
        if clock is not None:
            from popverify.sim.scenario import run_scenario

            t0 = clock()
            run_scenario(profile, run_seed, 0, config=config, schedule=schedule)
            report.model_seconds += clock() - t0
        report.record(case, run_seed, config, schedule, verdict)
        progress(f"{profile} case {case}: {verdict.headline()}")
    report.seconds = (clock() - start - report.model_seconds) if clock else 0.0
    return report
