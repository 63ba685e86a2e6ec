"""verify's conformance technique includes the lockstep differential (model vs each release's
broker classes on random interleaved schedules); a divergence or an empty differential fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from popverify.cli import main
from popverify.verify import report


def _summary(lockstep: list[dict[str, Any]]) -> dict[str, Any]:
    check = {"name": "allocation", "version": "5.0.0", "cases": 10, "disagreements": 0}
    return {"techniques": {"conformance": {"result": "failed" if any(r["diverge"] for r in lockstep) else "agrees",
                                           "checks": [check], "lockstep": lockstep}}, "unavailable": {}}


def _entry(release: str, cases: int, diverge: int) -> dict[str, Any]:
    return {"profile": "v5.0", "release": release, "cases": cases, "agree": cases - diverge, "diverge": diverge,
            "out_of_scope": 0, "steps": 10 * cases, "classes": {"pop .response.restNum": {"count": diverge}} if diverge
            else {}, "out_of_scope_reasons": {}}


def test_a_lockstep_divergence_fails_the_run_with_its_release_and_class() -> None:
    failed = report.failures(_summary([_entry("5.0.0", 3, 1), _entry("5.5.0", 3, 0)]))
    assert failed == ["conformance lockstep: 5.0.0 1 of 3 schedules diverge (pop .response.restNum)"]
    assert report.failures(_summary([_entry("5.0.0", 3, 0), _entry("5.5.0", 3, 0)])) == []


def test_an_empty_lockstep_differential_is_a_failure_not_a_pass() -> None:
    assert report.failures(_summary([])) == ["conformance: the lockstep differential replayed no schedule"]
    assert report.failures(_summary([_entry("5.0.0", 0, 0)])) == [
        "conformance: the lockstep differential replayed no schedule"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                    reason="the lockstep harness needs a JDK and Maven")
@pytest.mark.usefixtures("shared_lockstep")  # the session's JVM per release (tests/conftest.py)
def test_verify_replays_interleaved_schedules_on_both_releases(tmp_path: Path) -> None:
    code = main(["verify", "--out", str(tmp_path), "--skip", "tlc,trace,z3,fuzz,stateful",
                 "--lockstep-cases", "2", "--lockstep-steps", "40"])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == 1 and summary["outcome"].startswith("incomplete")  # the skipped techniques
    lockstep = summary["techniques"]["conformance"]["lockstep"]
    assert [(r["release"], r["cases"], r["agree"]) for r in lockstep] == [("5.0.0", 2, 2), ("5.5.0", 2, 2)]
    assert all(r["steps"] > 0 for r in lockstep)
    assert "Lockstep differential" in (tmp_path / "report.html").read_text()


def test_a_disagreeing_check_and_a_lockstep_divergence_are_both_named() -> None:
    summary = _summary([_entry("5.0.0", 3, 1), _entry("5.5.0", 3, 0)])
    summary["techniques"]["conformance"]["checks"][0]["disagreements"] = 2
    assert report.failures(summary) == [
        "conformance failed; conformance lockstep: 5.0.0 1 of 3 schedules diverge (pop .response.restNum)"]
