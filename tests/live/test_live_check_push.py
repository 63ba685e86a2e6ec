"""The live push checker (``--mode push``) on hand-made histories: ALO-3, OFF-3 and PRG-3 can
each fail, the history is replayed in clock order across processes, and the totals add up.
(The real-broker push session is in test_live_session.py.)"""

from __future__ import annotations

from popverify.live.check_push import RETRY_TOPIC, check_push_history
from popverify.live.history import Op
from popverify.live.workload import TOPIC

T0 = 1_800_000_000_000


def _op(ops: list[Op], type_: str, f: str, process: str = "consumer-0.1", t: int = 0, **kw: object) -> None:
    ops.append(Op(len(ops), type_, f, process, T0 + t, t, **kw))  # type: ignore[arg-type]


def _send(ops: list[Op], key: str, queue: int, offset: int, t: int = 0) -> None:
    _op(ops, "invoke", "send", "producer", t, key=key)
    _op(ops, "ok", "send", "producer", t + 1, key=key, queue=queue, offset=offset)


def _consume(ops: list[Op], key: str, queue: int, offset: int, t: int, status: str = "CONSUME_SUCCESS",
             topic: str = TOPIC, f: str = "consume", process: str = "consumer-0.1") -> None:
    _op(ops, "info", f, process, t, key=key, topic=topic, queue=queue, offset=offset,
        value={"status": status, "reconsume": 0})


def _offset(ops: list[Op], f: str, queue: int, offset: int, t: int, process: str = "consumer-0.1") -> None:
    _op(ops, "info", f, process, t, topic=TOPIC, queue=queue, offset=offset)


def _clean() -> list[Op]:
    ops: list[Op] = []
    _send(ops, "k-0", 0, 0, 0)
    _send(ops, "k-1", 0, 1, 10)
    _consume(ops, "k-0", 0, 0, 20)
    _offset(ops, "update", 0, 1, 21)
    _consume(ops, "k-1", 0, 1, 30, status="RECONSUME_LATER")      # sent back ...
    _offset(ops, "update", 0, 2, 31)
    _consume(ops, "k-1", 0, 0, 10_040, topic=RETRY_TOPIC)          # ... consumed from the retry topic
    _offset(ops, "persist", 0, 2, 10_050)
    _offset(ops, "max", 0, 2, 10_060)
    return ops


def test_clean_push_history_holds_and_totals_add_up() -> None:
    v = check_push_history(_clean())
    assert v.violations == ()
    assert v.checked["ALO-3"] == v.checked["OFF-3"] == v.checked["PRG-3"] == "holds"
    assert v.checked["PSH-1"].startswith("not checked")
    t = v.totals
    assert (t.acknowledged_sends, t.consumed, t.lost, t.reconsume_later, t.from_retry_topic, t.persists) == \
        (2, 2, 0, 1, 1, 1)
    assert t.consistent()


def test_a_message_never_consumed_is_alo3_and_a_commit_passing_it_is_off3() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0, 0, 0)
    _send(ops, "k-1", 0, 1, 10)
    # The broken client answers CONSUME_SUCCESS for k-0 without processing it (test-only skip):
    _consume(ops, "k-0", 0, 0, 20, f="skip")
    _consume(ops, "k-1", 0, 1, 30)
    _offset(ops, "update", 0, 2, 31)
    _offset(ops, "persist", 0, 2, 5_000)
    _offset(ops, "max", 0, 2, 6_000)
    v = check_push_history(ops)
    ids = sorted(x.property_id for x in v.violations)
    assert ids == ["ALO-3", "OFF-3"]
    off3 = next(x for x in v.violations if x.property_id == "OFF-3")
    assert "k-0" in off3.message and off3.step == 6          # the first commit past it: the update
    assert v.totals.lost == 1 and v.totals.skipped == 1 and v.totals.consistent()


def test_prg3_the_last_persisted_offset_must_reach_max() -> None:
    ops = _clean()
    ops[-1] = Op(ops[-1].index, "info", "max", "consumer-0.1", ops[-1].time_ms, ops[-1].rel_ms, topic=TOPIC,
                 queue=0, offset=3)
    v = check_push_history(ops)
    assert [x.property_id for x in v.violations] == ["PRG-3"] and v.checked["PRG-3"] == "violated"
    # No report of max offsets: PRG-3 is not checked rather than passing.
    assert check_push_history(_clean()[:-1]).checked["PRG-3"].startswith("not checked")


def test_alo3_not_checked_when_the_run_did_not_drain() -> None:
    ops: list[Op] = []
    _send(ops, "k-0", 0, 0, 0)
    v = check_push_history(ops, drained=False)
    assert v.violations == () and v.checked["ALO-3"].startswith("not checked")
    assert [x.property_id for x in check_push_history(ops).violations] == ["ALO-3"]


def test_replayed_in_clock_order_across_consumer_processes() -> None:
    """consumer-1's commit was appended before consumer-0's consume line (two reader threads),
    but happened after it: no OFF-3."""
    ops: list[Op] = []
    _send(ops, "k-0", 0, 0, 0)
    _offset(ops, "update", 0, 1, 50, process="consumer-1.2")
    _consume(ops, "k-0", 0, 0, 40, process="consumer-0.1")
    assert check_push_history(ops).violations == ()


def test_consumption_below_a_persisted_offset_is_counted_not_violated() -> None:
    ops = _clean()
    _consume(ops, "k-0", 0, 0, 20_000, process="consumer-1.2")   # e.g. after a broker kill rolled the offset back
    v = check_push_history(ops)
    assert v.violations == () and v.totals.consumed_below_commit == 1 and v.totals.duplicated == 1


def test_positions_come_from_what_consumers_saw_not_the_send_receipt() -> None:
    """rocketmq-python-client's SendReceipt names another queue than the stored one (offset
    right): OFF-3 places messages where the listeners got them."""
    ops: list[Op] = []
    _send(ops, "k-0", 1, 0, 0)                       # receipt says queue 1 ...
    _consume(ops, "k-0", 0, 0, 20, f="skip")         # ... it is stored at queue 0 offset 0
    _send(ops, "k-1", 2, 0, 30)                      # receipt says queue 2, stored at queue 1
    _consume(ops, "k-1", 1, 0, 40)
    _offset(ops, "update", 1, 1, 41)                 # queue 1 passes only k-1: consumed, fine
    _offset(ops, "update", 0, 1, 50)                 # queue 0 passes k-0: skipped, OFF-3
    v = check_push_history(ops, drained=False)
    assert [(x.property_id, x.step) for x in v.violations] == [("OFF-3", 7)] and "k-0" in v.violations[0].message
