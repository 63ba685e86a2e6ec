"""PopReviveService: reads one revive queue, matches ACKs to CKs and re-sends what was not acked.

One ``revive_step`` is one round of the service thread: consumeReviveMessage then
mergeAndRevive. The Java thread sleeps 100 ms on an empty read and gives up after 4 s of
emptiness; the model does not let virtual time pass inside a step, so an empty read ends
the scan at once (after applying the endTime move rule). The driver advances time between
rounds (reviveInterval). Everything else -- the map keyed by the merge key, the endTime /
firstRt windows, the 2 s margin of mergeAndRevive, the epoch-skip check, the offset commit
-- follows rocketmq-all-5.0.0 PopReviveService.
"""

from __future__ import annotations

from typing import Callable

import attrs

from reference.broker.checkpoint import AckMsg, BatchAckMsg, PopCheckPoint, get_bit, set_bit
from reference.broker.config import BrokerConfig
from reference.broker.keys import (ACK_TAG, BATCH_ACK_TAG, ACK_TIME_INTERVAL, CK_TAG, REVIVE_GROUP, SECOND,
                                   build_ck_merge_key, build_pop_retry_topic, is_retry_topic, parse_normal_topic)
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.put_failure import StorePutFaults
from reference.broker.store import GetMessageStatus, MessageStore
from reference.broker.timer import TimerService
from reference.common.clock import wall_clock_ms
from reference.common.message import (MAX_PROPERTIES_LENGTH, PROPERTY_FIRST_POP_TIME, PROPERTY_ORIGIN_GROUP,
                                      PROPERTY_TAGS, PROPERTY_TIMER_DELIVER_MS, MessageExt, properties_length)


@attrs.define(slots=True)
class ConsumeReviveObj:
    """ConsumeReviveObj: the CKs of one round and its time window."""

    map: dict[str, PopCheckPoint] = attrs.field(factory=dict)
    start_time: int = 0
    end_time: int = 0
    old_offset: int = 0
    new_offset: int = 0

    def gen_sort_list(self) -> list[PopCheckPoint]:
        """CKs by revive-queue offset (genSortList)."""
        return sorted(self.map.values(), key=lambda ck: ck.revive_offset)


# PopReviveService#ckRewriteIntervalsInSeconds (5.5.0:69): rePutCK's invisible-time extensions.
CK_REWRITE_INTERVALS_S: tuple[int, ...] = (10, 20, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800,
                                           3600, 7200)


class ReviveRoundFailed(Exception):
    """An exception of the round, which PopReviveService#run catches (`catch (Throwable e)`, it
    logs "revive error"): the round ends there, its revive offset not committed."""


class ReviveRetryFailed(ReviveRoundFailed):
    """5.0.0 reviveRetry: ``throw new Exception("reviveQueueId=..., revive error")`` when the
    retry-topic put fails; PopReviveService#run catches it and the round ends there."""


@attrs.frozen
class RevivedMessage:
    """One message re-sent to the retry topic by a revive round (for the checker)."""

    ck_topic: str
    ck_queue_id: int
    msg_offset: int
    retry_topic: str
    retry_offset: int
    uniq_key: str | None
    retry_queue_id: int = 0


class PopReviveService:
    """The service of one revive queue ``queue_id``."""

    def __init__(self, queue_id: int, revive_topic: str, config: BrokerConfig, now: Callable[[], int],
                 store: MessageStore, timer: TimerService, offsets: ConsumerOffsetManager,
                 topic_exists: Callable[[str], bool], group_exists: Callable[[str], bool],
                 ensure_retry_topic: Callable[[str, str], int], *, put_faults: StorePutFaults | None = None,
                 put_ck: Callable[[PopCheckPoint, int, str], int] | None = None,
                 retry_arrived: Callable[[str, str, str, int], None] | None = None) -> None:
        self.queue_id = queue_id
        self.revive_topic = revive_topic
        self._cfg = config
        self._now = now
        self._store = store
        self._timer = timer
        self._offsets = offsets
        self._topic_exists = topic_exists
        self._group_exists = group_exists
        self._ensure_retry_topic = ensure_retry_topic
        self._put_faults = put_faults if put_faults is not None else StorePutFaults()
        self._put_ck = put_ck  # buildCkMsg + messageStore.putMessage (rePutCK, 5.5.0)
        self._retry_arrived = retry_arrived  # the wake of the group's parked POPs (Broker)
        self.re_put_cks: list[PopCheckPoint] = []  # CKs rePutCK wrote (inspection)
        self._failed_retries: list[int] = []  # 5.5.0: offsets of this CK whose retry put failed
        self.copies_too_big = 0  # retry copies the store refused for their properties (revive4)
        self.rounds_failed_reading = 0  # revive6: rounds thrown at a message without a deliver time
        self.revive_offset = offsets.query_offset(REVIVE_GROUP, revive_topic, queue_id)
        self.should_run = True
        self.last_round: ConsumeReviveObj | None = None
        self.revived: list[RevivedMessage] = []

    def revive_step(self) -> list[RevivedMessage]:
        """One round: consumeReviveMessage + mergeAndRevive; returns the messages re-sent."""
        obj = ConsumeReviveObj()
        before = len(self.revived)
        try:
            self.consume_revive_message(obj)
            self.merge_and_revive(obj)
        except ReviveRoundFailed:
            # 5.0.0 PopReviveService#run: `catch (Throwable e)` logs "revive error"; the CKs
            # revived before the failure stay revived, the revive offset is not committed, so
            # the next round reads them again and re-sends their messages.
            pass
        self.last_round = obj
        return self.revived[before:]

    def _get_revive_message(self, offset: int) -> list[MessageExt]:
        """getReviveMessage: up to 32 messages; an illegal offset commits nextBeginOffset - 1.

        PopReviveService#getMessage maps store statuses to PullStatus: NO_MESSAGE_IN_QUEUE is
        NO_NEW_MSG, NO_MATCHED_MESSAGE is NO_MATCHED_MSG, the rest (OFFSET_OVERFLOW_ONE
        included) OFFSET_ILLEGAL; reachTail is NO_NEW_MSG, or OFFSET_ILLEGAL at offset == maxOffset.
        """
        r = self._store.get_message(REVIVE_GROUP, self.revive_topic, self.queue_id, offset, 32)
        if r.status is GetMessageStatus.FOUND:
            return r.messages
        no_new = r.status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
        no_matched = r.status is GetMessageStatus.NO_MATCHED_MESSAGE
        illegal = not no_new and not no_matched
        reach_tail = no_new or (illegal and offset == r.max_offset)
        if not reach_tail and (illegal or no_matched) and self.should_run:
            self._offsets.commit_offset("revive", REVIVE_GROUP, self.revive_topic, self.queue_id, r.next_begin_offset - 1)
        return []

    def consume_revive_message(self, obj: ConsumeReviveObj) -> None:
        """consumeReviveMessage: read from oldOffset + 1, building the CK map and the window."""
        now = self._now()
        obj.start_time = now
        # Java's endTime starts at 0 and every deliver time (epoch ms) is above it; the model's
        # clock starts at 1e6 ms, where popTime + a negative invisibleTime is below 0, so
        # "nothing read yet" is None here, not 0 (request-domain lockstep, 5.0.0 seed 1083)
        end_time: int | None = None
        old_offset = self._offsets.query_offset(REVIVE_GROUP, self.revive_topic, self.queue_id)
        obj.old_offset = old_offset
        offset = old_offset + 1
        first_rt = 0
        mock_points: dict[str, PopCheckPoint] = {}  # mockPointMap (5.5.0, enableSkipLongAwaitingAck)
        while True:
            if not self.should_run:
                break
            msgs = self._get_revive_message(offset)
            if not msgs:
                # Nothing came for 3 s and the timer has caught up with the clock: move endTime.
                # PopReviveService#consumeReviveMessage: `timerDelay <= 0 && commitLogDelay <= 0`,
                # timerDelay = TimerMessageStore#getReadBehind (5.5.0 #getDequeueBehind), i.e. the
                # timer's read time within 1 s of now, whether or not a delivery is due.
                timer_delay = self._timer.read_behind(now)
                commit_log_delay = self._timer.enqueue_behind(now)
                if end_time is not None and now - end_time > 3 * SECOND and timer_delay <= 0 and commit_log_delay <= 0:
                    end_time = now
                # Java: break if endTime - firstRt > ackTimeInterval + 1 s, else sleep 100 ms
                # and retry until 4 s of emptiness; with frozen virtual time both end the scan.
                break
            if now - obj.start_time > self._cfg.revive_scan_time:
                break
            for m in msgs:
                if m.tags == CK_TAG:
                    point = PopCheckPoint.from_json(m.body.decode())
                    if point.topic is None or point.cid is None:
                        continue
                    key = build_ck_merge_key(point.topic, point.cid, point.queue_id, point.start_offset, point.pop_time)
                    obj.map[key] = point
                    point.revive_offset = m.queue_offset
                    if first_rt == 0:
                        first_rt = point.revive_time
                elif m.tags in (ACK_TAG, BATCH_ACK_TAG):
                    # 5.5.0 consumeReviveMessage: a BatchAckMsg sets each listed offset's bit
                    ack = AckMsg.from_json(m.body.decode()) if m.tags == ACK_TAG else \
                        BatchAckMsg.from_json(m.body.decode())
                    point = obj.map.get(ack.merge_key)
                    if point is None:
                        # an ACK whose CK this round has not read: `continue` (5.0.0:333-335,
                        # 5.5.0:413-416 and 440-443 with enableSkipLongAwaitingAck false, the
                        # default), so its deliver time does not move endTime (lockstep with
                        # restart: the orphan ACK of a CK lost in the buffer; spec/conformance.md)
                        if not self._cfg.enable_skip_long_awaiting_ack:
                            continue
                        if self._mock_ck_for_ack(m, ack, mock_points, now) and first_rt == 0:
                            first_rt = mock_points[ack.merge_key].revive_time
                    else:
                        offsets = ack.ack_offset_list if isinstance(ack, BatchAckMsg) else (ack.ack_offset,)
                        for ack_offset in offsets:
                            index = point.index_of_ack(ack_offset)
                            if index > -1:
                                point.bit_map = set_bit(point.bit_map, index)
                # Message#getDeliverTimeMs reads TIMER_DELIVER_MS, which every message the broker
                # writes here has (TimerService#put). revive6: a producer's message without it (of
                # another tag) answers 0 on 5.5.0, never above endTime; 5.0.0 parses the missing
                # property and throws
                raw = m.properties.get(PROPERTY_TIMER_DELIVER_MS)
                if raw is None:
                    if not self._cfg.deliver_time_answers_zero:
                        self.rounds_failed_reading += 1
                        raise ReviveRoundFailed("NumberFormatException: getDeliverTimeMs without TIMER_DELIVER_MS")
                    continue
                deliver_time = int(raw)
                if end_time is None or deliver_time > end_time:
                    end_time = deliver_time
            offset += len(msgs)
        # `consumeReviveObj.map.putAll(mockPointMap)`: a mock replaces a CK of its key (F19)
        obj.map.update(mock_points if self._cfg.mock_ck_replaces_read_ck else
                       {k: v for k, v in mock_points.items() if k not in obj.map})
        obj.end_time = 0 if end_time is None else end_time

    def _mock_ck_for_ack(self, m: MessageExt, ack: AckMsg | BatchAckMsg, mock_points: dict[str, PopCheckPoint],
                         now: int) -> bool:
        """mockCkForAck (5.5.0 PopReviveService:470-483): an ACK read more than reviveAckWaitMs
        after its deliver time, its CK not found, becomes an empty CK (createMockCkForAck:485-497:
        num 0, invisibleTime 0, so its revive time is the ACK's popTime) at the ACK's revive
        offset; mergeAndRevive then moves the revive offset past it as past any CK."""
        if now - m.deliver_time_ms <= self._cfg.revive_ack_wait_ms:
            return False
        mock_points[ack.merge_key] = PopCheckPoint(start_offset=ack.start_offset, pop_time=ack.pop_time,
                                                   queue_id=ack.queue_id, cid=ack.consumer_group, topic=ack.topic,
                                                   num=0, bit_map=0, revive_offset=m.queue_offset,
                                                   broker_name=ack.broker_name)
        return True

    def merge_and_revive(self, obj: ConsumeReviveObj) -> None:
        """mergeAndRevive: revive CKs whose revive time is > 2 s behind endTime; commit offset."""
        new_offset = obj.old_offset
        for point in obj.gen_sort_list():
            if not self.should_run:
                break
            if obj.end_time - point.revive_time <= ACK_TIME_INTERVAL + SECOND:
                break
            normal_topic = parse_normal_topic(point.topic or "", point.cid or "")
            if not self._topic_exists(normal_topic) or not self._group_exists(point.cid or ""):
                new_offset = point.revive_offset
                continue
            self.revive_msg_from_ck(point)
            new_offset = point.revive_offset
        if new_offset > obj.old_offset:
            if not self.should_run:
                return
            self._offsets.commit_offset("revive", REVIVE_GROUP, self.revive_topic, self.queue_id, new_offset)
        self.revive_offset = new_offset
        obj.new_offset = new_offset

    def revive_msg_from_ck(self, point: PopCheckPoint) -> None:
        """reviveMsgFromCk: re-send every un-acked message still in the store.

        Epoch skip: a message stored after the CK's popTime belongs to a re-created queue
        (its offsets restarted), so it is not the message this CK popped.
        """
        self._failed_retries = []
        for j in range(point.num):
            if get_bit(point.bit_map, j):
                continue
            msg_offset = point.ack_offset_by_index(j)
            # getBizMessage → EscapeBridge#getMessage(Async): getMessage(offset, maxMsgNums 1),
            # list.get(0) -- the first message read at or after msg_offset: when retention
            # removed this one's data but not yet its unit, that is the queue's next message,
            # which gets revived in its place (spec/broker.md "Retention").
            msg = self._store.first_message_from(point.topic or "", point.queue_id, msg_offset,
                                                 exact=not self._cfg.revive_takes_next_message)  # F17
            if msg is None:
                continue
            # v5.0 "skip ck from last epoch": a message stored after popTime is taken as a
            # re-created queue's. It also matches a message put between the request's popTime
            # and its queue read, which is then never revived (spec/broker.md). v5.5
            # dropped the check.
            # (the switch last: it is read only where it decides, see attribution's consulted())
            if point.pop_time < msg.store_timestamp and self._cfg.revive_skips_last_epoch:
                continue
            self.revive_retry(point, msg, msg_offset)
        # 5.5.0 reviveMsgFromCk's whenComplete (PopReviveService:584-590): after every message of
        # the CK was tried, one rePutCK per failed offset, in order.
        failed, self._failed_retries = self._failed_retries, []
        for msg_offset in failed:
            self.re_put_ck(point, msg_offset)

    def revive_retry(self, point: PopCheckPoint, msg: MessageExt, msg_offset: int) -> None:
        """reviveRetry: put a copy in the retry topic, reconsumeTimes + 1, FIRST_POP_TIME set once."""
        if not self.should_run:
            return
        topic = point.topic or ""
        retry_topic = topic if is_retry_topic(topic) else build_pop_retry_topic(topic, point.cid or "")
        props = dict(msg.properties)
        if msg.reconsume_times == 0 or props.get(PROPERTY_FIRST_POP_TIME) is None:
            props[PROPERTY_FIRST_POP_TIME] = str(point.pop_time)
        retry_queues = self._ensure_retry_topic(retry_topic, point.cid or "")
        inner = MessageExt(topic=retry_topic, queue_id=self._retry_queue_id(retry_queues, msg), body=msg.body,
                           tags=msg.tags, properties=props, reconsume_times=msg.reconsume_times + 1,
                           born_timestamp=msg.born_timestamp)
        # (the armed fault first: the harness's put wrapper refuses before the store is asked)
        if self._put_faults.take("revive_retry") or self._copy_too_big(props, msg.tags, point.cid or ""):
            # the store refused the retry message (appendMessageResult null: not PUT_OK)
            if not self._cfg.revive_retry_failure_reputs_ck:
                raise ReviveRetryFailed(f"reviveQueueId={self.queue_id}, revive error")
            self._failed_retries.append(msg_offset)  # rePutCK once the CK's futures completed
            return
        stored = self._store.put_message(inner)
        self.revived.append(RevivedMessage(topic, point.queue_id, msg_offset, retry_topic, stored.queue_offset,
                                           msg.uniq_key, inner.queue_id))
        if self._retry_arrived is not None:
            self._retry_arrived(topic, retry_topic, point.cid or "", inner.queue_id)



    def _copy_too_big(self, props: dict[str, str], tags: str | None, cid: str) -> bool:
        """revive4: whether the store refuses the retry copy for its properties string
        (MessageExtEncoder#encode, PROPERTIES_SIZE_EXCEEDED past Short.MAX_VALUE). The copy has the
        message's properties (TAGS among them), 1ST_POP_TIME (reviveRetry 5.0.0:104-106,
        5.5.0:131-133) and on 5.5.0 ORIGIN_GROUP (:134, the release change revive_wakes_retry_queue_id
        follows): a message stored within those few dozen characters of the limit is never
        revived (5.0.0: every round throws; 5.5.0: rePutCK again and again)."""
        java = dict(props)
        if PROPERTY_FIRST_POP_TIME in java:  # Java's popTime: epoch milliseconds, 13 digits
            java[PROPERTY_FIRST_POP_TIME] = str(wall_clock_ms(int(java[PROPERTY_FIRST_POP_TIME])))
        if tags is not None:
            java[PROPERTY_TAGS] = tags
        if self._cfg.revive_wakes_retry_queue_id:
            java[PROPERTY_ORIGIN_GROUP] = cid
        if properties_length(java, self._cfg.properties_keep_last_separator) <= MAX_PROPERTIES_LENGTH:
            return False
        self.copies_too_big += 1
        return True

    def _retry_queue_id(self, retry_queues: int, msg: MessageExt) -> int:
        """getRetryQueueId (5.5.0:196-205): queue 0, or with useSeparateRetryQueue the revived
        message's own queue id (of the normal or the retry topic), 0 past the retry topic's queues."""
        if not self._cfg.use_separate_retry_queue or msg.queue_id > retry_queues - 1:
            return 0
        return msg.queue_id

    def re_put_ck(self, old: PopCheckPoint, msg_offset: int) -> None:
        """rePutCK (5.5.0 PopReviveService:608-635): a one-message CK for the offset whose
        revive failed, same popTime, rePutTimes + 1, its invisible time extended by
        ckRewriteIntervalsInSeconds[rePutTimes] s once the old CK's revive time has passed, put
        with messageStore.putMessage (result unchecked: a second failure loses it). With
        skipWhenCKRePutReachMaxTimes (default false) a CK past the last interval is dropped;
        the model keeps the default."""
        re_put_times = old.parse_re_put_times()
        ck = PopCheckPoint(bit_map=0, num=1, pop_time=old.pop_time, invisible_time=old.invisible_time,
                           start_offset=msg_offset, cid=old.cid, topic=old.topic, queue_id=old.queue_id,
                           broker_name=old.broker_name, re_put_times=str(re_put_times + 1))
        ck.add_diff(0)
        if old.revive_time <= self._now():
            index = min(re_put_times, len(CK_REWRITE_INTERVALS_S) - 1)
            ck.invisible_time = old.invisible_time + CK_REWRITE_INTERVALS_S[index] * 1000
        self.re_put_cks.append(ck)
        if self._put_ck is not None:
            stored = self._put_ck(ck, self.queue_id, "reput_ck")
            if stored < 0 and not self._cfg.reput_ck_put_unchecked:
                # attribution's F8 removal: a checked put fails the round (nothing committed)
                raise ReviveRetryFailed(f"reviveQueueId={self.queue_id}, rePutCK error")
