"""PopMessageProcessor: processRequest, popMsgFromQueue, getPopOffset, appendCheckPoint, polling.

A pop is a ``PopOperation`` advanced by ``step()``. Its steps follow the points where the Java
thread can be overtaken by other threads:
1. validation, ``random.nextInt(100)``, reviveQid and ``popTime = now`` (nothing read yet);
2. each queue visit (popMsgFromQueue) under that queue's lock, which stays held until
3. the next step releases it (so a concurrent pop or offset commit sees it held).
After the last visit the response is built; an empty result either answers at once
(POLLING_TIMEOUT / POLLING_FULL) or parks the request for long polling. A parked request is
woken by notifyMessageArriving (a put) or by the polling service's timeout check, and then
runs processRequest again from step 1 with a new popTime, exactly as Java re-executes it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Iterator

from reference.broker.checkpoint import PopCheckPoint, ck_queue_id
from reference.broker.consumer_order_info import OrderInfoNullError
from reference.broker.extra_info import (build_extra_info, build_msg_offset_info, build_start_offset_info,
                                         get_start_offset_info_map_key, joined)
from reference.broker.keys import (POP_ORDER_REVIVE_QUEUE, RETRY_GROUP_TOPIC_PREFIX, build_lock_key, build_polling_key,
                                   build_pop_retry_topic)
from reference.broker.store import GetMessageResult, GetMessageStatus
from reference.common import response_code as rc
from reference.common.javalang import to_byte, to_int, to_long
from reference.common.pop import INIT_MODE_MIN, PoppedMessage, PopRequest, PopResult

if TYPE_CHECKING:
    from reference.broker.context import BrokerContext
    from reference.common.message import MessageExt


def _client_offsets(r: GetMessageResult) -> list[int]:
    """The handle offset the client gives each message of one queue's read:
    MQClientAPIImpl#processPopResponse (client 5.0.0:1082-1114, 5.5.0 the same) lists the
    response's stored queue offsets per queue in response order (sortMap) and takes msgOffsetInfo, the
    consume-queue indexes the broker read (getMessageQueueOffset), at the index of the first
    equal one (indexOf). They differ from the stored offsets when the store read another
    message's bytes (MessageStore._read, position 0) and, on 5.0.0, after a burnt queue offset
    (MessageStore.burn_queue_offset): the message then carries N + 1, its handle N."""
    stored = [m.queue_offset for m in r.messages]
    return [r.message_queue_offsets[stored.index(o)] for o in stored]


# ExpressionType#isTagType: null, "" or TAG (the model's None is the header's absent type).
TAG_TYPES = (None, "", "TAG")


class PopOperation:
    """One POP request in flight; ``step()`` runs it to its next interleaving point."""

    def __init__(self, broker: "BrokerContext", request: PopRequest, op_id: int) -> None:
        self.broker = broker
        self.request = request
        self.op_id = op_id
        born = request.born_time
        if not born or not broker.config.pop_keeps_client_born_time:
            born = broker.clock.now()  # unset (0), or 5.0.0: the broker's arrival time
        self.born_time = born
        self.result: PopResult | None = None
        self.parked = False
        self.pop_time: int | None = None
        # popMsgFromQueue calls so far (queue visits, retry queues included), reset by a wake-up
        self.visits = 0
        self._held_lock: str | None = None
        # commit-log files of the messages read so far: held until the response is built
        # (getMessageResult.release() in readGetMessageResult, both releases)
        self._held_files: list[int] = []
        self._gen: Iterator[None] | None = self._process_request()
        # the client's connection (Channel#isActive): closed by the client's exit (close_channel)
        self.channel_active = True
        # PopRequest#op of its latest park (PopLongPollingService#polling's numbering)
        self.park_seq = 0

    @property
    def done(self) -> bool:
        """The response has been produced (``result`` is set)."""
        return self.result is not None

    @property
    def in_flight(self) -> bool:
        """Being served by a broker thread: begun or woken, not yet answered, not parked."""
        return self._gen is not None and not self.parked

    @property
    def expired(self) -> int:
        """PopRequest#getExpired: bornTime + pollTime."""
        return self.born_time + self.request.poll_time

    def is_timeout(self, now: int) -> bool:
        """PopRequest#isTimeout: ``now > expired - 50``."""
        return now > self.expired - 50

    def step(self) -> bool:
        """Run to the next interleaving point; False when there is nothing to run (done/parked)."""
        if self._gen is None:
            return False
        if self._held_lock is not None:
            self.broker.queue_locks.unlock(self._held_lock)
            self._held_lock = None
        try:
            next(self._gen)
        except StopIteration:
            self._gen = None
        return True

    def run_to_end(self) -> PopResult | None:
        """Step until done or parked (tests and simple drivers)."""
        while self.step():
            pass
        return self.result

    def wake(self) -> None:
        """wakeUp: run processRequest again (from step 1)."""
        self.parked = False
        self.pop_time = None  # the re-run takes a new popTime at its first step
        self.visits = 0
        self._gen = self._process_request()

    def close_channel(self) -> None:
        """The client's connection closes: a parked request stays in the polling map, but no
        wake-up re-runs it (wakeUp and notifyMessageArriving's inactive-channel tests)."""
        self.channel_active = False

    def abort(self) -> None:
        """Broker restart: the request and any lock it holds are gone."""
        if self._held_lock is not None:
            self.broker.queue_locks.unlock(self._held_lock)
            self._held_lock = None
        self._held_files.clear()  # the JVM is gone; the store's recovery drops every hold
        self._gen = None
        self.parked = False

    # -- processRequest ---------------------------------------------------------------------
    def _finish(self, code: int, **fields: object) -> None:
        self.result = PopResult(code, **fields)  # type: ignore[arg-type]
        for f in self._held_files:
            self.broker.store.release_file(f)
        self._held_files.clear()

    def _hold(self, r: GetMessageResult, is_retry: bool, keep: bool = True) -> None:
        """The read's mapped buffers stay held by this POP: popMsgFromQueue adds them to the
        response's getMessageResult (5.0.0:552-556, 5.5.0:843-846), released when the response
        is built. 5.5.0 re-encodes a retry message into a heap buffer and releases the mapped
        one at once (popResponseReturnActualRetryTopic false, 5.5.0:847-850). ``keep`` False:
        never released (5.5.0's return on a refused CK, 5.5.0:818-819, drops the result
        without releasing it; only destroyMapedFileIntervalForcibly frees its files)."""
        b = self.broker
        if is_retry and b.config.pop_retry_answers_request_topic:
            return
        for m in r.messages:
            f = b.store.file_of(m)
            b.store.hold_file(f)
            if keep:
                self._held_files.append(f)

    def _process_request(self) -> Iterator[None]:
        b, req, cfg = self.broker, self.request, self.broker.config
        if req.group is None or req.topic is None:
            # PopMessageRequestHeader: consumerGroup and topic are @CFNotNull; decoding the
            # header throws and the remoting layer answers SYSTEM_ERROR (see ack_processor).
            self._finish(rc.SYSTEM_ERROR)
            return
        if b.clock.now() - self.born_time - req.poll_time > 500:
            # PopMessageRequestHeader#isTimeoutTooMuch, processRequest's first check: a parked
            # request woken more than 500 ms after its poll time ended (the model's clients send
            # bornTime = now, so only a re-run gets here) answers with an empty header
            self._finish(rc.POLLING_TIMEOUT)
            return
        # Request validation (spec/broker.md "Request validation"). The header's checkFields is
        # empty: no bound on queueId below, on maxMsgNums below 1, on invisibleTime or pollTime.
        # The broker's permission is not modelled (always readable); the topic's and the group's are.
        refused = rc.INVALID_PARAMETER if cfg.pop_refusal_invalid_parameter else rc.SYSTEM_ERROR
        if req.max_msg_nums > cfg.pop_max_msg_nums:
            self._finish(refused)  # "pop message's num is greater than 32"
            return
        topic_cfg = b.topics.get(req.topic)
        if topic_cfg is None:
            self._finish(rc.TOPIC_NOT_EXIST)
            return
        if req.topic in b.unreadable_topics:
            self._finish(rc.NO_PERMISSION)  # PermName.isReadable(topicConfig.getPerm()) (5.0.0:281, 5.5.0:290)
            return
        if req.queue_id >= topic_cfg:
            self._finish(refused)  # "queueId[%d] is illegal"; a queueId below -1 reads every queue
            return
        if not b.find_group(req.group):  # findSubscriptionGroupConfig: auto-creates by default
            self._finish(rc.SUBSCRIPTION_GROUP_NOT_EXIST)
            return
        if req.group in b.consume_disabled:
            self._finish(rc.NO_PERMISSION)  # !subscriptionGroupConfig.isConsumeEnable() (5.0.0:306, 5.5.0:316)
            return
        if req.exp and req.exp_type not in TAG_TYPES:
            # FilterAPI.build keeps the type; ConsumerFilterManager#build asks FilterFactory for
            # it (5.0.0 processRequest:313-325, 5.5.0 :342-350): no filter of an unknown type
            # (a NullPointerException, caught) answers null → SUBSCRIPTION_PARSE_FAILED.
            if req.exp_type == "SQL92":
                raise ValueError("a SQL92 POP filter is not modelled (the model filters by tags)")
            self._finish(rc.SUBSCRIPTION_PARSE_FAILED)
            return
        if cfg.pop_negative_max_msg_nums_throws and req.max_msg_nums < 0:
            self._finish(rc.SYSTEM_ERROR)  # 5.5.0: new ArrayList<>(negative) throws (see config)
            return
        random_q = b.rng.next_int(100)
        if req.order:
            # An orderly pop takes no ckMessageNumber: its handles name POP_ORDER_REVIVE_QUEUE.
            revive_qid = POP_ORDER_REVIVE_QUEUE
        else:
            # (int) Math.abs(ckMessageNumber.getAndIncrement() % reviveQueueNum)
            revive_qid = to_int(abs(to_long(b.next_ck_message_number()) % cfg.revive_queue_num))
        messages: list[PoppedMessage] = []
        start_info: list[str] = []
        msg_info: list[str] = []
        self._order_counts: list[str] = []
        rest = [0]
        pop_time = b.clock.now()
        self.pop_time = pop_time
        yield  # popTime taken; queues not read yet

        if cfg.retry_first_by_probability:
            need_retry = random_q < cfg.pop_from_retry_probability
        else:
            need_retry = random_q % 5 == 0
        if req.order:
            need_retry = False  # `needRetry && !requestHeader.isOrder()` (both releases)
        retry_topic = build_pop_retry_topic(req.topic, req.group)

        def visit(is_retry: bool, queue_id: int) -> None:
            self.visits += 1
            self._pop_msg_from_queue(is_retry, messages, queue_id, rest, revive_qid, pop_time, start_info, msg_info)

        if need_retry:
            retry_queues = b.topics.get(retry_topic)
            if retry_queues is not None:
                for i in range(retry_queues):
                    visit(True, ((retry_queues - 1 - i if cfg.pop_queue_order_desc else i) + random_q) % retry_queues)
                    yield
        if req.queue_id < 0:
            n = topic_cfg
            for i in range(n):
                visit(False, ((n - 1 - i if cfg.pop_queue_order_desc else i) + random_q) % n)
                yield
        else:
            visit(False, req.queue_id)
            yield
        # F14's switch off (counterfactual): an orderly POP reads the retry topic too
        skips_retry = req.order and cfg.orderly_pop_skips_retry
        if not need_retry and len(messages) < req.max_msg_nums and not skips_retry:
            retry_queues = b.topics.get(retry_topic)
            if retry_queues is not None:
                for i in range(retry_queues):
                    visit(True, ((retry_queues - 1 - i if cfg.pop_queue_order_desc else i) + random_q) % retry_queues)
                    yield
        if any(pm.message.queue_id != pm.queue_id for pm in messages):
            messages[:] = self._client_handles(messages, start_info, msg_info, pop_time, revive_qid)
        header = dict(pop_time=pop_time, invisible_time=req.invisible_time, revive_qid=revive_qid,
                      rest_num=rest[0], start_offset_info=joined(start_info), msg_offset_info=joined(msg_info),
                      order_count_info=joined(self._order_counts) if req.order else None)
        if messages:
            self._finish(rc.SUCCESS, messages=tuple(messages), **header)
            if rest[0] > 0:
                b.pop_polling.notify_message_arriving(req.topic, req.group, req.queue_id)
            return
        polling = b.pop_polling.polling(self)
        if polling == "SUC":
            self.parked = True
            return
        code = rc.POLLING_FULL if polling == "FULL" else rc.POLLING_TIMEOUT
        self._finish(code, **header)

    def _client_handles(self, messages: list[PoppedMessage], start_info: list[str], msg_info: list[str],
                        pop_time: int, revive_qid: int) -> list[PoppedMessage]:
        """The response as the client reads it when a read returned another queue's bytes
        (F11's position 0 of a deleted file: the first remaining file's first message).
        MQClientAPIImpl#processPopResponse (client 5.0.0:1082-1113, 5.5.0 the same) keys each
        message by its decoded topic and queueId, not by the queue the broker read: the sorted
        offsets, startOffsetInfo and msgOffsetInfo are looked up under that key, and a key the
        header does not name (msgOffsetInfo.get(key) null), or names with fewer offsets than it
        decoded messages of it (get(index) out of bounds), throws: no handle, as for 5.0.0's
        orderly messages after a restart. A message whose handle the broker wrote (5.5.0's
        retry copy, PROPERTY_POP_CK; its topic is not its ack topic) keeps it and is not mapped."""
        cfg = self.broker.config

        def keyed(entries: list[str]) -> dict[str, str]:
            return {f"{t}@{q}": v for t, q, v in (e.split(" ") for e in entries)}

        starts, offsets = keyed(start_info), keyed(msg_info)
        sort_map: dict[str, list[int]] = {}
        for pm in messages:
            if pm.message.topic == pm.ack_topic:
                sort_map.setdefault(get_start_offset_info_map_key(pm.message.topic, pm.message.queue_id),
                                    []).append(pm.message.queue_offset)
        out = []
        for pm in messages:
            m = pm.message
            if m.topic != pm.ack_topic:
                out.append(pm)
                continue
            key = get_start_offset_info_map_key(m.topic, m.queue_id)
            index = sort_map[key].index(m.queue_offset)
            handle, queue_offset = "", None
            if key in offsets and key in starts and index < len(offsets[key].split(",")):
                queue_offset = int(offsets[key].split(",")[index])
                handle = build_extra_info(int(starts[key]), pop_time, self.request.invisible_time, revive_qid,
                                          m.topic, cfg.broker_name, m.queue_id, queue_offset)
            out.append(PoppedMessage(m, pm.ack_topic, m.queue_id, m.queue_offset, handle, queue_offset))
        return out

    # -- popMsgFromQueue ----------------------------------------------------------------------
    def _pop_msg_from_queue(self, is_retry: bool, messages: list[PoppedMessage], queue_id: int, rest: list[int],
                            revive_qid: int, pop_time: int, start_info: list[str], msg_info: list[str]) -> None:
        b, req = self.broker, self.request
        topic = build_pop_retry_topic(req.topic, req.group) if is_retry else req.topic
        lock_key = build_lock_key(topic, req.group, queue_id)
        offset = self._get_pop_offset(topic, queue_id, False, lock_key)
        if not b.queue_locks.try_lock(lock_key):
            if not (req.order and b.config.order_info_queue_level):
                # 5.5.0 popMsgFromQueue leaves an orderly pop's restNum alone here.
                rest[0] = b.store.get_max_offset_in_queue(topic, queue_id) - offset + rest[0]
            return
        self._held_lock = lock_key
        offset = self._get_pop_offset(topic, queue_id, True, lock_key)
        if req.order and b.config.order_check_block and b.order_info.check_block(
                req.attempt_id, topic, req.group, queue_id, req.invisible_time):
            # checkBlock: the queue's previous batch is still in flight. 5.0.0 returns the
            # backlog (`maxOffset - offset + restNum`, no assignment); 5.5.0 restNum unchanged.
            if not b.config.order_info_queue_level:
                rest[0] = b.store.get_max_offset_in_queue(topic, queue_id) - offset + rest[0]
            return
        if not req.order and not b.config.concurrent_pop_ignores_orderly_hold \
                and b.order_info.holds_batch(topic, req.group, queue_id):
            rest[0] = b.store.get_max_offset_in_queue(topic, queue_id) - offset + rest[0]
            return  # F18 removed: the held orderly batch is not served to a non-orderly POP
        if len(messages) >= req.max_msg_nums:
            rest[0] = b.store.get_max_offset_in_queue(topic, queue_id) - offset + rest[0]
            return
        filt = None if req.tags is None else (lambda m, tags=req.tags: m.tags in tags)
        r = b.store.get_message(req.group, topic, queue_id, offset, req.max_msg_nums - len(messages), filt)
        if r.status in (GetMessageStatus.OFFSET_TOO_SMALL, GetMessageStatus.OFFSET_OVERFLOW_BADLY,
                        GetMessageStatus.OFFSET_FOUND_NULL):
            read_at = r.next_begin_offset
            b.offsets.commit_offset(req.client, req.group, topic, queue_id, read_at)
            r = b.store.get_message(req.group, topic, queue_id, read_at, req.max_msg_nums - len(messages), filt)
            if not b.config.pop_ck_takes_uncorrected_offset:
                offset = read_at  # 5.0.0; 5.5.0 keeps `finalOffset` for the CK and the handles
        rest[0] = r.max_offset - r.next_begin_offset + rest[0]
        if r.messages and req.order:
            self._orderly_found(is_retry, topic, queue_id, offset, r, pop_time, revive_qid, messages,
                                start_info, msg_info)
        elif r.messages:
            if not self._append_check_point(topic, revive_qid, queue_id, offset, r.message_queue_offsets,
                                            r.next_begin_offset, pop_time):
                # 5.5.0 popMsgFromQueue: `return atomicRestNum.get() + result.getMessageCount()`
                # before the messages join the response (a merge-key conflict).
                rest[0] = rest[0] + len(r.messages)
                self._hold(r, is_retry, keep=False)
                return
            build_start_offset_info(start_info, is_retry, queue_id, offset)
            build_msg_offset_info(msg_info, is_retry, queue_id, r.message_queue_offsets)
            for m, cq_offset in zip(r.messages, _client_offsets(r)):
                # The client's handle: MQClientAPIImpl#processPopResponse builds it from the
                # response header (startOffsetInfo for this queue, popTime, reviveQid...) and
                # the message's msgOffsetInfo entry (_client_offsets)
                handle = build_extra_info(offset, pop_time, req.invisible_time, revive_qid, topic,
                                          b.config.broker_name, queue_id, cq_offset)
                if is_retry and b.config.pop_retry_answers_request_topic:
                    # 5.5.0 popMsgFromQueue re-encodes a retry message with the request's topic
                    # (popResponseReturnActualRetryTopic false); the stored message is unchanged
                    m = copy.copy(m)
                    m.topic = req.topic
                messages.append(PoppedMessage(m, topic, queue_id, m.queue_offset, handle, cq_offset))
            self._hold(r, is_retry)
        elif r.status in (GetMessageStatus.NO_MATCHED_MESSAGE, GetMessageStatus.OFFSET_FOUND_NULL,
                          GetMessageStatus.MESSAGE_WAS_REMOVING, GetMessageStatus.NO_MATCHED_LOGIC_QUEUE) \
                and r.next_begin_offset > -1:
            if req.order and b.config.order_info_queue_level:
                # 5.5.0: an orderly pop commits nextBeginOffset instead of a mock CK.
                b.offsets.commit_offset(req.client, req.group, topic, queue_id, r.next_begin_offset)
                return
            b.buffer_merge.add_ck_mock(req.group, topic, queue_id, offset, req.invisible_time, pop_time, revive_qid,
                                       r.next_begin_offset, b.config.broker_name, b.config.ck_queue_id_is_byte)

    def _orderly_found(self, is_retry: bool, topic: str, queue_id: int, offset: int, r: GetMessageResult, pop_time: int,
                       revive_qid: int, messages: list[PoppedMessage], start_info: list[str],
                       msg_info: list[str]) -> None:
        """popMsgFromQueue's ``isOrder`` branch: update the order info, commit the batch's start
        offset (so the next pop starts there again), no CK; the handles name reviveQid 999."""
        b, req = self.broker, self.request
        b.note_orderly_read(topic, queue_id, pop_time)  # F12's counterfactual (nothing with the switch on)
        try:
            counts = b.order_info.update(req.attempt_id, is_retry, topic, req.group, queue_id, pop_time,
                                         req.invisible_time, list(r.message_queue_offsets))
        except OrderInfoNullError:
            # 5.0.0 after a restart: update throws NullPointerException (reloaded OrderInfo
            # without offsetList); popMsgFromQueue catches it, so nothing is committed and no
            # offset info is written, but the messages still join the response (added after
            # the finally). The client finds no msgOffsetInfo for them (spec/broker.md).
            for m in r.messages:
                messages.append(PoppedMessage(m, topic, queue_id, m.queue_offset, ""))
            self._hold(r, is_retry)
            return
        b.offsets.commit_offset(req.client, req.group, topic, queue_id, offset)
        self._order_counts.extend(c.encode() for c in counts)
        build_start_offset_info(start_info, is_retry, queue_id, offset)
        build_msg_offset_info(msg_info, is_retry, queue_id, r.message_queue_offsets)
        for m, cq_offset in zip(r.messages, _client_offsets(r)):
            handle = build_extra_info(offset, pop_time, req.invisible_time, revive_qid, topic, b.config.broker_name,
                                      queue_id, cq_offset)
            messages.append(PoppedMessage(m, topic, queue_id, m.queue_offset, handle, cq_offset))
        self._hold(r, is_retry)

    def _get_pop_offset(self, topic: str, queue_id: int, init: bool, lock_key: str) -> int:
        """getPopOffset: committed offset (or the init-mode start), raised to the buffer's latest."""
        b, req = self.broker, self.request
        offset = b.offsets.query_offset(req.group, topic, queue_id)
        if offset < 0 and b.config.pop_init_offset_55:
            offset = self._get_init_offset(topic, queue_id, init)
        elif offset < 0:
            if req.init_mode == INIT_MODE_MIN:
                offset = b.store.get_min_offset_in_queue(topic, queue_id)
            else:
                offset = b.store.get_max_offset_in_queue(topic, queue_id) - 1
                if offset < 0:
                    offset = 0
                if init:
                    b.offsets.commit_offset("getPopOffset", req.group, topic, queue_id, offset)
        if init and b.config.server_side_reset_offset:
            # 5.5.0 getPopOffset(checkResetOffset = true, under the queue lock) → resetPopOffset
            # (PopMessageProcessor:991-1001): a pending admin reset is taken, the queue's order
            # info and the buffer's commit-offset queue cleared, the reset offset committed
            reset = b.offsets.query_then_erase_reset_offset(topic, req.group, queue_id)
            if reset is not None:
                b.order_info.clear_block(topic, req.group, queue_id)
                b.buffer_merge.clear_offset_queue(lock_key)
                b.offsets.commit_offset("ResetPopOffset", req.group, topic, queue_id, reset)
                return reset
        buffer_offset = b.buffer_merge.get_latest_offset(lock_key)
        if buffer_offset < 0:
            return offset
        return buffer_offset if buffer_offset > offset else offset

    def _get_init_offset(self, topic: str, queue_id: int, init: bool) -> int:
        """5.5.0 getInitOffset: MIN (or a retry topic) → min offset; MAX → 0 while offset 0 is
        in memory (checkInMemByConsumeOffset: the message is still stored; only with
        initPopOffsetByCheckMsgInMem), else maxOffset - 1;
        committed when ``init``, whichever the mode."""
        b, req = self.broker, self.request
        if req.init_mode == INIT_MODE_MIN or topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            offset = b.store.get_min_offset_in_queue(topic, queue_id)
        elif b.config.init_pop_offset_by_check_msg_in_mem and b.store.get_min_offset_in_queue(topic, queue_id) <= 0 and \
                b.store.look_message_by_offset(topic, queue_id, 0) is not None:
            offset = 0
        else:
            offset = max(b.store.get_max_offset_in_queue(topic, queue_id) - 1, 0)
        if init:
            b.offsets.commit_offset("getPopOffset", req.group, topic, queue_id, offset)
        return offset

    def _append_check_point(self, topic: str, revive_qid: int, queue_id: int, offset: int,
                            queue_offsets: list[int], next_begin_offset: int, pop_time: int) -> bool:
        """appendCheckPoint: build the CK (diffs narrowed to int); buffer it or store it now.
        False only on 5.5.0's merge-key conflict (addCkJustOffset refused it)."""
        b, req = self.broker, self.request
        ck = PopCheckPoint(bit_map=0, num=to_byte(len(queue_offsets)), pop_time=pop_time,
                           invisible_time=req.invisible_time, start_offset=offset, cid=req.group, topic=topic,
                           queue_id=ck_queue_id(queue_id, b.config.ck_queue_id_is_byte),
                           broker_name=b.config.broker_name)
        for qo in queue_offsets:
            ck.add_diff(to_int(qo - offset))
        if b.buffer_merge.add_ck(ck, revive_qid, -1, next_begin_offset):
            return True
        return b.buffer_merge.add_ck_just_offset(ck, revive_qid, -1, next_begin_offset)


# PopLongPollingService#run: cleanUnusedResource at the first pass, then every 5 minutes.
CLEAN_UNUSED_INTERVAL_MS = 5 * 60 * 1000


class PopLongPollingService:
    """pollingMap / topicCidMap / totalPollingNum of PopMessageProcessor and its timeout scan."""

    def __init__(self, broker: "BrokerContext") -> None:
        self._broker = broker
        self.polling_map: dict[str, list[PopOperation]] = {}
        self.topic_cid_map: dict[str, dict[str, None]] = {}
        self.total_polling_num = 0
        self.last_clean_time = 0  # cleanUnusedResource's lastCleanTime (0: never ran)
        self._parks = 0  # PopRequest.COUNTER: parks so far

    def polling(self, op: PopOperation) -> str:
        """polling(): "NOT" (no pollTime), "FULL", "TIMEOUT" or "SUC" (parked)."""
        req, cfg = op.request, self._broker.config
        if req.poll_time <= 0:
            return "NOT"
        self.topic_cid_map.setdefault(req.topic, {}).setdefault(req.group, None)
        if self.total_polling_num >= cfg.max_pop_polling_size:
            return "FULL"
        if op.is_timeout(self._broker.clock.now()):
            return "TIMEOUT"
        key = build_polling_key(req.topic, req.group, req.queue_id)
        queue = self.polling_map.get(key)
        if queue is None:
            queue = self.polling_map[key] = []
        elif len(queue) > cfg.pop_polling_size:
            return "FULL"
        # polling4: every park is a new PopRequest whose op is the next of PopRequest.COUNTER
        # (5.0.0 PopMessageProcessor#polling:610, 5.5.0 PopLongPollingService#polling:322;
        # PopRequest:34), so a woken request parked again goes after those of equal expiry parked
        # before it (COMPARATOR: expired, then op). Found by the v5.0 replay of polling3's corpus
        # seed 1099512627776: two POPs born at the same ms, Java woke the other one.
        self._parks += 1
        op.park_seq = self._parks
        queue.append(op)
        queue.sort(key=lambda o: (o.expired, o.park_seq))
        self.total_polling_num += 1
        return "SUC"

    def notify_message_arriving(self, topic: str, cid: str, queue_id: int,
                                arrival: MessageExt | None = None, force: bool = True) -> bool:
        """notifyMessageArriving(topic, cid, queueId): wake the first parked request of the key;
        whether one was woken (5.5.0's return value). ``arrival``: the put's message, which 5.5.0
        tests the request's filter against unless ``force`` (BrokerConfig.polling_filters_arrival);
        the other callers pass no message (tagsCode null: every filter matches)."""
        queue = self.polling_map.get(build_polling_key(topic, cid, queue_id))
        if not queue:
            return False
        # the first request whose channel is active; those before it are dropped (5.0.0
        # notifyMessageArriving:173-183, 5.5.0 pollRemotingCommands:421-433)
        op = queue.pop(0)
        self.total_polling_num -= 1
        while not op.channel_active:
            op.abort()
            if not queue:
                # 5.5.0's do-while decrements for the empty poll too (set right at the loop's 100th pass)
                self.total_polling_num -= self._broker.config.polling_counts_empty_poll
                return False
            op = queue.pop(0)
            self.total_polling_num -= 1
        tags = op.request.tags
        if arrival is not None and not force and self._broker.config.polling_filters_arrival and \
                tags is not None and arrival.tags not in tags:
            # 5.5.0:239-249: isMatchedByConsumeQueue by the message's tagsCode (no tags: 0, in no
            # tag's code set); back into its queue, in its order (PopRequest.COMPARATOR)
            queue.append(op)
            queue.sort(key=lambda o: (o.expired, o.park_seq))
            self.total_polling_num += 1
            return False
        op.wake()
        return True

    def notify_topic_queue(self, msg: MessageExt) -> None:
        """notifyMessageArriving(topic, queueId, offset, tagsCode, ...): called on every put
        (ReputMessageService#notifyMessageArriveIfNecessary, offset = the message's queue offset
        + 1); 5.5.0 forces the wake-up past the filters at every interval-th offset (:207-208)."""
        topic, queue_id = msg.topic, msg.queue_id
        cids = self.topic_cid_map.get(topic)
        if cids is None:
            return
        interval = self._broker.config.pop_long_polling_force_notify_interval
        force = interval > 0 and (msg.queue_offset + 1) % interval == 0
        for cid in list(cids):
            if queue_id >= 0:
                self.notify_message_arriving(topic, cid, -1, msg, force)
            self.notify_message_arriving(topic, cid, queue_id, msg, force)

    def timeout_step(self, now: int) -> int:
        """PopLongPollingService#run (its passes while time stood still: the harness runs 100):
        wake every parked request whose expiry has passed, then cleanUnusedResource when due;
        the number woken. Nothing while the polling map has no key (the loop's `continue`)."""
        if not self.polling_map:
            return 0
        woken = 0
        for key in list(self.polling_map):
            queue = self.polling_map[key]
            while queue and queue[0].is_timeout(now):
                op = queue.pop(0)
                self.total_polling_num -= 1
                if not op.channel_active:  # wakeUp: an inactive channel's request is dropped
                    op.abort()
                    continue
                op.wake()
                woken += 1
        if self.clean_due(now):
            self._clean_unused_resource(now)
        # polling3: the 100th pass's statistics block (run:130-145, 5.0.0 :815-830) sets
        # totalPollingNum to the requests left, at every step; only with a key left: a clean-up
        # that dropped every key leaves the passes after it at the loop's `continue` (run:100),
        # and the count of the dropped requests stays
        if self.polling_map:
            self.total_polling_num = sum(len(q) for q in self.polling_map.values())
        return woken

    def clean_due(self, now: int) -> bool:
        """Whether the loop's next pass runs cleanUnusedResource (its first pass, then every 5
        minutes), given a key in the polling map (the loop stops before it otherwise)."""
        return bool(self.polling_map) and (self.last_clean_time == 0 or
                                           now - self.last_clean_time > CLEAN_UNUSED_INTERVAL_MS)

    def _clean_unused_resource(self, now: int) -> None:
        """cleanUnusedResource (5.0.0 PopMessageProcessor$PopLongPollingService:733-781, 5.5.0
        PopLongPollingService#cleanUnusedResource:365-418): drop the topicCidMap entries and the
        polling keys whose topic or group no longer exists (the group table as it is: no
        auto-create). A dropped key's parked requests are never woken nor answered (the client's
        own timeout ends them): aborted (the 100th pass then sets totalPollingNum: timeout_step)."""
        b = self._broker
        for topic in list(self.topic_cid_map):
            if topic not in b.topics:
                del self.topic_cid_map[topic]
                continue
            for cid in [c for c in self.topic_cid_map[topic] if c not in b.groups]:
                del self.topic_cid_map[topic][cid]
        for key in list(self.polling_map):
            parts = key.split("@")
            if len(parts) == 3 and (parts[0] not in b.topics or parts[1] not in b.groups):
                for op in self.polling_map.pop(key):
                    op.abort()
        self.last_clean_time = now

    def clear(self) -> None:
        """Restart: every parked request is dropped (the channels are gone)."""
        for queue in self.polling_map.values():
            for op in queue:
                op.abort()
        self.polling_map.clear()
        self.topic_cid_map.clear()
        self.total_polling_num = 0
