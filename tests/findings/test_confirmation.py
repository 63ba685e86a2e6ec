"""Findings confirmed on Java (popverify/findings/confirmation.py, spec/findings/README.md
"Confirmation on Java"): verdict lines, model questions, cache, unavailable harness, verify's
outcome, and the checked-in finding traces. The JVM tests are marked slow."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from popverify.cli import main
from popverify.commands.verify import _confirmation_status
from popverify.conformance.confirm import Verdict
from popverify.conformance.lockstep import LockstepError
from popverify.findings import confirmation as conf
from popverify.findings import finding_traces as ft
from popverify.findings.confirmation import Confirmation, Confirmer, VerdictCache, confirm_entries, from_verdict
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from popverify.sim.scenario import run_spec
from popverify.trace.itf import read_trace, write_trace
from popverify.verify.report import failures

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")


def _verdict(status: str, model_violations: tuple[str, ...] = (), java_violations: tuple[str, ...] = (),
             **kw: Any) -> Verdict:
    return Verdict("v5.0", "5.0.0", status, 42, model_violations=model_violations, java_violations=java_violations,
                   **kw)


# -- verdict lines ------------------------------------------------------------------------------

def test_each_lockstep_outcome_gets_its_line_and_only_disagreements_are_model_questions() -> None:
    cases = {
        "reproduced": _verdict("agrees", ("ALO-2",), ("ALO-2",)),
        "holds": _verdict("agrees"),
        "agrees": _verdict("agrees", ("QUI-1",)),             # QUI-1 is not checked on Java's history
        "not reproduced": _verdict("agrees", ("ALO-2",), ()),
        "diverges": _verdict("diverges", ("ALO-2",), step=5, action=("drain", 0, "advance"), key=".response.now",
                             model=1001705, java=1001000),
        "out of scope": _verdict("out of scope", ("OFF-2",), step=11, action=("expire", 0, 3), why="no retention"),
    }
    got = {status: from_verdict(v, "QUI-1" if status == "agrees" else
                                "OFF-2" if status == "out of scope" else "ALO-2") for status, v in cases.items()}
    assert {s: c.status for s, c in got.items()} == {s: s for s in cases}
    assert got["reproduced"].text == "reproduced on rocketmq-broker 5.0.0 (ALO-2)"
    assert got["holds"].text == "agrees with rocketmq-broker 5.0.0 (42 steps); ALO-2 holds there"
    assert "QUI-1 is not checked on Java's history" in got["agrees"].text
    assert got["diverges"].text == ("diverges at step 5 (.response.now, model 1001705 vs java 1001000) on "
                                    "rocketmq-broker 5.0.0 [MODEL QUESTION]")
    assert got["diverges"].divergence_class == "drain:advance .response.now"
    assert got["out of scope"].text.startswith("out of scope: no retention (step 11, expire)")
    assert {s for s, c in got.items() if c.model_question} == {"not reproduced", "diverges"}
    assert Confirmation.from_json(got["diverges"].to_json()) == got["diverges"]


def test_an_explained_divergence_class_is_no_model_question(monkeypatch: pytest.MonkeyPatch) -> None:
    v = _verdict("diverges", ("ALO-2",), step=5, action=("drain", 0, "advance"), key=".response.now", model=1, java=2)
    assert from_verdict(v, "ALO-2").model_question
    monkeypatch.setitem(conf.EXPLAINED_DIVERGENCES, "drain:advance .response.now", "Java line X")
    c = from_verdict(v, "ALO-2")
    assert c.status == "diverges" and not c.model_question and c.text.endswith("[explained: Java line X]")


def test_push_mutant_and_model_error_counterexamples_are_not_run_and_start_no_jvm() -> None:
    def no_jvm(release: str) -> Any:
        raise AssertionError("no harness may start for these")

    spec = {"profile": "v5.0", "mode": "pop", "seed": 0, "config": ScenarioConfig(), "schedule": (), "mutant": None}
    with Confirmer(None, client_factory=no_jvm) as confirmer:
        # push traces replay on the push lockstep (popverify/conformance/push_lockstep.py); a
        # mutant's push counterexample does not
        push = confirmer.confirm({**spec, "mode": "push", "mutant": "second-loss"}, "ALO-3")
        assert push.status == "not run" and "mutant second-loss" in push.text
        assert "mutant second-loss" in confirmer.confirm({**spec, "mutant": "second-loss"}, "ALO-2").text
        assert confirmer.confirm(spec, "MODEL-ERROR").status == "not run"


# -- unavailable, cache -------------------------------------------------------------------------

FT = ft.FINDING_TRACES["F2"]


def _spec(profile: str = "v5.0", fid: str = "F2") -> dict[str, Any]:
    t = ft.FINDING_TRACES[fid]
    return {"profile": profile, "mode": t.mode, "seed": 0, "config": t.config, "schedule": t.schedule, "mutant": None}


def test_a_harness_that_cannot_start_makes_every_confirmation_unavailable_once(tmp_path: Path) -> None:
    started = []

    def no_maven(release: str) -> Any:
        started.append(release)
        raise LockstepError("mvn not found on PATH")

    entries = [{"property": "NSR-1", "signature": "NSR-1/F2", "trace": str(tmp_path / f"t{i}.itf.json")}
               for i in range(2)]
    for e in entries:
        result = run_scenario("v5.0", 0, 0, config=FT.config, schedule=FT.schedule, record_trace=True)
        write_trace(Path(e["trace"]), result.trace)
    with Confirmer(tmp_path / "cache", client_factory=no_maven) as confirmer:
        summary = confirm_entries(entries, confirmer)
    assert started == ["5.0.0"]  # tried once, then remembered
    assert [e["confirmation"]["text"] for e in entries] == ["unavailable: mvn not found on PATH"] * 2
    assert summary["unavailable"] == {"5.0.0": "mvn not found on PATH"} and summary["statuses"] == {"unavailable": 2}
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())  # nothing cached


def test_cached_verdicts_are_used_and_other_code_misses_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec()
    digest = conf.trace_digest(spec)
    cache = VerdictCache(tmp_path)
    cache.put(digest, "5.0.0", "v5.0", _verdict("agrees", ("NSR-1",), ("NSR-1",)))

    def no_jvm(release: str) -> Any:
        raise LockstepError("would have started a JVM")

    with Confirmer(tmp_path, client_factory=no_jvm) as confirmer:
        c = confirmer.confirm(spec, "NSR-1")
        assert c.status == "reproduced" and c.cached and confirmer.cache_hits == 1 and confirmer.replays == 0
        # another schedule is another digest
        other = {**spec, "schedule": spec["schedule"][:-1]}
        assert confirmer.confirm(other, "NSR-1").status == "unavailable"
    # a change to the model or harness code invalidates every cached verdict
    monkeypatch.setattr(conf, "code_digest", lambda: "0" * 64)
    assert cache.get(digest, "5.0.0", "v5.0") is None


# -- verify's outcome ---------------------------------------------------------------------------

def _summary(confirmation: dict[str, Any] | None, camp_conf: dict[str, Any] | None = None) -> dict[str, Any]:
    finding = {"property": "ALO-2", "signature": "ALO-2/F1", "unexpected": False, "trace": "t", "runs": 1,
               "minimal_steps": 5}
    if confirmation is not None:
        finding["confirmation"] = confirmation
    camp = {"profile": "v5.0", "mode": "pop", "runs": 4, "findings": [finding],
            "confirmation": camp_conf or {"statuses": {}, "model_questions": [], "unavailable": {}}}
    return {"techniques": {"fuzz": {"campaigns": {"pop/v5.0": camp}}}, "unavailable": {}}


def test_a_model_question_fails_verify_an_agreement_does_not() -> None:
    question = from_verdict(_verdict("diverges", ("ALO-2",), step=5, action=("advance", 3), key=".state.now",
                                     model=1, java=2), "ALO-2").to_json()
    found = failures(_summary(question))
    assert found == ["fuzz pop/v5.0 ALO-2/F1: MODEL QUESTION, diverges at step 5 (.state.now, model 1 vs java 2) "
                     "on rocketmq-broker 5.0.0 [MODEL QUESTION]"]
    for fine in ("reproduced", "holds"):
        ok = from_verdict(_verdict("agrees", ("ALO-2",), ("ALO-2",) if fine == "reproduced" else ()), "ALO-2"
                          if fine == "reproduced" else "NSR-1")
        assert failures(_summary(ok.to_json())) == []


def test_unavailable_or_skipped_confirmation_is_a_technique_that_did_not_run() -> None:
    summary = _summary(None, {"statuses": {"unavailable": 1}, "model_questions": [],
                              "unavailable": {"5.0.0": "mvn not found"}})
    _confirmation_status(summary, no_confirm=False)
    assert failures(summary) == ["confirm did not run (rocketmq-broker 5.0.0: mvn not found)"]
    skipped = _summary(None)
    _confirmation_status(skipped, no_confirm=True)
    assert failures(skipped) == ["confirm did not run (skipped (--no-confirm))"]
    clean = _summary(None)
    _confirmation_status(clean, no_confirm=False)
    assert failures(clean) == []


def test_verify_without_maven_says_confirmation_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """No Maven: the pop/v5.0 campaign's F1 counterexample cannot be replayed; verify fails and
    says why (the other techniques skipped make it incomplete at best)."""
    import popverify.conformance.lockstep as lockstep

    def no_maven(version: str, jvm_args: Any = ()) -> Any:
        raise LockstepError("mvn not found: the lockstep harness needs Maven")

    monkeypatch.setattr(lockstep, "LockstepClient", no_maven)
    # 19 runs: seed 18 shows PRG-2/F9, the first v5.0 finding of 250 steps under the default swarm
    # draw with every late draw of 26 November 2026 (seed 8's ALO-2/F1&F3 went with them)
    code = main(["verify", "--out", str(tmp_path), "--runs", "19", "--steps", "250", "--engine", "python",
                 "--skip", "stateful,z3,tlc,conformance,trace"])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == 1 and summary["outcome"].startswith("failed")
    assert "confirm did not run (rocketmq-broker 5.0.0: mvn not found" in summary["outcome"]
    assert "confirmation on Java UNAVAILABLE" in capsys.readouterr().err
    # whichever POP signatures the plan's swarm runs find (F1 and others): none could be replayed
    # (unavailable; or not run when the harness has no counterpart, e.g. a drawn start_offset)
    pop = summary["techniques"]["fuzz"]["campaigns"]["pop/v5.0"]["findings"]
    assert any(f["confirmation"]["status"] == "unavailable" for f in pop)
    assert all(f["confirmation"]["status"] in ("unavailable", "not run") for f in pop)
    push = summary["techniques"]["fuzz"]["campaigns"]["push/v5.0"]["findings"]
    assert push, "push/v5.0 found nothing: the push assertion below would hold vacuously"
    assert all(f["confirmation"]["status"] in ("unavailable", "not run") for f in push)
    assert "on Java: <span" in (tmp_path / "report.html").read_text()


# -- the checked-in finding traces --------------------------------------------------------------

def test_checked_in_finding_traces_are_what_the_model_writes(tmp_path: Path) -> None:
    """spec/findings/traces is current: `popverify confirm --findings --update-spec` rewrites it."""
    written = ft.write_traces(tmp_path)
    assert len(written) == 2 * len(ft.FINDING_TRACES)
    for path in written:
        assert path.read_bytes() == (ft.TRACES / path.name).read_bytes(), f"{path.name} is stale"


def test_checked_in_verdicts_agree_with_what_the_model_says() -> None:
    """Where the model violates a finding's property Java reproduced it; where the model says
    a release fixed it Java agrees and the property holds; the rest says why it did not run."""
    rows = json.loads(ft.VERDICTS.read_text())["verdicts"]
    assert {(r["finding"], r["release"]) for r in rows} == {(f, r) for f in ft.FINDING_TRACES for r in ("5.0.0", "5.5.0")}
    for row in rows:
        c = row["confirmation"]
        assert row["model_violates"] == ft.model_violates(row["finding"], row["profile"]), row
        assert not c["model_question"] and c["status"] != "unavailable", row
        if c["status"] in ("reproduced", "holds"):
            assert (c["status"] == "reproduced") == row["model_violates"], row
    by = {(r["finding"], r["release"]): r["confirmation"]["status"] for r in rows}
    assert by[("F1", "5.0.0")] == by[("F2", "5.0.0")] == by[("F3", "5.0.0")] == by[("F4", "5.0.0")] == "reproduced"
    assert by[("F1", "5.5.0")] == by[("F3", "5.5.0")] == "holds"
    assert by[("F8", "5.5.0")] == "reproduced" and by[("F8", "5.0.0")] == "holds"  # rePutCK is 5.5.0's
    for fid in ("F1", "F2", "F3", "F4", "F6", "F7", "F8", "F10", "F11", "F12", "F14"):  # every POP finding's table row is in the spec
        assert f"| {fid} |" in (ft.PROJECT_ROOT / "spec" / "properties.md").read_text()


# -- on the real broker classes -----------------------------------------------------------------

@needs_jdk
@pytest.mark.slow
@pytest.mark.usefixtures("shared_lockstep")  # the session's JVM per release (tests/conftest.py)
def test_confirm_reproduces_f2_on_500_and_a_changed_model_is_a_model_question(
        capsys: pytest.CaptureFixture[str]) -> None:
    """F2's checked-in trace on rocketmq-broker 5.0.0: `popverify confirm` says reproduced. The
    same JVM then replays it with the model broken (a mutant the Java side does not have):
    the first differing step is a model question."""
    from popverify.mutants import applied

    assert main(["confirm", str(ft.trace_path("F2", "5.0.0")), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)[0]
    assert verdict["status"] == "agrees" and verdict["finding"] == "reproduced on rocketmq-broker 5.0.0", verdict
    spec = run_spec(read_trace(ft.trace_path("F1", "5.0.0")))
    with Confirmer(None) as confirmer:
        assert confirmer.confirm(spec, "ALO-2").status == "reproduced"
        with applied("commit-skips-offset"):
            broken = confirmer.confirm(spec, "ALO-2")
    assert broken.status == "diverges" and broken.model_question, broken
    assert "offsets" in (broken.key or "") or "Offset" in (broken.key or ""), broken


@needs_jdk
@pytest.mark.slow
@pytest.mark.usefixtures("shared_lockstep")  # the session's JVM per release (tests/conftest.py)
def test_f1_is_fixed_on_550_and_the_harness_agrees(tmp_path: Path) -> None:
    """The develop model says F1 is gone on 5.5.0 (no 'ck from last epoch' skip): the 5.5.0
    harness agrees step by step and ALO-2 holds there. A second confirmer on the same cache
    replays nothing."""
    spec = run_spec(read_trace(ft.trace_path("F1", "5.5.0")))
    with Confirmer(tmp_path) as confirmer:
        c = confirmer.confirm(spec, "ALO-2")
    assert c.status == "holds" and c.text.startswith("agrees with rocketmq-broker 5.5.0") and not c.model_question, c
    with Confirmer(tmp_path, client_factory=lambda r: pytest.fail("a cached verdict started a JVM")) as again:
        assert again.confirm(spec, "ALO-2") == Confirmation.from_json({**c.to_json(), "cached": True})


def test_a_tlc_counterexample_is_never_replayed_but_points_at_its_findings_confirmed_trace() -> None:
    """TLC's abstract states have no concrete schedule: not run, said why; a negative check
    that names its finding (MCPopConsumption_seedera: F1 on v5.0) points at that finding's
    concrete trace and its checked-in verdict."""
    tla = ft.PROJECT_ROOT / "tlaplus"
    seedera = conf.tlc_confirmation("MCPopConsumption_seedera", (tla / "MCPopConsumption_seedera.cfg").read_text(),
                                    "OFF_1")
    assert seedera.status == "not run" and seedera.property_id == "OFF-1" and seedera.release == "5.0.0"
    assert "no concrete schedule" in seedera.text
    assert "spec/findings/traces/F1-5.0.0.itf.json on rocketmq-broker 5.0.0: reproduced on rocketmq-broker 5.0.0" \
        in seedera.text
    retention = conf.tlc_confirmation("MCPopConsumption_retention",
                                      (tla / "MCPopConsumption_retention.cfg").read_text(), "OFF_2")
    assert "F6-5.5.0.itf.json" in retention.text and "reproduced on rocketmq-broker 5.5.0" in retention.text
    plain = conf.tlc_confirmation("MCPopConsumption_small", (tla / "MCPopConsumption_small.cfg").read_text(), "OFF_1")
    assert "no finding named" in plain.text
    assert "not of the POP broker" in conf.tlc_confirmation("MCAllocate4Pop_naive", "", "NaiveSharingBound").text


@pytest.mark.parametrize("argv, message", [
    ([], "give TRACE files to replay, or --findings"),
    (["--update-spec"], "--update-spec goes with --findings"),
    (["--findings", "x.itf.json"], "give no TRACE and no --version"),
    (["--findings", "--version", "5.0.0"], "give no TRACE and no --version"),
])
def test_confirm_findings_bad_arguments_exit_2_before_any_jvm(argv: list[str], message: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_trace_whose_queues_start_past_an_int_reads_back_and_is_in_scope(tmp_path: Path) -> None:
    """The swarm's domain draw starts queues at any long offset (popverify/sim/domain.py): such
    a trace reads back (start_offset is a long, not an int), and the harness can replay it
    (StartOffsetOps, spec/conformance.md "Queues that start past offset 0")."""
    config = ScenarioConfig(queues=1, consumers=1, start_offset=2 ** 40, drain=False)
    result = run_scenario("v5.5", 0, 6, config=config, record_trace=True)
    write_trace(tmp_path / "t.itf.json", result.trace)
    spec = run_spec(read_trace(tmp_path / "t.itf.json"))
    assert spec["config"].start_offset == 2 ** 40
    assert conf.scope_of(spec, "ALO-2") is None
