"""One campaign planner (popverify/fuzz/), two executors: the plain loop and Spark run the same
plan and give the same rows; spark_fuzz is reached only through the executor seam and plans
nothing itself."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import attrs
import pytest

from popverify.cli import main
from popverify.findings import campaign as findings_campaign
from popverify.fuzz import store
from popverify.fuzz.campaign import campaign
from popverify.fuzz.executors import LoopExecutor, executor
from popverify.fuzz.plan import OFFSPRING_SEED_BASE, round_jobs, vary_config
from popverify.fuzz.rows import TIMING_FIELDS, Job, RoundTask, without_timing
from popverify.sim.scenario import MODES, POP_ACTIONS, PUSH_ACTIONS, ScenarioConfig
from reference.common.javalang import JavaRandom

ROOT = Path(__file__).resolve().parents[2]


def _rows(out: Path, profile: str, mode: str) -> list[dict]:
    return [without_timing(row) for _, row in sorted(store.load_rows(out, profile, mode).items())]


def _untimed(summary: dict) -> dict:
    """A campaign summary without what measures time or names the executor."""
    timed = {"seconds", "runs_per_s", "steps_per_s", "time_to_first_failure_s", "time_to_first_by_signature_s",
             "engine", "master"}
    kept = {k: v for k, v in summary.items() if k not in timed}
    kept["coverage_timeline"] = [{k: v for k, v in t.items() if k != "seconds"} for t in summary["coverage_timeline"]]
    kept["violations"] = [{k: v for k, v in f.items() if k not in ("time_to_first_s", "trace")}
                          for f in summary["violations"]]
    return kept


@pytest.mark.slow
def test_the_loop_and_spark_give_identical_rows_for_the_same_campaign(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(findings_campaign, "SHRINK_RUNS", 10)  # shrinking is compared, not measured
    # a guided campaign (round 1 runs offspring of round 0's corpus) with findings to shrink
    # 260 steps: seed 0 violates (ALO-2) under the default swarm draw (120, 150, 200, then 240
    # sufficed until the late draws of 26 November 2026 changed the configurations that list them;
    # the merge of buffer3, revive5 and revive6's last draws moved them again)
    args = ("v5.0", "pop", 8, 260)
    loop = campaign(*args, tmp_path / "loop", LoopExecutor(), rounds=2)
    spark = campaign(*args, tmp_path / "spark", executor("spark", "local[2]"), rounds=2)
    assert loop["engine"] == "python" and spark["engine"] == "spark local[2]" and loop["master"] is None
    assert spark["master"] == "local[2,4]"  # the master it ran on: local masters get task retries
    on_loop, on_spark = _rows(tmp_path / "loop", "v5.0", "pop"), _rows(tmp_path / "spark", "v5.0", "pop")
    assert len(on_loop) == 8 and any(r["seed"] >= OFFSPRING_SEED_BASE for r in on_loop), "no offspring ran"
    assert any(r["violations"] != "[]" for r in on_loop), "nothing to shrink: the comparison is too easy"
    assert on_loop == on_spark
    assert _untimed(loop) == _untimed(spark)
    assert [Path(f["trace"]).read_bytes() for f in loop["violations"]] == \
        [Path(f["trace"]).read_bytes() for f in spark["violations"]]
    # the comparison tells runs apart: one more step per run gives other rows
    longer = LoopExecutor().run_round([Job(s) for s in range(5)], RoundTask("v5.0", "pop", 261, None, 0),
                                      lambda _: None, None)
    assert [without_timing(r) for r in longer] != on_loop[:5]


@pytest.mark.slow
def test_verify_gives_the_same_campaign_rows_on_both_engines(tmp_path: Path) -> None:
    for engine in ("python", "spark"):
        assert main(["verify", "--out", str(tmp_path / engine), "--runs", "3", "--steps", "40", "--engine", engine,
                     "--skip", "stateful,z3,tlc,conformance,trace", "--no-confirm", "--json"]) in (0, 1)
    # (findings, whose Java confirmation and shrinking run on the driver whatever the engine, are
    # not compared; --no-confirm spares two lockstep replays of each)
    folders = sorted(p.relative_to(tmp_path / "python") for p in (tmp_path / "python" / "fuzz").iterdir())
    assert len(folders) == 4  # pop and push on v5.0 and develop
    for folder in folders:
        profile, mode = folder.name.split("-")[1], folder.name.split("-")[0]
        python_rows = _rows(tmp_path / "python" / folder, profile, mode)
        assert len(python_rows) == 3 and python_rows == _rows(tmp_path / "spark" / folder, profile, mode)
    python, spark = (json.loads((tmp_path / e / "summary.json").read_text())["techniques"]["fuzz"]
                     for e in ("python", "spark"))
    assert python["engine"] == "python" and spark["engine"] == "spark local[2]"
    for key, camp in python["campaigns"].items():
        assert {k: v for k, v in camp.items() if k not in ("seconds", "engine", "findings")} == \
            {k: v for k, v in spark["campaigns"][key].items() if k not in ("seconds", "engine", "findings")}


def test_a_round_is_planned_from_the_rows_done_alone(tmp_path: Path) -> None:
    task = RoundTask("v5.5", "pop", 40, None, 0)
    done = {row["seed"]: row for row in LoopExecutor().run_round([Job(s) for s in range(6)], task, lambda _: None, None)}
    first = round_jobs(1, 6, 12, done)
    assert first == round_jobs(1, 6, 12, dict(reversed(list(done.items()))))
    assert [j.seed for j in first[:3]] == [6, 7, 8]  # half blind seeds, half offspring
    offspring = first[3:]
    assert offspring and all(j.seed >= OFFSPRING_SEED_BASE and j.parent in done and j.schedule for j in offspring)
    assert round_jobs(0, 6, 12, done) == [Job(s) for s in range(6, 12)]  # round 0: blind seeds only
    assert round_jobs(2, 6, 12, done) != first  # each round draws its own offspring


def test_variation_toggles_one_group_of_the_modes_declarations_and_keeps_the_rest() -> None:
    """vary_config toggles one kind group (opt-in, late and opt-in fault kinds included) and
    keeps every other kind of the parent -- the old pools (POP_ACTIONS, FAULTS) dropped the opt-in
    kinds, the opt-in faults and the late faults of a parent at every toggle."""
    parents = {"pop": ScenarioConfig(actions=tuple(POP_ACTIONS) + ("produce_sized", "pop_request"),
                                     faults=("expire", "store_put_fail", "expire_commit_log")),
               "push": attrs.evolve(ScenarioConfig.default_for("push"),
                                    actions=tuple(PUSH_ACTIONS) + ("consume_begin", "consume_end"))}
    for mode, parent in parents.items():
        toggled: set[tuple[str, ...]] = set()
        rng = JavaRandom(17)
        # 300 left reset_offset (1 group of 17 actions, 1 dimension in 8) untoggled; with the late
        # opt-in kinds of 26 November 2026 (21 groups) the last is toggled at the 794th
        for _ in range(900):
            child = vary_config(parent, rng, mode)
            for field in ("actions", "faults"):
                before, after = set(getattr(parent, field)), set(getattr(child, field))
                if before != after:
                    toggled.add(tuple(sorted(before ^ after)))
                    assert before - after in (set(), before ^ after)  # a whole group added or removed
            child.validate()
        assert ("consume_begin", "consume_end") in toggled if mode == "push" else ("store_put_fail",) in toggled
        # each toggle moved one group of the mode's declarations, opt-in ones among them
        assert {k for t in toggled for k in t} >= set(MODES[mode].opt_in()) | set(MODES[mode].opt_in(fault=True))


def test_an_interrupted_loop_round_keeps_its_finished_partitions(tmp_path: Path) -> None:
    # the third partition of the loop (8 runs each) holds a job that cannot run
    jobs = [Job(s) for s in range(16)] + [Job(99, -1, None, "not a config")]
    task = RoundTask("v5.5", "pop", 30, None, 0)
    with pytest.raises(ValueError):
        LoopExecutor().run_round(jobs, task, lambda _: None, store.parts_dir(tmp_path))
    assert sorted(store.load_rows(tmp_path, "v5.5", "pop")) == list(range(16))
    assert store.consolidate_parts(tmp_path, "v5.5", "pop") == 16
    # the resumed campaign runs only what is missing, and its rows are those of a fresh one
    summary = campaign("v5.5", "pop", 18, 30, tmp_path, LoopExecutor())
    fresh = campaign("v5.5", "pop", 18, 30, tmp_path / "fresh", LoopExecutor())
    assert summary["runs"] == fresh["runs"] == 18
    assert _rows(tmp_path, "v5.5", "pop") == _rows(tmp_path / "fresh", "v5.5", "pop")


def test_timing_is_the_only_field_two_executions_may_disagree_on() -> None:
    task = RoundTask("v5.5", "push", 50, None, 0)
    [a] = LoopExecutor().run_round([Job(3)], task, lambda _: None, None)
    [b] = LoopExecutor().run_round([Job(3)], task, lambda _: None, None)
    assert TIMING_FIELDS == ("duration_ms",) and set(a) - set(without_timing(a)) == {"duration_ms"}
    assert without_timing(a) == without_timing(b)


def test_fuzz_runs_on_the_plain_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--engine", "python", "--profile", "v5.5", "--mode", "push", "--runs", "3", "--steps",
                 "40", "--out", str(tmp_path), "--no-progress", "--json"]) in (0, 1)
    summary = json.loads(capsys.readouterr().out)
    assert summary["engine"] == "python" and summary["master"] is None and summary["runs"] == 3
    assert "<th>engine</th><td>python</td>" in (tmp_path / "report.html").read_text()
    assert main(["fuzz", "--engine", "ruby", "--profile", "v5.5", "--out", str(tmp_path)]) == 2


# -- the seam ------------------------------------------------------------------------------------
def imported_modules(source: str) -> set[str]:
    """Every module an ``import`` or ``from ... import`` statement of ``source`` names."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_import_scan_sees_nested_and_from_imports() -> None:
    source = "def f():\n    from spark_fuzz.session import spark_session\nimport spark_fuzz\n"
    assert {"spark_fuzz.session", "spark_fuzz"} <= imported_modules(source)


def test_popverify_reaches_spark_fuzz_only_through_the_executor_seam() -> None:
    reaching = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "popverify").rglob("*.py")
                      if any(m == "spark_fuzz" or m.startswith("spark_fuzz.")
                             for m in imported_modules(path.read_text(encoding="utf-8"))))
    assert reaching == ["popverify/fuzz/executors.py"]


def test_spark_fuzz_plans_nothing() -> None:
    # the adapter runs rows (rows.py), keeps finished tasks' rows (store.py), ends its JVM with
    # popverify (tools.py) and hands spark-submit's command line to the CLI; planning, summary
    # and report are the planner's
    allowed = {"popverify.fuzz.rows", "popverify.fuzz.store", "popverify.tools", "popverify.cli"}
    used = set()
    for path in (ROOT / "spark_fuzz").glob("*.py"):
        used |= {m for m in imported_modules(path.read_text(encoding="utf-8")) if m.startswith("popverify.")}
    assert used and not {m for m in used if not any(m == a or m.startswith(a + ".") for a in allowed)}, sorted(used)


def test_a_mutant_is_a_named_broken_model_and_an_ast_mutant_id_is_told_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("fuzz", "verify"):
        argv = [command, "--mutant", "broker/checkpoint.py:57:12:flip-compare", "--out", str(tmp_path)]
        assert main(argv + (["--profile", "v5.5"] if command == "fuzz" else [])) == 2
        err = capsys.readouterr().err
        assert "AST mutant of `popverify mutate`" in err and "named mutants: " in err, err
    assert main(["fuzz", "--profile", "v5.5", "--mutant", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown mutant 'nope'; named mutants: " in err
    assert "AST mutant" not in err
