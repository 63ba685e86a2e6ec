"""ChangeInvisibleTimeProcessor: a new one-message CK, then an ack of the old handle.

Java order (rocketmq-all-5.0.0): checks as for ack; parse the handle; write the NEW CK
straight to the revive topic (no buffer) with popTime = now; then ack the original handle
(buffer or ACK message). There is no check that the handle is still un-acked or that
invisibleTime > 0: changing an acked message's invisible time schedules it for redelivery
(spec/broker.md, oddity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.broker import extra_info as ei
from reference.broker.ack_processor import check_queue_and_offset, header_fields_missing, parse_ack, put_ack
from reference.broker.checkpoint import PopCheckPoint, ck_queue_id
from reference.broker.keys import POP_ORDER_REVIVE_QUEUE
from reference.common import response_code as rc
from reference.common.clock import EPOCH_ZERO_MS
from reference.common.pop import ChangeInvisibleResult

if TYPE_CHECKING:
    from reference.broker.context import BrokerContext


def _change_invisible_time_for_order(broker: "BrokerContext", group: str, topic: str, queue_id: int, offset: int,
                                     parts: list[str], invisible_time: int) -> ChangeInvisibleResult:
    """5.5.0 ChangeInvisibleTimeProcessor#processChangeInvisibleTimeForOrder: below the committed
    offset a SUCCESS with an empty header (the client's handle built from it: popTime the epoch,
    the rest 0); else (under the queue lock, which a model step never finds held mid-visit)
    updateNextVisibleTime(now + invisibleTime) and answer the ORIGINAL popTime with
    invisibleTime = nextVisibleTime - popTime (the handle stays that pop's)."""
    try:
        pop_time = ei.get_pop_time(parts)
    except ValueError:
        return ChangeInvisibleResult(rc.SYSTEM_ERROR)
    if offset < broker.offsets.query_offset(group, topic, queue_id):
        # the header's popTime, invisibleTime and reviveQid stay 0 (primitive longs), and the
        # client builds its new handle from them all the same (MQClientAPIImpl
        # #changeInvisibleTimeAsync, 5.5.0:1018-1026): a non-orderly handle whose popTime is the
        # epoch (v5.5 corpus seed 101 of 26 November 2026, `.response.handle.invisibleTime`:
        # 17000 vs 0)
        return ChangeInvisibleResult(rc.SUCCESS, EPOCH_ZERO_MS, 0, 0, ei.build_extra_info(
            offset, EPOCH_ZERO_MS, 0, 0, topic, broker.config.broker_name, queue_id, offset))
    next_visible_time = broker.clock.now() + invisible_time
    broker.order_info.update_next_visible_time(topic, group, queue_id, offset, pop_time, next_visible_time)
    new_invisible = next_visible_time - pop_time
    # The client builds the new handle with the message offset as ckQueueOffset (as below).
    handle = ei.build_extra_info(offset, pop_time, new_invisible, POP_ORDER_REVIVE_QUEUE,
                                 topic, broker.config.broker_name, queue_id, offset)
    return ChangeInvisibleResult(rc.SUCCESS, pop_time, new_invisible, POP_ORDER_REVIVE_QUEUE, handle)


def change_invisible_time(broker: "BrokerContext", group: str, topic: str, queue_id: int, offset: int,
                          extra_info: str | None, invisible_time: int) -> ChangeInvisibleResult:
    """processRequest of CHANGE_MESSAGE_INVISIBLETIME."""
    if header_fields_missing(group, topic, queue_id, offset, extra_info, invisible_time):
        return ChangeInvisibleResult(rc.SYSTEM_ERROR)
    code = check_queue_and_offset(broker, topic, queue_id, offset)
    if code != rc.SUCCESS:
        return ChangeInvisibleResult(code)
    if broker.config.change_invisible_max_offset_exclusive and \
            offset >= broker.store.get_max_offset_in_queue(topic, queue_id):
        # 5.5.0 ChangeInvisibleTimeProcessor#processRequestAsync: `offset >= maxOffset`.
        return ChangeInvisibleResult(rc.NO_MESSAGE)
    try:
        # appendCheckPoint's arguments are parsed before anything is written.
        parts = ei.split(extra_info)
        revive_qid = ei.get_revive_qid(parts)
        broker_name = ei.get_broker_name(parts)
    except ValueError:
        return ChangeInvisibleResult(rc.SYSTEM_ERROR)
    if revive_qid == POP_ORDER_REVIVE_QUEUE and broker.config.order_info_queue_level:
        return _change_invisible_time_for_order(broker, group, topic, queue_id, offset, parts, invisible_time)
    # 5.0.0 has no orderly branch: an orderly handle gets a CK in revive queue 999, which no
    # revive service reads, and its "ack" goes there too; the order info is untouched.
    now = broker.clock.now()
    # The F2 / F3 switches are read only where they decide (attribution's consulted()): the
    # handle's times are parsed first, and a parse failure matters only with a switch off.
    try:
        old_pop_time, old_invisible_time = ei.get_pop_time(parts), ei.get_invisible_time(parts)
    except ValueError:
        old_pop_time = old_invisible_time = None
    if old_pop_time is None or old_invisible_time is None:
        if not broker.config.change_invisible_accepts_expired or not broker.config.change_invisible_same_ms_key:
            return ChangeInvisibleResult(rc.SYSTEM_ERROR)
    else:
        if now >= old_pop_time + old_invisible_time and not broker.config.change_invisible_accepts_expired:
            return ChangeInvisibleResult(rc.NO_MESSAGE)  # mechanism switch for F2
        if now <= old_pop_time and not broker.config.change_invisible_same_ms_key:
            now = old_pop_time + 1  # mechanism switch for F3
    ck = PopCheckPoint(bit_map=0, num=1, pop_time=now, invisible_time=invisible_time, start_offset=offset, cid=group,
                       topic=topic, queue_id=ck_queue_id(queue_id, broker.config.ck_queue_id_is_byte),
                       broker_name=broker_name)
    ck.add_diff(0)
    if broker.put_ck_message(ck, revive_qid, "change_invisible_ck") < 0:
        # "change Invisible, put new ck error" (5.0.0 processRequest:103-109; 5.5.0
        # appendCheckPointThenAckOrigin completes false, processRequestAsync:183): SYSTEM_ERROR,
        # the old handle is not acked and stays valid.
        return ChangeInvisibleResult(rc.SYSTEM_ERROR)
    try:
        # ackOrigin (5.0.0 and 5.5.0) calls addAk before ExtraInfoUtil.getInvisibleTime.
        old_ack, _, _ = parse_ack(group, topic, queue_id, offset, extra_info, with_invisible_time=False)
        put_ack(broker, old_ack, revive_qid, None, extra_info)
    except ValueError:
        # ackOrigin's exception is caught and logged: the new CK stays, the old is not acked.
        pass
    handle = ei.build_extra_info(offset, now, invisible_time, revive_qid, topic, broker.config.broker_name, queue_id,
                                 offset)
    if revive_qid == POP_ORDER_REVIVE_QUEUE and old_pop_time is not None:
        broker.note_orderly_handle_renewed(topic, queue_id, old_pop_time, now)
    return ChangeInvisibleResult(rc.SUCCESS, now, invisible_time, revive_qid, handle)
