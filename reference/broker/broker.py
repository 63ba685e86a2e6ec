"""Broker: the facade the driver and checkers use over the whole broker model.

Construction: ``Broker(profile_name_or_config, clock, rng)``. All randomness comes from the
one JavaRandom passed in, all time from the VirtualClock.

Requests (each returns the RocketMQ response code or a result carrying it):
  put_message, begin_pop (→ PopOperation, advanced with ``step()``), ack, batch_ack,
  change_invisible_time.
Background service steps (the driver schedules them):
  buffer_merge_scan (every 5 ms), revive_step(qid), timer_step, offset_flush_step,
  long_polling_step.
Admin and faults:
  create_topic, create_group, delete_topic, roll_commit_log / delete_commit_log_files /
  clean_consume_queues (retention in its two stages), restart.
Read-only inspection (copies or views; never mutate what they return):
  buffered_checkpoints, stored_checkpoints, committed_offset(s), revive_offsets,
  retry_messages, min_offset / max_offset, revived, timer_pending.
"""

from __future__ import annotations

import attrs

from reference.broker.ack_processor import ack_message, batch_ack, batch_ack_without_acks
from reference.broker.buffer_merge import PopBufferMergeService, PopCheckPointWrapper
from reference.broker.change_invisible_processor import change_invisible_time
from reference.broker.checkpoint import AckMsg, BatchAckMsg, PopCheckPoint
from reference.broker.config import BrokerConfig
from reference.broker.consumer_filter import ConsumerFilterManager
from reference.broker.consumer_manager import ConsumerManager, RebalanceLockManager, SubscriptionData
from reference.broker.keys import (ACK_TAG, ACK_TIME_INTERVAL, BATCH_ACK_TAG, CK_TAG, REVIVE_GROUP, RETRY_QUEUE_NUM,
                                   RETRY_GROUP_TOPIC_PREFIX, build_cluster_revive_topic, build_lock_key,
                                   build_pop_retry_topic, parse_normal_topic, valid_group_name)
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.consumer_order_info import make_order_info_manager
from reference.broker.pop_processor import PopLongPollingService, PopOperation
from reference.broker.pull_processor import PullMessageProcessor, PullRequestHoldService
from reference.broker.put_failure import StorePutFaults
from reference.broker.queue_lock import QueueLockManager
from reference.broker.revive import PopReviveService, RevivedMessage
from reference.broker.send_back import (consumer_send_msg_back, create_retry_topic_at_heartbeat,
                                        send_message_back_as_normal_message)
from reference.broker.store import MessageStore
from reference.broker.timer import TimerService
from reference.client.offset_store import OffsetNotFound
from reference.common import response_code as rc
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.common.message import (MAX_MESSAGE_SIZE, MAX_PROPERTIES_LENGTH, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
                                      MessageExt, properties_length)
from reference.common.message_queue import MessageQueue
from reference.common.pop import AckEntry, ChangeInvisibleResult, PopRequest
from reference.common.remoting import PullMessageRequestHeader, PullMessageResponse


# MessageStoreConfig#timerMaxDelaySec (3600 * 24 * 3, both releases), in ms.
TIMER_MAX_DELAY_MS = 3600 * 24 * 3 * 1000


@attrs.frozen
class PutResult:
    """Response of a put: code and, on success, where the message went."""

    code: int
    queue_offset: int = -1
    uniq_key: str | None = None


@attrs.frozen
class StoredCheckpoint:
    """A CK message in the revive topic (or still in the timer) not yet consumed by revive."""

    ck: PopCheckPoint
    revive_queue_id: int
    revive_offset: int  # -1 while in the timer
    in_timer: bool


class Broker:
    """One broker: store, timer, offsets, POP processors, buffer merge and revive services."""

    def __init__(self, config: BrokerConfig | str, clock: VirtualClock, rng: JavaRandom) -> None:
        self.config = BrokerConfig.for_profile(config) if isinstance(config, str) else config
        self.broker_name = self.config.broker_name
        self.clock = clock
        self.rng = rng
        cfg = self.config
        self.revive_topic = build_cluster_revive_topic(cfg.cluster_name)
        # TopicConfigManager: topic → readQueueNums (= writeQueueNums in the model)
        self.topics: dict[str, int] = {self.revive_topic: cfg.revive_queue_num}
        # not Java state, F12's counterfactual only: how often each topic was created, and (with
        # F12's switch off) which incarnation each orderly POP read
        self.topic_incarnation: dict[str, int] = {}
        self._orderly_read_incarnation: dict[tuple[str, int, int], int] = {}
        self.groups: set[str] = set()
        # An admin's permissions (mqadmin updateTopic -p, updateSubGroup -e false): topics whose
        # perm is not readable, groups whose consumeEnable is false (persisted, as their configs)
        self.unreadable_topics: set[str] = set()
        self.consume_disabled: set[str] = set()
        self.store = MessageStore(clock.now, cfg.broker_role_slave, cfg.offset_check_in_slave, cfg.max_pull_msg_size,
                                  position_zero_reads_first_file=cfg.position_zero_reads_first_file,
                                  blank_units_valid_after_restart=cfg.blank_units_valid_after_restart)
        self.store.put_listeners.append(self._on_put)
        self.timer = TimerService(self.store, cfg.timer_precision_ms)
        self.offsets = ConsumerOffsetManager(cfg.flush_consumer_offset_interval, clock.now(),
                                             use_server_side_reset=cfg.server_side_reset_offset)
        # Persisted like the offsets (a ConfigManager), so it survives restarts as a snapshot.
        self.order_info = make_order_info_manager(cfg.order_info_queue_level, clock.now, self.topics.get,
                                                  self.groups.__contains__, cfg.notify_after_pop_order_lock_release,
                                                  cfg.order_info_lost_on_reload)
        self.acks_received: list[AckMsg] = []
        self.revived: list[RevivedMessage] = []
        self._ck_message_number = 0
        self._uniq_seq = 0
        self._op_seq = 0
        self.restarts = 0
        # Store put failures (a fault the driver arms; reference/broker/put_failure.py).
        self.put_faults = StorePutFaults()
        # consumerFilter.json: BrokerController#shutdown persists it, #initialize loads it (5.5.0
        # :1665, :864), so a restart keeps it
        self.consumer_filters = ConsumerFilterManager()
        self._start_memory_services()

    def _start_memory_services(self) -> None:
        """(Re)create everything that lives only in memory."""
        self.consumer_manager = ConsumerManager(self.clock.now)
        self.rebalance_locks = RebalanceLockManager(self.clock.now)
        self.pull_processor = PullMessageProcessor(self)
        self.pull_hold = PullRequestHoldService(self.clock.now, self.pull_processor.process_request,
                                                self.store.get_max_offset_in_queue)
        self.queue_locks = QueueLockManager()
        self.buffer_merge = PopBufferMergeService(self.config, self.clock.now, self.offsets, self.queue_locks,
                                                  self.put_ck_message, self.put_revive_message, self.ack_json,
                                                  topic_exists=self.topics.__contains__,
                                                  group_exists=self.groups.__contains__,
                                                  find_group=self.find_group if self.config.buffer_scan_finds_group
                                                  else None)
        self.pop_polling = PopLongPollingService(self)
        self._ops: list[PopOperation] = []
        self.revive_services = [
            PopReviveService(qid, self.revive_topic, self.config, self.clock.now, self.store, self.timer, self.offsets,
                             self._normal_topic_exists, self.find_group, self._ensure_retry_topic,
                             put_faults=self.put_faults, put_ck=self.put_ck_message,
                             retry_arrived=self.notify_retry_arriving)
            for qid in range(self.config.revive_queue_num)
        ]

    # -- admin ----------------------------------------------------------------------------------
    def create_topic(self, topic: str, queue_nums: int) -> int:
        """Create (or update) a topic with ``queue_nums`` read/write queues."""
        if queue_nums <= 0 or not topic:
            return rc.SYSTEM_ERROR
        if topic not in self.topics:
            self.topic_incarnation[topic] = self.topic_incarnation.get(topic, 0) + 1
        self.topics[topic] = queue_nums
        return rc.SUCCESS

    def create_group(self, group: str) -> int:
        """Create a subscription group."""
        if not group:
            return rc.SYSTEM_ERROR
        self.groups.add(group)
        return rc.SUCCESS

    def find_group(self, group: str) -> bool:
        """SubscriptionGroupManager#findSubscriptionGroupConfig: whether the group exists, after
        auto-creating a missing one when autoCreateSubscriptionGroup is on (the default; POP,
        revive and 5.5.0's buffer scan ask it, so a deleted group comes back at their next use)."""
        if group not in self.groups and group and self.config.auto_create_subscription_group \
                and (not self.config.validate_group_name or valid_group_name(group)):
            self.groups.add(group)
        return group in self.groups

    def delete_group(self, group: str, clean_offset: bool) -> int:
        """AdminBrokerProcessor#deleteSubscriptionGroup (DELETE_SUBSCRIPTIONGROUP): the group's
        config goes (deleteSubscriptionGroupConfig: persisted at once, a restart keeps it gone);
        with ``clean_offset`` ConsumerOffsetManager#removeOffset drops its offsets, in memory
        only. 5.5.0 also clears the group's POP in-flight counters, which count only for
        enablePopMessageThreshold (off by default): not modelled. The order info, the merge
        buffer's commit-offset queues and CKs are left to their own clean-ups (autoClean at
        persist, scanGarbage), which test the group's existence (spec/profiles.md). v5.5 without
        ``clean_offset`` re-creates the group at once (delete_group_finds_group)."""
        self.groups.discard(group)
        if clean_offset:
            self.offsets.remove_offset(group)
        elif self.config.delete_group_finds_group:
            self.find_group(group)  # v5.5: isLiteGroupType's lookup re-creates it (auto-create)
        return rc.SUCCESS

    def persist_order_info(self) -> None:
        """The consumer order info's scheduled persist, every 10 s (BrokerController#
        initializeBrokerScheduledTasks, 5.0.0:578, 5.5.0:709); its encode runs autoClean first."""
        self.order_info.persist()

    def reset_offset(self, topic: str, group: str, queue_id: int, offset: int) -> int:
        """An admin resets one queue of ``group`` to ``offset`` (spec/profiles.md "Group deletion
        and offset reset"). v5.0: UPDATE_CONSUMER_OFFSET (mqadmin resetOffsetByTime -b -q,
        DefaultMQAdminExtImpl#resetOffsetByQueueId), ConsumerManageProcessor#updateConsumerOffset:
        commitOffset whatever the offset. v5.5: INVOKE_BROKER_TO_RESET_OFFSET with queueId and
        offset, AdminBrokerProcessor#resetOffsetInner (2112-2190): topic and group must exist
        (not auto-created), the offset must lie in [min, max + 1] (sic: one past the end, as
        `offset > max + 1` is the refusal), then assignResetOffset."""
        if not self.config.server_side_reset_offset:
            self.update_consumer_offset(group, MessageQueue(topic, self.broker_name, queue_id), offset)
            return rc.SUCCESS
        if topic not in self.topics:
            return rc.TOPIC_NOT_EXIST
        if group not in self.groups:
            return rc.SUBSCRIPTION_GROUP_NOT_EXIST
        lo, hi = self.store.get_min_offset_in_queue(topic, queue_id), self.store.get_max_offset_in_queue(topic, queue_id)
        if (lo >= 0 and offset < lo) or offset > hi + 1:
            return rc.SYSTEM_ERROR  # "Target offset %d not in consume queue range [%d-%d]"
        self.offsets.assign_reset_offset(topic, group, queue_id, offset)
        return rc.SUCCESS

    def delete_topic(self, topic: str) -> int:
        """AdminBrokerProcessor#deleteTopic: config, consumer offsets and queues removed.

        A later create_topic of the same name starts its queues at offset 0 again; CKs of the
        old incarnation still in the revive topic meet that (the epoch-skip check).
        """
        if topic == self.revive_topic:
            return rc.SYSTEM_ERROR
        doomed = [topic]
        if self.config.delete_topic_clears_pop_retry:
            # 5.5.0:789-800: the groups are read before anything is deleted; only the retry
            # topics that exist (the V2 name is never created: enableRetryTopicV2 is off)
            doomed += [r for r in (build_pop_retry_topic(topic, g) for g in self.offsets.which_group_by_topic(topic))
                       if r in self.topics]
        for name in doomed:
            self._delete_topic_in_broker(name)
        return rc.SUCCESS

    def _delete_topic_in_broker(self, topic: str) -> None:
        """deleteTopicInBroker (5.5.0:819-826; 5.0.0 deleteTopic:499-503): the config, the
        offsets and the consume queues of one topic."""
        self.topics.pop(topic, None)
        self.offsets.remove_topic(topic, persisted_too=not self.config.delete_topic_offsets_unpersisted)  # F10
        self.store.delete_topic(topic)
        kept = [k for k in self.buffer_merge.commit_offsets if k.startswith(topic + "@")]
        if kept and not self.config.delete_topic_keeps_buffer_offsets:  # mechanism switch for F7
            for lock_key in kept:
                self.buffer_merge.clear_offset_queue(lock_key)

    def note_orderly_read(self, topic: str, queue_id: int, pop_time: int) -> None:
        """F12's counterfactual (switch off only): remember the incarnation an orderly POP read."""
        if not self.config.orderly_ack_commits_across_incarnations:
            self._orderly_read_incarnation[(topic, queue_id, pop_time)] = self.topic_incarnation.get(topic, 0)

    def is_stale_orderly_handle(self, topic: str, queue_id: int, pop_time: int) -> bool:
        """Whether the orderly POP of ``pop_time`` on that queue read an earlier incarnation of
        the topic (False when unknown: the switch was on, or the POP read nothing)."""
        read = self._orderly_read_incarnation.get((topic, queue_id, pop_time))
        return read is not None and read != self.topic_incarnation.get(topic, 0)

    def note_orderly_handle_renewed(self, topic: str, queue_id: int, old_pop_time: int, new_pop_time: int) -> None:
        """F12's counterfactual (switch off only): 5.0.0's changeInvisibleTime re-issues an orderly
        handle with a new popTime; the POP it came from read the same incarnation."""
        read = self._orderly_read_incarnation.get((topic, queue_id, old_pop_time))
        if read is not None:
            self._orderly_read_incarnation[(topic, queue_id, new_pop_time)] = read

    def start_queue_at(self, topic: str, queue_id: int, offset: int) -> None:
        """The queue of an existing topic begins at ``offset`` (MessageStore#start_queue_at)."""
        self.store.start_queue_at(topic, queue_id, offset)

    def roll_commit_log(self) -> bool:
        """End the commit log's current file (the harness's layout: one before each producer put)."""
        return self.store.roll_commit_log()

    def delete_commit_log_files(self, count: int) -> int:
        """Retention, first stage (CleanCommitLogService, forced path): the ``count`` oldest
        commit-log files go, never the newest; returns how many went."""
        return self.store.delete_commit_log_files(count)

    def clean_consume_queues(self) -> bool:
        """Retention, second stage (CleanConsumeQueueService): min offsets follow the commit log."""
        return self.store.clean_consume_queues()

    def expire(self, topic: str, queue_id: int, below: int) -> int:
        """Retention reaching offset ``below - 1`` of a queue, both stages: the commit-log files
        up to the one holding it (never the newest), then the consume-queue stage. Returns
        the files deleted. Messages written to one file go together: a caller that wants the
        offsets below ``below`` alone gone rolls the commit log before each put."""
        files = self.store.files_up_to(topic, queue_id, below - 1)
        deleted = self.store.delete_commit_log_files(files) if files > 0 else 0
        self.store.clean_consume_queues()
        return deleted

    def _normal_topic_exists(self, topic: str) -> bool:
        return topic in self.topics

    def _ensure_retry_topic(self, topic: str, group: str) -> int:
        """PopReviveService#addRetryTopicIfNoExit: a new retry topic gets
        PopAckConstants.retryQueueNum (1) queue, then initPopRetryOffset commits offset 0 for
        each of its queues that has no offset yet (found by lockstep replay on 5.0.0). With
        useSeparateRetryQueue (5.5.0:174-180) it gets the normal topic's write queue count, and
        is re-created with it whenever the counts differ. Answers the retry topic's queue count."""
        queues = RETRY_QUEUE_NUM
        if self.config.use_separate_retry_queue:
            # the normal topic "always exists" (5.5.0:176): mergeAndRevive skipped a CK whose
            # normal topic is gone (5.5.0:518-522) before it got here
            queues = self.topics[parse_normal_topic(topic, group)]
            if self.topics.get(topic) == queues:
                return queues
        elif topic in self.topics:
            return self.topics[topic]
        self.topics[topic] = queues
        for queue_id in range(queues):
            if self.offsets.query_offset(group, topic, queue_id) < 0:
                self.offsets.commit_offset("initPopRetryOffset", group, topic, queue_id, 0)
        return queues

    # -- requests -------------------------------------------------------------------------------
    def put_message(self, topic: str, queue_id: int, body: bytes, tags: str | None = None,
                    properties: dict[str, str] | None = None, uniq_key: str | None = None) -> PutResult:
        """SendMessageProcessor: store a message; UNIQ_KEY assigned if absent (deterministic)."""
        queues = self.topics.get(topic)
        if queues is None:
            return PutResult(rc.TOPIC_NOT_EXIST)
        if queue_id < 0 or queue_id >= queues:
            return PutResult(rc.SYSTEM_ERROR)
        if not body:
            # RemotingCommand#decode leaves an empty body null and the store's put hook refuses a
            # null body (HookUtils#checkBeforePutMessage, 5.0.0:88, 5.5.0:101): before the commit
            # log, so no queue offset is taken (unlike the encoder's size checks below)
            return PutResult(rc.MESSAGE_ILLEGAL)
        props = dict(properties or {})
        if uniq_key is None:
            uniq_key = props.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        if uniq_key is None:
            self._uniq_seq += 1
            uniq_key = f"{self._uniq_seq:032X}"
        props[PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = uniq_key
        # MessageExtEncoder#encode's size checks, answered MESSAGE_ILLEGAL by
        # SendMessageProcessor#handlePutMessageResult (message.py: MAX_MESSAGE_SIZE, MAX_PROPERTIES_LENGTH)
        if len(body) > MAX_MESSAGE_SIZE or \
                properties_length(props, self.config.properties_keep_last_separator) > MAX_PROPERTIES_LENGTH:
            if self.config.refused_put_burns_offset:
                self.store.burn_queue_offset(topic, queue_id)
            return PutResult(rc.MESSAGE_ILLEGAL)
        msg = MessageExt(topic=topic, queue_id=queue_id, body=body, tags=tags, properties=props,
                         born_timestamp=self.clock.now())
        stored = self.store.put_message(msg)
        return PutResult(rc.SUCCESS, stored.queue_offset, uniq_key)

    def begin_pop(self, request: PopRequest) -> PopOperation:
        """Start a POP; call ``op.step()`` until ``op.done`` (or ``op.parked`` waiting to be woken)."""
        self._op_seq += 1
        op = PopOperation(self, request, self._op_seq)
        self._ops.append(op)
        if len(self._ops) > 64:
            self._ops = [o for o in self._ops if not o.done]
        return op

    def in_flight_pops(self) -> list[PopOperation]:
        """POP requests a broker thread is serving (begun or woken, not answered, not parked)."""
        return [op for op in self._ops if op.in_flight]

    def parked_pops(self) -> list[PopOperation]:
        """POP requests parked for long polling (a crashed consumer's too), in the polling map."""
        return [op for ops in self.pop_polling.polling_map.values() for op in ops if op.parked]

    def pop(self, request: PopRequest) -> PopOperation:
        """begin_pop and run it to completion or parking in one go (no interleaving)."""
        op = self.begin_pop(request)
        op.run_to_end()
        return op

    def ack(self, group: str, topic: str, queue_id: int, offset: int, extra_info: str | None) -> int:
        """ACK_MESSAGE; returns the response code."""
        return ack_message(self, group, topic, queue_id, offset, extra_info)

    def batch_ack(self, group: str, entries: list[AckEntry]) -> list[int]:
        """BATCH_ACK_MESSAGE (v5.5 profile); one code per entry."""
        return batch_ack(self, group, entries)

    def batch_ack_without_acks(self, body: str) -> int:
        """BATCH_ACK_MESSAGE with a body no client sends (ack_processor.BATCH_ACK_BODY_KINDS)."""
        return batch_ack_without_acks(self, body)

    def change_invisible_time(self, group: str, topic: str, queue_id: int, offset: int, extra_info: str | None,
                              invisible_time: int) -> ChangeInvisibleResult:
        """CHANGE_MESSAGE_INVISIBLETIME."""
        return change_invisible_time(self, group, topic, queue_id, offset, extra_info, invisible_time)

    # -- background steps -----------------------------------------------------------------------
    def buffer_merge_scan(self, elapsed_ms: int = 0) -> None:
        """One PopBufferMergeService scan (Java: every 5 ms); ``elapsed_ms`` is how long it took
        (a slow scan stops the buffer's serving, PopBufferMergeService#scan)."""
        self.buffer_merge.scan(elapsed_ms)

    def revive_step(self, queue_id: int) -> list[RevivedMessage]:
        """One round of the revive service of revive queue ``queue_id``."""
        out = self.revive_services[queue_id].revive_step()
        self.revived.extend(out)
        return out

    def services_quiet_until(self) -> int | None:
        """The earliest time a buffer scan or a timer delivery may change anything (None: now).
        Before it, running those two services only moves the timer's read time."""
        quiet = self.buffer_merge.quiet_until()
        due = self.timer.next_delivery()
        return quiet if quiet is None or due is None else min(quiet, due)

    def timer_step(self) -> int:
        """Deliver due timer messages (CK/ACK into the revive topic)."""
        return self.timer.timer_step(self.clock.now())

    def offset_flush_step(self) -> bool:
        """The consumer-offset persist timer (flushConsumerOffsetInterval)."""
        # BrokerController also persists consumerOrderInfoManager every 10 s (own schedule).
        self.order_info.flush_step()
        return self.offsets.flush_step(self.clock.now())

    def long_polling_step(self) -> int:
        """The long-polling services: 5.5.0's order-lock timer first (its due lock-free
        notifications), then PopLongPollingService's timeout scan: wake parked requests that
        have timed out (they re-run); the number the scan woke."""
        for topic, group, queue_id in self.order_info.take_lock_free(self.clock.now()):
            self.notify_long_polling_request_if_need(topic, group, queue_id)
        return self.pop_polling.timeout_step(self.clock.now())

    def notify_long_polling_request_if_need(self, topic: str, group: str, queue_id: int) -> None:
        """5.5.0 PopMessageProcessor#notifyLongPollingRequestIfNeed (QueueLevelConsumerOrderInfoLockManager
        #notifyLockIsFree): messages past both the buffered and the committed offset wake a
        parked request of all queues, else one of this queue."""
        offset = max(self.buffer_merge.get_latest_offset(build_lock_key(topic, group, queue_id)),
                     self.committed_offset(group, topic, queue_id))
        if self.max_offset(topic, queue_id) > offset and \
                not self.pop_polling.notify_message_arriving(topic, group, -1):
            self.pop_polling.notify_message_arriving(topic, group, queue_id)

    # -- faults -----------------------------------------------------------------------------------
    def persist_then_restart(self) -> None:
        """The broker restarts right after its persist tasks ran: the consumer offsets and the
        consumer order info written (BrokerController's scheduled persists, the ones
        shutdownBasicService also runs: 5.0.0:1305/1320, 5.5.0:1752/1757), then ``restart``.
        The merge buffer is lost as on every restart here (a graceful shutdown would drain it
        first: PopBufferMergeService#run's tail, not modelled)."""
        self.offsets.persist(self.clock.now())
        self.order_info.persist()
        self.restart()

    def graceful_restart(self) -> bool:
        """A graceful shutdown, then a start: BrokerController#shutdownBasicService stops the
        merge thread first, whose run() tail drains the buffer (5.5.0 BrokerController:1567-1568,
        5.0.0:1244; PopBufferMergeService#shutdown_drain), then persists the consumer offsets
        (with what the drain committed) and the order info (5.5.0:1752/1757, 5.0.0:1305/1320);
        then ``restart``. False when the drain never ends (the real thread would spin while the
        shutdown goes on)."""
        drained = self.buffer_merge.shutdown_drain()
        self.persist_then_restart()
        return drained

    def restart(self) -> None:
        """Broker restart: memory buffers, locks, polling and in-flight pops lost; store, timer
        log, topics and groups kept; consumer offsets as of the last flush."""
        for op in self._ops:
            op.abort()
        self.pop_polling.clear()
        self.offsets.restart()
        self.order_info.restart()
        # A new PopMessageProcessor: ckMessageNumber = new AtomicLong() (lockstep replay found
        # the model's counter surviving a restart).
        self._ck_message_number = 0
        # ... and `random = new Random(System.currentTimeMillis())` (queue start, retry-first).
        # Any seed is Java's behaviour; the model takes its original seed again, as the lockstep
        # harness does for the new processor (lockstep found the model's sequence continuing).
        self.rng = self.rng.reseeded()
        self.store.recover(redispatch=self.config.recover_redispatches_past_cq_max)
        self.timer.restart()
        self._start_memory_services()
        self.restarts += 1

    # -- writes used by processors --------------------------------------------------------------
    def next_ck_message_number(self) -> int:
        """ckMessageNumber.getAndIncrement()."""
        n = self._ck_message_number
        self._ck_message_number += 1
        return n

    def ack_json(self, ack: AckMsg) -> str:
        """The ACK message body in this profile's JSON form."""
        return ack.to_json(self.config.ack_json_short_names)

    def put_revive_message(self, msg: MessageExt, site: str = "ack") -> bool:
        """Put into the revive topic: through the timer when it carries a deliver time. False
        when the store refuses the put (a store put failure at ``site``): nothing is written."""
        msg.topic = self.revive_topic
        if self.put_faults.take(site):
            return False
        if msg.deliver_time_ms - self.clock.now() > TIMER_MAX_DELAY_MS:
            # HookUtils#transformTimerMessage (5.0.0:186, 5.5.0:221): a deliver time more than
            # timerMaxDelaySec (3 days) ahead is WHEEL_TIMER_MSG_ILLEGAL, a refused put -- e.g.
            # the CK of a POP or changeInvisibleTime whose invisibleTime exceeds 3 days.
            return False
        # Every revive-topic message has a deliver time (setDeliverTimeMs), so Java's put always
        # passes HookUtils#transformTimerMessage, which stores a due one at once; a model time
        # at or below 0 (the model's clock starts at 1e6 ms, Java's at epoch time: an
        # invisibleTime near Integer.MIN_VALUE) is such a due one, not "no deliver time".
        self.timer.put(msg)
        return True

    def put_ck_message(self, ck: PopCheckPoint, revive_qid: int, site: str = "buffer_ck") -> int:
        """buildCkMsg + put: delivered at reviveTime - 1 s; returns a non-negative marker offset,
        or -1 when the store refused the put.

        With the timer the real put result's logicsOffset is the timer topic's; the model
        returns the timer sequence number (only its sign matters to the buffer).
        """
        msg = MessageExt(topic=self.revive_topic, queue_id=revive_qid,
                         body=ck.to_json(self.config.ck_has_reput_times).encode(), tags=CK_TAG,
                         deliver_time_ms=ck.revive_time - ACK_TIME_INTERVAL, born_timestamp=self.clock.now())
        if not self.put_revive_message(msg, site):
            return -1
        return self._ck_message_number

    def notify_retry_arriving(self, ck_topic: str, retry_topic: str, cid: str, retry_queue_id: int) -> None:
        """A revive put a message of ``cid`` into ``retry_topic``: wake the group's parked POPs
        as the release does (BrokerConfig.revive_wakes_retry_queue_id)."""
        if self.config.revive_wakes_retry_queue_id:
            # 5.5.0 notifyMessageArrivingFromRetry: origin topic = the retry topic past
            # %RETRY% + originGroup + 1 character
            origin = retry_topic[len(RETRY_GROUP_TOPIC_PREFIX) + len(cid) + 1:]
            if retry_queue_id >= 0:
                self.pop_polling.notify_message_arriving(origin, cid, -1)
            self.pop_polling.notify_message_arriving(origin, cid, retry_queue_id)
        else:
            self.pop_polling.notify_message_arriving(parse_normal_topic(ck_topic, cid), cid, -1)

    def _on_put(self, msg: MessageExt) -> None:
        """ReputMessageService → notifyMessageArriving for long polling (POP and pull)."""
        self.pop_polling.notify_topic_queue(msg)
        self.pull_hold.notify_message_arriving(msg.topic, msg.queue_id)

    # -- the push consumer's requests (ConsumerBrokerApi) ----------------------------------------
    def pull_message(self, header: PullMessageRequestHeader) -> PullMessageResponse | None:
        """PULL_MESSAGE: the response, or None while the request is held for long polling."""
        return self.pull_processor.process_request(header, True)

    def pull_hold_step(self) -> list[tuple[PullMessageRequestHeader, PullMessageResponse]]:
        """PullRequestHoldService#checkHoldRequest: responses of held pulls woken by a message
        or by their time-out since the last step."""
        return self.pull_hold.check_hold_request()

    def register_consumer(self, group: str, client_id: str, topics: tuple[str, ...], broadcast: bool = False,
                          subscription: SubscriptionData = SubscriptionData(), active: bool = False) -> int:
        """HEART_BEAT for a consumer: the group's retry topic, then ConsumerManager#registerConsumer
        with ``subscription`` on each topic, and its REGISTER event's ConsumerFilterManager#register.
        ``broadcast``: the heartbeat's messageModel is BROADCASTING; ``active``: its consumeType
        is CONSUME_ACTIVELY (a pull consumer). No answer the model gives depends on either: 5.0.0
        refuses a broadcast pull only when an admin turned the group's consumeBroadcastEnable
        off, and 5.5.0's BroadcastOffsetManager answers a client that is not the proxy's -1
        (queryInitOffset), so its pulls read as clustering ones (an active consumer's are not
        broadcast ones at all: PullMessageProcessor#isBroadcast:848)."""
        create_retry_topic_at_heartbeat(self, group)
        self.consumer_manager.register_consumer(group, client_id, tuple(topics), subscription)
        for topic in topics:
            self.consumer_filters.register(topic, group, subscription.sub_string, subscription.expression_type,
                                           subscription.sub_version)
        return rc.SUCCESS

    def unregister_consumer(self, group: str, client_id: str) -> int:
        """UNREGISTER_CLIENT (or the channel closing)."""
        self.consumer_manager.unregister_consumer(group, client_id)
        return rc.SUCCESS

    def get_consumer_id_list(self, group: str) -> list[str]:
        """GET_CONSUMER_LIST_BY_GROUP."""
        return self.consumer_manager.get_consumer_id_list(group)

    def topic_queues(self, topic: str) -> list[MessageQueue]:
        """The topic's queues as the route gives them (readQueueNums on this broker)."""
        return [MessageQueue(topic, self.broker_name, q) for q in range(self.topics.get(topic, 0))]

    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int:
        """QUERY_CONSUMER_OFFSET (ConsumerManageProcessor#queryConsumerOffset); OffsetNotFound
        for QUERY_NOT_FOUND."""
        offset = self.offsets.query_offset(group, mq.topic, mq.queue_id)
        if offset >= 0:
            return offset
        min_offset = self.store.get_min_offset_in_queue(mq.topic, mq.queue_id)
        if min_offset <= 0:
            if not self.config.query_offset_zero_needs_message or \
                    self.store.look_message_by_offset(mq.topic, mq.queue_id, 0) is not None:
                return 0
        raise OffsetNotFound(f"{group} {mq.topic}:{mq.queue_id}")

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None:
        """UPDATE_CONSUMER_OFFSET (ConsumerManageProcessor#updateConsumerOffset); 5.5.0 ignores it
        while an admin's reset of the queue is pending (:192-200, "Offset has been previously reset")."""
        if self.config.server_side_reset_offset and self.offsets.has_offset_reset(mq.topic, group, mq.queue_id):
            return
        self.offsets.commit_offset("client", group, mq.topic, mq.queue_id, offset)

    def queue_offset_at(self, topic: str, queue_id: int, index: int) -> int:
        """The queue offset the message at consume-queue index ``index`` carries (inspection;
        MessageStore.queue_offset_at)."""
        return self.store.queue_offset_at(topic, queue_id, index)

    def get_max_offset(self, mq: MessageQueue) -> int:
        """GET_MAX_OFFSET."""
        return self.store.get_max_offset_in_queue(mq.topic, mq.queue_id)

    def search_offset(self, mq: MessageQueue, timestamp: int) -> int:
        """SEARCH_OFFSET_BY_TIMESTAMP: the first offset stored at or after ``timestamp`` (the
        max offset when none)."""
        for index, msg in self.store.live_units(mq.topic, mq.queue_id):
            if msg.store_timestamp >= timestamp:
                return index  # ConsumeQueue#getOffsetInQueueByTime answers a unit's index
        return self.store.get_max_offset_in_queue(mq.topic, mq.queue_id)

    def consumer_send_msg_back(self, group: str, msg: MessageExt, delay_level: int, max_reconsume_times: int) -> int:
        """CONSUMER_SEND_MSG_BACK for ``msg`` (found by its commit-log offset, checked against
        its topic as the client names it)."""
        return consumer_send_msg_back(self, group, msg.commit_log_offset, delay_level, msg.topic, max_reconsume_times)

    def send_message_back_as_normal_message(self, group: str, msg: MessageExt, max_reconsume_times: int) -> int:
        """The client's fallback send to the retry topic (see send_back)."""
        return send_message_back_as_normal_message(self, group, msg, max_reconsume_times)

    def lock_batch_mq(self, group: str, client_id: str, mqs: list[MessageQueue]) -> set[MessageQueue]:
        """LOCK_BATCH_MQ: RebalanceLockManager#tryLockBatch."""
        return self.rebalance_locks.try_lock_batch(group, mqs, client_id)

    def unlock_batch_mq(self, group: str, client_id: str, mqs: list[MessageQueue]) -> None:
        """UNLOCK_BATCH_MQ."""
        self.rebalance_locks.unlock_batch(group, mqs, client_id)

    # -- inspection ---------------------------------------------------------------------------------
    def buffered_checkpoints(self) -> list[PopCheckPointWrapper]:
        """CKs in the merge buffer with their acked bits (``bits``) and stored state."""
        return self.buffer_merge.live_wrappers()

    def stored_checkpoints(self) -> list[StoredCheckpoint]:
        """CK messages in the timer or in a revive queue beyond that queue's committed revive offset."""
        out: list[StoredCheckpoint] = []
        for m in self.timer.pending():
            if m.tags == CK_TAG:
                out.append(StoredCheckpoint(PopCheckPoint.from_json(m.body.decode()), m.queue_id, -1, True))
        for qid in range(self.config.revive_queue_num):
            committed = self.offsets.query_offset(REVIVE_GROUP, self.revive_topic, qid)
            for m in self.store.snapshot_queue(self.revive_topic, qid):
                if m.tags == CK_TAG and m.queue_offset > committed:
                    ck = PopCheckPoint.from_json(m.body.decode())
                    if ck.topic is not None and ck.cid is not None:  # the revive skips the others
                        out.append(StoredCheckpoint(ck, qid, m.queue_offset, False))
        return out

    def stored_acks(self) -> list[AckMsg]:
        """ACK (and BatchAck, per offset) messages in the timer or in the revive topic (all of
        them, consumed or not)."""
        msgs = list(self.timer.pending())
        for qid in range(self.config.revive_queue_num):
            msgs.extend(self.store.snapshot_queue(self.revive_topic, qid))
        out: list[AckMsg] = []
        for m in msgs:
            if m.tags == ACK_TAG:
                out.append(AckMsg.from_json(m.body.decode()))
            elif m.tags == BATCH_ACK_TAG:  # one AckMsg per offset of a 5.5.0 BatchAckMsg
                out.extend(BatchAckMsg.from_json(m.body.decode()).to_acks())
        return out

    def committed_offset(self, group: str, topic: str, queue_id: int) -> int:
        """The consumer offset as queryOffset returns it (-1 when none)."""
        return self.offsets.query_offset(group, topic, queue_id)

    def committed_offsets(self) -> dict[tuple[str, str, int], int]:
        """Every committed offset: {(group, topic, queueId): offset}."""
        return self.offsets.offsets()

    def revive_offsets(self) -> dict[int, int]:
        """Committed revive offset per revive queue."""
        return {q: self.offsets.query_offset(REVIVE_GROUP, self.revive_topic, q) for q in range(self.config.revive_queue_num)}

    def retry_messages(self, group: str, topic: str) -> list[MessageExt]:
        """Live messages of the POP retry topic of (group, topic)."""
        retry = build_pop_retry_topic(topic, group)
        out: list[MessageExt] = []
        for qid in range(self.topics.get(retry, 0)):
            out.extend(self.store.snapshot_queue(retry, qid))
        return out

    def min_offset(self, topic: str, queue_id: int) -> int:
        """getMinOffsetInQueue."""
        return self.store.get_min_offset_in_queue(topic, queue_id)

    def max_offset(self, topic: str, queue_id: int) -> int:
        """getMaxOffsetInQueue."""
        return self.store.get_max_offset_in_queue(topic, queue_id)

    def timer_pending(self, readable_only: bool = False) -> list[MessageExt]:
        """Messages waiting in the timer (``readable_only``: whose copy retention left)."""
        return self.timer.pending(readable_only)
