"""`popverify verify`: report contents, exit-code policy, and the HTML in a real headless browser."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from popverify.cli import main
from popverify.tools import run_child
from popverify.sim.shrink import shrink
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario


def _verify(out: Path, *extra: str, skip: str = "stateful,z3,tlc,conformance,trace", runs: int = 9,
            steps: int = 250) -> int:
    # the lockstep replay of the counterexamples has its own tests (tests/findings/test_confirmation.py)
    # 9 runs: seed 1 shows F1 (ALO-1) under the default swarm draw, input domain included
    return main(["verify", "--out", str(out), "--runs", str(runs), "--steps", str(steps), "--engine", "python",
                 "--skip", skip, "--no-confirm", *extra])


def test_verify_writes_summary_and_report_with_findings(tmp_path: Path) -> None:
    # 19 runs: seed 18 of 250 steps shows PRG-2/F9 on v5.0 under the swarm draw of 26 November 2026
    # (the late draws took the F1 runs among the first nine away; the first ALO is seed 22's F1+F7)
    assert _verify(tmp_path, runs=19) == 1  # skipped techniques make the outcome incomplete, never ok
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["outcome"].startswith("incomplete") and "fuzz" not in summary["outcome"]
    campaigns = summary["techniques"]["fuzz"]["campaigns"]
    assert set(campaigns) == {"pop/v5.0", "pop/v5.5", "push/v5.0", "push/v5.5"}
    assert {"ALO-1", "OFF-1", "ALLOC-2", "PQ-1"} <= set(summary["matrix"])
    # a known v5.0 finding is shown as expected in the matrix (F9: PRG-2)
    assert "expected" in {row.get("fuzz pop/v5.0", {}).get("state") for row in summary["matrix"].values()}
    for finding in campaigns["pop/v5.0"]["findings"]:
        trace = Path(finding["trace"])
        assert trace.exists() and finding["minimal_steps"] <= finding["original_steps"]
        assert main(["replay", str(trace)]) == 0
    html = (tmp_path / "report.html").read_text()
    assert "<script" not in html and "http" not in html.split("<body>")[1]  # nothing to fetch


def test_verify_exits_non_zero_when_a_property_expected_to_hold_fails(tmp_path: Path) -> None:
    # short runs: the mutant breaks OFF-1 at the first committed POP, and each finding of the four
    # campaigns is shrunk (long push traces made this test the suite's slowest)
    assert _verify(tmp_path, "--mutant", "commit-skips-offset", runs=3, steps=60) == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["outcome"].startswith("failed")
    assert any(f["property"] in ("OFF-1", "ALO-1") and f["unexpected"]
               for f in summary["techniques"]["fuzz"]["campaigns"]["pop/v5.5"]["findings"])


def test_verify_rejects_unknown_technique(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "popverify", "verify", "--out", str(tmp_path), "--skip", "magic"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "unknown technique" in proc.stderr


def test_shrink_gives_a_one_minimal_schedule() -> None:
    config = ScenarioConfig(enable_pop_buffer_merge=False)
    seed = 3  # seed 1 stopped showing F1 in 800 steps once POP requests became time-atomic
    found = run_scenario("v5.0", seed, 800, config=config)
    pid = found.violations[0].property_id
    minimal = shrink("v5.0", "pop", seed, config, found.schedule, pid)
    assert len(minimal) < len(found.schedule)
    for i in range(len(minimal)):
        fewer = minimal[:i] + minimal[i + 1:]
        result = run_scenario("v5.0", seed, 0, config=config, schedule=fewer)
        assert not any(v.property_id == pid for v in result.violations)


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium")
    if browser is None:
        pytest.fail("chromium is not installed: .ci/run installs Debian's chromium for this test")
    assert _verify(tmp_path) == 1
    # run_child: chromium's renderer and GPU processes end with it, even on a time-out
    proc = run_child([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update", "--disable-sync",
                      f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                      (tmp_path / "report.html").resolve().as_uri()],
                     timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    dom = proc.stdout
    assert 'id="matrix"' in dom and "ALO-1" in dom and "ALLOC-4" in dom
    assert "unavailable" in dom and "Mutation score" in dom
    assert 'id="outcome"' in dom and "incomplete: " in dom and "conformance did not run" in dom


def test_verify_shows_the_mutation_score_of_the_last_mutate_run(tmp_path: Path) -> None:
    assert main(["mutate", "--operators", "flip-compare", "--files", "broker/ack_processor.py",
                 "--techniques", "simulation", "--max-mutants", "1", "--seeds", "1", "--steps", "200",
                 "--out", str(tmp_path)]) == 0
    assert _verify(tmp_path, skip="stateful,z3,tlc,conformance,trace") == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["mutation"]["techniques"]["simulation"]["total"] == 1
    assert 'id="mutation"' in (tmp_path / "report.html").read_text()


def test_verify_runs_its_campaigns_on_spark(tmp_path: Path) -> None:
    assert main(["verify", "--out", str(tmp_path), "--runs", "4", "--steps", "200", "--skip",
                 "stateful,z3,tlc,conformance,trace", "--no-confirm"]) == 1  # incomplete: techniques skipped
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["techniques"]["fuzz"]["engine"] == "spark local[2]"
    camp = summary["techniques"]["fuzz"]["campaigns"]["pop/v5.0"]
    assert camp["engine"] == "spark local[2]" and camp["runs"] == 4
    assert summary["outcome"].startswith("incomplete") and "fuzz" not in summary["outcome"]
    assert list((tmp_path / "fuzz" / "pop-v5.0-steps200" / "runs").glob("*.parquet"))


@pytest.mark.usefixtures("shared_tlc")  # TLC runs tests/tlaplus already made are reused (tests/conftest.py)
def test_tlc_cells_are_per_profile_and_show_the_v50_counterexample(tmp_path: Path) -> None:
    assert main(["verify", "--out", str(tmp_path), "--skip", "z3,fuzz,stateful,conformance"]) == 1  # incomplete
    summary = json.loads((tmp_path / "summary.json").read_text())
    # trace validation ran too: the reference push runs of both profiles are spec behaviours
    traces = summary["techniques"]["trace"]["traces"]
    assert summary["techniques"]["trace"]["result"] == "valid"
    assert sorted({t["profile"] for t in traces}) == ["v5.0", "v5.5"] and all(t["valid"] for t in traces)
    report = (tmp_path / "report.html").read_text()
    assert all(t["trace"] in report for t in traces) and "NOT a behaviour" not in report
    matrix = summary["matrix"]
    assert matrix["OFF-1"]["tlc/v5.5"]["state"] == "model-checked"
    assert matrix["OFF-1"]["tlc/v5.0"]["state"] == "expected"      # F1, found by TLC
    assert matrix["ALLOC-2"]["tlc/v5.0"]["state"] == matrix["ALLOC-2"]["tlc/v5.5"]["state"] == "model-checked"


def test_shrink_first_cuts_the_schedule_after_the_first_failing_step() -> None:
    """A violation found at step k reproduces on the schedule's first k + 1 steps (the run is
    deterministic up to there): with two runs allowed, shrink returns exactly that prefix.
    F9's trace fails RED-1 at its step 10 of 13; five more steps are appended."""
    from popverify.findings.finding_traces import FINDING_TRACES

    t = FINDING_TRACES["F9"]
    schedule = tuple(t.schedule) + (Action("advance", (1,)),) * 5
    found = run_scenario("v5.0", 0, 0, mode=t.mode, config=t.config, schedule=schedule)
    step = min(v.step for v in found.violations if v.property_id == "RED-1")
    assert step + 1 < len(schedule)
    minimal = shrink("v5.0", t.mode, 0, t.config, schedule, "RED-1", max_runs=2)
    assert minimal == schedule[:step + 1]
