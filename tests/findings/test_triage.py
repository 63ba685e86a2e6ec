"""`popverify findings DIR`: signatures with counts, first seen, shortest trace, explanation,
and NEW marks against the previous campaign in the same folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from popverify.cli import main
from popverify.findings import campaign as findings_campaign
from popverify.findings.triage import EXPLANATIONS, HISTORY, explanation, record, triage
from popverify.verify.campaign import run_campaign


def _verify_folder(folder: Path, mutant: str | None) -> None:
    # a campaign folder per model, as verify keys them (a folder holds the rows of one campaign)
    # 10 runs of 400 steps: seed 9 is PRG-2 (since the merge of 26 November 2026's helpers; before
    # it 5 runs sufficed, seed 4 ALO-1/F7+F21)
    camp = run_campaign("v5.0", 10, 400, folder / "fuzz" / (mutant or "clean"), mutant=mutant)
    folder.mkdir(exist_ok=True)
    (folder / "summary.json").write_text(json.dumps({"techniques": {"fuzz": {"campaigns": {"pop/v5.0": camp}}}}))
    record(folder)


@pytest.mark.slow
def test_new_signatures_are_marked_against_the_previous_campaign(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(findings_campaign, "SHRINK_RUNS", 40)
    _verify_folder(tmp_path, None)
    rows, compared = triage(tmp_path)
    assert rows and not compared and not any(r.new for r in rows)
    assert all(not r.signature.endswith("/unexplained") and not r.unexpected for r in rows)  # F1, F7 ...
    for r in rows:
        assert r.time_to_first_s is not None
        assert all(EXPLANATIONS[f] in r.explanation for f in r.signature.split("/")[1].split("+"))
    _verify_folder(tmp_path, "second-loss")
    rows, compared = triage(tmp_path)
    new = {r.signature for r in rows if r.new}
    # every unexplained signature of the broken model is new (the mutant also moves runs, so an
    # explained one may be new too: ALO-1/F20)
    unexplained = {r.signature for r in rows if r.signature.endswith("/unexplained")}
    assert compared and "ALO-2/unexplained" in new and unexplained <= new, new
    assert rows[0].signature.endswith("/unexplained") and rows[0].unexpected
    assert len(json.loads((tmp_path / HISTORY).read_text())) == 2
    record(tmp_path)  # the same summary again: no new history entry, same marks
    assert len(json.loads((tmp_path / HISTORY).read_text())) == 2
    assert {r.signature for r in triage(tmp_path)[0] if r.new} == new
    assert main(["findings", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "NEW pop/v5.0  ALO-2/unexplained  [UNEXPECTED]" in out and "No known finding's mechanism" in out


def test_explanations_name_the_finding_or_say_unexplained() -> None:
    assert explanation("CKM-1/F3+F4").startswith("F3 (same-millisecond")
    assert "No known finding" in explanation("ALO-1/unexplained")
    assert "raised an exception" in explanation("MODEL-ERROR/unexplained")


@pytest.mark.parametrize("setup", ["missing", "empty", "garbage"])
def test_a_folder_without_a_summary_is_a_usage_error(tmp_path: Path, setup: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "nope"
    if setup != "missing":
        target.mkdir()
    if setup == "garbage":
        (target / "summary.json").write_text("{not json")
    assert main(["findings", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.strip() and "Traceback" not in err


def test_a_verify_folder_without_fuzz_has_no_signatures(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"techniques": {"z3": {"result": "proved"}}}))
    record(tmp_path)
    assert triage(tmp_path) == ([], False)
    assert main(["findings", str(tmp_path)]) == 0
