"""AckMessageProcessor (single ack) and, where the profile has it, batch ack.

Checks run in Java's order: topic exists (TOPIC_NOT_EXIST), queueId in range
(MESSAGE_ILLEGAL), offset within [minOffset, maxOffset] (NO_MESSAGE); then the receipt handle
is parsed. A malformed handle throws in Java; the remoting layer answers SYSTEM_ERROR and
nothing was written -- the model does the same. The consumer group is NOT checked (v5.0).
An ack the buffer accepts only sets a bit; otherwise an ACK message goes to the revive topic
through the timer, delivered at popTime + invisibleTime of the handle. Double acks and acks
after revive answer SUCCESS (they only add an ACK message nobody matches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.broker import extra_info as ei
from reference.broker.checkpoint import AckMsg, BatchAckMsg
from reference.broker.keys import ACK_TAG, BATCH_ACK_TAG, POP_ORDER_REVIVE_QUEUE
from reference.common import response_code as rc
from reference.common.clock import wall_clock_ms
from reference.common.javalang import hash_map_order, to_long
from reference.common.message import MessageExt
from reference.common.pop import AckEntry

if TYPE_CHECKING:
    from reference.broker.context import BrokerContext


def check_queue_and_offset(broker: "BrokerContext", topic: str, queue_id: int, offset: int) -> int:
    """The checks shared by ack and changeInvisibleTime; SUCCESS when they pass."""
    read_queue_nums = broker.topics.get(topic)
    if read_queue_nums is None:
        return rc.TOPIC_NOT_EXIST
    if queue_id >= read_queue_nums or queue_id < 0:
        return rc.MESSAGE_ILLEGAL
    min_offset = broker.store.get_min_offset_in_queue(topic, queue_id)
    max_offset = broker.store.get_max_offset_in_queue(topic, queue_id)
    if offset < min_offset or offset > max_offset:
        return rc.NO_MESSAGE
    return rc.SUCCESS


def header_fields_missing(*fields: object) -> bool:
    """RemotingCommand#decodeCommandCustomHeader → checkFields: a null @CFNotNull field throws
    RemotingCommandException("the custom field <...> is null") before the processor runs, and
    NettyRemotingAbstract#processRequestCommand answers SYSTEM_ERROR. Every field of
    AckMessageRequestHeader and ChangeInvisibleTimeRequestHeader is @CFNotNull (5.0.0, 5.5.0)."""
    return any(f is None for f in fields)


def parse_ack(group: str, topic: str, queue_id: int, offset: int, extra_info: str | None,
              with_invisible_time: bool = True) -> tuple[AckMsg, int, int | None]:
    """Build the AckMsg from the handle; returns (ack, reviveQid, invisibleTime).

    Raises ExtraInfoError on a malformed handle, before anything is written. With
    ``with_invisible_time`` False field 2 is not read (None): 5.0.0 reads it only after addAk.
    """
    parts = ei.split(extra_info)
    ack = AckMsg(ack_offset=offset, start_offset=ei.get_ck_queue_offset(parts), consumer_group=group, topic=topic,
                 queue_id=queue_id, pop_time=ei.get_pop_time(parts), broker_name=ei.get_broker_name(parts))
    revive_qid = ei.get_revive_qid(parts)
    invisible_time = ei.get_invisible_time(parts) if with_invisible_time else None
    return ack, revive_qid, invisible_time


def ack_message(broker: "BrokerContext", group: str, topic: str, queue_id: int, offset: int,
                extra_info: str | None) -> int:
    """processRequest of ACK_MESSAGE; returns the response code."""
    if header_fields_missing(group, topic, queue_id, offset, extra_info):
        return rc.SYSTEM_ERROR
    code = check_queue_and_offset(broker, topic, queue_id, offset)
    if code != rc.SUCCESS:
        return code
    try:
        ack, revive_qid, invisible_time = parse_ack(group, topic, queue_id, offset, extra_info,
                                                    broker.config.ack_parses_invisible_time_first)
    except ValueError:
        return rc.SYSTEM_ERROR
    if revive_qid == POP_ORDER_REVIVE_QUEUE:
        if invisible_time is None:
            # 5.0.0 parses field 2 only on the non-orderly path; 5.5.0 appendAck parsed it above.
            invisible_time = 0
        return ack_orderly(broker, group, topic, queue_id, offset, ack.pop_time, invisible_time)
    try:
        put_ack(broker, ack, revive_qid, invisible_time, extra_info)
    except ValueError:
        # 5.0.0: addAk refused the ack and getInvisibleTime threw (AckMessageProcessor
        # #processRequest line 201): nothing was written, the remoting layer says SYSTEM_ERROR.
        return rc.SYSTEM_ERROR
    return rc.SUCCESS


def ack_orderly(broker: "BrokerContext", group: str, topic: str, queue_id: int, offset: int, pop_time: int,
                invisible_time: int) -> int:
    """AckMessageProcessor's orderly branch (5.0.0 processRequest:148-185, 5.5.0 #ackOrderly).

    An ack below the committed offset is a quiet SUCCESS. Java spins on the queue lock
    (``while (!tryLock(lockKey))``); a model step never interleaves inside a pop's visit, so
    the ack runs as if the pop had released it. commitAndNext's answer: >= 0 commit it and
    wake long polling (5.5.0 only when the queue is no longer blocked), -1 MESSAGE_ILLEGAL,
    -2 nothing to do (5.0.0: batch not done; 5.5.0: a handle of an earlier pop).
    """
    if offset < broker.offsets.query_offset(group, topic, queue_id):
        return rc.SUCCESS
    if broker.is_stale_orderly_handle(topic, queue_id, pop_time):
        return rc.SUCCESS  # F12's cause removed (switch off): a handle of the deleted topic commits nothing
    next_offset = broker.order_info.commit_and_next(topic, group, queue_id, offset, pop_time)
    if next_offset > -1:
        # 5.5.0 ackOrderly:421 commits only while no admin reset of the queue is pending
        if not (broker.config.server_side_reset_offset and broker.offsets.has_offset_reset(topic, group, queue_id)):
            broker.offsets.commit_offset("ackOrderly", group, topic, queue_id, next_offset)
        if not broker.config.order_info_queue_level or \
                not broker.order_info.check_block(None, topic, group, queue_id, invisible_time):
            broker.pop_polling.notify_message_arriving(topic, group, queue_id)
    elif next_offset == -1:
        return rc.MESSAGE_ILLEGAL
    return rc.SUCCESS


def put_ack(broker: "BrokerContext", ack: AckMsg, revive_qid: int, invisible_time: int | None,
            extra_info: str | None = None) -> None:
    """Merge the ack in the buffer, or write an ACK message (timer: popTime + invisibleTime,
    a Java long addition that wraps). ``invisible_time`` None: parsed from ``extra_info`` only
    when the buffer refuses the ack (5.0.0's order; ExtraInfoError escapes)."""
    if invisible_time is None and not broker.buffer_merge.would_add_ak(revive_qid, ack):
        invisible_time = ei.get_invisible_time(ei.split(extra_info))
    broker.acks_received.append(ack)
    if broker.buffer_merge.add_ak(revive_qid, ack):
        return
    assert invisible_time is not None
    msg = MessageExt(topic=broker.revive_topic, queue_id=revive_qid, body=broker.ack_json(ack).encode(), tags=ACK_TAG,
                     deliver_time_ms=to_long(ack.pop_time + invisible_time), born_timestamp=broker.clock.now())
    # A store put failure is only logged ("put ack msg error", AckMessageProcessor:209 at 5.0.0,
    # handlePutMessageResult:397 at 5.5.0): the answer stays SUCCESS and the ack is lost.
    broker.put_revive_message(msg, "ack")


def _batch_key(retry: str, queue_id: int, start: int, pop_time: int) -> str:
    """MQClientAPIImpl#batchAckMessageAsync's map key: retry@queueId@startOffset@popTime."""
    return "@".join((retry, str(queue_id), str(start), str(pop_time)))


# BATCH_ACK_MESSAGE bodies no client sends (MQClientAPIImpl#batchAckMessageAsync sends a body
# with one BatchAck per handle group, and no request for an empty list): no body, a body
# without its acks list, a body whose list is empty.
BATCH_ACK_BODY_KINDS: tuple[str, ...] = ("none", "noAcks", "emptyAcks")


def batch_ack_without_acks(broker: "BrokerContext", body: str) -> int:
    """BATCH_ACK_MESSAGE with a ``body`` of BATCH_ACK_BODY_KINDS: AckMessageProcessor
    #processRequest (5.5.0:175-182) decodes a body only when there is one and answers
    NO_MESSAGE when it, its acks or the list is missing; nothing is written. v5.0 registers no
    processor for the code: REQUEST_CODE_NOT_SUPPORTED."""
    if body not in BATCH_ACK_BODY_KINDS:
        raise ValueError(f"unknown batch ack body {body!r}")
    if not broker.config.supports_batch_ack:
        return rc.REQUEST_CODE_NOT_SUPPORTED
    return rc.NO_MESSAGE


def batch_ack(broker: "BrokerContext", group: str, entries: list[AckEntry]) -> list[int]:
    """BATCH_ACK_MESSAGE; one code per entry (the one response's code, repeated).

    v5.0 has no such request: REQUEST_CODE_NOT_SUPPORTED. Without ``batch_ack_as_batch_ack_msg``
    every entry is processed as a single ack. With it (5.5.0), as the client and broker do:
    MQClientAPIImpl#batchAckMessageAsync groups the handles by retry@queueId@ckQueueOffset@
    popTime into BatchAcks (a BitSet of queueOffset - ckQueueOffset; a malformed handle throws
    in the client and nothing is sent: SYSTEM_ERROR here); AckMessageProcessor#appendAck then,
    per BatchAck, keeps the offsets inside [minOffset, maxOffset] (no topic or queueId check),
    builds one BatchAckMsg (ackOffset -1) and either merges it in the buffer (addAk sets every
    bit) or puts one BATCH_ACK_TAG message delivered at popTime + invisibleTime. The response
    is SUCCESS (NO_MESSAGE for an empty body) whatever each batch did.
    """
    if not broker.config.supports_batch_ack:
        return [rc.REQUEST_CODE_NOT_SUPPORTED for _ in entries]
    if not broker.config.batch_ack_as_batch_ack_msg:
        return [ack_message(broker, group, e.topic, e.queue_id, e.offset, e.extra_info) for e in entries]
    if not entries:
        return []  # the client sends no request for an empty list (Java: NO_MESSAGE if it did)
    if header_fields_missing(group, *(f for e in entries for f in (e.topic, e.queue_id, e.extra_info))):
        return [rc.SYSTEM_ERROR for _ in entries]
    batches: dict[str, list] = {}
    java_keys: dict[str, str] = {}
    try:
        for e in entries:
            parts = ei.split(e.extra_info)
            fields = (ei.get_retry(parts), ei.get_queue_id(parts), ei.get_ck_queue_offset(parts))
            key = _batch_key(*fields, ei.get_pop_time(parts))
            java_keys[key] = _batch_key(*fields, wall_clock_ms(ei.get_pop_time(parts)))
            start = ei.get_ck_queue_offset(parts)
            batch = batches.setdefault(key, [e.topic, ei.get_queue_id(parts), ei.get_revive_qid(parts), start,
                                             ei.get_pop_time(parts), ei.get_invisible_time(parts),
                                             ei.get_broker_name(parts), set()])
            bit = ei.get_queue_offset(parts) - start
            if not 0 <= bit <= 0x7FFFFFFF:
                raise ei.ExtraInfoError("BitSet.set: negative index")  # IndexOutOfBoundsException
            batch[7].add(bit)
    except ValueError:
        return [rc.SYSTEM_ERROR for _ in entries]
    code = rc.SUCCESS
    # the request body lists the BatchAcks in the client's HashMap order (MQClientAPIImpl
    # #batchAckMessageAsync: `new ArrayList<>(batchAckMap.values())`); appendAck puts them in
    # that order, which decides which of them a pending store put failure refuses (lockstep)
    # in Java the handle's popTime is on the broker's epoch: the key the client's HashMap hashes
    for key in hash_map_order(list(batches), java_keys.__getitem__):
        topic, queue_id, revive_qid, start, pop_time, invisible_time, broker_name, bits = batches[key]
        min_offset = broker.store.get_min_offset_in_queue(topic, queue_id)
        max_offset = broker.store.get_max_offset_in_queue(topic, queue_id)
        offsets = tuple(start + i for i in sorted(bits) if min_offset <= start + i <= max_offset)
        if revive_qid == POP_ORDER_REVIVE_QUEUE:
            # appendAck: ackOrderly per offset; they share one response, so a MESSAGE_ILLEGAL
            # of any of them stays the answer.
            for o in offsets:
                if ack_orderly(broker, group, topic, queue_id, o, pop_time, invisible_time) != rc.SUCCESS:
                    code = rc.MESSAGE_ILLEGAL
            continue
        if not offsets:
            continue  # nothing in range
        # appendAck's brokerName is the request body's (the client's first handle's); one broker here
        batch_msg = BatchAckMsg(offsets, start, group, topic, queue_id, pop_time, broker_name, ack_offset=-1)
        broker.acks_received.extend(batch_msg.to_acks())
        if broker.buffer_merge.add_ak(revive_qid, batch_msg):
            continue
        msg = MessageExt(topic=broker.revive_topic, queue_id=revive_qid, body=batch_msg.to_json().encode(),
                         tags=BATCH_ACK_TAG, deliver_time_ms=to_long(pop_time + invisible_time),
                         born_timestamp=broker.clock.now())
        broker.put_revive_message(msg, "ack")  # a failed put is only logged (handlePutMessageResult)
    return [code for _ in entries]
