"""z3 over the key builders (proofs/keys.py): the witness of a merge-key collision is real,
the generator strategy reaches it, campaigns count it, and what it breaks is unexplained."""

from __future__ import annotations

import attrs

from popverify.cli import main
from popverify.findings.attribution import attribute
from popverify.findings.strategies import merge_key_collision
from popverify.sim.scenario import run_scenario
from proofs.catalog import ALL
from proofs.keys import PROOFS, merge_key_witness
from reference.broker.keys import build_ck_merge_key


def test_key_proofs_are_registered_and_proved() -> None:
    for proof in PROOFS:
        assert ALL[proof.name] is proof
    assert main(["prove", "keys-lock-injective", "keys-offset-table-injective", "keys-queue-id-decimal-injective"]) == 0


def test_the_merge_key_witness_collides_in_the_python_builder_too() -> None:
    w = merge_key_witness()
    a = (w["queueId1"], w["startOffset1"], w["popTime1"])
    b = (w["queueId2"], w["startOffset2"], w["popTime2"])
    assert a != b and w["popTime1"] == w["popTime2"]
    assert build_ck_merge_key("TopicTest", "GID_popverify", *a) == build_ck_merge_key("TopicTest", "GID_popverify", *b)


def test_the_strategy_reaches_the_witness_and_what_it_breaks_is_unexplained() -> None:
    w = merge_key_witness()
    config, schedule = merge_key_collision(w["queueId1"], w["startOffset1"], w["queueId2"], w["startOffset2"])
    for profile in ("v5.5",):
        # 5.5.0's PopBufferMergeService#addCk / addCkJustOffset refuse a CK whose merge key is
        # buffered (switch buffer_merge_key_conflict_guard): the collision never happens
        for merge in (True, False):
            guarded = run_scenario(profile, 0, 0, config=attrs.evolve(config, enable_pop_buffer_merge=merge),
                                   schedule=schedule)
            assert "key-witness:merge" not in guarded.coverage and not guarded.violations
    for profile in ("v5.0",):
        merged = run_scenario(profile, 0, 0, config=attrs.evolve(config, enable_pop_buffer_merge=True),
                              schedule=schedule)
        plain = run_scenario(profile, 0, 0, config=config, schedule=schedule)
        assert "key-witness:merge" in plain.coverage and "key-witness:merge" in merged.coverage
        # buffer merge on: the second CK replaces the first in the buffer; the first stays in the
        # commit-offset queue forever and the queue's offset never moves (PRG-1, QUI-1)
        assert {s.key for s in attribute(merged)} == {"PRG-1/unexplained", "QUI-1/unexplained"}
        # off: addCkJustOffset counts both CKs but the buffer keeps one (QUI-1: counter leak)
        assert {s.key for s in attribute(plain)} == {"QUI-1/unexplained"}
    # the same schedule with queue ids that cannot collide reaches nothing
    config, schedule = merge_key_collision(1, w["startOffset1"], 2, w["startOffset2"])
    assert "key-witness:merge" not in run_scenario("v5.5", 0, 0, config=config, schedule=schedule).coverage


def test_a_default_run_does_not_report_the_witness() -> None:
    result = run_scenario("v5.0", 1, 300)
    assert not [p for p in result.coverage if p.startswith("key-witness:")]
