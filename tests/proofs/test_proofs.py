"""Every proof is proved, every mutated encoding refuted, every encoding agrees with our code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from proofs.allocation import naive_bound_witness
from proofs.catalog import ALL


@pytest.mark.parametrize("name", list(ALL))
def test_proof_holds_and_its_mutant_is_refuted(name: str) -> None:
    proof = ALL[name]
    assert proof.run().result == "proved"
    mutated = proof.run(mutate=True)
    assert mutated.result == "refuted" and mutated.counterexample


@pytest.mark.parametrize("name", [n for n, p in ALL.items() if p.cross_check is not None])
def test_encoding_agrees_with_the_reference_functions(name: str) -> None:
    assert ALL[name].cross_check(150) >= 150


def test_naive_bound_witness_is_the_smallest_with_sharing_on() -> None:
    assert naive_bound_witness() == {"Q": 1, "C": 3, "S": 1}


def test_prove_cli_json_and_unknown_name() -> None:
    proc = subprocess.run([sys.executable, "-m", "popverify", "prove", "ck-num-limit", "offset-status-partition",
                           "--json"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [(p["name"], p["result"]) for p in out["proofs"]] == [("ck-num-limit", "proved"),
                                                                  ("offset-status-partition", "proved")]
    assert all(isinstance(p["seconds"], float) for p in out["proofs"])
    proc = subprocess.run([sys.executable, "-m", "popverify", "prove", "no-such-proof"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2 and "unknown proof" in proc.stderr
