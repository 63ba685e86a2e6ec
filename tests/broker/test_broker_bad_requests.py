"""The model answers bad requests as the Java code does (issue 19 item 6); one test per case,
each citing the Java lines it follows (rocketmq-broker 5.0.0 and 5.5.0 sources jars)."""

from __future__ import annotations

import pytest

from reference.broker.extra_info import ExtraInfoError, get_ck_queue_offset, get_revive_qid, split
from reference.broker.keys import ACK_TAG
from reference.common import response_code as rc
from reference.common.javalang import LONG_MAX, to_long
from reference.common.pop import PopRequest

from tests.broker.conftest import make_broker

INV = 10_000


def _pop_one(b, queue: int = 0):
    b.put_message("T", queue, b"m")
    return b.pop(PopRequest("T", "G", queue_id=queue, invisible_time=INV)).result.messages[0]


def _revive_all(b, ms: int = INV + 6000) -> list[int]:
    out: list[int] = []
    for _ in range(2):
        b.clock.advance(ms // 2)
        b.timer_step()
        b.buffer_merge_scan()
        for q in range(b.config.revive_queue_num):
            out += [r.msg_offset for r in b.revive_step(q)]
    return out


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
@pytest.mark.parametrize("field", ["group", "topic", "queue_id", "offset", "extra_info"])
def test_null_ack_header_field_is_system_error_and_writes_nothing(profile: str, field: str) -> None:
    """AckMessageRequestHeader: every field @CFNotNull (javap of rocketmq-common 5.0.0 /
    rocketmq-remoting 5.5.0); RemotingCommand#decodeCommandCustomHeader → checkFields throws
    "the custom field <...> is null", NettyRemotingAbstract#processRequestCommand answers
    SYSTEM_ERROR (RemotingSysResponseCode.SYSTEM_ERROR = 1) before AckMessageProcessor runs.
    The model used to ack a None group with SUCCESS and then fail every revive of the queue."""
    b = make_broker(profile)
    m = _pop_one(b)
    args = dict(group="G", topic=m.ack_topic, queue_id=m.queue_id, offset=m.queue_offset, extra_info=m.extra_info)
    args[field] = None
    before = (b.stored_checkpoints(), b.stored_acks(), b.committed_offsets())
    assert b.ack(**args) == rc.SYSTEM_ERROR
    assert (b.stored_checkpoints(), b.stored_acks(), b.committed_offsets()) == before
    assert _revive_all(b) == [m.queue_offset]  # revive still works and re-sends it


@pytest.mark.parametrize("field", ["group", "topic", "queue_id", "offset", "extra_info", "invisible_time"])
def test_null_change_invisible_header_field_is_system_error(field: str) -> None:
    """ChangeInvisibleTimeRequestHeader: all six fields @CFNotNull (both releases)."""
    b = make_broker("v5.0")
    m = _pop_one(b)
    args = dict(group="G", topic=m.ack_topic, queue_id=m.queue_id, offset=m.queue_offset, extra_info=m.extra_info,
                invisible_time=5000)
    args[field] = None
    assert b.change_invisible_time(**args).code == rc.SYSTEM_ERROR
    assert len(b.stored_checkpoints()) == 1  # only the pop's CK: nothing new written


@pytest.mark.parametrize("field", ["group", "topic"])
def test_null_pop_header_field_is_system_error(field: str) -> None:
    """PopMessageRequestHeader: consumerGroup and topic @CFNotNull (both releases)."""
    b = make_broker("v5.0")
    b.put_message("T", 0, b"m")
    req = PopRequest("T", "G", queue_id=0, invisible_time=INV)
    req = PopRequest(None, "G", queue_id=0) if field == "topic" else PopRequest("T", None, queue_id=0)  # type: ignore[arg-type]
    assert b.pop(req).result.code == rc.SYSTEM_ERROR
    assert not b.stored_checkpoints() and not b.committed_offsets()


@pytest.mark.parametrize("digits,value", [("\u0663", 3), ("\uff11\uff12", 12), ("-\u0967", -1), ("+\u09e8", 2)])
def test_unicode_decimal_digits_parse_like_long_value_of(digits: str, value: int) -> None:
    """ExtraInfoUtil#getCkQueueOffset → Long.valueOf → Long.parseLong reads each char with
    Character.digit(ch, 10), which accepts every Unicode decimal digit (Nd); getReviveQid →
    Integer.parseInt likewise. The model used to accept only ASCII digits."""
    parts = split(f"{digits} 1000 {INV} {digits} 0 broker-a 0 0")
    assert get_ck_queue_offset(parts) == value and get_revive_qid(parts) == value
    for bad in ("", "+", "-", "1_000", " 1", "1 ", "\u00b2", "\u2163", "0x10"):
        # '²' and 'Ⅳ' are digits/numbers but not Nd; Java rejects them, so does the model
        with pytest.raises(ExtraInfoError):
            get_ck_queue_offset([bad])


def test_ack_handle_with_unicode_digits_is_accepted() -> None:
    b = make_broker("v5.0")
    m = _pop_one(b)
    fields = m.extra_info.split(" ")
    fields[0] = "".join(chr(0x0660 + int(c)) for c in fields[0])  # Arabic-Indic digits
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, " ".join(fields)) == rc.SUCCESS
    assert _revive_all(b) == []  # it matched the CK


def _bad_invisible(handle: str) -> str:
    fields = handle.split(" ")
    fields[2] = "soon"
    return " ".join(fields)


def test_v50_buffer_merge_acks_before_parsing_invisible_time() -> None:
    """5.0.0 AckMessageProcessor#processRequest: addAk (line 189) returns before
    ExtraInfoUtil.getInvisibleTime (line 201): a buffered ack never parses field 2."""
    b = make_broker("v5.0", enable_pop_buffer_merge=True)
    m = _pop_one(b)
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, _bad_invisible(m.extra_info)) == rc.SUCCESS
    assert _revive_all(b) == []  # the bit was set: nothing to revive


def test_v50_unbuffered_ack_with_bad_invisible_time_is_system_error() -> None:
    """Same lines, buffer merge off: addAk is false, getInvisibleTime throws NumberFormatException
    before the put; the remoting layer answers SYSTEM_ERROR and nothing is written."""
    b = make_broker("v5.0", enable_pop_buffer_merge=False)
    m = _pop_one(b)
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, _bad_invisible(m.extra_info)) == rc.SYSTEM_ERROR
    assert not b.stored_acks()


def test_develop_parses_invisible_time_before_add_ak() -> None:
    """5.5.0 AckMessageProcessor#appendAck parses invisibleTime (line 219) before addAk (286)."""
    b = make_broker("v5.5", enable_pop_buffer_merge=True)
    m = _pop_one(b)
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, _bad_invisible(m.extra_info)) == rc.SYSTEM_ERROR
    assert _revive_all(b) == [m.queue_offset]


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_pop_time_plus_invisible_time_wraps_like_java_long(profile: str) -> None:
    """msgInner.setDeliverTimeMs(popTime + invisibleTime): Java long addition wraps (5.0.0
    AckMessageProcessor line 201; 5.5.0 appendAck line 305). A wrapped deliver time is in the
    past, so HookUtils#transformTimerMessage (deliverMs > now is false) puts the ACK straight
    into the revive topic instead of the timer."""
    b = make_broker(profile)
    m = _pop_one(b)
    fields = m.extra_info.split(" ")
    fields[2] = str(LONG_MAX)
    assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, " ".join(fields)) == rc.SUCCESS
    pop_time = int(fields[1])
    assert to_long(pop_time + LONG_MAX) < 0
    assert not [t for t in b.timer_pending() if t.tags == ACK_TAG]
    assert len(b.stored_acks()) == 1


def test_committed_offset_above_max_after_delete_and_recreate_is_java_behaviour() -> None:
    """AdminBrokerProcessor#deleteTopic (5.0.0; deleteTopicInBroker 5.5.0) cleans the topic
    config, the consumer offsets and the queues, but not PopBufferMergeService's commit queue;
    its scanCommitOffset → commitOffset (identical in both releases) then commits the old
    incarnation's nextBeginOffset, above the new queue's max offset. Java does the same. The next
    POP's getMessage answers OFFSET_OVERFLOW_BADLY with nextOffsetCorrection(offset, maxOffset)
    (DefaultMessageStore#getMessage, both releases' bytecode) and popMsgFromQueue commits that:
    a message put to the re-created queue before that POP is skipped (spec/broker.md)."""
    for merge in (False, True):
        b = make_broker("v5.5", enable_pop_buffer_merge=merge)
        for _ in range(3):
            b.put_message("T", 0, b"m")
        msgs = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result.messages
        assert len(msgs) == 3
        if merge:  # a buffered CK is committed once it is done: ack it while the topic exists
            for m in msgs:
                assert b.ack("G", m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) == rc.SUCCESS
        b.delete_topic("T")
        b.create_topic("T", 2)
        b.buffer_merge_scan()
        assert b.committed_offset("G", "T", 0) == 3 > b.max_offset("T", 0) == 0
        b.put_message("T", 0, b"new")
        again = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result
        assert again.messages == () and b.committed_offset("G", "T", 0) == 1  # offset 0 skipped
