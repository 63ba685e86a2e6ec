"""What an admin's offset reset or group deletion takes from the POP checker's obligations, and
what it does not (spec/properties.md "Admin requests"): deliberate skips and re-reads pass, a real
loss or an extra re-read is still reported."""

from __future__ import annotations

import attrs

from popverify.checker.pop import PopChecker
from popverify.checker.push import PushChecker
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from reference.broker.broker import Broker


def _checker(n: int) -> PopChecker:
    c = PopChecker("T", "G")
    for off in range(n):
        c.on_produce(f"m{off}", 0, off)
    return c


def _deliver(c: PopChecker, off: int, now: int, deadline: int) -> None:
    c.on_deliver(1, now, f"m{off}", deadline, ("T", 0, off), 0)


def _ids(c: PopChecker) -> list[str]:
    return sorted(v.property_id for v in c.violations)


def test_a_forward_reset_excuses_what_it_skips_only() -> None:
    c = _checker(4)
    _deliver(c, 0, 0, 100)
    c.on_ack(1, 10, "m0", 0, 100)
    c.on_reset_offset(0, 2, 1)  # m1 skipped on purpose; m2, m3 still owed
    c.on_produce("m4", 0, 4)
    _deliver(c, 2, 20, 120)
    c.on_ack(1, 30, "m2", 0, 120)
    c.finish(True, 9)
    assert [v.message.split()[1] for v in c.violations] == ["m3", "m4"] and _ids(c) == ["ALO-1", "ALO-1"]


def test_a_forward_reset_skips_what_nobody_acked_below_it_orderly_or_not() -> None:
    """Below the target nothing un-acked is owed any more: an orderly POP's batch has no CK, and
    a plain POP's CK may be lost in the merge buffer by a crash (v5.5 seed 92: a POP, a reset past
    it, a restart). At the target the message is still owed."""
    c = _checker(4)
    c.on_deliver(1, 0, "m0", 100, ("T", 0, 0), 0, orderly=True)
    c.on_deliver(1, 0, "m1", 100, ("T", 0, 1), 0)
    c.on_deliver(1, 0, "m2", 100, ("T", 0, 2), 0)
    c.on_deliver(1, 0, "m3", 100, ("T", 0, 3), 0)
    c.on_ack(1, 10, "m3", 0, 100)
    c.on_reset_offset(0, 2, 0)
    c.finish(True, 9)
    assert [v.message.split()[1] for v in c.violations] == ["m2"] and _ids(c) == ["ALO-2"]


# v5.0 seed 3 of 300 steps, shrunk: an orderly long-polling POP gets two messages, the batch ack
# is refused (5.0.0 has no BATCH_ACK_MESSAGE), and the admin resets the queue past them
ORDERLY = [Action("pop", (0, 0, True)), Action("produce", (0,)), Action("produce", (0,)),
           Action("pop_step", (0,)), Action("pop_step", (0,)), Action("batch_ack", (0,)),
           Action("produce", (0,)), Action("produce", (0,)), Action("reset_offset", (0, 1549723974))]


def test_a_reset_past_an_orderly_batch_passes_and_the_old_excusal_reports_it(monkeypatch) -> None:
    """Reproduced on rocketmq-broker 5.0.0 by the lockstep replay (both sides leave the batch
    unacked): the admin's skip, not a loss. The excusal for undelivered messages alone reports it."""
    config = ScenarioConfig(consumers=1, queues=1, pop_orderly=True, start_offset=2**31 - 1, actions=(
        "produce", "pop", "pop_step", "ack", "batch_ack", "advance", "long_poll", "reset_offset"))
    run = run_scenario("v5.0", 3, len(ORDERLY), config=config, schedule=ORDERLY, record_trace=True)
    events = [e for state in run.trace["states"] for e in state["events"]]
    delivered = {e["offset"] for e in events if e["type"] == "deliver"}
    reset = next(e for e in events if e["type"] == "reset_offset")
    assert delivered and max(delivered) < reset["offset"] and not run.violations, run.violations
    def undelivered_only(self: PopChecker, queue_id: int, below: int) -> None:  # the excusal before
        self.excused.update(u for (q, o), u in self.by_offset.items()
                            if q == queue_id and o < below and self.messages[u].deliveries == 0)
    monkeypatch.setattr(PopChecker, "_skip", undelivered_only)
    lost = run_scenario("v5.0", 3, len(ORDERLY), config=config, schedule=ORDERLY).violations
    assert [v.property_id for v in lost] == ["ALO-2", "ALO-2"]


def test_a_reset_past_the_end_excuses_later_messages_below_it() -> None:
    c = _checker(1)
    c.on_reset_offset(0, 3, -1)
    c.on_produce("m1", 0, 1)
    c.on_produce("m2", 0, 2)
    c.on_produce("m3", 0, 3)
    c.finish(True, 9)
    assert [v.message.split()[1] for v in c.violations] == ["m3"]


def test_a_reset_back_allows_one_re_read_not_two() -> None:
    c = _checker(2)
    _deliver(c, 1, 0, 100)
    c.on_ack(1, 10, "m1", 0, 100)
    c.on_reset_offset(0, 1, 2)
    _deliver(c, 1, 20, 120)  # the reset's re-read: fine
    c.on_ack(1, 30, "m1", 0, 120)
    assert not c.violations
    _deliver(c, 1, 40, 140)  # a second re-read after a clean ack: not the admin's doing
    assert "NSR-1" in _ids(c)


def test_offsets_moving_back_outside_a_reset_span_are_reported() -> None:
    c = _checker(0)

    class B:  # the broker's committed offsets as check_offsets reads them
        commit = 5

        def committed_offset(self, group: str, topic: str, qid: int) -> int:
            return self.commit

        def buffered_checkpoints(self) -> list:
            return []

        def stored_checkpoints(self) -> list:
            return []

        def queue_offset_at(self, topic: str, qid: int, index: int) -> int:
            return index

    b = B()
    c.check_offsets(1, b, 1)
    c.on_reset_offset(0, 2, 5)
    b.commit = 4  # an in-flight POP's older commit over the reset: inside [2, 5]
    c.check_offsets(2, b, 1)
    b.commit = 9
    c.check_offsets(3, b, 1)
    b.commit = 1  # below anything the reset crossed
    c.check_offsets(4, b, 1)
    assert _ids(c) == ["OFF-2"] and c.violations[0].step == 4


def test_a_clean_deletion_excuses_what_the_group_had_not_acked() -> None:
    c = _checker(3)
    _deliver(c, 0, 0, 100)
    c.on_ack(1, 10, "m0", 0, 100)
    c.on_delete_group(clean_offset=True)
    c.on_produce("m3", 0, 3)
    c.finish(True, 9)
    assert [v.message.split()[1] for v in c.violations] == ["m3"]  # stored after: still owed
    kept = _checker(2)
    kept.on_delete_group(clean_offset=False)  # the offsets stay: nothing may be skipped
    kept.finish(True, 9)
    assert _ids(kept) == ["ALO-1", "ALO-1"]


SCHEDULE = [Action("produce", (0,))] * 4 + [Action("reset_offset", (0, 2))] + \
    [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))] + [Action("ack", (0, 0))] * 4
CONFIG = ScenarioConfig(consumers=1, queues=1, actions=("produce", "pop", "pop_step", "ack", "advance", "reset_offset"))


def test_a_run_with_a_reset_passes_and_a_broker_that_skips_further_is_caught(monkeypatch) -> None:
    """A reset to offset 2 on v5.5 skips m0 and m1 on purpose: no violation. A broker that
    commits one past the reset (losing the message at its target) is reported (OFF-1, ALO-1)."""
    assert not run_scenario("v5.5", 0, len(SCHEDULE), config=CONFIG, schedule=SCHEDULE).violations
    real = Broker.reset_offset
    monkeypatch.setattr(Broker, "reset_offset", lambda self, topic, group, queue_id, offset:
                        real(self, topic, group, queue_id, offset + 1))
    lost = run_scenario("v5.5", 0, len(SCHEDULE), config=attrs.evolve(CONFIG), schedule=SCHEDULE).violations
    assert [v.property_id for v in lost] == ["OFF-1", "ALO-1"]  # the commit passed it, then it was never delivered
    assert all("offset 2" in v.message for v in lost)


def test_push_a_forward_reset_excuses_what_it_skips_then_and_later_only() -> None:
    """offsets2: a push run's reset (PushChecker#on_reset_offset) takes from ALO-3 the messages
    of its queue below the reset offset, stored before or after it; the rest stay owed."""
    c = PushChecker("G", ("T", "%RETRY%G"))
    for off in range(3):
        c.on_produce(f"m{off}", 0, off)
    c.on_produce("q1", 1, 0)
    c.on_reset_offset(0, 4)  # one past the end + 1: offset 3, stored later, is skipped too
    c.on_produce("m3", 0, 3)
    c.on_produce("m4", 0, 4)
    c.finish(True, 9)
    assert sorted(v.message.split()[1] for v in c.violations) == ["m4", "q1"]
