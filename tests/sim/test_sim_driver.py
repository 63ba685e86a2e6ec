"""The POP driver, checker, mutants, ITF traces and the simulate / replay / bench commands."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from popverify.cli import main
from popverify.mutants import MUTANTS
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from popverify.trace.itf import TraceError, read_trace, write_trace

PROFILES = ("v5.0", "v5.5")


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "popverify", *argv], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("profile", PROFILES)
def test_simulate_output_is_byte_identical_for_identical_arguments(profile: str) -> None:
    args = ("simulate", "--profile", profile, "--seed", "7", "--steps", "400", "--faults", "all", "--json")
    first, second = _cli(*args), _cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    summary = json.loads(first.stdout)
    assert summary["seed"] == 7 and summary["profile"] == profile and summary["steps"] == 400
    assert {"produced", "popped", "acked", "revived", "redelivered"} <= set(summary["counts"])
    assert summary["counts"]["produced"] > 0 and summary["counts"]["popped"] > 0
    assert all({"property", "message", "step"} <= set(v) for v in summary["violations"])


def test_different_seeds_give_different_runs() -> None:
    a = run_scenario("v5.5", 1, 300)
    b = run_scenario("v5.5", 2, 300)
    assert a.schedule != b.schedule


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("merge", [False, True])
def test_both_profiles_and_merge_modes_pop_ack_and_revive(profile: str, merge: bool) -> None:
    result = run_scenario(profile, 11, 1500, config=ScenarioConfig(enable_pop_buffer_merge=merge))
    assert result.counts["popped"] > 50 and result.counts["acked"] > 50 and result.counts["revived"] > 0


def test_trace_round_trip_replays_to_the_same_outcome(tmp_path: Path) -> None:
    result = run_scenario("v5.0", 5, 300, config=ScenarioConfig(faults=("restart", "expire")), record_trace=True)
    path = tmp_path / "run.itf.json"
    assert result.trace is not None
    write_trace(path, result.trace)
    doc = read_trace(path)
    assert doc["#meta"]["format"] == "ITF" and doc["vars"] == ["step", "now", "action", "events"]
    assert len(doc["states"]) == 301  # 300 steps and the drain
    assert doc["states"][-1]["action"]["kind"] == "drain"
    assert main(["replay", str(path)]) == 0


def test_replay_detects_a_tampered_outcome(tmp_path: Path) -> None:
    result = run_scenario("v5.5", 5, 200, record_trace=True)
    assert result.trace is not None
    result.trace["#meta"]["popverify"]["outcome"]["counts"]["acked"] += 1
    path = tmp_path / "tampered.json"
    write_trace(path, result.trace)
    assert main(["replay", str(path)]) == 1


@pytest.mark.parametrize("content", ["", "{not json", "[1, 2]", '{"#meta": {}, "vars": [], "states": []}', "\xff\xfe"])
def test_corrupt_or_foreign_trace_gets_a_clear_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="latin-1")
    with pytest.raises(TraceError):
        read_trace(path)
    proc = _cli("replay", str(path))
    assert proc.returncode == 2 and "error" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_trace_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = _cli("replay", str(tmp_path / "absent.json"))
    assert proc.returncode == 2 and "cannot read trace" in proc.stderr


@pytest.mark.parametrize("argv", [
    ["simulate", "--profile", "v4"],
    ["simulate", "--steps", "-1"],
    ["simulate", "--faults", "meteor"],
    ["simulate", "--mutant", "no-such-mutant"],
    ["simulate", "--queues", "0"],
])
def test_bad_simulate_arguments_exit_2_with_a_message(argv: list[str]) -> None:
    proc = _cli(*argv)
    assert proc.returncode == 2 and proc.stderr.strip() and "Traceback" not in proc.stderr


def test_schedule_is_followed_and_inapplicable_actions_are_skipped() -> None:
    schedule = [Action("ack", (0, 0)), Action("produce", (0,)), Action("pop", (0, 0, False)),
                Action("pop_step", (0,)), Action("pop_step", (0,)), Action("ack", (0, 0)), Action("warp", ())]
    result = run_scenario("v5.5", 0, 0, schedule=schedule, config=ScenarioConfig(drain=False))
    assert result.schedule == tuple(schedule)
    assert result.counts["produced"] == 1 and result.counts["popped"] == 1 and result.counts["acked"] == 1
    assert result.counts["skipped"] == 2  # the first ack (nothing held) and the unknown kind


RUNS = [(seed, variant) for seed in range(10) for variant in (False, True)]


def _run_counts(mutant: str | None, mode: str, seed: int, variant: bool,
                extra: tuple[tuple[str, Any], ...] = ()) -> Counter:
    """Violations per property of one fixed fault-free v5.5 run (POP: merge off or on;
    push: concurrent or orderly listener), with the configuration fields ``extra`` (the ones
    a mutant's runs need, Mutant.config)."""
    config = (ScenarioConfig(enable_pop_buffer_merge=variant) if mode == "pop" else
              attrs.evolve(ScenarioConfig.default_for("push"), consume_orderly=variant))
    config = attrs.evolve(config, **dict(extra))
    result = run_scenario("v5.5", seed, 600 if mode == "pop" else 300, mode=mode, config=config, mutant=mutant)
    return Counter(v.property_id for v in result.violations)


def _violation_counts(mutant: str | None, mode: str = "pop", extra: tuple[tuple[str, Any], ...] = ()) -> Counter:
    """Violations per property over every run of RUNS."""
    counts: Counter = Counter()
    for seed, variant in RUNS:
        counts.update(_run_counts(mutant, mode, seed, variant, extra))
    return counts


@pytest.fixture(scope="module")
def baseline() -> dict[tuple[str, tuple[tuple[str, Any], ...]], Counter]:
    """The correct model's counts for each (mode, configuration fields) some mutant runs with."""
    return {(m.mode, m.config): _violation_counts(None, m.mode, m.config)
            for m in {(m.mode, m.config): m for m in MUTANTS.values()}.values()}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_caught_by_a_property_it_should_break(name: str, baseline: dict) -> None:
    """The mutant makes a property it should break fire more often than the correct model
    does on the same runs: the check demonstrably fails on a broken model."""
    mutant = MUTANTS[name]
    base = baseline[(mutant.mode, mutant.config)]
    found: Counter = Counter()
    for seed, variant in RUNS:  # stop once caught: a mutant whose drain never settles is slow
        found.update(_run_counts(name, mutant.mode, seed, variant, mutant.config))
        if any(found[pid] > base[pid] for pid in mutant.expected_catch):
            return
    raise AssertionError(f"{name} not caught: {dict(found)} versus baseline {dict(base)}")


def test_mutant_is_removed_after_the_run() -> None:
    run_scenario("v5.5", 3, 200, mutant="early-revive")
    from reference.broker.checkpoint import PopCheckPoint
    assert PopCheckPoint(pop_time=10, invisible_time=5).revive_time == 15
