"""`popverify mutate`: AST mutants are built in a copy, and the simulation checker kills one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from popverify.cli import main
from popverify.verify import mutation


def test_sites_are_stable_and_mutation_changes_only_that_site() -> None:
    found = mutation.sites(("flip-compare",), ("broker/ack_processor.py",))
    assert found and found == mutation.sites(("flip-compare",), ("broker/ack_processor.py",))
    original = (mutation.REFERENCE / found[0].file).read_text()
    mutated = mutation.mutated_source(found[0])
    assert mutated != mutation.mutated_source(found[1]) and original == (mutation.REFERENCE / found[0].file).read_text()


def test_unmutated_copy_gives_the_baseline_verdict(tmp_path: Path) -> None:
    # Control: a plain copy must not "kill" anything, else every kill is meaningless.
    shutil.copytree(mutation.REFERENCE, tmp_path / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    assert mutation._simulate(tmp_path, 1, 200) == mutation._simulate(mutation.REFERENCE.parent, 1, 200)


def test_tiny_mutate_run_detects_a_kill(capsys: pytest.CaptureFixture[str]) -> None:
    # ack_processor's first `if` guard flipped: the simulation checker must notice. (600 steps:
    # with POP requests time-atomic, 250-step runs of seeds 0-1 no longer show the mutant; every
    # ack failing keeps the drain from quiescence, and a non-quiescent drain checks no ALO.)
    assert main(["mutate", "--operators", "flip-compare", "--files", "broker/ack_processor.py", "--techniques",
                 "simulation", "--max-mutants", "1", "--seeds", "2", "--steps", "600", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {k: result["techniques"]["simulation"][k] for k in ("killed", "total", "score")} == \
        {"killed": 1, "total": 1, "score": 1.0}
    assert result["mutants"][0]["killed"] and result["mutants"][0]["by"]


def test_mutate_rejects_unknown_operator_and_file() -> None:
    assert main(["mutate", "--operators", "delete-everything"]) == 2
    assert main(["mutate", "--files", "broker/nope.py"]) == 2
    assert not mutation.sites(("off-by-one",), ("broker/keys.py",))
    assert main(["mutate", "--operators", "off-by-one", "--files", "broker/keys.py"]) == 2  # no site: not a 0/0 score


@pytest.mark.parametrize("operator", ["drop-call", "swap-bit", "skip-lock"])
def test_every_operator_finds_sites_and_changes_the_source(operator: str) -> None:
    files = ("broker/buffer_merge.py", "broker/pop_processor.py", "broker/checkpoint.py")
    found = mutation.sites((operator,), files)
    assert found
    for site in found:
        assert mutation.mutated_source(site) != mutation.mutated_source(
            mutation.Site(site.file, -1, -1, site.operator))  # no site at -1: the unmutated text


def test_z3_cross_checks_kill_a_swapped_bitmap_index() -> None:
    result = mutation.run(("swap-bit",), ("broker/checkpoint.py",), 1, 1, 50, techniques=("z3", "simulation"))
    [mutant] = result["mutants"]
    assert mutant["techniques"]["z3"]["result"] == "killed"
    assert result["techniques"]["z3"]["killed"] == 1


def test_a_technique_is_not_applicable_to_files_it_never_loads() -> None:
    # proofs never import the revive service: a mutant there cannot be judged by z3.
    result = mutation.run(("drop-call",), ("broker/revive.py",), 1, 1, 50, techniques=("z3",))
    assert result["mutants"][0]["techniques"]["z3"] == {"result": "n/a"}
