"""BrokerConfig / MessageStoreConfig values the model reads, per profile.

Every difference between releases (v5.0, v5.5) is a field here, set per profile in
RELEASE_SWITCHES (see spec/profiles.md); code never tests
the profile name.
"""

from __future__ import annotations

import attrs

from reference.common.profile import config_for_profile


@attrs.frozen
class BrokerConfig:
    """Broker-side configuration and profile switches (see spec/profiles.md).

    Defaults are RocketMQ's (BrokerConfig / MessageStoreConfig at rocketmq-all-5.0.0).
    """

    profile: str
    broker_name: str = "broker-a"
    cluster_name: str = "DefaultCluster"
    # BrokerConfig#reviveQueueNum, reviveInterval, reviveScanTime, reviveMaxSlow
    revive_queue_num: int = 8
    revive_interval: int = 1000
    revive_scan_time: int = 10000
    # PopBufferMergeService thresholds
    enable_pop_buffer_merge: bool = False
    pop_ck_stay_buffer_time: int = 10 * 1000
    pop_ck_stay_buffer_time_out: int = 3 * 1000
    pop_ck_max_buffer_size: int = 200000
    pop_ck_offset_max_queue_size: int = 20000
    # PopBufferMergeService scan period (ms): the driver calls scan on it.
    pop_buffer_merge_scan_interval: int = 5
    # Long polling (PopMessageProcessor#polling)
    pop_polling_size: int = 1024
    max_pop_polling_size: int = 100000
    # ConsumerOffsetManager persistence (BrokerController flush period)
    flush_consumer_offset_interval: int = 1000 * 5
    # PopMessageProcessor: maxMsgNums limit
    pop_max_msg_nums: int = 32
    # Retry-first rule: v5.0 `randomQ % 5 == 0`; v5.5 `randomQ < popFromRetryProbability`.
    retry_first_by_probability: bool = False
    pop_from_retry_probability: int = 20
    # v5.5 adds BATCH_ACK_MESSAGE (AckMessageProcessor#processBatchAck); v5.0 lacks it.
    supports_batch_ack: bool = False
    # AckMsg JSON: v5.5 annotates short names ("ao", "so", ...); v5.0 uses bean names.
    ack_json_short_names: bool = False
    # PopCheckPoint gains "rp" (rePutTimes) on v5.5; null is omitted by fastjson anyway.
    ck_has_reput_times: bool = False
    # PopCheckPoint.queueId is byte on v5.0 (ck.setQueueId((byte) queueId)), int on v5.5;
    # also the mechanism switch for F9 (a queue id >= 128 names another queue, spec/findings/F9.md).
    ck_queue_id_is_byte: bool = True
    # MessageStoreConfig: nextOffsetCorrection inputs
    broker_role_slave: bool = False
    offset_check_in_slave: bool = False
    # DefaultMessageStore MAX_PULL_MSG_SIZE
    max_pull_msg_size: int = 128 * 1024 * 1024
    # PopReviveService#reviveMsgFromCk "skip ck from last epoch" (popTime < storeTimestamp):
    # present at rocketmq-all-5.0.0, gone on v5.5.
    revive_skips_last_epoch: bool = True
    # Timer wheel precision (TimerMessageStore timerPrecisionMs): deliveries happen at the
    # slot, i.e. deliver time rounded down to a multiple of it.
    timer_precision_ms: int = 1000
    # SubscriptionGroupManager#findSubscriptionGroupConfig auto-creates a missing group.
    auto_create_subscription_group: bool = True
    # An admin's offset reset of one queue (spec/profiles.md "Group deletion and offset reset"):
    # v5.0 mqadmin resetOffsetByTime -b -q sends UPDATE_CONSUMER_OFFSET, a plain commitOffset;
    # v5.5 INVOKE_BROKER_TO_RESET_OFFSET with useServerSideResetOffset (default true):
    # assignResetOffset, consumed by the queue's next POP (resetPopOffset), acks and client
    # commits held back while it is pending.
    server_side_reset_offset: bool = False
    # v5.5 PopBufferMergeService#scan asks findSubscriptionGroupConfig of each buffered CK's
    # group (isSubscriptionGroupNotExist:218-222), which re-creates a deleted group (auto-create)
    buffer_scan_finds_group: bool = False
    # v5.5 AdminBrokerProcessor#deleteSubscriptionGroup:1703-1704 tests `cleanOffset ||
    # LiteMetadataUtil.isLiteGroupType(group)`: without cleanOffset, isLiteGroupType asks
    # findSubscriptionGroupConfig, which re-creates the group just deleted (auto-create)
    delete_group_finds_group: bool = False
    # ConsumerManageProcessor#queryConsumerOffset for a group without an offset on a queue whose
    # min offset is 0: v5.0 answers 0 unless offset 0 is on disk (never, in the model);
    # v5.5 answers 0 only when offset 0 is in memory, i.e. the queue holds a message.
    query_offset_zero_needs_message: bool = False
    # -- mechanism switches (popverify/findings/attribution.py): each True reproduces the Java
    # behaviour behind one known finding (spec/properties.md#known-findings); False removes
    # exactly that cause. Both profiles keep the defects; only attribution flips them.
    # mechanism switch for F2: ChangeInvisibleTimeProcessor accepts a handle whose invisible
    # time has passed (its CK may already be revived); False answers NO_MESSAGE instead.
    change_invisible_accepts_expired: bool = True
    # mechanism switch for F3: the new CK of changeInvisibleTime takes popTime = now even when
    # that equals the old handle's popTime, so its merge key can equal the old CK's; False
    # moves it to the next millisecond (a collision-free key for the same message).
    change_invisible_same_ms_key: bool = True
    # mechanism switch for F4: addAk refuses an ack that comes late in its CK's life even
    # while the CK is still unstored in the buffer, so the ACK message can reach the revive
    # queue before the CK; False merges it into the buffered CK (stored in order by scan).
    ack_bypasses_unstored_ck: bool = True
    # mechanism switch for F6: PopBufferMergeService#commitOffset commits nextBeginOffset
    # even when it is below the committed offset; False commits only a larger offset.
    buffer_commit_moves_offset_back: bool = True
    # mechanism switch for F7: AdminBrokerProcessor#deleteTopic (5.0.0 and 5.5.0
    # deleteTopicInBroker) never touches PopBufferMergeService, so the commit-offset queue of
    # a deleted topic's queues survives and getPopOffset of the re-created queue starts at its
    # stale nextBeginOffset; False drops those queues with the topic.
    delete_topic_keeps_buffer_offsets: bool = True
    # mechanism switch for F10: ConsumerOffsetManager#cleanOffsetByTopic (5.0.0:73-86, 5.5.0:88-104)
    # removes a deleted topic's offsets in memory only; the file keeps them until the next
    # scheduled persist (BrokerController, flushConsumerOffsetInterval), so a broker that
    # crashes before it reloads them into the re-created topic. False persists the removal.
    delete_topic_offsets_unpersisted: bool = True
    # mechanism switch for F11: CommitLog#getMessage reads commit-log position 0 with
    # findMappedFileByOffset(offset, returnFirstOnNotFound = offset == 0) (5.0.0 CommitLog:
    # getMessage, MappedFileQueue#findMappedFileByOffset; same at 5.5.0): once the first file is
    # deleted, the store's first message's unit reads the oldest remaining file's first
    # message (spec/broker.md "Position 0 reads another message"). False reads nothing there.
    position_zero_reads_first_file: bool = True
    # mechanism switch for F22: a consume queue loaded at a restart starts with minLogicOffset 0,
    # and ConsumeQueue#correctMinOffset (both releases) counts its fillPreBlank units (commit-log
    # position 0) as valid while the commit log starts at 0: the queue's min offset becomes 0,
    # below its first message, and a read from 0 takes the blank unit for a removed message,
    # rolls to the next commit-log file and skips every unit that points into file 0
    # (spec/findings/F22.md). False: a loaded queue keeps its first real unit as min offset.
    blank_units_valid_after_restart: bool = True
    # mechanism switch for F12: AckMessageProcessor's orderly branch (5.0.0 processRequest:148-185,
    # 5.5.0 #ackOrderly) commits what commitAndNext answers, and commitAndNext answers offset + 1
    # for a queue without order info (ConsumerOrderInfoManager 5.0.0:139-146, QueueLevelConsumerManager
    # 5.5.0:215-222): an orderly ack of a handle popped from a deleted topic commits into the
    # re-created queue. False: an orderly ack of a POP that read an earlier incarnation of the
    # topic commits nothing (the model's record of incarnations; Java has no such check).
    orderly_ack_commits_across_incarnations: bool = True
    # mechanism switch for F14: PopMessageProcessor never reads the retry topic for an orderly POP
    # (`needRetry && !requestHeader.isOrder()` and the fallback's `!requestHeader.isOrder()`:
    # 5.0.0 processRequest:355/381, 5.5.0:527/550), so a message revived from a non-orderly POP
    # of a group whose consumers pop orderly stays in %RETRY% for good. False: an orderly POP
    # falls back to the retry topic as a non-orderly one does (read orderly).
    orderly_pop_skips_retry: bool = True
    # mechanism switch for F16: PopBufferMergeService#scanGarbage (5.0.0:181-212, 5.5.0:188-218)
    # drops a commit-offset queue unused for 5 minutes even while it holds pops whose
    # nextBeginOffset is not committed (a CK with a long invisible time, not acked); the next
    # getPopOffset starts below them and re-delivers invisible messages. False keeps such a queue.
    buffer_garbage_drops_pending_pops: bool = True
    # mechanism switch for F17: PopReviveService#reviveMsgFromCk reads a CK's message with
    # EscapeBridge#getMessage (5.0.0:259-272; 5.5.0 #getMessageAsync:305-324) = getMessage(offset,
    # 1).get(0), never checking its queue offset: once retention removed that message, the queue's
    # next live message is revived in its place (a duplicate). False revives nothing then.
    revive_takes_next_message: bool = True
    # mechanism switch for F18: only an orderly POP asks the order info whether the queue's batch
    # is still held (`isOrder && checkBlock`: PopMessageProcessor#popMsgFromQueue 5.0.0:482,
    # 5.5.0:739-740), and an orderly POP commits its batch's start offset and writes no CK
    # (5.0.0:524-528, 5.5.0:817); so a non-orderly POP of the same group (a group switched from
    # concurrent to orderly, or a client of the other kind) reads the held batch again. False: a
    # non-orderly POP skips a queue whose orderly batch is not fully acked.
    concurrent_pop_ignores_orderly_hold: bool = True
    # mechanism switch for F19: with enableSkipLongAwaitingAck (5.5.0, off by default) a revive
    # round makes a mock CK for an ACK whose CK it has not read and, after the scan,
    # `consumeReviveObj.map.putAll(mockPointMap)` (PopReviveService#consumeReviveMessage
    # 5.5.0:466) replaces a real CK of the same key read later in that round: its un-acked
    # messages are never revived. False: a mock does not replace a CK the round read (and
    # 5.0.0, which has no mock CK: the switch is on in v5.5 only).
    mock_ck_replaces_read_ck: bool = False
    # --- H2: RocketMQ 5.5.0 switches (v5.5 follows 5.5.0; Java lines in spec/profiles.md) ---
    # ChangeInvisibleTimeProcessor: 5.0.0 rejects offset > maxOffset, 5.5.0 offset >= maxOffset.
    change_invisible_max_offset_exclusive: bool = False
    # AckMessageProcessor: 5.0.0 calls addAk before ExtraInfoUtil.getInvisibleTime (a buffered
    # ack never parses field 2); 5.5.0 appendAck parses every field first.
    ack_parses_invisible_time_first: bool = False
    # PopBufferMergeService#addCk / addCkJustOffset: 5.5.0 refuses a CK whose merge key is
    # already buffered; appendCheckPoint then fails and popMsgFromQueue leaves the queue's
    # messages out of the response (5.0.0 overwrote the buffered wrapper).
    buffer_merge_key_conflict_guard: bool = False
    # PopMessageProcessor#getInitOffset (5.5.0): retry topics start at MIN whatever the init
    # mode; MAX starts at 0 when offset 0 is still in memory (initPopOffsetByCheckMsgInMem,
    # default true); the initial offset is committed in either mode. 5.0.0 getPopOffset: MAX
    # starts at maxOffset - 1 and only MAX commits it.
    pop_init_offset_55: bool = False
    # BATCH_ACK_MESSAGE as 5.5.0 encodes it: the client groups handles into BatchAcks, the
    # broker writes one BatchAckMsg (BATCH_ACK_TAG) per group or merges it in the buffer.
    # Off: each entry is a single ack (how the model treated batch ack before).
    batch_ack_as_batch_ack_msg: bool = False
    # PopMessageProcessor#popMsgFromTopic (5.5.0): queue i of a topic is visited at
    # ((priorityOrderAsc ? readQueueNums - 1 - i : i) + randomQ) % readQueueNums, and
    # BrokerConfig#priorityOrderAsc defaults to true; 5.0.0 visits (randomQ + i) % n.
    # Found by lockstep replay (popverify conformance --stateful) on 5.5.0.
    pop_queue_order_desc: bool = False
    # PopMessageProcessor#popMsgFromQueue (5.5.0): with popResponseReturnActualRetryTopic false
    # (the default) a message popped from the retry topic is re-encoded with the request's
    # topic (`messageExt.setTopic(requestHeader.getTopic())`); the handle keeps the retry
    # topic. 5.0.0 answers the stored retry message as it is. Found by replaying F1's trace
    # on 5.5.0 (popverify confirm: `.response.messages[0].topic`).
    pop_retry_answers_request_topic: bool = False
    # PopBufferMergeService#putAckToStore: 5.5.0 sets the AckMsg's brokerName from the CK
    # (`ackMsg.setBrokerName(point.getBrokerName())`, JSON "bn"); 5.0.0 leaves it null. Found by
    # lockstep replay on 5.5.0.
    buffer_ack_has_broker_name: bool = False
    # PopMessageProcessor#popMsgFromQueue (5.5.0, lines 763-853): after an OFFSET_TOO_SMALL /
    # OVERFLOW_BADLY / FOUND_NULL correction the asynchronous chain re-reads at the corrected
    # offset but appendCheckPoint, buildStartOffsetInfo, addCkMock and the retry handle take
    # `finalOffset`, the offset before the correction. 5.0.0 reassigns `offset` and uses the
    # corrected one. Found by the retention differential (handle.ckQueueOffset, 5.5.0).
    pop_ck_takes_uncorrected_offset: bool = False
    # DefaultMessageStore#recover on a restart: 5.5.0's CommitLog#recoverNormally re-dispatches
    # every recovered commit-log message past the largest physical offset any consume queue
    # holds (ConsumeQueueStore#getDispatchFromPhyOffset; CommitLog 5.5.0:371-376), so a deleted
    # topic's trailing messages come back in its (re-created) queues; 5.0.0's recoverNormally
    # never dispatches (CommitLog 5.0.0:303-304). Found by the retention differential (case 94).
    recover_redispatches_past_cq_max: bool = False
    # CommitLog#asyncPutMessage 5.0.0:846-851 assigns the queue offset (assignOffset →
    # QueueOffsetAssigner#assignQueueOffset moves the table) before MessageExtEncoder#encode
    # (:1853-1888) refuses a body > maxMessageBodySize or properties > Short.MAX_VALUE, and
    # never gives it back: the queue's next message is stored with offset N + 1 at
    # consume-queue index N until a restart (recoverTopicQueueTable). 5.5.0 reads the offset
    # there and increases it only after the append (CommitLog 5.5.0:1047-1050, :1117).
    refused_put_burns_offset: bool = True
    # --- end H2 switches ---
    # --- H3 (issue 16): features modelled from the coverage gaps (spec/profiles.md) ---
    # PopReviveService#reviveRetry when the retry-topic put fails: 5.0.0 throws and the round
    # ends uncommitted (PopReviveService:115-117, run:466); 5.5.0 returns false and rePutCK
    # writes a one-message CK per failed offset (reviveMsgFromCk:578-590, rePutCK:608).
    revive_retry_failure_reputs_ck: bool = False
    # PopReviveService#rePutCK (5.5.0:634) puts the re-put CK with messageStore.putMessage and
    # ignores the result: when that put fails too, nothing holds the message any more and the
    # revive offset moves past its CK -- finding F8 (spec/findings/F8.md). Off (the cause
    # removed, for attribution only): a refused rePutCK put fails the round as 5.0.0's
    # reviveRetry does (uncommitted; the next round reads the CK again).
    reput_ck_put_unchecked: bool = False
    # --- end H3 switches ---
    # --- H5 (issue 16/17 item 3): request validation (spec/broker.md "Request validation") ---
    # PopMessageProcessor#processRequest refuses maxMsgNums > 32 and queueId >= readQueueNums
    # with SYSTEM_ERROR at 5.0.0 (lines 263, 287) and with INVALID_PARAMETER at 5.5.0 (265, 296).
    pop_refusal_invalid_parameter: bool = False
    # 5.5.0 processRequest:381 builds `new GetMessageResult(maxMsgNums)` (ArrayList capacities)
    # after the checks and before random.nextInt: a negative maxMsgNums throws
    # IllegalArgumentException, which the remoting layer answers SYSTEM_ERROR, nothing changed.
    # 5.0.0 sizes it by commercialSizePerMsg: a maxMsgNums <= 0 reads nothing (POLLING_TIMEOUT).
    pop_negative_max_msg_nums_throws: bool = False
    # A POP's bornTime (isTimeoutTooMuch, PopRequest#isTimeout): 5.0.0's processRequest(ctx)
    # (PopMessageProcessor:143) overwrites the client's with the broker's now; 5.5.0 keeps it and
    # sets only an unset (0) one to now (processRequest:237-240). A re-run keeps the stored one.
    pop_keeps_client_born_time: bool = False
    # 5.5.0 SubscriptionGroupManager#findSubscriptionGroupConfig:263-266 auto-creates a group only
    # if TopicValidator#validateGroup accepts its name (not blank, ^[%|a-zA-Z0-9_-]+$, at most 120
    # characters): a POP of another name answers SUBSCRIPTION_GROUP_NOT_EXIST. 5.0.0 creates any.
    validate_group_name: bool = False
    # --- end H5 switches ---
    # --- H4 (issue 16): orderly POP, broker side (spec/broker.md "Orderly POP") ---
    # The consumer order info: 5.0.0 broker/offset/ConsumerOrderInfoManager (one consumed count
    # per batch, checkBlock on lastConsumeTimestamp, ack commits only when the whole batch is
    # done, changeInvisibleTime has no orderly branch); 5.5.0 pop/orderly/QueueLevelConsumerManager
    # (per-offset next visible time and consumed count, commitAndNext checks popTime and commits
    # the first un-acked offset, ChangeInvisibleTimeProcessor#processChangeInvisibleTimeForOrder).
    order_info_queue_level: bool = False
    # mechanism switch (no finding; the ORD-1 mutant): False makes checkBlock never block, so an
    # orderly POP serves a queue whose previous batch is still in flight.
    order_check_block: bool = True
    # 5.0.0 ConsumerOrderInfoManager#encode (OrderInfo#encode: keys "c", "cm", "l", "o") is not
    # what fastjson's decode (:270-277, RemotingSerializable#fromJson into the bean properties)
    # reads back: every OrderInfo reloaded after a restart is empty, the next persist's autoClean
    # drops it (lastConsumeTimestamp 0, :246), and commitAndNext without an entry answers
    # offset + 1 (:135-138): an orderly ack commits past its batch's un-acked messages (F21).
    # False: decode restores the OrderInfo as persisted (5.5.0's QueueLevelConsumerManager does).
    order_info_lost_on_reload: bool = True
    # --- end H4 switches ---
    # AbstractSendMessageProcessor#consumerSendMsgBack: 5.0.0 refuses a send-back whose stored
    # message is not of the request's originTopic (SYSTEM_ERROR, "failed to check the topic
    # name", lines 158-165), so the send-back of a retried message (stored in %RETRY%, origin
    # topic reset by the client) fails and the client sends it as a normal message; 5.5.0 has no
    # such check. Found by the push coverage replay on 5.5.0 (consumer_send_msg_back.code).
    send_back_checks_origin_topic: bool = True
    # PullMessageProcessor#processRequest answers a queueId outside [0, readQueueNums) with
    # SYSTEM_ERROR at 5.0.0 (line 363) and INVALID_PARAMETER at 5.5.0 (line 376).
    pull_illegal_queue_invalid_parameter: bool = False
    # Which parked POPs of the group a revive's retry put wakes. 5.0.0
    # PopReviveService#reviveRetry:121-126 calls notifyMessageArriving(normal topic, cid, -1): the
    # POPs of all queues. 5.5.0 sets PROPERTY_ORIGIN_GROUP (#reviveRetry:134) and the store's
    # arriving listener calls PopLongPollingService#notifyMessageArrivingFromRetry (:181-199):
    # the POPs of all queues, then those parked on the origin topic's queue whose id is the retry
    # message's queue id (True). Found by covpop; lockstep agrees on both releases.
    revive_wakes_retry_queue_id: bool = False
    # revive4: MessageDecoder#messageProperties2String, whose length the store's size check
    # (MessageExtEncoder#encode, Short.MAX_VALUE) reads: 5.0.0 deletes the last separator
    # (rocketmq-common 5.0.0 MessageDecoder:595-597), 5.5.0 keeps it (:605-636), so 5.0.0's
    # string is one character shorter and takes one more (lockstep: a 32711-character pad beside
    # UNIQ_KEY is stored on 5.0.0, refused on 5.5.0). Read by the produce's and the revive copy's checks.
    properties_keep_last_separator: bool = False
    # revive6: Message#getDeliverTimeMs without TIMER_DELIVER_MS: 5.0.0 is
    # Long.parseLong(getUserProperty(...)) (rocketmq-common 5.0.0 Message:228-230), a
    # NumberFormatException for a message the timer did not deliver (a producer's message of
    # another tag in the revive topic): consumeReviveMessage throws there, every round of that
    # revive queue; 5.5.0 answers 0 (:266-272)
    deliver_time_answers_zero: bool = False
    # --- issue 16 (revive): BrokerConfig booleans off by default that a run may switch on
    # (BROKER_OPTIONS below; spec/profiles.md "Broker options") ---
    # The BROKER_OPTIONS the release's BrokerConfig has (5.0.0: the push mode's and the buffer
    # thresholds; RELEASE_SWITCHES).
    broker_options_known: tuple[str, ...] = ()
    # BrokerConfig#enablePopBatchAck (5.5.0, default false): PopBufferMergeService#scan writes a
    # stored CK's acked bits as one BatchAckMsg (putBatchAckToStore:712) instead of one AckMsg each.
    enable_pop_batch_ack: bool = False
    # BrokerConfig#enableSkipLongAwaitingAck (5.5.0, default false): PopReviveService#
    # consumeReviveMessage lets an ACK without its CK in the round move endTime, and one read
    # more than reviveAckWaitMs after its deliver time becomes a mock CK (mockCkForAck:470).
    enable_skip_long_awaiting_ack: bool = False
    # BrokerConfig#reviveAckWaitMs (5.5.0: 3 minutes)
    revive_ack_wait_ms: int = 3 * 60 * 1000
    # BrokerConfig#useSeparateRetryQueue (5.5.0, default false): PopReviveService#
    # addRetryTopicIfNotExist:174-180 gives the POP retry topic as many queues as the normal
    # topic has write queues, and #getRetryQueueId:196-205 re-sends a message to the retry queue
    # of its own queue id instead of queue 0.
    use_separate_retry_queue: bool = False
    # --- end issue 16 (revive) switches ---
    # QueryAssignmentProcessor#setMessageRequestMode answers TOPIC_NOT_EXIST for a topic without
    # a config (5.5.0:319-324; 5.0.0 stores the mode of any topic but a retry topic)
    set_request_mode_checks_topic: bool = False
    # QueryAssignmentProcessor#doLoadBalance gives a clustering query of an LMQ topic (MixAll#isLmq)
    # its one queue 0 without a route lookup (5.5.0:180-184); 5.0.0 looks it up like any topic (:177)
    query_assignment_lmq_queue: bool = False
    # --- pull helper (issue 16): the push mode's options (PUSH_OPTIONS below) ---
    # BrokerConfig#serverLoadBalancerEnable (default true): off, QueryAssignmentProcessor#
    # doLoadBalance gives a clustering query every queue of the topic (5.0.0:185-187, 5.5.0:194-196)
    server_load_balancer_enable: bool = True
    # BrokerConfig#defaultMessageRequestMode (default PULL) POP: a query for a topic and group
    # without a SET_MESSAGE_REQUEST_MODE is in POP mode with defaultPopShareQueueNum (-1)
    # (QueryAssignmentProcessor#queryAssignment 5.0.0:112-127, 5.5.0:114-129)
    default_message_request_mode_pop: bool = False
    # BrokerConfig#litePullMessageEnable (default true): off, PullMessageProcessor#processRequest
    # refuses a LITE_PULL_MESSAGE with NO_PERMISSION (5.0.0:310-315, 5.5.0:325-331), before any
    # other check but the broker's read permission
    lite_pull_message_enable: bool = True
    # --- end pull helper switches ---
    # BrokerConfig#enableNotifyAfterPopOrderLockRelease (5.5.0, default true): the order lock
    # manager's lock-free notification (QueueLevelConsumerOrderInfoLockManager:56, 83); a run may
    # switch it off (BROKER_OPTIONS "enableNotifyAfterPopOrderLockRelease=false")
    notify_after_pop_order_lock_release: bool = True
    # polling helper: AdminBrokerProcessor#deleteTopic (5.5.0:786-800, clearRetryTopicWhenDeleteTopic
    # true by default) also deletes the POP retry topics of every group with offsets on the topic
    # (ConsumerOffsetManager#whichGroupByTopic): config, offsets, consume queues
    # (deleteTopicInBroker:819-826). 5.0.0 deletes the topic alone.
    delete_topic_clears_pop_retry: bool = False
    # polling helper: PopLongPollingService#pollRemotingCommands (5.5.0:421-433) decrements
    # totalPollingNum in a do-while, for the poll that finds the polling key empty too (after
    # requests of closed channels); 5.0.0 notifyMessageArriving:173-183 does not (1 / 0)
    polling_counts_empty_poll: int = 0
    # store and offsets helpers (issue 16): BrokerConfig#enablePropertyFilter (default false, both
    # releases): a pull whose subscription is SQL92 passes PullMessageProcessor#processRequest
    # (5.0.0:449-455, 5.5.0:478-484) and getMessage evaluates it on each stored message's
    # properties (ExpressionMessageFilter#isMatchedByCommitLog); a push option (OFFSETS_PUSH_OPTIONS)
    enable_property_filter: bool = False
    # polling3: 5.5.0 PopLongPollingService#notifyMessageArriving (:201-215, :239-249) tests a
    # parked request's filter against a put's arriving message (its tagsCode; its properties for
    # SQL92) unless the arrival is forced (`force`: the queue offset after the message is a multiple
    # of popLongPollingForceNotifyInterval, BrokerConfig 5.5.0:234, default 800; 0: never forced);
    # a request whose filter does not match goes back into its queue, unwoken. 5.0.0
    # PopMessageProcessor#notifyMessageArriving (:157-195) wakes it whatever the message.
    polling_filters_arrival: bool = False
    pop_long_polling_force_notify_interval: int = 800
    # polling3: BrokerConfig#initPopOffsetByCheckMsgInMem (5.5.0, default true): getInitOffset
    # (PopMessageProcessor:921-924) starts a MAX-mode group at offset 0 while offset 0's message is
    # still in memory; off, always at maxOffset - 1 (a run may switch it off: INIT_OFFSET_OPTION)
    init_pop_offset_by_check_msg_in_mem: bool = True

    @classmethod
    def for_profile(cls, name: str) -> "BrokerConfig":
        """The configuration of profile ``name``, a canonical name of
        reference.common.profile.PROFILE_NAMES (aliases are resolved by reference.profile.get_profile);
        ValueError otherwise."""
        return config_for_profile(cls, name, RELEASE_SWITCHES)


# buffer helper (issue 16): PopBufferMergeService's int thresholds, set small by a run
# ("<name>=<int>": the harness calls the release's int setter). Both releases have them
# (BrokerConfig 5.0.0:206-209, 5.5.0:228-231); the swarm draws them last (BROKER_OPTIONS).
BUFFER_THRESHOLD_OPTIONS: dict[str, str] = {
    # popCkStayBufferTime 3 s (default 10 s): a buffered CK is stored 3 s after its pop
    # (PopBufferMergeService#scan 5.0.0:241, 5.5.0:269) and acks merge only in its first 1.5 s
    # (#addAk 5.0.0:501, 5.5.0:564), so a partly acked CK is stored with its acked bits
    # (#putAckToStore, 5.5.0 #putBatchAckToStore) within the few seconds a run's steps last
    "popCkStayBufferTime=3000": "pop_ck_stay_buffer_time",
    # popCkMaxBufferSize 1: a third buffered CK is refused (#addCk 5.0.0:451, 5.5.0:507)
    "popCkMaxBufferSize=1": "pop_ck_max_buffer_size",
    # popCkOffsetMaxQueueSize 1: a queue with a pop not yet committed refuses the next CK from the
    # buffer (#checkQueueOk 5.0.0:387, 5.5.0:434, #addCk 5.5.0:514) and #addCkJustOffset puts it
    # synchronously even with appendCkAsync (5.5.0:457, #putCkToStore:620)
    "popCkOffsetMaxQueueSize=1": "pop_ck_offset_max_queue_size",
}


# revive4 (issue 16): PopReviveService#run's idle back-off ceiling, BrokerConfig#reviveMaxSlow
# (a long, default 3; 5.0.0:202, 5.5.0:222), set to 1 by a run ("<name>=<int>": the harness calls
# the long setter). After a round that revives nothing the loop waits slow * reviveInterval and
# raises `slow` while it is below the ceiling (run 5.0.0:458-463, 5.5.0:702-707); the harness
# runs one pass of the loop per `revive` step, so `slow` is always 1 there and only a ceiling of
# 1 takes the "no raise" branch. A wait on the service thread is no state the model keeps (the
# model's revive is a step, not a thread): no field. Both releases have it; drawn last of all.
REVIVE_LOOP_OPTIONS: dict[str, str | None] = {
    "reviveMaxSlow=1": None,
}

# polling3 (issue 16): 5.5.0's popLongPollingForceNotifyInterval (a long: the harness calls the
# long setter) at 1, every arrival forced past the parked requests' filters
# (PopLongPollingService#notifyMessageArriving:208, 239), or 0, none ever forced (:208's
# `interval > 0`). The swarm draws at most one, last of all (ScenarioConfig.draw_domain).
POLLING_OPTIONS: tuple[str, ...] = ("popLongPollingForceNotifyInterval=1", "popLongPollingForceNotifyInterval=0")
# polling3: 5.5.0's initPopOffsetByCheckMsgInMem switched off (drawn after POLLING_OPTIONS)
INIT_OFFSET_OPTION = "initPopOffsetByCheckMsgInMem=false"
# revive5: BrokerConfig#autoCreateSubscriptionGroup (both releases, default true) switched off:
# SubscriptionGroupManager#findSubscriptionGroupConfig no longer creates a missing group, so a
# group the admin deleted stays gone until the admin creates it again (the run's group is created
# by the admin before its consumers start: PopWorld, the harness's createGroup); POP answers
# SUBSCRIPTION_GROUP_NOT_EXIST for a group that does not exist and mergeAndRevive skips its CKs
# (5.0.0:378, 5.5.0:523). Drawn last of all (ScenarioConfig.draw_domain).
AUTO_GROUP_OPTION = "autoCreateSubscriptionGroup=false"


# Profile -> the BrokerConfig fields whose value at that release differs from the defaults
# above (rocketmq-all-5.0.0). Adding a release: copy the newest entry, change what the new
# release changed (Java lines in spec/profiles.md).
RELEASE_SWITCHES: dict[str, dict[str, object]] = {
    "v5.0": {"broker_options_known": ("serverLoadBalancerEnable=false", "defaultMessageRequestMode=POP",
                                      "litePullMessageEnable=false", "filterSupportRetry", *BUFFER_THRESHOLD_OPTIONS,
                                      *REVIVE_LOOP_OPTIONS, "enablePropertyFilter", AUTO_GROUP_OPTION)},
    "v5.5": {
        "retry_first_by_probability": True,
        "supports_batch_ack": True,
        "ack_json_short_names": True,
        "ck_has_reput_times": True,
        "ck_queue_id_is_byte": False,
        "revive_skips_last_epoch": False,
        "query_offset_zero_needs_message": True,
        "change_invisible_max_offset_exclusive": True,
        "ack_parses_invisible_time_first": True,
        "buffer_merge_key_conflict_guard": True,
        "pop_init_offset_55": True,
        "batch_ack_as_batch_ack_msg": True,
        "pop_queue_order_desc": True,
        "revive_retry_failure_reputs_ck": True,
        "reput_ck_put_unchecked": True,
        "pop_retry_answers_request_topic": True,
        "buffer_ack_has_broker_name": True,
        "pop_ck_takes_uncorrected_offset": True,
        "recover_redispatches_past_cq_max": True,
        "refused_put_burns_offset": False,
        "pop_refusal_invalid_parameter": True,
        "pop_negative_max_msg_nums_throws": True,
        "pop_keeps_client_born_time": True,
        "validate_group_name": True,
        "order_info_queue_level": True,
        "order_info_lost_on_reload": False,
        "send_back_checks_origin_topic": False,
        "pull_illegal_queue_invalid_parameter": True,
        "revive_wakes_retry_queue_id": True,
        "properties_keep_last_separator": True,
        "deliver_time_answers_zero": True,
        "mock_ck_replaces_read_ck": True,
        "server_side_reset_offset": True,
        "buffer_scan_finds_group": True,
        "delete_group_finds_group": True,
        "set_request_mode_checks_topic": True,
        "query_assignment_lmq_queue": True,
        "delete_topic_clears_pop_retry": True,
        "polling_counts_empty_poll": 1,
        "polling_filters_arrival": True,
        "broker_options_known": ("enablePopBatchAck", "enableSkipLongAwaitingAck", "appendCkAsync", "appendAckAsync",
                                 "enableNotifyAfterPopOrderLockRelease=false", "useSeparateRetryQueue",
                                 "serverLoadBalancerEnable=false", "defaultMessageRequestMode=POP",
                                 "litePullMessageEnable=false", "filterSupportRetry", *BUFFER_THRESHOLD_OPTIONS,
                                 *REVIVE_LOOP_OPTIONS, "enablePropertyFilter", "enableBroadcastOffsetStore=false",
                                 *POLLING_OPTIONS, INIT_OFFSET_OPTION, "useServerSideResetOffset=false",
                                 AUTO_GROUP_OPTION),
    },
}

# Broker options: BrokerConfig booleans whose default is false that a run may switch on (the
# swarm draws them late, popverify/sim/scenario.py ScenarioConfig.broker_options), by Java name ->
# the BrokerConfig field above, or None for an option that changes nothing the model can see.
# The lockstep harness sets them by that name (setEnablePopBatchAck ...). A release whose
# BrokerConfig lacks one (broker_options_known) ignores it.
BROKER_OPTIONS: dict[str, str | None] = {
    "enablePopBatchAck": "enable_pop_batch_ack",
    "enableSkipLongAwaitingAck": "enable_skip_long_awaiting_ack",
    # 5.5.0 appendCkAsync / appendAckAsync: the buffer's CK and ACK puts (PopBufferMergeService
    # #putCkToStore:620, #putAckToStore:682, #putBatchAckToStore:737), AckMessageProcessor:308 and
    # ChangeInvisibleTimeProcessor:81 put through EscapeBridge#asyncPutMessageToSpecificQueue and
    # handle the result in thenAccept; on one broker with asynchronous flush and no slave the
    # store's future is complete when the put returns (CommitLog#handleDiskFlushAndHA), so the
    # handling runs inside the put, as the model's synchronous put does.
    "appendCkAsync": None,
    "appendAckAsync": None,
    # order helper: a BrokerConfig boolean whose default is true, switched off ("=false": the
    # harness calls its setter with false); drawn last of the options
    "enableNotifyAfterPopOrderLockRelease=false": "notify_after_pop_order_lock_release",
    # revive2 (issue 16): appended last, so the swarm draws it after every option above
    "useSeparateRetryQueue": "use_separate_retry_queue",
    # pull helper (issue 16): the push mode's options (PUSH_OPTIONS), appended last; a String
    # property is set by "<name>=<value>" (the harness's BrokerOptions#apply, as broker.conf)
    "serverLoadBalancerEnable=false": "server_load_balancer_enable",
    "defaultMessageRequestMode=POP": "default_message_request_mode_pop",
    "litePullMessageEnable=false": "lite_pull_message_enable",
    # BrokerConfig#filterSupportRetry (default false): PullMessageProcessor builds an
    # ExpressionForRetryMessageFilter (5.0.0:457, 5.5.0:486), which differs from
    # ExpressionMessageFilter only in isMatchedByCommitLog for a non-tag (SQL92) subscription,
    # refused before it with enablePropertyFilter off; with it on (store helper) the swarm's SQL92
    # pulls read the run's topic, not a retry topic, where the two filters agree: nothing the
    # model can see changes
    "filterSupportRetry": None,
    # buffer helper (issue 16): appended last; the swarm draws them after every other field
    **BUFFER_THRESHOLD_OPTIONS,
    # revive4 (issue 16): appended last; the swarm draws it after every other field
    **REVIVE_LOOP_OPTIONS,
    # offsets helper (issue 16): push-mode options drawn after every other field (OFFSETS_PUSH_OPTIONS)
    "enablePropertyFilter": "enable_property_filter",
    # 5.5.0 BrokerConfig#enableBroadcastOffsetStore (default true): off, PullMessageProcessor#
    # queryBroadcastPullInitOffset:888 answers -1 and #updateBroadcastPulledOffset:854 records
    # nothing; on, BroadcastOffsetManager#queryInitOffset answers a client that is not the
    # proxy's -1 as well (Broker#register_consumer): nothing the model can see changes
    "enableBroadcastOffsetStore=false": None,
    # offsets2 helper: 5.5.0 BrokerConfig#useServerSideResetOffset (default true) off: queryOffset
    # skips the pending-reset table (ConsumerOffsetManager:243), a pull skips its reset
    # (PullMessageProcessor#processRequest:542) and a client commit is not held back
    # (ConsumerManageProcessor#updateConsumerOffset:192). Drawn in push mode only; a push run's
    # reset_offset is then the UPDATE_CONSUMER_OFFSET that 5.5.0's DefaultMQAdminExtImpl#
    # resetOffsetByQueueId sends first (Broker#reset_offset, as 5.0.0's); its second request,
    # INVOKE_BROKER_TO_RESET_OFFSET, goes with it off to Broker2Client#resetOffset (the online
    # consumers told to reset themselves), which is not modelled.
    "useServerSideResetOffset=false": "server_side_reset_offset",
    # polling3: appended last; the swarm draws one at most, after every other field
    **dict.fromkeys(POLLING_OPTIONS, "pop_long_polling_force_notify_interval"),
    INIT_OFFSET_OPTION: "init_pop_offset_by_check_msg_in_mem",
    # revive5: appended last; the swarm draws it after every other field
    AUTO_GROUP_OPTION: "auto_create_subscription_group",
}
# The options the push mode draws (and the POP mode does not): only QueryAssignmentProcessor and
# PullMessageProcessor read them, which a push run reaches and a POP run never calls.
PUSH_OPTIONS: tuple[str, ...] = ("serverLoadBalancerEnable=false", "defaultMessageRequestMode=POP",
                                 "litePullMessageEnable=false", "filterSupportRetry")
# offsets helper: more push-mode options, drawn after every other field of a push configuration
OFFSETS_PUSH_OPTIONS: tuple[str, ...] = ("enablePropertyFilter", "enableBroadcastOffsetStore=false",
                                         "useServerSideResetOffset=false")


# An option name with this suffix sets its boolean to false (its default is true).
OFF_SUFFIX = "=false"


def applicable_options(config: BrokerConfig, names: tuple[str, ...]) -> tuple[str, ...]:
    """The options of ``names`` this release has, in BROKER_OPTIONS order; ValueError naming an
    unknown one."""
    unknown = [n for n in names if n not in BROKER_OPTIONS]
    if unknown:
        raise ValueError(f"unknown broker options {unknown}; known: {', '.join(BROKER_OPTIONS)}")
    return tuple(n for n in BROKER_OPTIONS if n in names and n in config.broker_options_known)


def option_value(name: str) -> bool | int:
    """The value an option sets: ``<name>=false`` False, ``<name>=<int>`` that int, else True
    (a bare name; ``<name>=<String>``, whose model field is the boolean "set to that value")."""
    if name.endswith(OFF_SUFFIX):
        return False
    value = name.split("=", 1)[1] if "=" in name else ""
    return int(value) if value.isdigit() else True


def with_options(config: BrokerConfig, names: tuple[str, ...]) -> BrokerConfig:
    """``config`` with the options of ``names`` this release has, each set to its value
    (option_value: switched on, ``<name>=false`` off, ``<name>=<int>`` that threshold,
    ``<name>=<String>`` its boolean field's True)."""
    fields = {n: BROKER_OPTIONS[n] for n in applicable_options(config, names)}
    return attrs.evolve(config, **{f: option_value(n) for n, f in fields.items() if f is not None})
