"""Differential checks: the same random inputs through RocketMQ's Java classes (via the
harness) and through our model, every observable result compared.

Each check draws its cases from ``random.Random(seed)``, so a seed names a case set exactly.
A disagreement is recorded with its input; ``explained`` counts the ones spec/conformance.md
lists as deliberate abstractions (none so far).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import attrs

from popverify.conformance.harness import Harness
from reference.broker import extra_info as xi
from reference.broker import keys
from reference.broker.checkpoint import AckMsg, BatchAckMsg, PopCheckPoint
from reference.broker.config import BrokerConfig
from reference.broker.query_assignment import allocate4pop
from reference.client.allocation import (allocate_averagely, allocate_averagely_by_circle, allocate_consistent_hash,
                                         sort_cids, sort_queues)
from reference.client.config import ClientConfig
from reference.client.process_queue import NoSuchElement, ProcessQueue, PulledMessage
from reference.common.javalang import to_byte
from reference.common.message_queue import MessageQueue

STRATEGIES = {"AVG": allocate_averagely, "AVG_BY_CIRCLE": allocate_averagely_by_circle,
              "CONSISTENT_HASH": allocate_consistent_hash}


@attrs.define
class CheckResult:
    """One check against one RocketMQ version."""

    name: str
    version: str
    cases: int = 0
    disagreements: int = 0
    explained: int = 0
    examples: list[dict[str, Any]] = attrs.Factory(list)

    def record(self, case: dict[str, Any], java: Any, ours: Any) -> None:
        """Count one case; keep the first few disagreements as examples."""
        self.cases += 1
        if java != ours:
            self.disagreements += 1
            if len(self.examples) < 3:
                self.examples.append({"input": case, "java": java, "ours": ours})

    def to_json(self) -> dict[str, Any]:
        """JSON form (the CLI's ``checks`` entries)."""
        return attrs.asdict(self)


def _ours(fn: Callable[[], Any]) -> tuple[str, Any]:
    """Our result in the harness's ("ok", value) / ("error", kind) form."""
    try:
        return "ok", fn()
    except (ValueError, NoSuchElement, IndexError) as err:
        return "error", type(err).__name__


def _error_kind(answer: tuple[str, Any]) -> tuple[str, Any]:
    # Which exception class is RocketMQ's business; that one was raised is what we compare.
    return ("error", "raised") if answer[0] == "error" else answer


def _client_ids(rnd: random.Random, n: int) -> list[str]:
    style = rnd.randrange(3)
    if style == 0:
        return [f"c{i}" for i in rnd.sample(range(30), n)]  # "c10" sorts before "c2"
    if style == 1:
        return [f"10.0.{rnd.randrange(3)}.{rnd.randrange(256)}@{rnd.randrange(1, 99999)}" for _ in range(n)]
    return [rnd.choice(["c", "C", "client-", "ip"]) + str(rnd.randrange(1000)) for _ in range(n)]


def _queues(rnd: random.Random, n: int) -> list[MessageQueue]:
    brokers = rnd.sample(["broker-a", "broker-b", "broker-10", "broker-2"], rnd.randrange(1, 3))
    return [MessageQueue(rnd.choice(["T", "TopicTest"]), rnd.choice(brokers), q) for q in rnd.sample(range(64), n)]


def check_allocation(h: Harness, rnd: random.Random, cases: int, profile: str) -> list[CheckResult]:
    """The three AllocateMessageQueueStrategy implementations, and allocate4Pop over AVG and
    AVG_BY_CIRCLE, on random queue and client lists (sorted as RebalanceImpl sorts them)."""
    results = {name: CheckResult(f"allocation/{name}", h.version) for name in (*STRATEGIES, "allocate4Pop")}
    for _ in range(cases):
        mqs = sort_queues(_queues(rnd, rnd.randrange(0, 13)))
        cids = sort_cids(list(dict.fromkeys(_client_ids(rnd, rnd.randrange(0, 9)))))
        cid = rnd.choice(cids) if cids and rnd.randrange(8) else "stranger"
        wire = {"group": "g", "cid": cid, "mqs": [[m.topic, m.broker_name, m.queue_id] for m in mqs], "cids": cids}
        for name, fn in STRATEGIES.items():
            java = _error_kind(h.call({"op": "allocate", "strategy": name, **wire}))
            ours = _error_kind(_ours(lambda: [[m.topic, m.broker_name, m.queue_id] for m in fn("g", cid, mqs, cids)]))
            results[name].record({"strategy": name, **wire}, java, ours)
        if mqs and cids and cid in cids:
            name = rnd.choice(["AVG", "AVG_BY_CIRCLE"])
            share = rnd.randrange(0, len(cids) + 2)
            java = _error_kind(h.call({"op": "allocate4pop", "strategy": name, "share": share, **wire}))
            ours = _error_kind(_ours(lambda: [[m.topic, m.broker_name, m.queue_id] for m in
                                              allocate4pop(STRATEGIES[name], "g", cid, mqs, cids, share)]))
            results["allocate4Pop"].record({"strategy": name, "share": share, **wire}, java, ours)
    return list(results.values())


def _pq_ops(rnd: random.Random) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for _ in range(rnd.randrange(1, 14)):
        kind = rnd.choice(["put", "put", "put", "remove", "remove", "take", "commit", "rollback", "again", "clear"])
        if kind in ("put", "remove", "again"):
            msgs = []
            for _ in range(rnd.randrange(0, 5)):
                offset = rnd.randrange(0, 12)
                msgs.append([offset, rnd.choice([1, 3, 5, 5]),
                             str(offset + rnd.randrange(-2, 6)) if rnd.randrange(3) == 0 else None])
            ops.append({"k": kind, "msgs": msgs})
        elif kind == "take":
            ops.append({"k": kind, "n": rnd.randrange(0, 4)})
        else:
            ops.append({"k": kind})
    return ops


def _pq_apply(pq: ProcessQueue, op: dict[str, Any]) -> dict[str, Any]:
    def msgs() -> list[PulledMessage]:
        out = []
        for offset, size, max_offset in op["msgs"]:
            props = {} if max_offset is None else {"MAX_OFFSET": max_offset}
            out.append(PulledMessage(offset, b"\0" * size, props))
        return out
    obs: dict[str, Any] = {}
    kind = op["k"]
    try:
        if kind == "put":
            obs["ret"] = pq.put_message(msgs())
        elif kind == "remove":
            obs["ret"] = pq.remove_message(msgs())
        elif kind == "take":
            obs["ret"] = [m.queue_offset for m in pq.take_messages(op["n"])]
        elif kind == "commit":
            obs["ret"] = pq.commit()
        elif kind == "rollback":
            pq.rollback()
        elif kind == "again":
            pq.make_message_to_consume_again(msgs())
        else:
            pq.clear()
    except NoSuchElement:
        obs["error"] = "NoSuchElementException"
    obs.update(count=pq.msg_count, size=pq.msg_size, span=pq.get_max_span(), offsetMax=pq.queue_offset_max,
               keys=sorted(pq.msg_tree_map), consuming=sorted(pq.consuming_msg_orderly_tree_map),
               accCnt=pq.msg_acc_cnt, hasTemp=pq.has_temp_message())
    return obs


def check_process_queue(h: Harness, rnd: random.Random, cases: int, profile: str) -> list[CheckResult]:
    """Random operation sequences on a fresh ProcessQueue, every observation after every op."""
    result = CheckResult("process_queue", h.version)
    for _ in range(cases):
        ops = _pq_ops(rnd)
        status, java = h.call({"op": "pq", "ops": ops})
        pq = ProcessQueue(lambda: 0, ClientConfig.for_profile(profile).pq_reset_size_when_empty)
        ours = [_pq_apply(pq, op) for op in ops]
        result.record({"ops": ops}, java if status == "ok" else ("error", java), ours)
    return [result]


def check_formats(h: Harness, rnd: random.Random, cases: int, profile: str) -> list[CheckResult]:
    """PopCheckPoint (JSON, indexOfAck, ackOffsetByIndex, reviveTime, parse round trip), AckMsg
    and BatchAckMsg JSON, ExtraInfoUtil handles, KeyBuilder names."""
    cfg = BrokerConfig.for_profile(profile)
    ck_result = CheckResult("formats/checkpoint", h.version)
    ack_result = CheckResult("formats/ack", h.version)
    extra_result = CheckResult("formats/extra_info", h.version)
    keys_result = CheckResult("formats/keys", h.version)
    for _ in range(cases):
        start = rnd.choice([0, 1, rnd.randrange(1 << 40), (1 << 62) + rnd.randrange(100)])
        diffs = sorted(rnd.sample(range(1, 300), rnd.randrange(0, 8)))
        diffs = [0, *diffs] if diffs or rnd.randrange(2) else []
        q = rnd.randrange(0, 300)
        wire = {"so": start, "pt": rnd.randrange(1 << 41), "it": rnd.randrange(1, 300_000),
                "bm": rnd.randrange(-(1 << 31), 1 << 31), "n": len(diffs) or rnd.randrange(1, 33), "q": q,
                "t": rnd.choice(["T", "%RETRY%g_T", "Topic-1"]), "c": rnd.choice(["g", "GID_x"]),
                "ro": rnd.randrange(1 << 20), "bn": rnd.choice(["broker-a", "b"]), "d": diffs or None,
                "probes": [start + rnd.randrange(-2, 310) for _ in range(4)],
                "rp": rnd.choice([None, None, "0", "1", "3", str(rnd.randrange(1 << 32)), "-2", "+7", "", "x",
                                  " 1", "1_0", "2147483648", "-2147483648", "\u0663"]),
                "sp": rnd.randrange(2) == 1}
        status, java = h.call(wire | {"op": "ck"})
        ck = PopCheckPoint(start_offset=wire["so"], pop_time=wire["pt"], invisible_time=wire["it"],
                           bit_map=wire["bm"], num=to_byte(wire["n"]),
                           queue_id=to_byte(q) if cfg.ck_queue_id_is_byte else q, topic=wire["t"], cid=wire["c"],
                           revive_offset=wire["ro"], broker_name=wire["bn"])
        if cfg.ck_has_reput_times:  # v5.5's record (5.5.0): rePutTimes and suspend
            ck.re_put_times, ck.suspend = wire["rp"], wire["sp"]
        for d in diffs:
            ck.add_diff(d)
        text = ck.to_json(cfg.ck_has_reput_times)
        ours = {"json": text, "indexOfAck": [ck.index_of_ack(p) for p in wire["probes"]],
                "ackOffsetByIndex": [ck.ack_offset_by_index(i) for i in range(len(diffs))],
                "reviveTime": ck.revive_time, "roundTrip": PopCheckPoint.from_json(text).to_json(cfg.ck_has_reput_times)}
        if cfg.ck_has_reput_times:
            ours["parseRePutTimes"] = ck.parse_re_put_times()
        ck_result.record(wire, java if status == "ok" else ("error", java), ours)

        batch = cfg.supports_batch_ack and rnd.randrange(3) == 0
        ack_wire = {"so": start, "c": wire["c"], "t": wire["t"], "q": rnd.randrange(0, 300), "pt": wire["pt"],
                    "bn": wire["bn"] if rnd.randrange(4) else None, "batch": batch}
        if batch:
            ack_wire["aol"] = [start + d for d in diffs[:3]]
            ours_json = BatchAckMsg(tuple(ack_wire["aol"]), start, wire["c"], wire["t"], ack_wire["q"], wire["pt"],
                                    ack_wire["bn"]).to_json()
        else:
            ack_wire["ao"] = start + rnd.randrange(0, 50)
            ack = AckMsg(ack_wire["ao"], start, wire["c"], wire["t"], ack_wire["q"], wire["pt"], ack_wire["bn"])
            ours_json = ack.to_json(cfg.ack_json_short_names)
            # a body in either release's spelling (an upgrade leaves old acks in the revive
            # topic), read back as PopReviveService reads AckMsg and rewritten
            ack_wire["reread"] = ack.to_json(rnd.randrange(2) == 1)
        status, java = h.call(ack_wire | {"op": "ack"})
        ours_ack: dict[str, Any] = {"json": ours_json}
        if "reread" in ack_wire:
            ours_ack["reread"] = AckMsg.from_json(ack_wire["reread"], cfg.ack_json_short_names).to_json(
                cfg.ack_json_short_names)
        ack_result.record(ack_wire, java if status == "ok" else ("error", java), ours_ack)

        extra = {"ckOffset": rnd.randrange(1 << 40), "popTime": wire["pt"], "invisibleTime": wire["it"],
                 "reviveQid": rnd.randrange(8), "topic": wire["t"], "brokerName": wire["bn"],
                 "queueId": rnd.randrange(16), "cid": wire["c"]}
        if rnd.randrange(2):
            extra["msgOffset"] = rnd.randrange(1 << 40)
        if rnd.randrange(4) == 0:  # a handle as a client might send it: mangled
            extra["handle"] = rnd.choice(["", "1 2", "x y z w 0 b 1", "1 2 3 4 1 b 5 ", "1  2 3 4 0 b 1 9"])
        status, java = h.call(extra | {"op": "extra"})
        if status == "ok":  # a getter's exception: that it threw is compared, not its class
            java = {k: "error" if isinstance(v, str) and v.startswith("error:") else v for k, v in java.items()}
        extra_result.record(extra, java if status == "ok" else ("error", java), _extra_ours(extra))

        name = {"topic": wire["t"], "cid": wire["c"], "queueId": rnd.randrange(16)}
        java = _error_kind(h.call(name | {"op": "keys"}))
        retry = keys.build_pop_retry_topic(name["topic"], name["cid"])
        ours = _error_kind(_ours(lambda: {
            "retry": retry, "normal": keys.parse_normal_topic(retry, name["cid"]),
            "normalOfPlain": keys.parse_normal_topic(name["topic"], name["cid"]),
            "polling": keys.build_polling_key(name["topic"], name["cid"], name["queueId"])}))
        keys_result.record(name, java, ours)
    return [ck_result, ack_result, extra_result, keys_result]


def _extra_ours(extra: dict[str, Any]) -> dict[str, Any]:
    built = xi.build_extra_info(extra["ckOffset"], extra["popTime"], extra["invisibleTime"], extra["reviveQid"],
                                extra["topic"], extra["brokerName"], extra["queueId"], extra.get("msgOffset"))
    parts = xi.split(extra.get("handle", built))
    out: dict[str, Any] = {"built": built, "split": parts}
    for name, fn in (("getCkQueueOffset", xi.get_ck_queue_offset), ("getPopTime", xi.get_pop_time),
                     ("getInvisibleTime", xi.get_invisible_time), ("getReviveQid", xi.get_revive_qid),
                     ("getBrokerName", xi.get_broker_name), ("getQueueId", xi.get_queue_id),
                     ("getQueueOffset", xi.get_queue_offset)):
        try:
            out[name] = fn(parts)
        except xi.ExtraInfoError:
            out[name] = "error"
    try:
        out["getRealTopic"] = xi.get_real_topic(parts, extra["topic"], extra["cid"])
    except xi.ExtraInfoError:
        out["getRealTopic"] = "error"
    return out


CHECKS: dict[str, Callable[[Harness, random.Random, int, str], list[CheckResult]]] = {
    "allocation": check_allocation, "process_queue": check_process_queue, "formats": check_formats,
}
