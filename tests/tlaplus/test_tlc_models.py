"""Real TLC on the small configs; a mutated spec and the naive bound give counterexamples."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from popverify.cli import main
from popverify.tlc.runner import TLAPLUS, TlcResult, models, parse_output, run_model


def test_small_configs_pass_and_the_negative_check_fails_as_documented(shared_tlc: Callable[..., TlcResult]) -> None:
    # real TLC on every model; verify's TLC cells (tests/verify) reuse these runs (tests/conftest.py)
    results = {r.model: r for r in (shared_tlc(cfg) for cfg in models("small"))}
    assert results["MCAllocate4Pop_small"].result == "ok"
    assert results["MCAllocate4Pop_small"].distinct_states == 252
    naive = results["MCAllocate4Pop_naive"]
    assert naive.result == "expected-violation" and naive.violated == "NaiveSharingBound"
    assert naive.trace == ({"c": 2, "q": 1, "s": 0},)
    assert results["MCPopConsumption_small"].result == "ok"  # v5.5: safety and ALO_2 liveness
    assert results["MCPushConsumerOffsets_small"].result == "ok"  # OFF_3 and ALO_3 liveness
    assert results["MCPopConsumption_merge_small"].result == "ok"  # buffer merge: scanCommitOffset path, PRG_1/PRG_2
    assert results["MCPopConsumption_restart_small"].result == "ok"  # a restart loses the buffer, not a message
    f1 = results["MCPopConsumption_seedera"]
    assert f1.result == "expected-violation" and f1.violated == "OFF_1"  # v5.0: finding F1
    assert results["MCPopConsumption_retention_small"].result == "ok"  # retention alone: OFF_2 holds
    f6 = results["MCPopConsumption_retention"]
    assert f6.result == "expected-violation" and f6.violated == "OFF_2"  # buffer merge + retention: F6
    assert f6.trace[-1]["offset"] < f6.trace[-2]["offset"]
    # a value TLC prints over several lines arrives whole in the step table
    assert any("revived |-> FALSE" in str(state["cks"]) and "buf |->" in str(state["cks"]) for state in f6.trace)


def test_f6_goes_away_when_scan_commit_offset_never_moves_back(tmp_path: Path) -> None:
    # The counterexample is scanCommitOffset's unconditional commit: with the commit guarded by
    # nextBeginOffset > committed (Java only logs that case), MCPopConsumption_retention passes.
    spec = (TLAPLUS / "PopConsumption.tla").read_text()
    fixed = spec.replace("    /\\ offset' = Head(oq).nb\n",
                         "    /\\ offset' = IF Head(oq).nb > offset THEN Head(oq).nb ELSE offset\n")
    assert fixed != spec
    (tmp_path / "PopConsumption.tla").write_text(fixed)
    cfg = tmp_path / "MCPopConsumption_retention.cfg"
    shutil.copy(TLAPLUS / "MCPopConsumption_retention.cfg", cfg)
    assert run_model(cfg).result == "unexpected-pass"


def test_a_mutated_spec_yields_a_counterexample(tmp_path: Path) -> None:
    spec = (TLAPLUS / "Allocate4Pop.tla").read_text()
    broken = spec.replace("ELSE IF c <= q THEN s + 1", "ELSE IF c <= q THEN s")
    assert broken != spec
    (tmp_path / "Allocate4Pop.tla").write_text(broken)
    cfg = tmp_path / "MCAllocate4Pop_small.cfg"
    shutil.copy(TLAPLUS / "MCAllocate4Pop_small.cfg", cfg)
    result = run_model(cfg)
    assert result.result == "violation" and result.violated == "ALLOC_2" and result.trace


def test_committing_past_a_buffered_checkpoint_loses_a_message_at_restart(tmp_path: Path) -> None:
    # scanCommitOffset waits until the head CK is stored or fully acked; without that wait a
    # restart loses the buffered CK after its offset was committed: OFF_1.
    spec = (TLAPLUS / "PopConsumption.tla").read_text()
    broken = spec.replace("    /\\ \\A c \\in cks : c.id = Head(oq).ck => (~c.buf \\/ AllAcked(c))\n", "")
    assert broken != spec
    (tmp_path / "PopConsumption.tla").write_text(broken)
    cfg = tmp_path / "MCPopConsumption_restart_small.cfg"
    shutil.copy(TLAPLUS / "MCPopConsumption_restart_small.cfg", cfg)
    result = run_model(cfg)
    assert result.result == "violation" and result.violated == "OFF_1" and result.trace


def test_cli_json_and_saved_counterexample(tmp_path: Path, capsys) -> None:
    assert main(["tlc", "MCAllocate4Pop_naive", "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["models"][0]["result"] == "expected-violation"
    itf = json.loads((tmp_path / "MCAllocate4Pop_naive.itf.json").read_text())
    assert itf["states"][0]["q"] == 1 and itf["vars"] == ["c", "q", "s"]
    assert main(["tlc", "NoSuchModel"]) == 2


def test_parse_output_reads_tlc_statistics() -> None:
    text = ("3744 states generated, 1872 distinct states found, 0 states left on queue.\n"
            "The depth of the complete state graph search is 1.\n"
            "Model checking completed. No error has been found.\n")
    info = parse_output(text)
    assert (info["generated"], info["distinct"], info["depth"], info["completed"]) == (3744, 1872, 1, True)


def test_a_pop_spec_whose_revive_ignores_acks_violates_ckm1(tmp_path: Path) -> None:
    spec = (TLAPLUS / "PopConsumption.tla").read_text()
    broken = spec.replace("j \\notin c.bits /\\ ~Skipped(", "~Skipped(")
    assert broken != spec
    (tmp_path / "PopConsumption.tla").write_text(broken)
    cfg = tmp_path / "MCPopConsumption_small.cfg"
    cfg.write_text((TLAPLUS / "MCPopConsumption_small.cfg").read_text().replace("PROPERTIES OFF_2 ALO_2", ""))
    result = run_model(cfg)
    assert result.result == "violation" and result.violated == "CKM_1" and result.trace


def test_a_push_spec_committing_past_held_messages_violates_off3(tmp_path: Path) -> None:
    spec = (TLAPLUS / "PushConsumerOffsets.tla").read_text()
    broken = spec.replace("off == IF rest = {} THEN next[c] ELSE Min(rest)", "off == next[c]")
    assert broken != spec
    (tmp_path / "PushConsumerOffsets.tla").write_text(broken)
    cfg = tmp_path / "MCPushConsumerOffsets_small.cfg"
    cfg.write_text((TLAPLUS / "MCPushConsumerOffsets_small.cfg").read_text().replace("PROPERTIES ALO_3", ""))
    result = run_model(cfg)
    assert result.result == "violation" and result.violated == "OFF_3" and result.trace


def test_update_readme_replaces_the_rows_of_the_models_run_and_keeps_the_others(tmp_path: Path) -> None:
    from popverify.commands.tlc import _update_readme
    from popverify.tlc.runner import TlcResult

    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:start -->\n| model | outcome | distinct states | depth | seconds |\n"
                      "| --- | --- | --- | --- | --- |\n| MCA | ok | 1 | 1 | 1.0 |\n| MCB_deep | ok | 9 | 9 | 99.0 |\n"
                      "<!-- results:end -->\nafter\n")
    _update_readme(readme, [TlcResult("MCA", "ok", 5, 6, 2, 0.5), TlcResult("MCC", "violation", 3, 3, 2, 0.1),
                            TlcResult("MCD", "expected-violation", None, None, None, 0.2)])
    text = readme.read_text()
    assert "| MCA | ok | 5 | 2 | 0.5 |" in text and "| MCB_deep | ok | 9 | 9 | 99.0 |" in text
    assert text.index("MCA") < text.index("MCB_deep") < text.index("| MCC | violation")
    assert "| MCD | expected-violation | - | - | 0.2 |" in text  # stopped in the initial states
    assert text.startswith("intro\n") and text.endswith("after\n")


def test_a_model_that_runs_past_its_timeout_is_reported_not_raised() -> None:
    result = run_model(TLAPLUS / "MCPopConsumption_small.cfg", timeout=0.5)
    assert result.result == "timeout" and "--timeout" in result.output_tail


def _merge_one_message(tmp_path: Path, spec: str, properties: str) -> Path:
    """MCPopConsumption_merge_small with one message and a consumer crash (so only revive can
    finish a checkpoint), the type invariant and only ``properties`` checked, over ``spec``."""
    (tmp_path / "PopConsumption.tla").write_text(spec)
    cfg = tmp_path / "MCPopConsumption_merge_small.cfg"
    text = (TLAPLUS / "MCPopConsumption_merge_small.cfg").read_text()
    for old in ("PROPERTIES OFF_2 ALO_2 PRG_1 PRG_2", "Msgs = 2  MaxTime = 3", "MaxCrash = 0",
                "INVARIANTS TypeOK OFF_1 CKM_1"):
        assert old in text, old
    cfg.write_text(text.replace("PROPERTIES OFF_2 ALO_2 PRG_1 PRG_2", properties)
                   .replace("Msgs = 2  MaxTime = 3", "Msgs = 1  MaxTime = 3").replace("MaxCrash = 0", "MaxCrash = 1")
                   .replace("INVARIANTS TypeOK OFF_1 CKM_1", "INVARIANTS TypeOK"))
    return cfg


def test_revive_progress_needs_fairness_of_revive(tmp_path: Path) -> None:
    """PRG_2 can fail: without weak fairness of Revive a due checkpoint may wait forever."""
    spec = (TLAPLUS / "PopConsumption.tla").read_text()
    broken = spec.replace("    /\\ WF_vars(\\E c \\in cks : Revive(c))\n", "")
    assert broken != spec
    result = run_model(_merge_one_message(tmp_path, broken, "PROPERTIES PRG_2"))
    assert result.result == "violation" and result.violated == "temporal" and result.trace


def test_offset_progress_fails_when_scan_commit_offset_never_commits(tmp_path: Path) -> None:
    """PRG_1 can fail: the commit-queue-stuck mutant of the Python model, in the spec."""
    spec = (TLAPLUS / "PopConsumption.tla").read_text()
    # CommitScan never enabled: reads still advance through the queued nextBeginOffsets (so the
    # state space stays finite), the committed offset never does.
    broken = spec.replace("CommitScan ==\n    /\\ oq # <<>>\n", "CommitScan ==\n    /\\ FALSE /\\ oq # <<>>\n")
    assert broken != spec
    result = run_model(_merge_one_message(tmp_path, broken, "PROPERTIES PRG_1"))
    assert result.result == "violation" and result.violated == "temporal" and result.trace
