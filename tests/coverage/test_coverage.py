"""popverify coverage: JaCoCo on the harness JVMs, per-class line/branch figures of
RocketMQ's own jars, the spec table and the report section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from popverify.cli import main
from popverify.coverage import jacoco, nonlive, tables
from popverify.coverage.measure import measure_profile, rows
from popverify.coverage.targets import Target
from popverify.coverage.xmlreport import parse
from popverify.tools import ToolError
from popverify.verify.report import coverage_html

XML = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="r">
<package name="a"><class name="a/X" sourcefilename="X.java">
<method name="get" desc="()V" line="3"><counter type="LINE" missed="1" covered="2"/>
<counter type="BRANCH" missed="1" covered="1"/></method>
<method name="get" desc="(I)V" line="9"><counter type="LINE" missed="3" covered="0"/>
<counter type="BRANCH" missed="2" covered="0"/></method>
<method name="put" desc="()V" line="20"><counter type="LINE" missed="0" covered="4"/></method>
<counter type="LINE" missed="4" covered="6"/><counter type="BRANCH" missed="3" covered="1"/></class>
<class name="a/Y"><counter type="LINE" missed="5" covered="0"/></class></package></report>"""


def _by_label(result: dict, label: str) -> dict:
    return next(c for c in result["classes"] if c["label"] == label)


def test_xml_counters_per_class_and_method_overloads_summed(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(XML)
    report = parse(path)
    assert report.classes["a/X"].line.covered == 6 and report.classes["a/X"].line.total == 10
    get = report.methods[("a/X", "get")]
    assert (get.line.covered, get.line.total, get.branch.covered, get.branch.total) == (2, 6, 1, 4)
    found = {r.label: r for r in rows(report, (Target("X", "broker", ("a/Old", "a/X")),
                                               Target("X#get", "broker", ("a/X",), method="get"),
                                               Target("X#gone", "broker", ("a/X",), method="gone"),
                                               Target("Z", "broker", ("a/Z",))))}
    assert found["X"].java_class == "a/X" and found["X"].measured.branch.percent() == 25.0
    assert found["X#get"].measured.line.percent() == 33.3
    assert found["X#gone"].measured.line.total == 0  # a missing method is 0 of 0, not the class
    assert found["Z"].measured is None and found["Z"].to_json()["present"] is False
    assert report.classes["a/Y"].branch.percent() is None
    bad = tmp_path / "bad.xml"
    bad.write_text("<html/>")
    with pytest.raises(ToolError):
        parse(bad)


@pytest.mark.parametrize("argv", [
    ["--cases", "0"], ["--cases", "10001"], ["--schedules", "-1"], ["--schedules", "10001"], ["--steps", "0"],
    ["--steps", "5001"], ["--harness", "lockstep", "--schedules", "0", "--push-schedules", "0"],
    ["--corpus", "/nonexistent/corpus"], ["--harness", "conformance", "--corpus", "."],
    ["--profile", "v9"], ["--harness", "live"], ["--harness", "conformance", "--traces", "x.itf.json"],
    ["--traces", "/nonexistent.itf.json"],
])
def test_bad_arguments_exit_2(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["coverage", "--out", str(tmp_path), *argv])
    except SystemExit as exit_:  # argparse's own choices errors
        code = int(exit_.code or 0)
    assert code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_folder_without_a_campaign_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--harness", "lockstep", "--corpus", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "not a fuzz campaign folder" in capsys.readouterr().err


@pytest.mark.parametrize("mode, asked, flag", [("pop", ["--push-schedules", "20"], "--push-schedules 20"),
                                                ("push", ["--schedules", "5", "--push-schedules", "1"],
                                                 "--schedules 5")])
def test_a_replay_asked_for_that_the_corpus_has_no_runs_for_fails_before_measuring(
        mode: str, asked: list[str], flag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A POP-only corpus with --push-schedules > 0 (and a push-only one with --schedules > 0)
    would replay nothing of that mode and read 0 % for its classes: an error, before any JVM."""
    from popverify.coverage import measure, replay

    def measured(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("measured although a requested replay has nothing to replay")
    monkeypatch.setattr(measure, "measure_profile", measured)
    corpus = replay.short_campaign(tmp_path / "corpus", "v5.0", 1, 5, mode)
    assert main(["coverage", "--profile", "v5.0", "--harness", "all", "--corpus", str(corpus), *asked,
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    missing = "PUSH" if mode == "pop" else "POP"
    assert f"{flag}: {corpus} has no {missing} runs of profile v5.0" in err and "Traceback" not in err


def test_tlc_counterexamples_are_refused_and_push_traces_go_to_the_push_replay(tmp_path: Path) -> None:
    from popverify.coverage import push_replay, replay
    from popverify.errors import UsageError

    tlc = tmp_path / "tlc.itf.json"
    tlc.write_text(json.dumps({"#meta": {"format": "ITF", "source": "TLC 2.18"}, "vars": [], "states": []}))
    with pytest.raises(UsageError, match="not one written by popverify"):
        replay.load_traces([tlc], "v5.0")
    push = tmp_path / "push.itf.json"
    assert main(["simulate", "--profile", "v5.0", "--mode", "push", "--seed", "1", "--steps", "5",
                 "--trace", str(push)]) == 0
    assert replay.load_traces([push], "v5.0") == []
    [schedule] = replay.load_traces([push], "v5.0", "push")
    assert schedule.seed == 1 and len(schedule.actions) == 5 and schedule.source == str(push)
    # a POP-only campaign has no push runs: the push replay gets the --traces ones only
    corpus = replay.short_campaign(tmp_path / "corpus", "v5.0", 1, 5)
    assert push_replay.load(corpus, "v5.0", 3) == []
    assert push_replay.load(corpus, "v5.0", 3, [push]) == [schedule]


def test_a_push_trace_with_push_replay_off_is_a_usage_error(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    push = tmp_path / "push.itf.json"
    assert main(["simulate", "--profile", "v5.0", "--mode", "push", "--seed", "1", "--steps", "5",
                 "--trace", str(push)]) == 0
    capsys.readouterr()
    assert main(["coverage", "--profile", "v5.0", "--harness", "lockstep", "--schedules", "1", "--steps", "3",
                 "--push-schedules", "0", "--traces", str(push), "--out", str(tmp_path / "o")]) == 2
    assert "--push-schedules is 0" in capsys.readouterr().err


def test_push_runs_and_push_traces_of_a_campaign_are_loaded_by_profile(tmp_path: Path) -> None:
    from popverify.coverage import push_replay, replay

    corpus = replay.short_campaign(tmp_path, "v5.5", 3, 10, "push")
    (tmp_path / "traces").mkdir()
    assert main(["simulate", "--profile", "v5.5", "--mode", "push", "--seed", "7", "--steps", "4",
                 "--trace", str(tmp_path / "traces" / "v5.5-push-X-1-F1-seed7.itf.json")]) == 0
    schedules = push_replay.load(corpus, "v5.5", 2)
    assert [s.seed for s in schedules] == [0, 1, 7] and [len(s.actions) for s in schedules] == [10, 10, 4]
    assert schedules[-1].source.endswith("seed7.itf.json")
    assert push_replay.load(corpus, "v5.0", 2) == []


@pytest.mark.parametrize("value", ["-1", "10001"])
def test_push_schedules_out_of_bounds_is_a_usage_error(value: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--push-schedules", value, "--out", str(tmp_path)]) == 2
    assert "--push-schedules must be in 0..10000" in capsys.readouterr().err


def test_a_push_source_has_its_own_summary_line() -> None:
    source = {"harness": "push", "schedules": 3, "traces": 1, "actions": 30, "actions_run": 25,
              "verdicts": {"agrees": 2, "diverges": 1}, "requests_compared": {"pull_message": 4, "query_assignment": 2}}
    line = tables.sources_line({"profile": "v5.0", "release": "5.0.0", "sources": {"push": source}})
    assert line == ("v5.0 (rocketmq 5.0.0): push: 3 schedules incl. 1 traces (2 agrees, 1 diverges), 30 corpus "
                    "actions, 25 run on both sides (none adapted), 6 requests compared")


def test_a_simulate_trace_is_replayed_for_its_own_profile_only(tmp_path: Path) -> None:
    from popverify.coverage import replay

    trace = tmp_path / "pop.itf.json"
    assert main(["simulate", "--profile", "v5.5", "--seed", "3", "--steps", "20", "--trace", str(trace)]) == 0
    [schedule] = replay.load_traces([trace], "v5.5")
    assert schedule.seed == 3 and len(schedule.actions) == 20 and schedule.source == str(trace)
    assert replay.load_traces([trace], "v5.0") == []


def test_update_spec_merges_profiles_and_regenerates_the_table(tmp_path: Path) -> None:
    md, js = tmp_path / "coverage.md", tmp_path / "coverage.json"
    md.write_text(f"intro\n{tables.START}\nold\n{tables.END}\noutro\n")
    counter = {"covered": 1, "total": 4, "percent": 25.0}
    profile = {"profile": "v5.0", "release": "5.0.0", "seconds": 3.2,
               "sources": {"conformance": {"checks": [{}], "cases": 7}},
               "classes": [{"label": "X", "side": "broker", "line": counter, "branch": None}]}
    tables.update_spec(md, js, {"jacoco": "0.8.12", "profiles": {"v5.0": profile}}, "popverify coverage --x")
    text = md.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n") and "old" not in text
    assert "| X | broker | 25.0 % (1/4) | absent |" in text and "`popverify coverage --x`" in text
    assert "seconds" not in js.read_text()  # the spec keeps no wall-clock figures
    (tmp_path / "plain.md").write_text("no block")
    with pytest.raises(Exception, match="no <!-- coverage:start -->"):
        tables.update_spec(tmp_path / "plain.md", js, {"jacoco": "0.8.12", "profiles": {}}, "c")


def test_report_section_has_table_and_chart() -> None:
    profile = {"release": "5.0.0", "sources": {"lockstep": {"error": "no harness"}},
               "classes": [{"label": "PopMessageProcessor", "side": "broker",
                            "line": {"covered": 3, "total": 10, "percent": 30.0},
                            "branch": {"covered": 1, "total": 4, "percent": 25.0}},
                           {"label": "BatchAckMsg", "side": "format", "line": None, "branch": None}]}
    section = coverage_html({"jacoco": "0.8.12", "profiles": {"v5.0": profile}})
    assert '<table id="coverage">' in section and "<svg" in section and "25.0 %" in section
    assert "absent" in section and 'class="failed"' in section  # a failed source is shown as failed
    assert "popverify coverage --out" in coverage_html(None)
    # the in-scope column: "–" for figures recorded without it, the counters when measured
    assert "<th>v5.0 branches in scope</th>" in section and "25.0 % (1/4)</td><td>–</td>" in section
    profile["classes"][0]["in_scope"] = {"branch": {"covered": 1, "total": 2, "percent": 50.0}}
    section = coverage_html({"jacoco": "0.8.12", "profiles": {"v5.0": profile}})
    assert "25.0 % (1/4)</td><td>50.0 % (1/2)</td>" in section


def test_verify_report_picks_up_coverage_json_of_its_folder(tmp_path: Path) -> None:
    from popverify.verify import report

    counter = {"covered": 2, "total": 8, "percent": 25.0}
    coverage = {"jacoco": "0.8.12", "profiles": {"v5.0": {"release": "5.0.0", "sources": {}, "classes": [
        {"label": "PopReviveService", "side": "broker", "line": counter, "branch": counter}]}}}
    (tmp_path / "coverage.json").write_text(json.dumps(coverage))
    summary = {"environment": {}, "techniques": {}, "unavailable": {}, "outcome": "ok"}
    report.write(summary, tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert '<table id="coverage">' in page and "PopReviveService" in page and 'id="coverage-chart"' in page
    assert json.loads((tmp_path / "summary.json").read_text())["coverage"] == coverage
    assert report.failures(summary) == []
    # a source that errored (or a replay's stop classes) is shown, and the error fails the run
    coverage["profiles"]["v5.0"]["sources"] = {
        "lockstep": {"error": "the harness JVM died"},
        "push": {"schedules": 2, "actions": 20, "actions_run": 12, "verdicts": {"agrees": 1, "diverges": 1},
                 "stops": {"pull .response.code": 1}, "stop_seeds": {"pull .response.code": [94]}}}
    (tmp_path / "coverage.json").write_text(json.dumps(coverage))
    failing = {"environment": {}, "techniques": {}, "unavailable": {}, "outcome": "ok"}
    report.attach_coverage(failing, tmp_path)
    assert report.failures(failing) == ["coverage v5.0 lockstep error (the harness JVM died)"]
    assert "stopped: pull .response.code ×1 (seed 94)" in coverage_html(failing["coverage"])
    (tmp_path / "coverage.json").write_text("{not json")
    broken = {"environment": {}, "techniques": {}, "unavailable": {}, "outcome": "ok"}
    report.write(broken, tmp_path)
    assert "coverage" in broken["unavailable"] and "no coverage measured" in (tmp_path / "report.html").read_text()


@pytest.mark.slow
def test_conformance_harness_under_jacoco_counts_exercised_classes_only(tmp_path: Path) -> None:
    result = measure_profile("v5.0", tmp_path, cases=5, seed=0)
    assert result["sources"]["conformance"]["cases"] > 0
    pq = _by_label(result, "ProcessQueue")
    assert pq["branch"]["covered"] > 0 and pq["line"]["covered"] > 0
    # never run by the conformance checks: present in 5.0.0's jar and read 0 %
    pop = _by_label(result, "PopMessageProcessor")
    assert pop["present"] and pop["branch"]["covered"] == 0 and pop["branch"]["total"] > 100
    assert _by_label(result, "BatchAckMsg")["present"] is False  # not in 5.0.0
    # the same execution data against another release's jars is refused, not read as 0 %
    with pytest.raises(ToolError, match="does not match"):
        jacoco.report_xml([tmp_path / "5.0.0-conformance.exec"], nonlive.classpath_jars("5.5.0"),
                          tmp_path / "mismatch.xml")


@pytest.mark.slow
def test_the_command_writes_json_and_markdown_and_fails_on_a_broken_lockstep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from popverify.conformance import lockstep

    def no_jvm(self, version, jvm_args=()):
        raise lockstep.LockstepError("the lockstep harness died")

    monkeypatch.setattr(lockstep.LockstepClient, "__init__", no_jvm)
    assert main(["coverage", "--profile", "v5.5", "--cases", "3", "--schedules", "1", "--steps", "5",
                 "--out", str(tmp_path), "--json"]) == 1
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result == json.loads((tmp_path / "coverage.json").read_text())
    assert "FAILED v5.5 lockstep: the lockstep harness died" in captured.err
    v55 = result["profiles"]["v5.5"]
    assert v55["release"] == "5.5.0" and v55["sources"]["lockstep"]["error"]
    # what did run is still measured and written
    assert _by_label(v55, "ProcessQueue")["branch"]["covered"] > 0
    assert "| ProcessQueue | client |" in (tmp_path / "coverage.md").read_text()


def test_a_lockstep_harness_that_cannot_start_fails_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from popverify.conformance import lockstep

    def no_jvm(self, version, jvm_args=()):
        raise lockstep.LockstepError("cannot start the lockstep harness for RocketMQ 5.0.0: no java")

    monkeypatch.setattr(lockstep.LockstepClient, "__init__", no_jvm)
    code = main(["coverage", "--harness", "lockstep", "--profile", "v5.0", "--schedules", "1", "--steps", "5",
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "no java" in err and "Traceback" not in err


def test_short_campaign_is_a_corpus_folder_of_blind_runs(tmp_path: Path) -> None:
    from popverify.coverage import replay
    from popverify.fuzz.rows import run_row

    corpus = replay.short_campaign(tmp_path, "v5.0", 3, 15)
    schedules = replay.load_corpus(corpus, "v5.0", 2)
    assert [s.seed for s in schedules] == [0, 1] and all(len(s.actions) == 15 for s in schedules)
    row = run_row("v5.0", "pop", 1, 15, None, 0)  # what a campaign's first round computes for seed 1
    assert [a.to_json() for a in schedules[1].actions] == json.loads(row["schedule"])
    with pytest.raises(Exception, match="no POP runs of profile v5.5"):
        replay.load_corpus(corpus, "v5.5", 5)


def test_adapted_schedule_keeps_steps_inside_a_pop_drops_what_the_harness_cannot_run_and_polls_parked() -> None:
    from popverify.conformance.confirm import LOCKSTEP_KINDS
    from popverify.coverage.replay import Adapted
    from popverify.sim.scenario import Action

    class Pending:
        consumer = 1
        request: dict[str, object] = {}  # an unordered POP (confirm.runs_inside reads its order flag)

        def __init__(self, woken: int | None = None) -> None:
            self.woken = woken

    class LongPolls:
        parked: list[object] = []
        woken: list[object] = []  # no woken re-run waits (Adapted._reruns_woken)
        orphans_woken: list[object] = []

    class FakeLockstep:  # what Adapted reads of a replay: the POP in flight, the parked POPs
        pending: object | None = None
        long_polls = LongPolls()

    ls = FakeLockstep()
    # what the model ran inside the POP stays inside (expire, ack); a restart cannot run there, so
    # the POP is stepped to its answer first; nothing runs inside a woken re-run; the model's
    # request-thread stall has no counterpart and is dropped, counted by kind
    plan = Adapted((Action("pop", (1, 0, True)), Action("expire", (0, 1)), Action("stall", (0, 500)),
                    Action("ack", (0, 3)), Action("restart", ()), Action("pop", (1, 0, False)),
                    Action("store_put_fail", (1,)), Action("stall", (1, 20)), Action("scan_stall", (1000,)),
                    Action("advance", (10,))), ls, 2, LOCKSTEP_KINDS)
    out = []
    for action in plan:
        out.append(action.to_json())
        if action.kind == "pop":
            ls.pending = Pending(woken=7 if action.args[2] is False else None)
        elif action.kind == "pop_step":
            ls.pending = None  # the inserted pop_step answers the POP
        elif action.kind == "scan_stall":
            ls.long_polls.parked = [object()]  # a POP parked: time passing is followed by the timeout scan
    assert out == [["pop", 1, 0, True], ["expire", 0, 1], ["ack", 0, 3], ["pop_step", 1], ["restart"],
                   ["pop", 1, 0, False], ["pop_step", 1], ["store_put_fail", 1], ["scan_stall", 1000], ["long_poll"],
                   ["advance", 10], ["long_poll"]]
    assert (plan.inserted, plan.dropped, plan.polls, len(plan)) == (2, {"stall": 2}, 2, 12)


def test_lockstep_kinds_are_model_kinds_and_leave_out_only_what_has_no_harness_op() -> None:
    """The declaration the coverage replay imports names real actions (a typo would drop a kind
    silently) and leaves out only the actions without a harness op."""
    from popverify.conformance.confirm import LOCKSTEP_KINDS
    from popverify.sim.pop_driver import POP_MODE_ACTIONS

    kinds = {spec.name for spec in POP_MODE_ACTIONS}
    assert LOCKSTEP_KINDS <= kinds
    assert kinds - LOCKSTEP_KINDS == {"stall"}


def test_methods_never_entered_are_listed_per_whole_class_target(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(XML)
    report = parse(path)
    assert report.unreached["a/X"] == ("get:9",)  # get(I) ran no line; get() and put() did
    assert report.unreached["a/Y"] == ()
    found = {r.label: r for r in rows(report, (Target("X", "broker", ("a/X",)),
                                               Target("X#get", "broker", ("a/X",), method="get")))}
    assert found["X"].to_json()["unreached_methods"] == ["get:9"]
    assert found["X#get"].unreached == ()  # a method target lists nothing


def test_update_spec_lists_unreached_broker_methods_and_renames_the_develop_alias(tmp_path: Path) -> None:
    md, js = tmp_path / "coverage.md", tmp_path / "coverage.json"
    md.write_text(f"{tables.START}\n{tables.END}\n")
    counter = {"covered": 1, "total": 4, "percent": 25.0}
    old = {"profile": "develop", "release": "5.5.0", "sources": {}, "command": "old",
           "classes": [{"label": "X", "side": "broker", "line": counter, "branch": None}]}
    js.write_text(json.dumps({"jacoco": "0.8.12", "profiles": {"develop": old}}))
    profile = {"profile": "v5.0", "release": "5.0.0", "sources": {},
               "classes": [{"label": "X", "side": "broker", "line": counter, "branch": None,
                            "unreached_methods": ["scanGarbage:181", "putCkToStore:536"]},
                           {"label": "Q", "side": "client", "line": counter, "branch": None,
                            "unreached_methods": ["run:1"]}]}
    tables.update_spec(md, js, {"jacoco": "0.8.12", "profiles": {"v5.0": profile}}, "c")
    merged = json.loads(js.read_text())
    assert sorted(merged["profiles"]) == ["v5.0", "v5.5"] and merged["profiles"]["v5.5"]["profile"] == "v5.5"
    text = md.read_text()
    assert "- X (v5.0, 5.0.0): scanGarbage:181, putCkToStore:536" in text
    assert "run:1" not in text  # client classes are not listed
    assert "develop" not in text


def test_sources_line_lists_dropped_kinds_and_reads_figures_recorded_before_them(tmp_path: Path) -> None:
    """A profile measured now lists what the harness could not run by kind; one recorded before
    (a count of dropped faults) still renders when the other profile is re-measured."""
    md, js = tmp_path / "coverage.md", tmp_path / "coverage.json"
    md.write_text(f"{tables.START}\n{tables.END}\n")
    counter = {"covered": 1, "total": 4, "percent": 25.0}
    lockstep = {"harness": "lockstep", "schedules": 2, "traces": 0, "verdicts": {"agrees": 2}, "actions": 9,
                "actions_run": 11, "pop_steps_inserted": 2}
    old = {"profile": "v5.5", "release": "5.5.0", "command": "old",
           "sources": {"lockstep": {**lockstep, "faults_dropped": 3}},
           "classes": [{"label": "X", "side": "broker", "line": counter, "branch": counter}]}
    js.write_text(json.dumps({"jacoco": "0.8.12", "profiles": {"v5.5": old}}))
    stopped = {"stops": {"advance .response.code": 2}, "stop_seeds": {"advance .response.code": [12, 42]}}
    new = {"profile": "v5.0", "release": "5.0.0",
           "sources": {"lockstep": {**lockstep, "dropped": {"stall": 4}, "stale_drain_rounds": 5, "drains_cut": 1,
                                    **stopped}},
           "classes": [{"label": "X", "side": "broker", "line": counter, "branch": counter,
                        "in_scope": {"line": counter, "branch": {"covered": 1, "total": 2, "percent": 50.0}}}]}
    tables.update_spec(md, js, {"jacoco": "0.8.12", "profiles": {"v5.0": new}}, "c")
    text = md.read_text()
    assert "pop_steps inserted; dropped, no harness counterpart: stall ×4; 1 drains cut after 5 rounds of redeliveries)" in text
    assert "- v5.0: advance .response.code ×2 (seeds 12, 42)" in text  # each stop class with its seeds
    assert "pop_steps inserted; 3 faults dropped)" in text
    # the in-scope column: measured for v5.0, not recorded for the older v5.5 figures
    assert "| X | broker | 25.0 % (1/4) | 25.0 % (1/4) | 50.0 % (1/2) | 25.0 % (1/4) | 25.0 % (1/4) | – |" in text


def test_a_verify_folder_whose_coverage_errored_does_not_say_ok(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`popverify coverage --out` into a verify folder whose harness failed: the verify outcome
    names that error instead of leaving it to the report's table."""
    import popverify.tlc.runner

    monkeypatch.setattr(popverify.tlc.runner, "models", lambda tier: [])  # verify's one cheap technique
    coverage = {"jacoco": "0.8.12", "profiles": {"v5.5": {"release": "5.5.0", "classes": [],
                                                          "sources": {"push": {"error": "no JaCoCo data"}}}}}
    (tmp_path / "coverage.json").write_text(json.dumps(coverage))
    assert main(["verify", "--out", str(tmp_path), "--skip", "stateful,z3,fuzz,conformance,trace"]) == 1
    outcome = json.loads((tmp_path / "summary.json").read_text())["outcome"]
    assert outcome.startswith("failed: ") and "coverage v5.5 push error (no JaCoCo data)" in outcome
