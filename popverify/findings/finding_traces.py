"""The minimal schedule of every confirmed finding (F1..F22), its ITF traces in the repository
(spec/findings/traces/Fn-<release>.itf.json) and their verdicts on Java
(spec/findings/verdicts.json), written by ``popverify confirm --findings --update-spec``.

Each finding's schedule is run on the model of every profile and replayed on that profile's
release: on the release the finding is in, the expected verdict is "reproduced"; where the
model says it is fixed (F1 and F3 on the newest release), "agrees; P holds there". Traces are
named by release, not profile, so a profile rename does not rename them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from popverify.findings.confirmation import Confirmation, Confirmer
from popverify.sim.scenario import Action, ScenarioConfig
from popverify.tools import PROJECT_ROOT

TRACES = PROJECT_ROOT / "spec" / "findings" / "traces"
VERDICTS = PROJECT_ROOT / "spec" / "findings" / "verdicts.json"
TABLE_START, TABLE_END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"
# The seed of every finding run: the schedules are explicit, the seed only feeds the model's
# random (PopMessageProcessor's queue start and retry-first draw; the harness gets the same).
SEED = 0


def _a(kind: str, *args: Any) -> Action:
    return Action(kind, tuple(args))


def _pop(c: int, queue: int, steps: int) -> list[Action]:
    return [_a("pop", c, queue, False), *[_a("pop_step", c) for _ in range(steps)]]


@attrs.frozen
class FindingTrace:
    """A finding's minimal schedule and the property it shows."""

    fid: str
    property_id: str
    mode: str
    config: ScenarioConfig
    schedule: tuple[Action, ...]
    origin: str   # where the schedule comes from (test, shrink command)


_SWARM_ACTIONS = ("produce", "pop", "pop_step", "ack", "change_invisible", "batch_ack", "advance", "scan", "timer",
                  "revive", "flush", "long_poll", "consumer_crash")

FINDING_TRACES: dict[str, FindingTrace] = {t.fid: t for t in (
    # pop, a put 3 ms after popTime inside the same request, the read, the crash
    FindingTrace("F1", "ALO-2", "pop",
                 ScenarioConfig(queues=2, consumers=2, invisible_time=10_000, enable_pop_buffer_merge=False),
                 (_a("pop", 1, 1, False), _a("advance", 3), _a("produce", 1), _a("pop_step", 1), _a("pop_step", 1),
                  _a("consumer_crash", 1)),
                 "tests/conformance/test_lockstep.py::test_f1_minimal_trace_reproduces_on_500"),
    # spec/findings/F2.md: changeInvisibleTime on the expired handle of a revived message
    FindingTrace("F2", "NSR-1", "pop", ScenarioConfig(queues=1, consumers=1, invisible_time=2000),
                 (_a("produce", 0), *_pop(0, 0, 2), _a("advance", 6000), _a("revive", 0),
                  _a("change_invisible", 0, 0, 15000)),
                 "tests/findings/test_attribution.py::test_f2_minimal_schedule"),
    # two changeInvisibleTime calls on one handle in one millisecond: the second CK has the
    # first one's merge key (shrunk from v5.0 swarm seed 152, 400 steps, keeping ALO-2/F3; the
    # POP's pop_steps written out so that it answers before the advance, as a lockstep replay
    # needs: confirm.py does not follow an in-flight POP that an advance completes)
    FindingTrace("F3", "ALO-2", "pop",
                 ScenarioConfig(queues=4, consumers=1, invisible_time=18_000, max_msg_nums=2,
                                enable_pop_buffer_merge=True, actions=tuple(a for a in _SWARM_ACTIONS if a != "revive")),
                 (_a("produce", 3), *_pop(0, 3, 4), _a("advance", 199), _a("change_invisible", 0, 27, 23_000),
                  _a("change_invisible", 0, 3, 24_000), _a("batch_ack", 0)),
                 "shrunk from `simulate --profile v5.0` swarm seed 152 (400 steps), keeping ALO-2/F3; pop_steps written out"),
    # a starved buffer scan (services off their periods): a clock jump past the CK's stay in
    # the buffer, the ack stored before the CK (shrunk from develop swarm seed 230, CKM-1/F4;
    # the put lands inside the POP of all queues, whose pop_steps are written out as for F3)
    FindingTrace("F4", "CKM-1", "pop",
                 ScenarioConfig(queues=4, consumers=3, invisible_time=54_000, max_msg_nums=3,
                                enable_pop_buffer_merge=True, services_on_period=False, faults=("clock_jump",),
                                actions=("produce", "pop", "pop_step", "ack", "change_invisible", "batch_ack", "advance",
                                         "timer", "revive", "consumer_crash")),
                 (_a("pop", 0, -1, False), _a("produce", 1), *[_a("pop_step", 0) for _ in range(6)], _a("clock_jump", 38_235), _a("ack", 0, 37),
                  _a("clock_jump", 40_597)),
                 "shrunk from `simulate --profile develop` swarm seed 230 (400 steps), keeping CKM-1/F4; pop_steps written out"),
    # push: retention moves the min offset of a queue whose group never flushed an offset; the
    # next owner starts at the max offset (shrunk from develop push swarm seed 22, ALO-3/F5)
    FindingTrace("F5", "ALO-3", "push",
                 ScenarioConfig(queues=1, consumers=2, invisible_time=10_000, max_msg_nums=4,
                                enable_pop_buffer_merge=False, faults=("consumer_crash", "dup_response", "expire"),
                                actions=("produce", "start", "shutdown", "rebalance", "pull", "deliver", "hold",
                                         "consume", "persist", "consumer_timer", "advance"), consume_fail_percent=19),
                 (_a("produce", 0), _a("produce", 0), _a("expire", 0, 3), _a("consumer_crash", 0)),
                 "shrunk from `simulate --mode push --profile develop` swarm seed 22 (300 steps), keeping ALO-3/F5; "
                 "a second message first since retention deletes whole commit-log files, never the newest"),
    # tests/sim/test_sim_findings.py::test_f6_scan_commit_offset_undoes_a_retention_correction
    FindingTrace("F6", "OFF-2", "pop",
                 ScenarioConfig(consumers=1, queues=2, enable_pop_buffer_merge=True, faults=("expire",), drain=False),
                 (_a("produce", 0), *_pop(0, 0, 2), _a("ack", 0, 0), _a("advance", 200), _a("produce", 0),
                  *_pop(0, 0, 2), _a("produce", 0), _a("produce", 1), _a("expire", 0, 3), *_pop(0, 0, 2),
                  _a("advance", 10_000)),
                 "tests/sim/test_sim_findings.py::test_f6_scan_commit_offset_undoes_a_retention_correction"),
    # tests/sim/test_sim_findings.py F7_SCHEDULE (buffer merge off)
    FindingTrace("F7", "ALO-1", "pop",
                 ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=False, faults=("delete_recreate",)),
                 (_a("produce", 0), _a("pop", 0, 0, False), _a("pop_step", 0), _a("delete_recreate"),
                  _a("produce", 0)),
                 "tests/sim/test_sim_findings.py::test_f7_deleted_topic_commit_queue_skips_the_recreated_topics_first_message"),
    # pop one message, the consumer crashes, its CK comes due, the next two store puts fail:
    # reviveRetry's retry-topic put, then (5.5.0) rePutCK's; 5.0.0 fails the round and retries
    FindingTrace("F8", "ALO-2", "pop",
                 ScenarioConfig(queues=1, consumers=1, invisible_time=5000, enable_pop_buffer_merge=False,
                                faults=("store_put_fail",)),
                 (_a("produce", 0), *_pop(0, 0, 3), _a("consumer_crash", 0), _a("advance", 12_000), _a("timer"),
                  _a("store_put_fail", 2), _a("revive", 0)),
                 "tests/broker/test_store_put_failure_f8.py (the fuzz signature ALO-2/unexplained of "
                 "`popverify fuzz --profile v5.5 --runs 40 --steps 700`, seed 0, shrunk by hand)"),
    # 5.0.0's byte CK queueId: the CK of queue 200 says -56; the clean ack does not finish it and
    # the buffer commits the offset to queue -56, so the second POP of queue 200 reads offset 0 again
    FindingTrace("F9", "NSR-1", "pop", ScenarioConfig(queues=256, consumers=1, drain=False),
                 (_a("produce", 200), *_pop(0, 200, 3), _a("advance", 10), _a("ack", 0, 0), _a("advance", 60_000),
                  *_pop(0, 200, 4)),
                 "tests/sim/test_domain.py::test_a_queue_id_past_a_byte_on_v50_is_redelivered_after_a_clean_ack "
                 "(queue 200), drain off and the POPs' pop_steps written out"),
    # the acked offset 1 is flushed, the topic deleted and re-created, its first message put,
    # the broker restarted before the next flush: the reloaded offset 1 skips the new offset 0
    FindingTrace("F10", "ALO-1", "pop",
                 ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=False,
                                faults=("delete_recreate", "restart")),
                 (_a("produce", 0), *_pop(0, 0, 3), _a("ack", 0, 0), _a("advance", 5000), _a("flush"),
                  _a("delete_recreate"), _a("produce", 0), _a("restart")),
                 "shrunk from verify's v5.5 POP campaign seed 10 (250 steps; ALO-1 unexplained before F10), "
                 "then on one queue with buffer merge off (F7 out of the way)"),
    # retention's commit-log stage deletes the first file only; the drain's POP reads offset 0
    # (commit-log position 0) as the next file's first message: m2 twice, then revived
    FindingTrace("F11", "NSR-1", "pop", ScenarioConfig(queues=1, consumers=1, faults=("expire_commit_log",)),
                 (_a("produce", 0), _a("produce", 0), _a("expire_commit_log", 2)),
                 "spec/broker.md \"Position 0 reads another message\"; tests/findings/test_new_findings.py"),
    # an orderly POP of m1, the topic deleted and re-created 10 ms later, m2 put at the new offset
    # 0, then the ack of m1's handle commits offset 1 into the new queue: m2 is skipped
    FindingTrace("F12", "ALO-1", "pop",
                 ScenarioConfig(queues=1, consumers=1, pop_orderly=True, enable_pop_buffer_merge=False,
                                faults=("delete_recreate",)),
                 (_a("produce", 0), *_pop(0, 0, 3), _a("advance", 10), _a("delete_recreate"), _a("produce", 0),
                  _a("ack", 0, 0)),
                 "shrunk from `popverify fuzz --profile v5.5 --runs 150 --steps 250` seed 30 (ALO-1/unexplained, "
                 "5 steps), on one queue"),
    # push: two messages pulled, the listener of the first sets its body to 1 byte; removeMessage
    # subtracts 1 instead of 16 while the second is still held (v5.5 resets only at msgCount 0)
    FindingTrace("F13", "PQ-2", "push",
                 ScenarioConfig(queues=1, consumers=1, max_msg_nums=4, enable_pop_buffer_merge=False, faults=(),
                                actions=("produce", "start", "shutdown", "rebalance", "pull", "deliver", "hold",
                                         "consume", "persist", "consumer_timer", "advance", "consume_begin",
                                         "consume_end")),
                 (_a("produce", 0), _a("produce", 0), _a("advance", 932), _a("pull", 0), _a("deliver", 0, 4),
                  _a("consume_begin", 0), _a("consume_end", 0, 0, False, 1)),
                 "shrunk from `simulate --mode push --profile v5.0 --seed 2 --steps 300 --opt-in "
                 "consume_begin,consume_end` (PQ-2/F13), then a second message so that v5.5's reset at msgCount 0 "
                 "does not hide it"),
    # an orderly group; one raw (non-orderly) POP takes the message with a CK, its consumer
    # crashes, revive puts it into %RETRY%: the orderly POPs of the drain never read that topic
    FindingTrace("F14", "ALO-2", "pop",
                 ScenarioConfig(queues=1, consumers=1, pop_orderly=True, enable_pop_buffer_merge=False, faults=(),
                                actions=("produce", "pop", "pop_step", "ack", "advance", "scan", "timer", "revive",
                                         "consumer_crash", "pop_request")),
                 (_a("produce", 0), _a("pop_request", 0, 0, 1, 10_000), _a("pop_step", 0), _a("pop_step", 0),
                  _a("consumer_crash", 0)),
                 "the domain draw's v5.0 seed 47 (ALO-2/unexplained: a raw POP, batch ack refused on 5.0.0), "
                 "by hand with a crash instead of the refused batch ack"),
    # 5.0.0's changeInvisibleTime takes offset == maxOffset (the request domain's offset_at_max
    # kind): a CK for the next message, stored later, acked cleanly, then revived
    FindingTrace("F15", "CKM-1", "pop",
                 ScenarioConfig(queues=1, consumers=1, invisible_time=25_000, enable_pop_buffer_merge=False, faults=(),
                                actions=("produce", "pop", "pop_step", "ack", "advance", "scan", "timer", "revive",
                                         "consumer_crash", "change_invisible_request")),
                 (_a("produce", 0), *_pop(0, 0, 3), _a("change_invisible_request", 0, 0, 6, 43_679), _a("produce", 0)),
                 "the domain draw's v5.0 seed 15 (CKM-1/unexplained, 5 steps), on one queue"),
    # a POP with invisibleTime Integer.MAX_VALUE, never acked: 5 minutes later scanGarbage drops
    # the idle commit-offset queue with its uncommitted entry and the drain pops the message again
    FindingTrace("F16", "INV-1", "pop",
                 ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=True, faults=(),
                                actions=("produce", "pop", "pop_step", "ack", "advance", "scan", "timer", "revive",
                                         "consumer_crash", "pop_request")),
                 (_a("produce", 0), _a("pop_request", 0, 0, 1, 2_147_483_647), _a("pop_step", 0), _a("pop_step", 0),
                  _a("consumer_crash", 0)),
                 "the domain draw's v5.0 seed 20 (INV-1/unexplained, start offset 401, a refused batch ack), "
                 "by hand with a crash instead"),
    # queue 1's message popped and acked (so no later read touches commit-log position 0: F11),
    # m1 and m2 popped from queue 0, the consumer crashes, m1's file goes: m1's CK revives m2
    FindingTrace("F17", "INV-1", "pop",
                 ScenarioConfig(queues=2, consumers=1, invisible_time=17_000, enable_pop_buffer_merge=False,
                                faults=("expire_commit_log",),
                                actions=("produce", "pop", "pop_step", "ack", "advance", "timer", "flush",
                                         "consumer_crash")),
                 (_a("produce", 1), *_pop(0, 1, 3), _a("ack", 0, 0), _a("produce", 0), _a("produce", 0),
                  *_pop(0, 0, 3), _a("consumer_crash", 0), _a("expire_commit_log", 2)),
                 "the domain draw's v5.0 seed 27 (INV-1/unexplained, a refused batch ack), by hand with a crash "
                 "instead; queue 1 first to keep F11 out of the way"),
    # an orderly group: consumer 0's orderly POP holds the message (no CK, its start offset
    # committed); consumer 1's raw non-orderly POP of the queue reads it again at once
    FindingTrace("F18", "INV-1", "pop",
                 ScenarioConfig(queues=1, consumers=2, pop_orderly=True, enable_pop_buffer_merge=False, faults=(),
                                actions=("produce", "pop", "pop_step", "ack", "advance", "scan", "timer", "revive",
                                         "consumer_crash", "pop_request")),
                 (_a("produce", 0), *_pop(0, 0, 3), _a("pop_request", 1, 0, 4, 33_694)),
                 "verify's v5.0 seed 21 (CKM-1/INV-1/RED-1 unexplained; triage2's sweep seeds 108, 125), "
                 "sequential and on one queue"),
    # enableSkipLongAwaitingAck on (5.5.0; 5.0.0 has no such option and holds): a
    # changeInvisibleTime of an expired handle puts its ACK, due at once, while the old CK still
    # waits in the timer; over 3 minutes later the round reads the ACK first, mocks a CK for it,
    # and the mock replaces the real CK read after it: the second message is never revived
    FindingTrace("F19", "ALO-2", "pop",
                 ScenarioConfig(queues=2, consumers=2, invisible_time=3000, max_msg_nums=4,
                                enable_pop_buffer_merge=False, actions=_SWARM_ACTIONS, faults=("clock_jump", "restart"),
                                broker_options=("enableSkipLongAwaitingAck",)),
                 (_a("pop", 0, 1, True), _a("produce", 1), _a("produce", 1), _a("clock_jump", 95_627),
                  _a("change_invisible", 0, 11, 19_000), _a("consumer_crash", 0), _a("clock_jump", 94_710)),
                 "a v5.5 swarm run with the broker option drawn (revive helper, seed 3), shrunk"),
    # a put refused for its properties (over Short.MAX_VALUE) burns queue offset 1 on 5.0.0: the
    # next message is stored as 2 at unit 1, the third as 3 at unit 2; the push client commits
    # 3 after the first two, and the other consumer, starting there, never reads unit 2
    FindingTrace("F20", "ALO-3", "push",
                 ScenarioConfig(queues=1, consumers=2, max_msg_nums=4, consume_fail_percent=0, faults=(),
                                actions=("produce", "start", "shutdown", "rebalance", "pull", "deliver", "hold",
                                         "consume", "persist", "consumer_timer", "advance", "produce_sized")),
                 (_a("produce", 0), _a("produce_sized", 0, 1, 32768), _a("produce", 0), _a("advance", 1000),
                  _a("pull", 0), _a("deliver", 0, 4), _a("consume", 0, False), _a("consume", 0, False),
                  _a("produce", 0), _a("shutdown", 0)),
                 "the v5.0 push swarm once refused_put_burns_offset modelled 5.0.0's store (putoffset helper), shrunk"),
    # an orderly batch of two; a restart right after the persist (the order info comes back
    # empty: the first ack is MESSAGE_ILLEGAL); a second one (autoClean dropped the empty entry):
    # the second message's ack commits past the first, which nobody acked
    FindingTrace("F21", "ALO-2", "pop",
                 ScenarioConfig(queues=1, consumers=1, pop_orderly=True, enable_pop_buffer_merge=False,
                                faults=("persist_restart",), actions=("produce", "pop", "pop_step", "ack", "advance")),
                 (_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("persist_restart"), _a("ack", 0, 0),
                  _a("persist_restart"), _a("ack", 0, 1)),
                 "the merged swarm's v5.0 seed 9 (OFF-1/unexplained once persist_restart was drawn), shrunk and "
                 "written plainly"),
    # the queue's first put refused (5.0.0 burns offset 0: the queue's file begins with a blank
    # unit and its first message is unit 1, in commit-log file 0); a restart makes the min
    # offset 0; the drain's POP reads the blank unit, skips the message and moves past it
    FindingTrace("F22", "ALO-1", "pop",
                 ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=False, faults=("persist_restart",),
                                actions=("produce", "produce_sized", "pop", "pop_step")),
                 (_a("produce_sized", 0, 1, 32768), _a("produce", 0), _a("persist_restart")),
                 "the lead's replay of the v5.5 coverage corpus seed 28 (a restart's min offset 0 below a re-created "
                 "queue's first unit), carried to 5.0.0's refused first put"),
)}


# The Java lines behind each finding (spec/properties.md#known-findings, spec/findings/Fn.md).
JAVA_LINES: dict[str, str] = {
    "F1": "PopMessageProcessor#processRequest takes popTime before popMsgFromQueue reads the queue; 5.0.0 PopReviveService#reviveMsgFromCk:412-416 'skip ck from last epoch' (popTime < storeTimestamp); gone in 5.5.0 (#reviveMsgFromCk:556)",
    "F2": "ChangeInvisibleTimeProcessor 5.0.0:90-101, 113-114; 5.5.0 #processRequestAsync:134-175, 310-359: popTime + invisibleTime never compared with now (spec/findings/F2.md)",
    "F3": "ChangeInvisibleTimeProcessor#appendCheckPoint takes popTime = now; the CK/AckMsg merge key topic+group+queueId+startOffset+popTime (PopBufferMergeService#addCk/#addAk, PopReviveService#consumeReviveMessage's map)",
    "F4": "PopBufferMergeService#scan stores a CK only after popCkStayBufferTime; #addAk refuses a late ack (past reviveTime - popCkStayBufferTimeOut), which is stored on its own; PopReviveService#consumeReviveMessage drops an ACK whose CK it has not read",
    "F5": "RebalancePushImpl#computePullFromWhere (CONSUME_FROM_LAST_OFFSET) on QUERY_NOT_FOUND from ConsumerManageProcessor#queryConsumerOffset once the min offset is above 0",
    "F6": "PopMessageProcessor 5.0.0:498-509 (OFFSET_TOO_SMALL commits the min offset), PopBufferMergeService 5.0.0:129-142 scanCommitOffset, 340-364 commitOffset; 5.5.0 PopMessageProcessor:771-782, PopBufferMergeService:136-149, 387-413 (spec/findings/F6.md)",
    "F8": "PopReviveService 5.5.0 #reviveRetry:145-149 returns false on a failed put; #reviveMsgFromCk's whenComplete:584-590 calls rePutCK, whose messageStore.putMessage (:634) result is ignored, then :595-603 commits the revive offset past the CK. 5.0.0 #reviveRetry:115-117 throws; the round is not committed (run:466) and is read again",
    "F9": "5.0.0 store/pop/PopCheckPoint:35 `private byte queueId`; PopMessageProcessor#appendCheckPoint:681, PopBufferMergeService#addCkMock:422 and ChangeInvisibleTimeProcessor#appendCheckPoint:179 `ck.setQueueId((byte) queueId)`; the int AckMsg.queueId never matches the CK's merge key (PopBufferMergeService#addAk:479, PopReviveService#consumeReviveMessage:322/333) and #commitOffset:352-362 commits nextBeginOffset to the CK's queue id; PopReviveService#reviveMsgFromCk:406 reads that queue. 5.5.0: int (PopCheckPoint, PopMessageProcessor:970)",
    "F7": "AdminBrokerProcessor#deleteTopic (5.0.0) / #deleteTopicInBroker (5.5.0) never touch PopBufferMergeService's commit-offset queues; PopMessageProcessor#getPopOffset starts at their stale nextBeginOffset",
    "F10": "AdminBrokerProcessor#deleteTopic 5.0.0:501 / #deleteTopicInBroker 5.5.0:822 call ConsumerOffsetManager#cleanOffsetByTopic (5.0.0:73-86, 5.5.0:88-104), which removes the offsets in memory and persists nothing; the file is written by the scheduled persist (BrokerController 5.0.0:565, 5.5.0:696; flushConsumerOffsetInterval 5 s) and by BrokerController#shutdown, so a crash in between reloads them (spec/findings/F10.md)",
    "F11": "CommitLog#getMessage (5.0.0:1186, 5.5.0:1411) calls MappedFileQueue#findMappedFileByOffset(offset, offset == 0) (5.0.0:570, 5.5.0:728 returnFirstOnNotFound) and reads at offset % mappedFileSize: position 0 reads the oldest remaining file's first message until the consume-queue stage corrects the min offset (5.0.0 DefaultMessageStore#cleanFilesPeriodically:1615-1618, right after the commit-log stage; 5.5.0 ConsumeQueueStore#cleanQueueFilesPeriodically:82-85 on its own schedule) (spec/findings/F11.md)",
    "F12": "AckMessageProcessor 5.0.0 processRequest:148-185 / 5.5.0 #ackOrderly:404-430 commit commitAndNext's answer after checking only ackOffset >= the committed offset (-1 once the topic's offsets are gone); ConsumerOrderInfoManager#commitAndNext 5.0.0:135-146 / QueueLevelConsumerManager#commitAndNext 5.5.0:211-222 answer offset + 1 without order info (and the deleted topic's order info is never removed: AdminBrokerProcessor#deleteTopic / #deleteTopicInBroker) (spec/findings/F12.md)",
    "F13": "rocketmq-client ProcessQueue#removeMessage 5.0.0:202-205 / 5.5.0:198-204 and #commit subtract msg.getBody().length of the message as the listener left it (the same object putMessage counted, 5.0.0:144 / 5.5.0:140); 5.5.0 resets msgSize only when msgCount reaches 0 (:207-208); DefaultMQPushConsumerImpl#pullMessage's size flow control reads msgSize. Push lockstep runs the broker only: confirmed on the client jars by the conformance harness's ProcessQueue op (tests/findings/test_new_findings.py)",
    "F14": "PopMessageProcessor 5.0.0 processRequest:353-355 (`needRetry && !requestHeader.isOrder()`) and :381 (the fallback `&& !requestHeader.isOrder()`); 5.5.0 :517-527 and :550: an orderly POP never reads %RETRY%group_topic, where PopReviveService puts what a non-orderly POP's CK revives (spec/findings/F14.md)",
    "F16": "PopBufferMergeService#scanGarbage (5.0.0:181-212, the 5-minute drop :204-206; 5.5.0:188-218, :211-213) removes a topic@group@queue commit-offset queue whose time (the popTime, 5.0.0:378 setTime) is 5 minutes old with its uncommitted entries; PopMessageProcessor#getPopOffset then starts at the committed offset and pops the still-invisible messages again (spec/findings/F16.md)",
    "F17": "PopReviveService#reviveMsgFromCk reads the CK's message through EscapeBridge#getMessage (5.0.0:259-272; 5.5.0 #getMessageAsync:305-324) = messageStore.getMessage(offset, 1) and takes list.get(0) with no queue-offset check; DefaultMessageStore#getMessage skips a unit whose commit-log file retention deleted and answers the next one, which #reviveRetry puts into %RETRY%group_topic (spec/findings/F17.md)",
    "F18": "PopMessageProcessor#popMsgFromQueue asks ConsumerOrderInfoManager#checkBlock only `if (isOrder)` (5.0.0:482; 5.5.0:739-740); an orderly POP commits its batch's start offset and writes no CK (5.0.0:524-528; 5.5.0:817), so #getPopOffset of a non-orderly POP of the group starts at the held batch and reads it again (spec/findings/F18.md)",
    "F19": "PopReviveService#consumeReviveMessage 5.5.0:412-419 (enableSkipLongAwaitingAck) makes a mock CK (mockCkForAck:470-483, createMockCkForAck:485-497: num 0) for an ACK whose CK the round has not read and that is older than reviveAckWaitMs, and after the scan `consumeReviveObj.map.putAll(mockPointMap)` (:466) replaces a real CK of that merge key read later in the round; mergeAndRevive revives nothing for it and commits past it. 5.0.0 has no such option (spec/findings/F19.md)",
    "F20": "CommitLog#asyncPutMessage 5.0.0:846-851 assigns the queue offset (ConsumeQueueStore#assignQueueOffset moves the table) before MessageExtEncoder#encode (:1853-1888) refuses the message (properties > Short.MAX_VALUE, body > maxMessageSize); nothing gives the offset back, so the next message is stored with N + 1 at consume-queue unit N (ConsumeQueue#putMessagePositionInfo:695-747 appends at the end) until a restart (recoverTopicQueueTable). rocketmq-client ProcessQueue keys by the stored offset and commits max + 1 (#removeMessage); processPopResponse maps a POP's messages to msgOffsetInfo by indexOf of the stored offset (MQClientAPIImpl 5.0.0:1082-1114). 5.5.0 increases the table only after the append (CommitLog 5.5.0:1117) (spec/findings/F20.md)",
    "F21": "ConsumerOrderInfoManager 5.0.0 #encode (OrderInfo#encode:395-410 writes keys \"c\", \"cm\", \"l\", \"o\") and #decode:270-277 (RemotingSerializable#fromJson maps bean properties: none matches), so every OrderInfo reloaded by a restart is empty; #autoClean:199-246 drops it at the next persist (lastConsumeTimestamp 0); #commitAndNext:135-149 answers MESSAGE_ILLEGAL for an empty entry and offset + 1 without one, which AckMessageProcessor#processRequest:148-185 commits past the batch's un-acked offsets. 5.5.0's QueueLevelConsumerManager decodes what it encodes (spec/findings/F21.md)",
    "F22": "ConsumeQueue#putMessagePositionInfo's first-create branch (5.0.0:714-719, 5.5.0:823-830) writes fillPreBlank units (:749-763 / :864-879: commit-log offset 0, size Integer.MAX_VALUE) before a first unit past the file's start; a restart loads the queue with minLogicOffset 0 and DefaultMessageStore#recoverTopicQueueTable → #correctMinOffset (5.0.0:395-470, 5.5.0:549-672) keeps 0 (\"Abort correction\": the blank's offset 0 is >= a commit log starting at 0; 5.5.0's #initializeWithOffset:1231 says so in a TODO). DefaultMessageStore#getMessage reads the blank (CommitLog#getMessage(0, Integer.MAX_VALUE) is null: MESSAGE_WAS_REMOVING, 5.0.0:800-806, 5.5.0:985-992) and rollNextFile skips every later unit in commit-log file 0; PopMessageProcessor 5.0.0:537-546 (addCkMock) moves the offset past them (spec/findings/F22.md)",
    "F15": "ChangeInvisibleTimeProcessor 5.0.0 processRequest:92 `offset < minOffset || offset > maxOffset` admits offset == maxOffset (appendCheckPoint writes a CK for it, the ack of the old handle names it); 5.5.0 #processRequestAsync:141 `offset >= maxOffset` (spec/findings/F15.md)",
}


def trace_path(fid: str, release: str, folder: Path = TRACES) -> Path:
    """Where a finding's trace on ``release``'s profile is kept."""
    return folder / f"{fid}-{release}.itf.json"


def write_traces(folder: Path = TRACES) -> list[Path]:
    """Run every finding's schedule on the model of every profile (trace recorded) and write
    the ITF traces; returns the paths, in finding and release order."""
    from popverify.sim.scenario import run_scenario
    from popverify.trace.itf import write_trace
    from reference.common.profile import RELEASES

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for fid, ft in FINDING_TRACES.items():
        for profile, release in RELEASES.items():
            result = run_scenario(profile, SEED, 0, mode=ft.mode, config=ft.config, schedule=ft.schedule,
                                  record_trace=True)
            assert result.trace is not None
            path = trace_path(fid, release, folder)
            write_trace(path, result.trace)
            paths.append(path)
    return paths


def model_violates(fid: str, profile: str) -> bool:
    """Whether the model of ``profile`` violates the finding's property on its schedule."""
    from popverify.sim.scenario import run_scenario

    ft = FINDING_TRACES[fid]
    result = run_scenario(profile, SEED, 0, mode=ft.mode, config=ft.config, schedule=ft.schedule)
    return any(v.property_id == ft.property_id for v in result.violations)


def confirm_findings(confirmer: Confirmer, folder: Path = TRACES,
                     progress: Callable[[str], None] = lambda _: None) -> list[dict[str, Any]]:
    """Replay every finding's checked-in trace on its release: one row per finding and release
    (finding, property, profile, release, whether the model violates it, the confirmation)."""
    from popverify.sim.scenario import run_spec
    from popverify.trace.itf import TraceError, read_trace
    from reference.common.profile import RELEASES

    rows = []
    for fid, ft in FINDING_TRACES.items():
        for profile, release in RELEASES.items():
            path = trace_path(fid, release, folder)
            try:
                spec = run_spec(read_trace(path))
            except TraceError as err:
                raise ValueError(f"{path}: {err} (write the traces with `popverify confirm --findings "
                                 f"--update-spec`)") from err
            progress(f"{fid} on rocketmq-broker {release}")
            c: Confirmation = confirmer.confirm(spec, ft.property_id)
            rows.append({"finding": fid, "property": ft.property_id, "profile": profile, "release": release,
                         "trace": str(path.relative_to(PROJECT_ROOT)) if path.is_relative_to(PROJECT_ROOT) else str(path),
                         "model_violates": model_violates(fid, profile), "confirmation": c.to_json()})
    return rows


def verdicts_json(rows: list[dict[str, Any]]) -> str:
    """spec/findings/verdicts.json: the rows without run-dependent fields (cache hits)."""
    stable = []
    for row in rows:
        c = {k: v for k, v in row["confirmation"].items() if k != "cached"}
        stable.append({**row, "confirmation": c})
    return json.dumps({"generated_by": "popverify confirm --findings --update-spec", "verdicts": stable},
                      indent=1, sort_keys=True) + "\n"


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown verdict table (finding x release)."""
    from reference.common.profile import RELEASES

    releases = list(RELEASES.values())
    head = "| finding | property | " + " | ".join(f"rocketmq-broker {r}" for r in releases) + " | Java lines |"
    lines = [head, "|" + " --- |" * (3 + len(releases))]
    for fid, ft in FINDING_TRACES.items():
        cells = []
        for release in releases:
            row = next(r for r in rows if r["finding"] == fid and r["release"] == release)
            model = "model violates" if row["model_violates"] else "model: holds"
            cells.append(f"{row['confirmation']['text']} ({model}; `{Path(row['trace']).name}`)")
        lines.append(f"| {fid} | {ft.property_id} | " + " | ".join(cells) + f" | {JAVA_LINES[fid]} |")
    return "\n".join(lines)


def update_spec(rows: list[dict[str, Any]], verdicts: Path = VERDICTS,
                documents: tuple[Path, ...] = (PROJECT_ROOT / "spec" / "findings" / "README.md",
                                               PROJECT_ROOT / "spec" / "properties.md")) -> None:
    """Write verdicts.json and replace the generated table between the markers of each document."""
    verdicts.write_text(verdicts_json(rows), encoding="utf-8")
    text = table(rows)
    for doc in documents:
        body = doc.read_text(encoding="utf-8")
        if TABLE_START not in body or TABLE_END not in body:
            raise ValueError(f"{doc} has no {TABLE_START} ... {TABLE_END} block")
        head, rest = body.split(TABLE_START, 1)
        _, tail = rest.split(TABLE_END, 1)
        doc.write_text(head + TABLE_START + "\n" + text + "\n" + TABLE_END + tail, encoding="utf-8")


def checked_in_verdict(fid: str, release: str, verdicts: Path = VERDICTS) -> str | None:
    """The checked-in verdict line of a finding on a release (None when there is none)."""
    try:
        data = json.loads(verdicts.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for row in data.get("verdicts", []):
        if row.get("finding") == fid and row.get("release") == release:
            return str(row["confirmation"]["text"])
    return None
