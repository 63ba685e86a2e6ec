"""Trace validation with real TLC: reference runs of both profiles are behaviours of
PushConsumerOffsets; a corrupted trace, a trace of a broken model and a stale spec are not."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import attrs
import pytest

from popverify.cli import main
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from popverify.tlc.runner import TLAPLUS
from popverify.tlc.trace_validation import REFERENCE_SEEDS, ScopeError, project, validate_trace
from popverify.tlc.trace_validation import reference_trace as _trace
from popverify.trace.itf import read_trace, write_trace

# The first reference run of each profile (CI validates the same runs every time).
REFERENCE = {profile: seeds[0] for profile, seeds in REFERENCE_SEEDS.items()}


@pytest.mark.usefixtures("shared_tlc")  # verify validates these runs too (tests/conftest.py)
@pytest.mark.parametrize("profile", sorted(REFERENCE))
def test_reference_runs_are_behaviours_of_the_spec(tmp_path: Path, profile: str) -> None:
    path = _trace(profile, REFERENCE[profile], tmp_path)
    logs = project(read_trace(path))
    actions = Counter(e.action for log in logs for e in log.entries)
    # The reference runs exercise the spec's actions, not just stuttering.
    for action in ("Gain", "Lose", "Pull", "Consume", "Persist", "Crash", "Start"):
        assert actions[action] > 0, (action, actions)
    result = validate_trace(path)
    assert result.valid, result.to_json()
    assert all(q.replayed == q.entries and q.python_steps == 300 for q in result.queues)



def test_a_corrupted_trace_fails_at_the_corrupted_step(tmp_path: Path) -> None:
    path = _trace("v5.5", REFERENCE["v5.5"], tmp_path)
    doc = json.loads(path.read_text())
    state = doc["states"][120]
    state["observed"]["queues"][0]["committed"] += 1   # the broker's offset, off by one
    path.write_text(json.dumps(doc))
    result = validate_trace(path, queues=[0])
    assert not result.valid
    (verdict,) = result.queues
    assert verdict.failed_at is not None and verdict.failed_at.startswith("Python step 120:")


def test_a_trace_of_a_broken_model_fails(tmp_path: Path) -> None:
    # removeMessage answering queueOffsetMax + 1 while messages are held commits past them.
    path = _trace("v5.5", REFERENCE["v5.5"], tmp_path, mutant="push-commit-max")
    result = validate_trace(path)
    assert not result.valid
    assert any(q.failed_at and "Consume(" in q.failed_at for q in result.queues)


def test_a_spec_that_drifted_from_the_model_rejects_its_runs(tmp_path: Path) -> None:
    # The spec before trace validation: a gained queue's client offset stays absent, whereas
    # RemoteBrokerOffsetStore#readOffset(READ_FROM_STORE) puts the broker's answer in the table.
    spec = (TLAPLUS / "PushConsumerOffsets.tla").read_text()
    stale = spec.replace("/\\ \\E v \\in StoreAnswers : local' = [local EXCEPT ![c] = v]",
                         "/\\ local' = [local EXCEPT ![c] = -1]")
    assert stale != spec
    specs = tmp_path / "tlaplus"
    specs.mkdir()
    (specs / "PushConsumerOffsets.tla").write_text(stale)
    (specs / "PushConsumerOffsetsTrace.tla").write_text((TLAPLUS / "PushConsumerOffsetsTrace.tla").read_text())
    result = validate_trace(_trace("v5.0", REFERENCE["v5.0"], tmp_path), tlaplus=specs)
    assert not result.valid
    assert any(q.failed_at and "Gain(" in q.failed_at for q in result.queues)


def test_traces_outside_the_spec_are_refused_with_a_reason(tmp_path: Path) -> None:
    pop = run_scenario("v5.5", 1, 40, mode="pop", record_trace=True)
    write_trace(tmp_path / "pop.json", pop.trace)
    with pytest.raises(ScopeError, match="push-mode"):
        project(read_trace(tmp_path / "pop.json"))
    with pytest.raises(ScopeError, match="orderly"):
        project(read_trace(_trace("v5.5", 5, tmp_path, steps=20, consume_orderly=True)))
    restart = ScenarioConfig.default_for("push")
    run = run_scenario("v5.5", 5, 3, mode="push", config=attrs.evolve(restart, faults=("restart",)),
                       schedule=(Action("produce", (0,)), Action("restart"), Action("advance", (10,))),
                       record_trace=True)
    write_trace(tmp_path / "restart.json", run.trace)
    with pytest.raises(ScopeError, match="broker restart"):
        project(read_trace(tmp_path / "restart.json"))


def test_a_run_whose_queues_start_past_zero_projects_as_the_same_run_from_zero(tmp_path: Path) -> None:
    """A drawn start offset (campaigns' late draw): the spec's queues begin at 0, the run's at
    S; shifted down by S its logs are those of the same run from 0."""
    def logs(start: int) -> list:
        config = attrs.evolve(ScenarioConfig.default_for("push"), start_offset=start)
        run = run_scenario("v5.5", 5, 150, mode="push", config=config, record_trace=True)
        write_trace(tmp_path / f"start-{start}.json", run.trace)
        return project(read_trace(tmp_path / f"start-{start}.json"))
    base = logs(0)
    assert sum(len(log.entries) for log in base) > 40 and any(log.msgs for log in base)
    for start in (1, 2 ** 40):
        assert logs(start) == base


def test_cli_validate(tmp_path: Path, capsys) -> None:
    good = _trace("v5.5", REFERENCE["v5.5"], tmp_path, steps=120)
    assert main(["tlc", "--validate", str(good), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["traces"][0]["valid"] is True and out["traces"][0]["spec"] == "PushConsumerOffsets"
    bad = _trace("v5.5", REFERENCE["v5.5"], tmp_path, mutant="push-commit-max")
    assert main(["tlc", "--validate", str(good), "--validate", str(bad)]) == 1
    assert "NOT a behaviour" in capsys.readouterr().out
    (tmp_path / "junk.json").write_text("{not json")
    assert main(["tlc", "--validate", str(tmp_path / "junk.json")]) == 2
    assert "cannot validate" in capsys.readouterr().err


def test_a_run_with_listeners_at_work_is_a_behaviour_of_the_spec(tmp_path: Path) -> None:
    """consume_begin moves no variable of the spec and consume_end is its Consume, so a run with
    split consumption (spec/push.md "Consumption in two steps") validates like any other."""
    base = ScenarioConfig.default_for("push")
    config = attrs.evolve(base, actions=base.actions + ("consume_begin", "consume_end"),
                          faults=("consumer_crash", "lose_response", "dup_response", "clock_jump"))
    result = run_scenario("v5.0", 3, 150, mode="push", config=config, record_trace=True)
    assert result.trace is not None and {"consume_begin", "consume_end"} <= {a.kind for a in result.schedule}
    path = tmp_path / "split.itf.json"
    write_trace(path, result.trace)
    verdict = validate_trace(path)
    assert verdict.valid, verdict.to_json()


def test_queues_with_the_same_log_share_one_tlc_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide push run has many idle queues whose logs are the same text: validate_trace runs TLC
    once per distinct log, and a reused verdict is the one TLC gives that queue's log alone."""
    from popverify.tlc import trace_validation as tv

    config = attrs.evolve(ScenarioConfig.default_for("push"), queues=12)
    run = run_scenario("v5.5", 5, 40, mode="push", config=config, record_trace=True)
    path = tmp_path / "wide.json"
    write_trace(path, run.trace)
    logs = project(read_trace(path))
    distinct = {(tv.trace_module(log, "M"), tv.trace_config(log, "v5.5")) for log in logs}
    assert len(logs) == 12 and 1 < len(distinct) < len(logs)
    calls: list[Path] = []
    real = tv.run_model
    monkeypatch.setattr(tv, "run_model", lambda cfg, **kw: calls.append(cfg) or real(cfg, **kw))
    result = validate_trace(path)
    assert len(calls) == len(distinct)
    reused = [q for q in result.queues if q.seconds == 0.0]
    assert reused
    alone = tv.validate_log(logs[reused[-1].queue], "v5.5")
    assert attrs.evolve(alone, seconds=0.0) == reused[-1]
