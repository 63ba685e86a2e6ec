"""Differential conformance against RocketMQ's own jars (5.0.0 and 5.5.0), built from Maven
Central at test time: zero disagreements, and a deliberately wrong model function is caught."""

from __future__ import annotations

import json

import pytest

from popverify.cli import main
from popverify.conformance import checks, run_checks
from reference.broker.checkpoint import PopCheckPoint, parse_java_int
from reference.client.allocation import allocate_averagely


def test_the_model_agrees_with_both_rocketmq_versions() -> None:
    results = run_checks(cases=120, seed=7)
    assert {r.version for r in results} == {"5.0.0", "5.5.0"}
    names = {r.name for r in results}
    assert {"allocation/AVG", "allocation/allocate4Pop", "process_queue", "formats/checkpoint",
            "formats/extra_info", "formats/keys"} <= names
    for r in results:
        assert r.cases > 0
        assert r.disagreements == 0, (r.name, r.version, r.examples)


def test_a_broken_allocation_is_reported_as_a_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    def off_by_one(group, cid, mqs, cids):  # the last client loses its last queue
        out = allocate_averagely(group, cid, mqs, cids)
        return out[:-1] if cids and cid == cids[-1] else out

    monkeypatch.setitem(checks.STRATEGIES, "AVG", off_by_one)
    [avg] = [r for r in run_checks(cases=60, seed=1, versions=("5.0.0",), names=("allocation",))
             if r.name == "allocation/AVG"]
    assert avg.disagreements > 0 and avg.examples[0]["java"] != avg.examples[0]["ours"]


def test_a_broken_process_queue_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference.client.process_queue import ProcessQueue
    original = ProcessQueue.get_max_span
    monkeypatch.setattr(ProcessQueue, "get_max_span", lambda self: original(self) + 1 if self.msg_tree_map else 0)
    [pq] = run_checks(cases=40, seed=2, versions=("5.5.0",), names=("process_queue",))
    assert pq.disagreements > 0


def _formats(version: str, cases: int = 40) -> dict[str, checks.CheckResult]:
    return {r.name: r for r in run_checks(cases=cases, seed=3, versions=(version,), names=("formats",))}


def test_5_5_checkpoint_record_without_suspend_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    # 5.5.0's PopCheckPoint writes "sp" (a primitive boolean) through fastjson2; a v5.5 record
    # without it is the reviewer's 300/300 disagreement.
    original = PopCheckPoint.to_json
    monkeypatch.setattr(PopCheckPoint, "to_json", lambda self, rp=False, sp=None: original(self, rp, False))
    ck = _formats("5.5.0")["formats/checkpoint"]
    assert ck.disagreements == ck.cases > 0
    assert '"sp":' in ck.examples[0]["java"]["json"] and '"sp":' not in ck.examples[0]["ours"]["json"]


def test_5_5_parse_reput_times_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PopCheckPoint, "parse_re_put_times", lambda self: 0)  # forgets Byte.MAX_VALUE
    assert _formats("5.5.0")["formats/checkpoint"].disagreements > 0


def test_harness_writes_records_with_the_releases_json_library() -> None:
    # fastjson on 5.0.0 honours 5.0.0's fastjson annotations; 5.5.0's classes carry fastjson2's,
    # which only fastjson2 honours: either way the short JSONField names come out.
    from popverify.conformance.harness import Harness
    request = {"op": "ack", "so": 1, "c": "g", "t": "T", "q": 2, "pt": 3, "bn": None, "batch": False, "ao": 4}
    with Harness("5.5.0") as h:
        assert h.call(request) == ("ok", {"json": '{"ao":4,"c":"g","pt":3,"q":2,"so":1,"t":"T"}'})
    with Harness("5.0.0") as h:
        status, answer = h.call(request)
    assert status == "ok" and '"ackOffset":4' in answer["json"]


def test_reading_an_ack_body_of_the_other_spelling_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    # 5.0.0's AckMsg has no JSONField: fastjson reads only bean names, so a short-named body
    # parses to defaults; a model that reads both spellings on v5.0 is caught.
    from reference.broker.checkpoint import AckMsg
    original = AckMsg.from_json.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(AckMsg, "from_json", classmethod(lambda cls, text, short=True: original(cls, text, True)))
    assert _formats("5.0.0")["formats/ack"].disagreements > 0


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("+7", 7), ("-2147483648", -(1 << 31)), ("2147483647", (1 << 31) - 1), ("\u0663", 3),
    ("2147483648", None), ("", None), ("+", None), (" 1", None), ("1_0", None), ("x", None), ("1.0", None)])
def test_parse_java_int_follows_integer_parse_int(text: str, value: int | None) -> None:
    assert parse_java_int(text) == value


def test_cli_json_and_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--cases", "20", "--checks", "formats", "--versions", "5.0.0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unexplained"] == 0
    assert {c["name"] for c in out["checks"]} == {"formats/checkpoint", "formats/ack", "formats/extra_info",
                                                  "formats/keys"}
    assert all({"name", "cases", "disagreements"} <= set(c) for c in out["checks"])
    assert main(["conformance", "--checks", "telepathy"]) == 2
    assert main(["conformance", "--versions", "4.9.4"]) == 2
    assert main(["conformance", "--live"]) == 2
