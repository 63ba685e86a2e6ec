"""Spark campaigns in local mode: findings shrunk, resume without repeats, retried tasks exact."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from popverify.cli import main
from popverify.trace.itf import read_trace
from popverify.fuzz import store
from popverify.fuzz.campaign import campaign
from popverify.fuzz.executors import spark_executor
from popverify.fuzz.rows import Job, RoundTask
from spark_fuzz.executor import SparkExecutor
from spark_fuzz.session import spark_session


# per test: getOrCreate hands back the running session, or starts one if a test stopped it
@pytest.fixture
def spark():
    yield spark_executor("local[2]")


def test_campaign_finds_and_shrinks_a_mutant_violation(tmp_path: Path, spark) -> None:
    summary = campaign("v5.5", "pop", 40, 250, tmp_path, spark, mutant="commit-skips-offset")
    props = {v["property"]: v for v in summary["violations"]}
    assert props, "the broken model went unnoticed"
    finding = props.get("OFF-1") or props.get("ALO-1")
    assert finding is not None and finding["unexpected"]
    assert finding["minimal_steps"] <= 20
    doc = read_trace(Path(finding["trace"]))
    assert doc["#meta"]["popverify"]["mutant"] == "commit-skips-offset"
    assert main(["replay", finding["trace"]]) == 0
    assert (tmp_path / "report.html").read_text().count("<svg") == 1
    assert json.loads((tmp_path / "summary.json").read_text())["runs"] == 40


def test_resumed_campaign_does_not_repeat_seeds(tmp_path: Path, spark) -> None:
    campaign("v5.5", "pop", 12, 100, tmp_path, spark)
    first = store.load_rows(tmp_path, "v5.5", "pop")
    assert sorted(first) == list(range(12))
    campaign("v5.5", "pop", 20, 100, tmp_path, spark)
    files = sorted(store.runs_dir(tmp_path).glob("*.parquet"))
    seeds_per_file = [{r["seed"] for r in pq.read_table(f).to_pylist()} for f in files]
    assert len(files) == 2 and not (seeds_per_file[0] & seeds_per_file[1])
    assert seeds_per_file[1] == set(range(12, 20))


def test_killed_task_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    # local[2,3]: two cores, three attempts per task, so the injected loss is retried; the shared
    # local[2] session must stop first or getOrCreate would hand it back
    spark_session("local[2]").stop()
    session = spark_session("local[2,3]")
    try:
        jobs = [Job(s) for s in range(16)]
        task = RoundTask("v5.5", "pop", 80, None, 0)
        rows = SparkExecutor(session, partitions=4, fail_first_attempt=True).run_round(jobs, task)
        assert sorted(r["seed"] for r in rows) == list(range(16))
        clean = SparkExecutor(session, partitions=4).run_round(jobs, task)
        assert [r["schedule"] for r in rows] == [r["schedule"] for r in clean]
    finally:
        session.stop()


def test_fuzz_cli_rejects_bad_arguments(tmp_path: Path) -> None:
    assert main(["fuzz", "--profile", "v5.5", "--runs", "0", "--out", str(tmp_path)]) == 2
    assert main(["fuzz", "--profile", "v5.5", "--mutant", "nope", "--out", str(tmp_path)]) == 2


def test_guided_rounds_are_compared_with_blind_seeds_of_the_same_budget(tmp_path: Path, spark) -> None:
    summary = campaign("v5.5", "push", 24, 120, tmp_path, spark, rounds=2, compare_blind=True)
    rows = store.load_rows(tmp_path, "v5.5", "push")
    offspring = [r for r in rows.values() if r["parent"] >= 0]
    assert offspring, "round 2 ran no offspring of the corpus"
    assert all(len(r["coverage_steps"]) == len(r["coverage"]) for r in rows.values())
    blind = summary["blind_baseline"]
    assert blind["runs"] == 24 and len(blind["coverage_timeline"]) == 2
    assert all(r["parent"] < 0 for r in store.load_rows(tmp_path / "blind-baseline", "v5.5", "push").values())
    report = (tmp_path / "report.html").read_text()
    assert 'id="guided-vs-blind"' in report and report.count("<svg") == 2
    assert f"{summary['coverage'] - blind['coverage']:+d} coverage points" in report


def test_an_offspring_starts_from_where_its_parent_reached_its_rarest_point() -> None:
    from popverify.fuzz.plan import frontier_step
    from reference.common.javalang import JavaRandom

    row = {"coverage": ["a", "b", "c"], "coverage_steps": [0, 7, 3], "steps": 10}
    assert frontier_step(row, {"a": 5, "b": 1, "c": 2}, JavaRandom(1)) == 7
    assert frontier_step({**row, "coverage_steps": None}, {"a": 5, "b": 1, "c": 2}, JavaRandom(1)) == 10


def test_a_push_counterexample_of_a_broken_model_is_not_a_behaviour_of_the_spec(tmp_path: Path, spark) -> None:
    summary = campaign("v5.5", "push", 12, 200, tmp_path, spark, mutant="push-commit-max")
    finding = next(v for v in summary["violations"] if v["property"] == "OFF-3")
    assert finding["validation"]["verdict"] == "not a behaviour"
    assert "Consume(" in finding["validation"]["detail"]
    assert "not a behaviour" in (tmp_path / "report.html").read_text()
