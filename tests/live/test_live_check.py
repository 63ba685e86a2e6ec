"""The live checker on hand-made histories: each property it reports can fail, and the totals
add up. (The real-broker sessions are in test_live_session.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from popverify.live.check import check_history
from popverify.live.faults import FAULT_KINDS, MAX_FAULTS, MIN_GAP_S, schedule
from popverify.live.history import History, Op, parse_handle

T0 = 1_800_000_000_000


def _op(ops: list[Op], type_: str, f: str, process: str = "c", t: int = 0, **kw: object) -> None:
    ops.append(Op(len(ops), type_, f, process, T0 + t, t, **kw))  # type: ignore[arg-type]


def _handle(pop_time: int, invisible: int, queue: int = 0, offset: int = 0) -> str:
    return f"0 {T0 + pop_time} {invisible} 0 0 broker-a {queue} {offset} 0"


def _send(ops: list[Op], key: str, offset: int, t: int = 0, ok: bool = True) -> None:
    _op(ops, "invoke", "send", "producer", t, key=key)
    if ok:
        _op(ops, "ok", "send", "producer", t + 1, key=key, queue=0, offset=offset)
    else:
        _op(ops, "timeout", "send", "producer", t + 1, key=key)


def _deliver_ack(ops: list[Op], key: str, pop: int, invisible: int, ack_at: int | None) -> None:
    h = _handle(pop, invisible)
    _op(ops, "info", "deliver", t=pop, key=key, handle=h)
    if ack_at is not None:
        _op(ops, "invoke", "ack", t=ack_at, key=key, handle=h)
        _op(ops, "ok", "ack", t=ack_at + 1, key=key, handle=h)


def test_handle_parsing() -> None:
    h = parse_handle("0 1795446030063 15000 0 0 broker-a 3 1 1200")
    assert h is not None and (h.queue_id, h.offset, h.deadline) == (3, 1, 1795446045063)
    assert parse_handle("not a handle") is None


def test_clean_history_holds_and_totals_add_up() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _send(ops, "k-1", 1)
    _deliver_ack(ops, "k-0", 100, 10_000, 200)
    _deliver_ack(ops, "k-1", 100, 10_000, None)          # dropped ...
    _deliver_ack(ops, "k-1", 10_500, 10_000, 10_600)     # ... and redelivered after its deadline
    v = check_history(ops)
    assert v.violations == ()
    assert v.checked["ALO-1"] == v.checked["NSR-1"] == v.checked["INV-1"] == "holds"
    t = v.totals
    assert (t.acknowledged_sends, t.lost, t.duplicated, t.deliveries, t.delivered_after_ack) == (2, 0, 1, 3, 0)
    assert t.consistent()


def test_lost_message_is_alo1() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _send(ops, "k-1", 1)
    _deliver_ack(ops, "k-0", 100, 10_000, 200)
    v = check_history(ops)
    assert [x.property_id for x in v.violations] == ["ALO-1"]
    assert v.totals.lost == 1 and v.totals.consistent()


def test_redelivery_after_clean_ack_is_nsr1_but_not_after_a_broker_kill() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _deliver_ack(ops, "k-0", 100, 10_000, 200)
    _deliver_ack(ops, "k-0", 10_500, 10_000, 10_600)
    v = check_history(ops)
    # RED-1 beside it: the redelivery has no abandoned delivery to pay for it
    assert sorted(x.property_id for x in v.violations) == ["NSR-1", "RED-1"]
    assert v.totals.delivered_after_ack == 1
    killed: list[Op] = []
    _send(killed, "k-0", 0)
    _deliver_ack(killed, "k-0", 100, 10_000, 200)
    _op(killed, "info", "fault", "nemesis", 300, value={"kind": "kill", "phase": "begin"})
    _deliver_ack(killed, "k-0", 10_500, 10_000, 10_600)
    v = check_history(killed)
    assert v.violations == ()  # a new epoch: the old clean ack no longer binds (as in the model)


def test_early_redelivery_is_inv1_and_change_extends_the_deadline() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _deliver_ack(ops, "k-0", 100, 10_000, None)
    _deliver_ack(ops, "k-0", 5_000, 10_000, 5_100)
    assert sorted(x.property_id for x in check_history(ops).violations) == ["INV-1", "RED-1"]
    changed: list[Op] = []
    _send(changed, "k-0", 0)
    _deliver_ack(changed, "k-0", 100, 10_000, None)
    _op(changed, "ok", "change", t=9_000, key="k-0", handle=_handle(9_000, 10_000))
    _deliver_ack(changed, "k-0", 12_000, 10_000, 12_100)    # after the old deadline, before the new one
    assert sorted(x.property_id for x in check_history(changed).violations) == ["INV-1", "RED-1"]


def test_late_or_indeterminate_ack_is_not_clean_and_indeterminate_send_is_recovered() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _send(ops, "k-1", 1, ok=False)
    _deliver_ack(ops, "k-0", 100, 10_000, 10_200)             # late ack
    _deliver_ack(ops, "k-0", 10_300, 10_000, 10_400)          # redelivery is allowed
    _deliver_ack(ops, "k-1", 100, 10_000, 200)
    v = check_history(ops)
    assert v.violations == ()
    assert (v.totals.indeterminate_sends, v.totals.recovered) == (1, 1) and v.totals.consistent()


def test_never_acked_is_alo2() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _deliver_ack(ops, "k-0", 100, 10_000, None)
    v = check_history(ops)
    assert [x.property_id for x in v.violations] == ["ALO-2"] and v.totals.never_acked == 1


def test_fault_schedule_is_seeded_and_bounded() -> None:
    a = schedule(FAULT_KINDS, 600, 3, 7)
    assert a == schedule(FAULT_KINDS, 600, 3, 7) and a != schedule(FAULT_KINDS, 600, 3, 8)
    assert 0 < len(a) <= MAX_FAULTS and {f.kind for f in a} == set(FAULT_KINDS)
    times = [f.at_s for f in a]
    assert times == sorted(times) and all(b - x >= MIN_GAP_S - 0.2 for x, b in zip(times, times[1:]))
    assert all(0.15 * 600 <= f.at_s <= 0.75 * 600 for f in a)
    assert schedule((), 600, 3, 7) == []


def test_history_roundtrip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from popverify.live.history import read_history
    h = History()
    h.add("invoke", "send", "producer", key="k-0")
    h.add("ok", "send", "producer", key="k-0", queue=1, offset=0, value={"message_id": "x"})
    h.write(tmp_path / "h.jsonl")
    assert read_history(tmp_path / "h.jsonl") == h.snapshot()


@pytest.mark.parametrize("argv, text", [
    (["--release", "6.0"], "--release"),
    (["--release", "5.5.0", "--duration", "5"], "--duration"),
    (["--release", "5.5.0", "--clients", "9"], "--clients"),
    (["--release", "5.5.0", "--faults", "kill,flood"], "unknown fault"),
    (["--release", "5.5.0", "--mode", "push", "--faults", "kill,timeout"], "POP client fault"),
    (["--release", "5.5.0", "--mode", "push", "--scenario", "f2"], "POP scenario"),
    (["--release", "5.5.0", "--scenario", "revive-kill", "--faults", "kill"], "runs alone"),
    (["--release", "5.5.0", "--scenario", "nope"], "--scenario"),
])
def test_bad_arguments_exit_2(argv: list[str], text: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "popverify", "live", *argv], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and text in proc.stderr and "Traceback" not in proc.stderr


def test_report_shows_totals_matrix_timeline_and_the_operations_around_a_violation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from popverify.live.faults import Fault
    from popverify.live.report import write_report
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _deliver_ack(ops, "k-0", 100, 10_000, 200)
    _op(ops, "info", "fault", "nemesis", 6_000, value={"kind": "pause", "phase": "begin"})
    _op(ops, "info", "fault", "nemesis", 9_000, value={"kind": "pause", "phase": "end"})
    _deliver_ack(ops, "k-0", 10_500, 10_000, 10_600)
    v = check_history(ops)
    text = write_report(tmp_path, "5.5.0", "v5.5", ops, v, [Fault(6.0, "pause", 3.0)], {"total": 1.0},
                        True).read_text()
    assert "| lost | 0 |" in text and "| NSR-1 | violated |" in text
    assert "pause:begin" in text and "(active: pause)" in text
    assert "### NSR-1 at operation" in text and "Every operation on k-0:" in text


def test_a_send_stored_twice_is_not_a_redelivery() -> None:
    """Seen on 5.5.0 with a paused broker: the client retried k-130 and the broker stored it at
    queue 1 offsets 32 and 33; the two copies were delivered 4 ms apart."""
    ops: list[Op] = []
    _send(ops, "k-0", 0)
    _op(ops, "info", "deliver", t=100, key="k-0", handle=_handle(100, 12_000, 1, 33))
    _op(ops, "info", "deliver", t=101, key="k-0", handle=_handle(96, 15_000, 1, 32))
    v = check_history(ops)
    assert [x.property_id for x in v.violations] == [] and v.totals.stored_twice == 1
    single: list[Op] = []
    _send(single, "k-0", 0)
    _op(single, "info", "deliver", t=100, key="k-0", handle=_handle(100, 12_000, 1, 33))
    _op(single, "info", "deliver", t=101, key="k-0", handle=_handle(101, 15_000, 1, 33))
    assert [x.property_id for x in check_history(single).violations] == ["RED-1", "INV-1", "ALO-2"]
