"""The Java lockstep harness itself (conformance/lockstep/, spec/conformance.md "Lockstep
protocol"): bad input, determinism, the POP interleaving hook and release differences, on
RocketMQ's real broker classes. One JVM per release for the module (slow: JVM start and a
first build by Maven)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from popverify.conformance.lockstep_build import POP_TIME_METHOD, java_command


class Harness:
    """A harness JVM spoken to in raw lines (so that malformed requests can be sent too)."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.proc = subprocess.Popen(java_command(version), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def raw(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, f"harness {self.version} exited (rc {self.proc.poll()})"
        return json.loads(answer)

    def call(self, **req: Any) -> Any:
        answer = self.raw(json.dumps(req))
        assert "ok" in answer, f"{req} -> {answer}"
        return answer["ok"]

    def close(self) -> int:
        self.call(op="close")
        return self.proc.wait(timeout=60)


@pytest.fixture(scope="module", params=sorted(POP_TIME_METHOD))
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    h = Harness(request.param)
    yield h
    if h.proc.poll() is None:
        assert h.close() == 0


def test_unknown_release_is_refused() -> None:
    with pytest.raises(ValueError, match="no lockstep harness"):
        java_command("4.9.7")


def smoke_schedule(h: Harness, start: str = "init", restart: bool = False) -> list[Any]:
    """put 3, pop, ack one, changeInvisibleTime one, let 24 s pass with revives: the answers.
    ``start``: "init" or "reset" (same settings); ``restart``: then a broker restart, 12 s with
    services and a revive round on the reloaded store."""
    out = [h.call(op=start, version=h.version, queues=2, seed=7, reviveQueueNum=2)]
    for i, q in enumerate([0, 0, 1]):
        out.append(h.call(op="put", queueId=q, uniqKey=f"m{i}"))
    out.append(h.call(op="advance", ms=10))
    popped = h.call(op="pop", queueId=-1, maxMsgNums=32, invisibleTime=10000)
    out.append(popped)
    msgs = sorted(popped["messages"], key=lambda m: m["uniqKey"])
    assert [m["uniqKey"] for m in msgs] == ["m0", "m1", "m2"]
    out.append(h.call(op="advance", ms=10))
    acked, hidden = msgs[0], msgs[1]
    out.append(h.call(op="ack", topic=acked["realTopic"], queueId=acked["queueId"], offset=acked["queueOffset"],
                      extraInfo=acked["extraInfo"]))
    out.append(h.call(op="advance", ms=10))
    out.append(h.call(op="changeInvisibleTime", topic=hidden["realTopic"], queueId=hidden["queueId"],
                      offset=hidden["queueOffset"], extraInfo=hidden["extraInfo"], invisibleTime=20000))
    out.append(h.call(op="scan"))
    out.append(h.call(op="advance", ms=12000, servicesOnPeriod=True))
    out += [h.call(op="revive", qid=q) for q in range(2)]
    out.append(h.call(op="advance", ms=12000))
    out.append(h.call(op="timer"))
    out += [h.call(op="revive", qid=q) for q in range(2)]
    out.append(h.call(op="state"))
    if restart:
        out.append(h.call(op="flush"))
        out.append(h.call(op="put", queueId=1, uniqKey="m3"))
        out.append(h.call(op="pop", queueId=-1, maxMsgNums=32, invisibleTime=3000))
        out.append(h.call(op="restart"))
        out.append(h.call(op="advance", ms=12000, servicesOnPeriod=True))
        out += [h.call(op="revive", qid=q) for q in range(2)]
        out.append(h.call(op="state"))
    return out


@pytest.mark.slow
def test_bad_requests_answer_one_error_line_and_the_jvm_goes_on(harness: Harness) -> None:
    assert "error" in harness.raw("this is not json")
    assert "error" in harness.raw("[1, 2]")
    assert harness.raw("{}")["error"].startswith("IllegalArgumentException")
    assert "wrong" in harness.raw(json.dumps({"op": "init", "version": "wrong"}))["error"]
    harness.call(op="init", version=harness.version, queues=1)
    assert "unknown op" in harness.raw(json.dumps({"op": "frobnicate"}))["error"]
    assert "queueId must be in 0..1023" in harness.raw(json.dumps({"op": "put", "queueId": 5000, "uniqKey": "x"}))["error"]
    assert "missing field uniqKey" in harness.raw(json.dumps({"op": "put", "queueId": 0}))["error"]
    assert "qid must be in 0..7" in harness.raw(json.dumps({"op": "revive", "qid": 8}))["error"]
    assert "cannot run inside a pop" in harness.raw(json.dumps(
        {"op": "pop", "interleave": [{"at": 0, "ops": [{"op": "pop"}]}]}))["error"]
    assert harness.call(op="put", queueId=0, uniqKey="after-errors")["status"] == "PUT_OK"


@pytest.mark.slow
def test_same_requests_same_answers_and_unacked_messages_are_revived(harness: Harness) -> None:
    first = smoke_schedule(harness)
    second = smoke_schedule(harness)  # a new `init`: fresh store, same seed
    assert json.dumps(first) == json.dumps(second)
    retry = sorted((m["uniqKey"], m["reconsumeTimes"]) for m in first[-1]["retry"])
    # m0 acked; m1 re-hidden for 20 s then revived; m2 never acked
    assert retry == [("m1", 1), ("m2", 1)]


def _lasting_threads(jvm: dict[str, Any]) -> dict[str, int]:
    # NettyRemotingClient#shutdown of a never-started client starts one selector thread to
    # terminate its event loop group; it ends after Netty's 2 s quiet period. Netty's
    # GlobalEventExecutor thread (the push replay's EmbeddedChannels) comes and goes by itself:
    # it ends after one idle second and the next task starts a new one.
    transient = ("NettyClientSelector", "globalEventExecutor")
    return {name: n for name, n in jvm["names"].items() if not name.startswith(transient)}


@pytest.mark.slow
def test_reset_answers_byte_for_byte_as_a_fresh_jvm_and_leaks_no_thread(harness: Harness) -> None:
    """`reset` (a new broker in the running JVM, which has run other schedules) gives the same
    answers as `init` in a JVM of its own, restart and timer recovery included; and the JVM
    ends up with the threads it had (the old brokers' threads all end)."""
    fresh = Harness(harness.version)
    try:
        expected = smoke_schedule(fresh, restart=True)
    finally:
        assert fresh.close() == 0
    harness.call(op="init", version=harness.version, queues=1)
    before = harness.call(op="jvm")
    for _ in range(4):
        harness.call(op="put", queueId=0, uniqKey="noise")
        harness.call(op="reset")
    after = harness.call(op="jvm")
    # per thread name (numbers folded), so a leaked broker thread is caught whatever else comes
    # and goes; the raw count is not compared, transient Netty threads make it vary with load
    assert _lasting_threads(after) == _lasting_threads(before), (before, after)
    got = smoke_schedule(harness, start="reset", restart=True)
    assert json.dumps(got) == json.dumps(expected)
    assert "reviveQueueNum must be in 1..64" in harness.raw(json.dumps({"op": "reset", "reviveQueueNum": 0}))["error"]
    # a refused reset leaves the running broker alone
    assert harness.call(op="state")["topics"]["TopicTest"][0]["max"] == 2


@pytest.mark.slow
def test_f1_a_message_stored_after_poptime_is_lost_on_500_only(harness: Harness) -> None:
    harness.call(op="init", version=harness.version, queues=1, seed=1, reviveQueueNum=1)
    harness.call(op="put", queueId=0, uniqKey="m0")
    harness.call(op="advance", ms=10)
    popped = harness.call(op="pop", queueId=0, invisibleTime=5000, interleave=[
        {"at": 0, "advance": 50, "ops": [{"op": "put", "queueId": 0, "uniqKey": "m1"}]},
        {"at": 99, "ops": []}])
    assert [m["uniqKey"] for m in popped["messages"]] == ["m0", "m1"]
    assert popped["interleaved"][0]["answers"][0]["ok"]["storeTimestamp"] > popped["popTime"]
    assert popped["interleaveMissed"] == [99]
    harness.call(op="scan")
    harness.call(op="advance", ms=10000, servicesOnPeriod=True)
    revived = [r["uniqKey"] for r in harness.call(op="revive", qid=0)["revived"]]
    # PopReviveService#reviveMsgFromCk on 5.0.0 skips a message newer than the CK's popTime
    assert revived == (["m0"] if harness.version == "5.0.0" else ["m0", "m1"])


@pytest.mark.slow
def test_batch_ack_exists_from_5_1_and_restart_keeps_the_store(harness: Harness) -> None:
    harness.call(op="init", version=harness.version, queues=1, seed=3, reviveQueueNum=1)
    for i in range(3):
        harness.call(op="put", queueId=0, uniqKey=f"m{i}")
    harness.call(op="advance", ms=5)
    msgs = harness.call(op="pop", queueId=0, maxMsgNums=2, invisibleTime=5000)["messages"]
    answer = harness.raw(json.dumps({"op": "batchAck", "entries": msgs}))
    if harness.version == "5.0.0":
        assert answer["error"].startswith("UnsupportedOperationException")
    else:
        assert answer["ok"]["codes"] == [0, 0]
        assert [e["kind"] for e in harness.call(op="state")["revive"] + harness.call(op="state")["timer"]
                if e["kind"] == "batchAck"]
    harness.call(op="scan")
    harness.call(op="flush")
    harness.call(op="restart")
    state = harness.call(op="state")
    assert state["topics"]["TopicTest"] == [{"queueId": 0, "min": 0, "max": 3}]
    assert state["offsets"]["TopicTest@GID_popverify"] == {"0": 2}


@pytest.mark.slow
def test_a_parked_long_polling_pop_is_answered_when_a_message_arrives(harness: Harness) -> None:
    harness.call(op="init", version=harness.version, queues=1, seed=5, reviveQueueNum=1)
    parked = harness.call(op="pop", queueId=0, invisibleTime=3000, pollTime=5000)
    assert parked["parked"] is True and parked["code"] is None
    put = harness.call(op="put", queueId=0, uniqKey="late")
    (woken,) = put["woken"]
    assert woken["opaque"] == parked["opaque"] and woken["code"] == 0
    assert [m["uniqKey"] for m in woken["messages"]] == ["late"]
    assert "woken" not in harness.call(op="put", queueId=0, uniqKey="nobody-waits")
