"""`popverify verify --live`: the live technique's entry, its failure policy, the matrix columns
beside the model's and the totals table -- without JVMs (the real sessions are in
test_live_session.py); and a clear failure when Java is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from popverify.live import suite
from popverify.live.check import check_history
from popverify.live.history import Op
from popverify.verify import report

T0 = 1_800_000_000_000


def _history(violating: bool) -> list[Op]:
    ops: list[Op] = []

    def op(type_: str, f: str, t: int, **kw: Any) -> None:
        ops.append(Op(len(ops), type_, f, "c", T0 + t, t, **kw))

    op("invoke", "send", 0, key="k-0")
    op("ok", "send", 1, key="k-0", queue=0, offset=0)
    h = f"0 {T0 + 10} 10000 0 0 broker-a 0 0 0"
    op("info", "deliver", 10, key="k-0", handle=h)
    op("invoke", "ack", 20, key="k-0", handle=h)
    op("ok", "ack", 21, key="k-0", handle=h)
    if violating:  # an acknowledged send never delivered: ALO-1
        op("invoke", "send", 30, key="k-1")
        op("ok", "send", 31, key="k-1", queue=0, offset=1)
    return ops


def _fake_run_live(violating: dict[str, bool]):  # type: ignore[no-untyped-def]
    """run_live replaced by the real checker over a hand-made history (no cluster)."""
    from popverify.live.run import LiveResult

    def run(config, progress):  # type: ignore[no-untyped-def]
        verdict = check_history(_history(violating[config.release]))
        config.out.mkdir(parents=True, exist_ok=True)
        return LiveResult(config, verdict, (), {"total": 1.0}, True, config.out / "history.jsonl",
                          config.out / "report.md", (), config.out)
    return run


def _entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, violating: dict[str, bool]) -> dict[str, Any]:
    import popverify.live.run as run_mod
    monkeypatch.setattr(run_mod, "run_live", _fake_run_live(violating))
    return suite.live_entry(tmp_path, duration_s=10)


def test_clean_runs_pass_and_fill_one_column_per_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _entry(tmp_path, monkeypatch, {"5.0.0": False, "5.5.0": False})
    assert entry["result"] == "passed" and [r["release"] for r in entry["runs"]] == ["5.0.0", "5.5.0"]
    summary = {"techniques": {"live": entry}, "unavailable": {}, "environment": {}, "outcome": "x"}
    assert report.failures(summary) == []
    cells = report.matrix(summary)
    assert report.live_columns(summary) == ["live/v5.0", "live/v5.5"]
    assert cells["NSR-1"]["live/v5.0"]["state"] == "passed" and "5.0.0" in cells["NSR-1"]["live/v5.0"]["text"]
    assert "live/v5.0" not in cells["OFF-1"]  # not observable from clients: no cell, not "passed"
    summary["matrix"] = cells
    html = report.render(summary, tmp_path)
    assert "live/v5.5" in html and "Live runs" in html and "acknowledged_sends" in html


def test_a_violation_fails_the_technique_unless_the_profile_expects_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # ALO-1 is expected violated on v5.0 (F1: spec/expectations.json), not on v5.5.
    entry = _entry(tmp_path, monkeypatch, {"5.0.0": True, "5.5.0": True})
    assert entry["result"] == "failed" and "5.5.0: ALO-1 violated" in entry["error"]
    assert "5.0.0" not in entry["error"]
    summary = {"techniques": {"live": entry}, "unavailable": {}, "environment": {}, "outcome": "x"}
    assert any(f.startswith("live failed") for f in report.failures(summary))
    cells = report.matrix(summary)
    assert cells["ALO-1"]["live/v5.5"]["state"] == "violated"
    assert cells["ALO-1"]["live/v5.0"]["state"] == "expected"


def test_an_empty_live_entry_is_a_failure() -> None:
    summary = {"techniques": {"live": {"result": "passed", "runs": []}}, "unavailable": {}}
    assert report.failures(summary) == ["live checked nothing (no runs)"]


def test_verify_live_without_java_is_a_failure_named_in_the_report(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    env = dict(os.environ, PATH=str(bin_dir))
    proc = subprocess.run([sys.executable, "-m", "popverify", "verify", "--out", str(tmp_path / "v"), "--live",
                           "--skip", "tlc,trace,z3,fuzz,stateful,conformance"], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    summary = json.loads((tmp_path / "v" / "summary.json").read_text())
    assert "live" in summary["unavailable"] and "java" in summary["unavailable"]["live"].lower()
    assert "live did not run" in summary["outcome"]


@pytest.mark.parametrize("value", ["5", "601", "x"])
def test_live_duration_is_bounded(tmp_path: Path, value: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "popverify", "verify", "--out", str(tmp_path), "--live",
                           "--live-duration", value], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2 and "--live-duration" in proc.stderr and "Traceback" not in proc.stderr
