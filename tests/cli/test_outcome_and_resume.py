"""verify's outcome from every technique's status, and campaign resume keyed by what
determines a row (issue 19, items 1 and 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from popverify.cli import main
from popverify.commands.verify import campaign_folder
from popverify.verify.report import failures
from popverify.fuzz import store
from popverify.fuzz.campaign import campaign


def _summary(**techniques) -> dict:
    return {"techniques": techniques, "unavailable": {}}


GOOD_FUZZ = {"campaigns": {"pop/v5.0": {"profile": "v5.0", "mode": "pop", "runs": 4, "findings": []}}}


@pytest.mark.parametrize(("summary", "named"), [
    (_summary(fuzz={"campaigns": {"pop/v5.0": {"error": "the schedule does not violate ALO-1"}}}), "fuzz pop/v5.0 error"),
    (_summary(fuzz={"campaigns": {"pop/v5.0": {"runs": 0, "findings": []}}}), "fuzz pop/v5.0 ran no runs"),
    (_summary(fuzz={"campaigns": {}}), "fuzz ran no campaign"),
    (_summary(fuzz={"result": "error", "error": "Spark did not start", "campaigns": {}}), "fuzz error"),
    (_summary(fuzz=GOOD_FUZZ, tlc={"result": "model-checked", "models": []}), "tlc checked nothing"),
    (_summary(fuzz=GOOD_FUZZ, z3={"result": "proved", "proofs": []}), "z3 checked nothing"),
    (_summary(fuzz=GOOD_FUZZ, stateful={"result": "passed", "machines": {}}), "stateful checked nothing"),
    (_summary(fuzz=GOOD_FUZZ, conformance={"result": "agrees", "checks": [{"name": "x", "cases": 0,
                                                                          "disagreements": 0}]}),
     "conformance checked no cases"),
    (_summary(fuzz=GOOD_FUZZ, trace={"result": "error", "error": "boom"}), "trace error"),
    ({"techniques": {"fuzz": GOOD_FUZZ}, "unavailable": {"tlc": "ToolError: java not found"}}, "tlc did not run"),
    ({"techniques": {"fuzz": GOOD_FUZZ}, "unavailable": {"z3": "skipped (--skip)"}}, "z3 did not run"),
])
def test_an_errored_empty_or_missing_technique_is_a_failure(summary: dict, named: str) -> None:
    found = failures(summary)
    assert any(line.startswith(named) for line in found), found


def test_a_technique_that_checked_something_and_held_is_no_failure() -> None:
    assert failures(_summary(fuzz=GOOD_FUZZ, z3={"result": "proved", "proofs": [{"result": "proved"}]})) == []


def _verify(out: Path, *extra: str) -> int:
    return main(["verify", "--out", str(out), "--runs", "2", "--steps", "60", "--skip",
                 "stateful,z3,tlc,conformance,trace", "--no-confirm", *extra])


def test_spark_that_does_not_start_fails_verify_instead_of_falling_back(tmp_path: Path, monkeypatch, capsys) -> None:
    import spark_fuzz.session

    def no_spark(master):
        raise RuntimeError("Java gateway process exited before sending its port number")

    monkeypatch.setattr(spark_fuzz.session, "spark_session", no_spark)
    assert _verify(tmp_path) == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["outcome"].startswith("failed") and "Spark did not start" in summary["outcome"]
    assert "FAILED: fuzz error (Spark did not start" in capsys.readouterr().err


def test_an_errored_campaign_fails_verify_and_is_named(tmp_path: Path, monkeypatch, capsys) -> None:
    import popverify.verify.campaign

    def broken(*args, **kwargs):
        raise ValueError("the schedule does not violate ALO-1")

    monkeypatch.setattr(popverify.verify.campaign, "run_campaign", broken)
    assert _verify(tmp_path, "--engine", "python") == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "fuzz pop/v5.0 error (the schedule does not violate ALO-1)" in summary["outcome"]
    assert "ok" not in summary["outcome"].split(":")[0]
    err = capsys.readouterr().err
    assert "FAILED: fuzz push/v5.5 error" in err


def test_a_technique_that_checks_nothing_fails_verify(tmp_path: Path, monkeypatch) -> None:
    import popverify.tlc.runner

    monkeypatch.setattr(popverify.tlc.runner, "models", lambda tier: [])
    assert main(["verify", "--out", str(tmp_path), "--skip", "stateful,z3,fuzz,conformance,trace"]) == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["outcome"].startswith("failed: tlc checked nothing")


def test_verify_keeps_campaigns_of_other_steps_or_mutants_apart(tmp_path: Path) -> None:
    plain = campaign_folder(tmp_path, "pop", "v5.0", 600, None)
    assert plain != campaign_folder(tmp_path, "pop", "v5.0", 600, "commit-skips-offset")
    assert plain != campaign_folder(tmp_path, "pop", "v5.0", 400, None)


# -- resume (real Spark, local mode) -------------------------------------------------------------
# per test: getOrCreate hands back the running session, or starts one if a test stopped it
@pytest.fixture
def spark():
    from popverify.fuzz.executors import spark_executor
    return spark_executor("local[2]")


def test_local_masters_get_task_retries() -> None:
    from spark_fuzz.session import with_task_retries
    assert with_task_retries("local[2]") == "local[2,4]"
    assert with_task_retries("local[*]") == "local[*,4]"
    assert with_task_retries("local") == "local[1,4]"
    assert with_task_retries("local[2,1]") == "local[2,1]"
    assert with_task_retries("spark://h:7077") == "spark://h:7077"


@pytest.mark.slow
def test_resume_with_other_parameters_is_refused(tmp_path: Path, spark, capsys) -> None:
    campaign("v5.5", "pop", 4, 50, tmp_path, spark)
    with pytest.raises(store.CampaignMismatch, match="steps 50 .asked 400."):
        campaign("v5.5", "pop", 4, 400, tmp_path, spark)
    with pytest.raises(store.CampaignMismatch, match="mutant None .asked 'commit-skips-offset'."):
        campaign("v5.5", "pop", 4, 50, tmp_path, spark, mutant="commit-skips-offset")
    code = main(["fuzz", "--profile", "v5.5", "--runs", "4", "--steps", "400", "--out", str(tmp_path),
                 "--no-progress"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("popverify")]
    assert code == 2 and len(err) == 1 and "other parameters" in err[0]
    assert sorted(store.load_rows(tmp_path, "v5.5", "pop")) == [0, 1, 2, 3]  # untouched


@pytest.mark.slow
def test_rounds_never_exceed_runs_resumed_or_not(tmp_path: Path, spark) -> None:
    summary = campaign("v5.5", "pop", 10, 80, tmp_path, spark, rounds=3)
    assert summary["runs"] == 10
    again = campaign("v5.5", "pop", 10, 80, tmp_path, spark, rounds=3)
    assert again["runs"] == 10 and len(store.load_rows(tmp_path, "v5.5", "pop")) == 10
    more = campaign("v5.5", "pop", 13, 80, tmp_path, spark, rounds=3)
    assert more["runs"] == 13


@pytest.mark.slow
def test_a_corrupt_parquet_file_is_set_aside_and_its_seeds_run_again(tmp_path: Path, spark, capsys) -> None:
    campaign("v5.5", "pop", 6, 60, tmp_path, spark)
    [first] = list(store.runs_dir(tmp_path).glob("v5.5-pop-*.parquet"))
    data = first.read_bytes()
    first.write_bytes(data[: len(data) // 2])  # truncated
    summary = campaign("v5.5", "pop", 6, 60, tmp_path, spark)
    assert summary["runs"] == 6 and summary["set_aside"] == [str(first) + ".corrupt"]
    assert Path(str(first) + ".corrupt").exists()
    assert sorted(store.load_rows(tmp_path, "v5.5", "pop")) == list(range(6))
    assert "set aside unreadable" in capsys.readouterr().err


@pytest.mark.slow
def test_a_failed_round_keeps_its_finished_tasks(tmp_path: Path, spark) -> None:
    from popverify.fuzz.rows import Job, RoundTask
    from popverify.tools import ToolError
    from spark_fuzz.executor import SparkExecutor

    jobs = [Job(s) for s in range(6)] + [Job(99, -1, None, "not a config")]  # the last task fails every attempt
    parts = store.parts_dir(tmp_path)
    with pytest.raises(ToolError, match="round 0 failed on Spark"):
        SparkExecutor(spark.spark, partitions=7).run_round(jobs, RoundTask("v5.5", "pop", 40, None, 0), parts=parts)
    kept = store.load_rows(tmp_path, "v5.5", "pop")
    assert set(kept) == set(range(6))
    assert store.consolidate_parts(tmp_path, "v5.5", "pop") == 6
    assert not list(parts.glob("*.parquet"))
    assert sorted(store.load_rows(tmp_path, "v5.5", "pop")) == list(range(6))
