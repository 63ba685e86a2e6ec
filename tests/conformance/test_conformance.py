"""Differential conformance against RocketMQ's own jars (5.0.0 and 5.3.3), built from Maven
Central at test time: zero disagreements, and a deliberately wrong model function is caught."""

from __future__ import annotations

import json

import pytest

from popverify.cli import main
from popverify.conformance import checks, run_checks
from reference.client.allocation import allocate_averagely


def test_the_model_agrees_with_both_rocketmq_versions() -> None:
    results = run_checks(cases=120, seed=7)
    assert {r.version for r in results} == {"5.0.0", "5.3.3"}
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
    [pq] = run_checks(cases=40, seed=2, versions=("5.3.3",), names=("process_queue",))
    assert pq.disagreements > 0


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
