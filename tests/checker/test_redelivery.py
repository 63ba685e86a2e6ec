"""Bounded redelivery (RED-1, RED-2), push suspension with a cause (PSH-2) and no duplicate push
consumption below the committed offset (DUP-1): clean on the correct model, each fails on its
mutant, and the accounting itself on hand-made histories."""

from __future__ import annotations

import attrs
import pytest

from popverify.checker.pop import PopChecker
from popverify.checker.properties import PROPERTIES
from popverify.checker.push import PushChecker
from popverify.fuzz.rows import swarm_config
from popverify.sim.scenario import run_scenario
from reference.client.consume_api import ConsumeRecord
from reference.common.message_queue import MessageQueue

NEW = ("RED-1", "RED-2", "PSH-2", "DUP-1")


def _fired(mode: str, mutant: str | None, seeds: range, profile: str = "v5.5", pid: str | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for seed in seeds:
        config = swarm_config(seed, mode)
        if pid is not None:  # without the drawn faults outside the property's assumptions
            config = attrs.evolve(config, faults=tuple(f for f in config.faults
                                                       if f not in PROPERTIES[pid].excluded_faults))
        result = run_scenario(profile, seed, 300, mode=mode, config=config, mutant=mutant)
        for v in result.violations:
            out.setdefault(v.property_id, v.message)
    return out


@pytest.mark.parametrize("mode", ["pop", "push"])
def test_new_properties_quiet_on_the_correct_model_but_for_known_findings(mode: str) -> None:
    """RED-2, PSH-2 and DUP-1 never fire on swarm runs of the correct model; RED-1 only beside
    NSR-1 or INV-1 (F2/F3/F4: a delivery after a clean ack or inside an invisibility)."""
    for profile in ("v5.0", "v5.5"):
        for seed in range(12):
            result = run_scenario(profile, seed, 300, mode=mode, config=swarm_config(seed, mode))
            fired = {v.property_id for v in result.violations}
            assert not fired & {"RED-2", "PSH-2", "DUP-1"}, (profile, seed, result.violations)
            if "RED-1" in fired:
                assert fired & {"NSR-1", "INV-1"}, (profile, seed, result.violations)


@pytest.mark.parametrize("mode, mutant, pid, words", [
    ("pop", "revive-twice", "RED-1", "earlier deliveries abandoned"),
    ("pop", "revive-keeps-reconsume-times", "RED-2", "with reconsumeTimes"),
    ("push", "pull-notify-dropped", "PSH-2", "is still suspended"),
    ("push", "consume-request-twice", "DUP-1", "successfully again below the committed offset"),
])
def test_each_new_property_fails_on_its_mutant(mode: str, mutant: str, pid: str, words: str) -> None:
    fired = _fired(mode, mutant, range(10), pid=pid)  # most swarm seeds draw a fault the property excludes
    assert pid in fired and words in fired[pid], fired


@pytest.mark.parametrize("mode, mutant, pid", [
    ("pop", "revive-keeps-reconsume-times", "RED-2"),
    ("push", "pull-notify-dropped", "PSH-2"),
    ("push", "consume-request-twice", "DUP-1"),
])
def test_only_the_new_property_sees_its_mutant(mode: str, mutant: str, pid: str) -> None:
    """Why they exist: no other safety or progress property fires on these mutants (beyond
    what the correct model shows on the same runs)."""
    base = set(_fired(mode, None, range(3)))
    assert set(_fired(mode, mutant, range(3))) - base == {pid}


def test_red1_counts_abandoned_deliveries() -> None:
    checker = PopChecker("T", "G")
    checker.on_produce("m", 0, 0)
    checker.on_deliver(0, 0, "m", 100)          # delivery 1, invisible until 100
    checker.on_deliver(1, 150, "m", 250)        # redelivery 1: delivery 1 was abandoned at 100
    checker.on_deliver(2, 300, "m", 400)        # redelivery 2: delivery 2 abandoned at 250
    assert not checker.violations
    checker.on_ack(3, 310, "m", 0, 400)         # delivery 3 acked in time
    checker.on_deliver(4, 500, "m", 600)        # a 4th delivery with only 2 abandoned: RED-1
    assert [v.property_id for v in checker.violations if v.property_id == "RED-1"] == ["RED-1"]
    assert "bound K = 2" in [v.message for v in checker.violations if v.property_id == "RED-1"][0]


def test_red1_follows_change_invisible_time_of_an_older_handle() -> None:
    checker = PopChecker("T", "G")
    checker.on_produce("m", 0, 0)
    checker.on_deliver(0, 0, "m", 100)
    checker.on_change_invisible("m", 0, 1000, old_deadline=100)   # delivery 1 now invisible until 1000
    checker.on_deliver(1, 500, "m", 600)                          # not abandoned yet: RED-1
    assert "RED-1" in {v.property_id for v in checker.violations}
    quiet = PopChecker("T", "G")
    quiet.on_produce("m", 0, 0)
    quiet.on_deliver(0, 0, "m", 100)
    quiet.on_change_invisible("m", 1, 1000, old_deadline=100)     # refused: deadline stays 100
    quiet.on_deliver(1, 500, "m", 600)
    assert "RED-1" not in {v.property_id for v in quiet.violations}


def test_red1_is_not_judged_after_a_restart() -> None:
    checker = PopChecker("T", "G")
    checker.on_produce("m", 0, 0)
    checker.on_deliver(0, 0, "m", 100)
    checker.on_ack(1, 10, "m", 0, 100)
    checker.on_fault("restart")
    checker.on_restart()
    checker.on_deliver(2, 20, "m", 120)   # a buffered ack lost with the restart: outside RED-1
    assert not [v for v in checker.violations if v.property_id == "RED-1"]
    assert checker.excused_violations >= 1


def test_red2_expects_source_plus_one() -> None:
    checker = PopChecker("T", "G")
    checker.on_produce("m", 0, 7)
    checker.on_deliver(0, 0, "m", 100, ("T", 0, 7), 0)
    checker.on_revive(1, "m", 0, 7, True, ("T", 0, 3))            # copy at retry 0:3 must carry 1
    checker.on_deliver(2, 200, "m", 300, ("R", 0, 3), 1)
    checker.on_revive(3, "m", 0, 3, False, ("R", 0, 4))           # copy of the copy: 2
    checker.on_deliver(4, 400, "m", 500, ("R", 0, 4), 1)
    assert [v.property_id for v in checker.violations] == ["RED-2"]
    assert "reconsumeTimes 1, expected 2" in checker.violations[0].message
    first = PopChecker("T", "G")
    first.on_deliver(0, 0, "x", 100, ("T", 1, 0), 3)              # the consumed topic carries 0
    assert [v.property_id for v in first.violations] == ["RED-2"]


def _record(qid: int, offsets: tuple[int, ...]) -> ConsumeRecord:
    return ConsumeRecord(MessageQueue("T", "b", qid), offsets, tuple(f"u{o}" for o in offsets), "CONSUME_SUCCESS", None)


def test_dup1_same_holder_below_the_committed_offset() -> None:
    checker = PushChecker("G", ("T",))
    checker.on_consume(_record(0, (0, 1)), 1, -1, "c0")
    checker.on_consume(_record(0, (1,)), 2, 2, "c0")        # again, below 2, same holder: DUP-1
    assert [v.property_id for v in checker.violations] == ["DUP-1"]


def test_dup1_excuses_a_rebalance_move_another_consumer_and_a_floor_not_passed() -> None:
    checker = PushChecker("G", ("T",))
    checker.on_consume(_record(0, (0, 1)), 1, -1, "c0")
    checker.on_consume(_record(0, (1,)), 2, 1, "c0")        # not below the committed offset
    checker.on_consume(_record(0, (0,)), 3, 2, "c1")        # another consumer (two owners mid-rebalance)
    checker.on_rebalance("c0", [MessageQueue("T", "b", 0)])
    checker.on_consume(_record(0, (0,)), 4, 2, "c0")        # a new ProcessQueue after a move
    assert not checker.violations
    checker.on_fault("dup_response")
    checker.on_consume(_record(0, (0,)), 5, 2, "c0")        # outside the assumptions
    assert not checker.violations and checker.excused_violations == 1


def test_ord1_quiet_on_orderly_runs_of_the_correct_model_and_fails_on_its_mutant() -> None:
    import attrs as _attrs

    for mutant, expect in ((None, False), ("orderly-lock-skipped", True)):
        fired: set[str] = set()
        for seed in range(4):
            config = _attrs.evolve(swarm_config(seed, "push"), consume_orderly=True)
            result = run_scenario("v5.5", seed, 300, mode="push", config=config, mutant=mutant)
            fired |= {v.property_id for v in result.violations}
        assert ("ORD-1" in fired) is expect, (mutant, fired)


def test_ord1_names_the_lock_holder() -> None:
    checker = PushChecker("G", ("T",))
    record = _record(0, (3,))
    checker.on_orderly_consume(1, "c0", record, "c0")
    assert not checker.violations
    checker.on_orderly_consume(2, "c0", record, "c1")
    assert [v.property_id for v in checker.violations] == ["ORD-1"] and "held by c1" in checker.violations[0].message
    checker.on_orderly_consume(3, "c0", ConsumeRecord(record.mq, (), (), "NOT_LOCKED", None), None)
    assert len(checker.violations) == 1  # nothing handed to the listener: nothing to judge


def test_red2_push_retry_copies_carry_a_count_in_range() -> None:
    checker = PushChecker("G", ("T", "%RETRY%G"))
    checker.on_retry_copy(9, "u", 0, 1, 16)
    checker.on_retry_copy(9, "u", 1, 16, 16)
    checker.on_retry_copy(9, "v", 2, 40, None)     # orderly: no upper bound
    assert not checker.violations
    checker.on_retry_copy(9, "w", 3, 0, 16)        # a send-back that did not count
    checker.on_retry_copy(9, "x", 4, 17, 16)       # should have gone to the DLQ
    assert [v.property_id for v in checker.violations] == ["RED-2", "RED-2"]


def test_red2_push_kills_the_send_back_off_by_one_through_the_targeted_technique() -> None:
    """consumerSendMsgBack without ``reconsumeTimes + 1`` (an AST off-by-one mutant): only the
    failing-listener targeted scenario sends enough back for the copies to be judged."""
    from popverify.verify import mutation

    lines = (mutation.REFERENCE / "broker/send_back.py").read_text().splitlines()
    site = next(s for s in mutation.sites(("off-by-one",), ("broker/send_back.py",))
                if "reconsume_times=stored.reconsume_times + 1" in lines[s.line - 1])
    result = mutation.run(("off-by-one",), ("broker/send_back.py",), 3, 1, 100, techniques=("targeted",))
    killed = {m["mutant"]: m["by"] for m in result["mutants"] if m["killed"]}
    assert killed.get(site.name) == ["targeted:RED-2"], result["mutants"]


def test_bat1_response_size() -> None:
    checker = PopChecker("T", "G")
    checker.on_response_size(0, 4, 4)
    assert not checker.violations
    checker.on_response_size(1, 5, 4)
    assert [v.property_id for v in checker.violations] == ["BAT-1"]
    push = PushChecker("G", ("T",))
    push.on_pull_response_size(0, "T:0", 32, 32)
    push.on_pull_response_size(1, "T:0", 33, 32)
    assert [v.property_id for v in push.violations] == ["BAT-1"]
    from popverify.sim.scenario import ScenarioConfig

    for mutant, expect in ((None, False), ("batch-one-too-many", True)):
        result = run_scenario("v5.5", 0, 200, config=ScenarioConfig(max_msg_nums=1), mutant=mutant)
        assert ("BAT-1" in {v.property_id for v in result.violations}) is expect, (mutant, result.violations)
