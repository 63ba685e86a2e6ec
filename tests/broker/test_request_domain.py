"""Request validation of POP / ACK / changeInvisibleTime over the argument domain, per release
(spec/broker.md "Request validation"; Java lines there)."""

from __future__ import annotations

import pytest

from reference.common import response_code as rc
from reference.common.pop import PopRequest
from tests.broker.conftest import make_broker


def _pop(b, **kw):
    fields = dict(topic="T", group="G", queue_id=-1, max_msg_nums=32, invisible_time=60_000)
    fields.update(kw)
    return b.pop(PopRequest(**fields)).result


def _stored(b, n: int = 3, queue_id: int = 0) -> None:
    for _ in range(n):
        b.put_message("T", queue_id, b"m")


def _revive_writes(b) -> int:
    return sum(b.max_offset(b.revive_topic, q) for q in range(b.config.revive_queue_num))


# -- POP ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,code", [("v5.0", rc.SYSTEM_ERROR), ("v5.5", rc.INVALID_PARAMETER)])
def test_pop_max_msg_nums_above_32_refused_per_release(profile: str, code: int) -> None:
    b = make_broker(profile)
    _stored(b)
    assert _pop(b, max_msg_nums=33).code == code
    assert _pop(b, max_msg_nums=2 ** 31 - 1).code == code
    assert _pop(b, max_msg_nums=32).code == rc.SUCCESS  # 32 is accepted


@pytest.mark.parametrize("profile,code", [("v5.0", rc.SYSTEM_ERROR), ("v5.5", rc.INVALID_PARAMETER)])
def test_pop_queue_id_past_read_queues_refused_per_release(profile: str, code: int) -> None:
    b = make_broker(profile, queues=2)
    _stored(b, queue_id=1)
    assert _pop(b, queue_id=2).code == code
    assert _pop(b, queue_id=2 ** 31 - 1).code == code
    assert _pop(b, queue_id=1).code == rc.SUCCESS


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_pop_queue_id_below_minus_one_reads_every_queue(profile: str) -> None:
    """`queueId < 0` is "every queue" in processRequest; no lower bound is checked."""
    b = make_broker(profile, queues=2)
    _stored(b, 1, 0)
    _stored(b, 1, 1)
    r = _pop(b, queue_id=-2 ** 31)
    assert r.code == rc.SUCCESS and sorted(m.queue_id for m in r.messages) == [0, 1]


@pytest.mark.parametrize("profile,code", [("v5.0", rc.POLLING_TIMEOUT), ("v5.5", rc.SYSTEM_ERROR)])
def test_pop_negative_max_msg_nums_per_release(profile: str, code: int) -> None:
    """5.5.0 throws in `new GetMessageResult(maxMsgNums)` before random.nextInt and the CK
    counter; 5.0.0 reads nothing (every queue is "full") and answers POLLING_TIMEOUT."""
    b = make_broker(profile)
    _stored(b)
    ck_before = b.next_ck_message_number()
    r = _pop(b, max_msg_nums=-1)
    assert r.code == code and not r.messages
    consumed = b.next_ck_message_number() - ck_before - 1
    assert consumed == (1 if profile == "v5.0" else 0)
    assert _revive_writes(b) == 0


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_pop_zero_max_msg_nums_reads_nothing(profile: str) -> None:
    b = make_broker(profile)
    _stored(b)
    r = _pop(b, max_msg_nums=0)
    assert r.code == rc.POLLING_TIMEOUT and not r.messages and r.rest_num == 3


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
@pytest.mark.parametrize("invisible_time", [0, -1, -2 ** 31, 2 ** 31 - 1])
def test_pop_accepts_every_invisible_time(profile: str, invisible_time: int) -> None:
    """No bound on invisibleTime: the CK and the handle carry it as sent."""
    b = make_broker(profile)
    _stored(b, 1)
    r = _pop(b, invisible_time=invisible_time)
    assert r.code == rc.SUCCESS and r.invisible_time == invisible_time
    assert r.messages[0].extra_info.split(" ")[2] == str(invisible_time)


# -- ACK ---------------------------------------------------------------------------------------
def _held(b):
    _stored(b, 2)
    r = _pop(b, queue_id=0, max_msg_nums=1)
    assert r.code == rc.SUCCESS
    return r.messages[0]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_ack_refusals_in_java_order(profile: str) -> None:
    b = make_broker(profile)
    m = _held(b)
    h = m.extra_info
    before = _revive_writes(b)
    assert b.ack("G", "NoSuchTopic", 0, m.queue_offset, h) == rc.TOPIC_NOT_EXIST
    assert b.ack("G", "T", -1, m.queue_offset, h) == rc.MESSAGE_ILLEGAL
    assert b.ack("G", "T", 2, m.queue_offset, h) == rc.MESSAGE_ILLEGAL
    assert b.ack("G", "T", 0, -1, h) == rc.NO_MESSAGE
    assert b.ack("G", "T", 0, 3, h) == rc.NO_MESSAGE  # max is 2
    assert b.ack("G", "T", 0, m.queue_offset, "x" + h) == rc.SYSTEM_ERROR  # NumberFormatException
    assert b.ack("G", "T", 0, m.queue_offset, " ".join(h.split(" ")[:3])) == rc.SYSTEM_ERROR  # AIOOBE
    # a queueId past the end is checked before the offset: an unknown topic before both
    assert b.ack("G", "NoSuchTopic", 99, -5, "garbage") == rc.TOPIC_NOT_EXIST
    assert b.ack("G", "T", 99, -5, "garbage") == rc.MESSAGE_ILLEGAL
    assert b.ack("G", "T", 0, -5, "garbage") == rc.NO_MESSAGE
    assert _revive_writes(b) == before and not b.acks_received  # nothing written, nothing merged


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_ack_at_max_offset_and_of_another_group_are_accepted(profile: str) -> None:
    """offset == maxOffset passes (`offset > maxOffset` refuses); the group is not checked."""
    b = make_broker(profile)
    m = _held(b)
    assert b.ack("G", "T", 0, 2, m.extra_info) == rc.SUCCESS
    assert b.ack("G_other", "T", 0, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert b.ack("G", "T", 0, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert b.ack("G", "T", 0, m.queue_offset, m.extra_info) == rc.SUCCESS  # a duplicate too


# -- changeInvisibleTime -----------------------------------------------------------------------
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
@pytest.mark.parametrize("invisible_time", [0, -1, -2 ** 31])
def test_change_invisible_time_accepts_non_positive_invisible_time(profile: str, invisible_time: int) -> None:
    """Neither release checks invisibleTime (checkFields is empty; processRequest reads it
    only into the new CK): SUCCESS, and the new CK is due at once (spec/broker.md)."""
    b = make_broker(profile)
    m = _held(b)
    r = b.change_invisible_time("G", "T", 0, m.queue_offset, m.extra_info, invisible_time)
    assert r.code == rc.SUCCESS and r.invisible_time == invisible_time
    assert r.extra_info is not None and r.extra_info.split(" ")[2] == str(invisible_time)


@pytest.mark.parametrize("profile,code", [("v5.0", rc.SUCCESS), ("v5.5", rc.NO_MESSAGE)])
def test_change_invisible_time_at_max_offset_per_release(profile: str, code: int) -> None:
    b = make_broker(profile)
    m = _held(b)
    assert b.change_invisible_time("G", "T", 0, 2, m.extra_info, 1000).code == code


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_change_invisible_time_refusals(profile: str) -> None:
    b = make_broker(profile)
    m = _held(b)
    h = m.extra_info
    before = _revive_writes(b)
    assert b.change_invisible_time("G", "NoSuchTopic", 0, 0, h, 1000).code == rc.TOPIC_NOT_EXIST
    assert b.change_invisible_time("G", "T", -1, 0, h, 1000).code == rc.MESSAGE_ILLEGAL
    assert b.change_invisible_time("G", "T", 2, 0, h, 1000).code == rc.MESSAGE_ILLEGAL
    assert b.change_invisible_time("G", "T", 0, -1, h, 1000).code == rc.NO_MESSAGE
    assert b.change_invisible_time("G", "T", 0, 3, h, 1000).code == rc.NO_MESSAGE
    assert b.change_invisible_time("G", "T", 0, 0, " ".join(h.split(" ")[:3]), 1000).code == rc.SYSTEM_ERROR
    assert _revive_writes(b) == before


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_change_invisible_time_with_bad_ck_offset_field_writes_ck_and_keeps_old(profile: str) -> None:
    """A handle whose field 0 is no long: the new CK is built from fields 3 and 5 and written,
    then ackOrigin throws on field 0 and the exception is only logged (SUCCESS, old CK un-acked)."""
    b = make_broker(profile)
    m = _held(b)
    before = _revive_writes(b)
    r = b.change_invisible_time("G", "T", 0, m.queue_offset, "x" + m.extra_info, 1000)
    assert r.code == rc.SUCCESS
    assert _revive_writes(b) == before + 1 and not b.acks_received  # one CK, no ack


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_ck_due_more_than_three_days_ahead_is_refused_by_the_timer(profile: str) -> None:
    """HookUtils#transformTimerMessage: deliverMs - now > timerMaxDelaySec (3 days) is
    WHEEL_TIMER_MSG_ILLEGAL; a POP with such an invisibleTime delivers, but no CK is stored."""
    b = make_broker(profile)
    _stored(b, 1)
    r = _pop(b, queue_id=0, invisible_time=3 * 24 * 3600 * 1000 + 1000 + 1)  # CK due at reviveTime - 1 s
    assert r.code == rc.SUCCESS and len(r.messages) == 1
    assert not b.timer_pending() and _revive_writes(b) == 0
    ok = _pop(b, queue_id=0, invisible_time=3 * 24 * 3600 * 1000)
    assert ok.code == rc.POLLING_TIMEOUT  # the offset moved on either way
    _stored(b, 1)
    assert _pop(b, queue_id=0, invisible_time=3 * 24 * 3600 * 1000).code == rc.SUCCESS
    assert b.timer_pending()  # exactly 3 days is accepted
