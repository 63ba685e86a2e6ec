"""The Java code of the coverage targets that is out of scope, per release: the one declaration
the in-scope figures subtract (spec/coverage.md "Out of scope, and why").

Issue 16 lets slave, proxy and multi-broker paths out of the 85 % branch target; code with no
behaviour (metrics and stats calls, logging behind a logging switch) is left out too, and so is
PopMessageProcessor's popConsumerKVServiceEnable branch (5.5.0, off by default: it hands the POP
to PopConsumerService, which the model does not have). Nothing else is: request validation,
orderly POP, long polling, the thread loops and every failure branch count, reached or not;
but for the outcomes only a race inside one call reaches (`race`: another thread between two
statements of a lock or map update, which the model and the harness take as atomic).

Each entry names a target row, a release and an inclusive range of source lines of the
target's class (the release's ``-sources.jar``); the in-scope counters are the row's counters
minus the per-line counters JaCoCo reports for those lines (``<sourcefile>``'s ``<line>``).
``in_scope`` refuses a range that holds a method of another class (an inner class's code is
counted in its own row), or, for a per-method row, lines outside that method.

Besides (issue 16 H4, spec/coverage.md "In scope"): ConsumerOffsetManager's methods
nothing in the release calls and those only mqadmin's requests call (`unused`, `admin`), and, in
AckMessageProcessor and ChangeInvisibleTimeProcessor of 5.5.0, the popConsumerKVServiceEnable
path (`kv-path`, as PopMessageProcessor's) and the lite-topic code (`lite`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from popverify.coverage.xmlreport import Counter, Measured, Report, method_at
from popverify.tools import ToolError

# reason -> the row of spec/coverage.md's "Out of scope" table that gives it
REASONS: dict[str, str] = {
    "unused": "Never called in the release",  # no caller in any of the release's jars
    "admin": "Admin and monitoring requests",  # mqadmin's consume stats, who-consumes, clone offsets
    "lite": "Lite topics",  # 5.5.0's lite topics (LMQ-backed lite subscriptions), another protocol
    "slave": "Slave, proxy, multi-broker",  # a master-only broker: replication statuses, slave roles
    "multi-broker": "Slave, proxy, multi-broker",  # the broker container (several brokers in one JVM)
    "metrics": "Metrics, stats, logging-only branches",  # BrokerStatsManager, metrics managers
    "logging": "Metrics, stats, logging-only branches",  # blocks behind isEnablePopLog and the like
    "kv-path": "The newer POP path",  # popConsumerKVServiceEnable (off by default): PopConsumerService
    "off-default": "Other 5.5.0 features off by default",  # priority topics, retry topic v2, ...
    "proxy": "Slave, proxy, multi-broker",  # requests only the proxy sends (PEEK_MESSAGE, NOTIFICATION)
    "race": "Thread interleavings inside one call",  # another thread between two statements of one call
}


@attrs.frozen
class Excluded:
    """Source lines ``first``..``last`` of a target's class in ``release``, out of scope."""

    label: str
    release: str
    first: int
    last: int
    reason: str
    what: str

    def __attrs_post_init__(self) -> None:
        if self.reason not in REASONS:
            raise ValueError(f"unknown reason {self.reason!r}")
        if not 0 < self.first <= self.last:
            raise ValueError(f"bad line range {self.first}..{self.last}")


def _x(label: str, release: str, reason: str, what: str, *ranges: tuple[int, int]) -> tuple[Excluded, ...]:
    return tuple(Excluded(label, release, a, b, reason, what) for a, b in ranges)


_PMP, _QLM = "PopMessageProcessor", "PopMessageProcessor$QueueLockManager"
_PLP = "PopLongPollingService"  # 5.5.0 broker/longpolling; 5.0.0 PopMessageProcessor's inner class
_ACK, _CIT = "AckMessageProcessor", "ChangeInvisibleTimeProcessor"
_BUF, _REV, _PULL = "PopBufferMergeService", "PopReviveService", "PullMessageProcessor"
_GET = "DefaultMessageStore#getMessage"
_COM = "ConsumerOffsetManager"
# cleanOffset, scanUnsubscribedTopic, offsetBehindMuchThanData: no caller in the release's
# broker, client, common, remoting, store (and 5.5.0 proxy) jars (getGroupTopicMap has none
# either, but fastjson calls it as a getter when persist encodes the manager: counted)
_UNUSED = "methods no code of the release calls"
# AdminBrokerProcessor only: whichTopicByConsumer (consume stats, topics by consumer, clone group
# offset), queryMinOffsetInAllGroup (queryCorrectionOffset), cloneOffset; 5.0.0 also
# whichGroupByTopic (queryTopicConsumeByWho; 5.5.0's deleteTopic calls it: counted there)
_ADMIN = "mqadmin requests: consume stats, consumers of a topic, correction offset, clone group offset"
# PutMessageStatus.FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE: the sub-conditions of a put's
# "ok" test that only a broker replicating to a slave answers
_REPLICA = "FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE put statuses"
_POP_LOG = "blocks behind isEnablePopLog"
_STATS = "BrokerStatsManager calls"
_POP_METRICS = "PopMetricsManager calls"
# AckMessageProcessor#setPopReviveServiceStatus (BrokerController#changeSpecialServiceStatus: a
# slave acting as master, a controller-mode role change) and #isPopReviveServiceRunning (its
# probe, BrokerController#isSpecialServiceRunning, the runtime info's brokerActive)
_ROLE = "revive services switched by a role change, and its probe"

# PopBufferMergeService: warn/info lines under conditions of their own (no state changes there)
_BUF_LOG = "conditions whose block only logs (scanCommitOffset, scan)"
# PopBufferMergeService#cancelCkTimer: its one call (addAk) is commented out in both releases
_CANCEL = "cancelCkTimer (its only call is commented out)"
# PEEK_MESSAGE and NOTIFICATION (PeekMessageProcessor, NotificationProcessor): no client in 5.0.0's
# client, common, remoting or broker jars sends either; NOTIFICATION is the proxy's (MQClientAPIExt)
_PROXY_REQUESTS = "getLatestOffset(topic, group, queueId), called only by the proxy's PEEK_MESSAGE / NOTIFICATION"
# PullMessageProcessor (pull, 26 November 2026): the static-topic rewrites, admin-set refusals, hooks
_STATIC_TOPIC = "static topics: rewriteRequestForStaticTopic, rewriteResponseForStaticTopic and their call sites"
_ADMIN_STATE = "refusals of a permission, group or forbidden state only an admin request sets"
_HOOKS = "consume-message hooks (none registered by the release)"
# DefaultMessageStore#getMessage (store, 26 November 2026): see the block at the end
_NEVER_TRUE_REVIVE = "decodeMsgList's null buffer list and null buffer, run's null sortList (tests never true)"
# PopLongPollingService (polling4): see the block at the end
_NEVER_NULL = "a null polling-map key or value (the map refuses both)"
_ADD_NEVER_FAILS = "a failed add to a polling queue (PopRequest.COMPARATOR never answers 0)"
_RACE_LOCK = "tryLock's putIfAbsent and get racing another thread (both answer false, as a held lock)"
_RACE_UNLOCK = "unLock of an entry the 60 s clean-up removed while its holder held it"
_RACE_MAP = "update's and checkBlock's map creation racing autoClean or another POP"
_DEAD = "tests the release never makes true: not readable, no consume queue, an oversized pull, a full buffer, no result"

OUT_OF_SCOPE: tuple[Excluded, ...] = (
    # -- rocketmq 5.0.0 ---------------------------------------------------------------------
    *_x(_PMP, "5.0.0", "logging", _POP_LOG, (185, 187), (247, 249), (618, 620), (642, 644)),
    *_x(_PMP, "5.0.0", "metrics", _STATS, (428, 430), (518, 522), (716, 717)),
    *_x(_QLM, "5.0.0", "multi-broker", "getServiceName in a broker container", (958, 960)),
    *_x(_ACK, "5.0.0", "slave", "shouldRunPopRevive = brokerId == 0 (false on a slave)", (57, 57)),
    *_x(_ACK, "5.0.0", "slave", _ROLE, (74, 76), (80, 86)),
    *_x(_ACK, "5.0.0", "metrics", _STATS, (145, 146)),
    *_x(_ACK, "5.0.0", "slave", _REPLICA, (207, 208)),
    *_x(_CIT, "5.0.0", "slave", _REPLICA, (105, 106), (160, 161)),
    *_x(_CIT, "5.0.0", "metrics", _STATS, (140, 141), (200, 201)),
    *_x(_CIT, "5.0.0", "logging", _POP_LOG, (194, 197)),
    *_x(_BUF, "5.0.0", "slave", "isShouldRunning (slave acting master, broker role) and run's slave branch",
        (69, 75), (89, 97)),
    *_x(_BUF, "5.0.0", "multi-broker", "getServiceName in a broker container", (79, 81)),
    *_x(_BUF, "5.0.0", "logging", _POP_LOG, (223, 225), (282, 284), (354, 356), (407, 409), (429, 431),
        (445, 447), (465, 467), (481, 483), (495, 497), (502, 504), (516, 518), (559, 561), (594, 596),
        (626, 628)),
    *_x(_BUF, "5.0.0", "slave", _REPLICA, (545, 546), (589, 590), (621, 622)),
    *_x(_REV, "5.0.0", "multi-broker", "getServiceName in a broker container", (67, 69)),
    # shouldRunPopRevive is brokerId == 0 (AckMessageProcessor's constructor): false on a slave
    *_x(_REV, "5.0.0", "slave", "!shouldRunPopRevive (a slave) skips", (82, 85), (165, 168), (276, 279),
        (363, 366), (389, 392), (432, 435), (441, 444)),
    *_x(_REV, "5.0.0", "logging", _POP_LOG, (110, 114), (315, 317), (329, 331)),
    *_x(_REV, "5.0.0", "metrics", _STATS, (118, 120), (193, 197)),
    *_x(_PULL, "5.0.0", "slave", "rejectRequest on a slave, slave-read suggestion and the slave's redirect",
        (286, 289), (526, 554)),
    *_x(_GET, "5.0.0", "metrics", "disk-fall-behind and store stats", (829, 832), (844, 848)),
    *_x(_GET, "5.0.0", "slave", "suggestPullingFromSlave", (834, 837)),
    *_x(_COM, "5.0.0", "unused", _UNUSED, (58, 72), (88, 120)),
    *_x(_COM, "5.0.0", "admin", _ADMIN, (121, 156), (251, 286), (293, 299)),
    # revive (issue 16): the buffer's methods nothing on the consumption path calls
    *_x(_BUF, "5.0.0", "unused", _CANCEL, (601, 620), (623, 625), (629, 630)),
    *_x(_BUF, "5.0.0", "unused", "clearOffsetQueue (no caller in 5.0.0)", (533, 535)),
    *_x(_BUF, "5.0.0", "proxy", _PROXY_REQUESTS, (177, 179)),
    *_x(_BUF, "5.5.0", "unused", _CANCEL, (769, 788), (791, 793), (797, 798)),
    *_x(_BUF, "5.5.0", "metrics", "getBufferedCKSize (PopMetricsManager's gauge only)", (369, 371)),
    # -- rocketmq 5.5.0 ---------------------------------------------------------------------
    *_x(_PMP, "5.5.0", "logging", _POP_LOG, (207, 210), (247, 249)),
    *_x(_PMP, "5.5.0", "metrics", _STATS + ", the messages-out metrics and the remoting metrics of a zero-copy transfer",
        (461, 463), (472, 480), (614, 616), (626, 633), (797, 810), (976, 977), (1020, 1021)),
    # 385..491 but for the metrics lines inside it (declared once, above)
    *_x(_PMP, "5.5.0", "kv-path", "processRequest's popConsumerKVServiceEnable branch and its callback",
        (385, 460), (464, 471), (481, 491)),
    *_x(_QLM, "5.5.0", "multi-broker", "getServiceName in a broker container", (1113, 1115)),
    *_x(_ACK, "5.5.0", "slave", "shouldRunPopRevive = brokerId == 0 (false on a slave)", (71, 71)),
    *_x(_ACK, "5.5.0", "slave", _ROLE, (98, 100), (104, 110)),
    *_x(_ACK, "5.5.0", "metrics", _STATS, (275, 276), (344, 345), (384, 385), (571, 572)),
    *_x(_ACK, "5.5.0", "metrics", _POP_METRICS, (400, 400)),
    *_x(_ACK, "5.5.0", "slave", _REPLICA, (396, 397)),
    *_x(_ACK, "5.5.0", "logging", "block behind isPopConsumerKVServiceLog", (465, 468)),
    # around the metrics and logging lines declared above (a line is declared once)
    *_x(_ACK, "5.5.0", "kv-path", "processRequest's KV tests, appendAckNew, ackOrderlyNew", (170, 171), (184, 185),
        (324, 343), (346, 383), (386, 391), (442, 464), (469, 495)),
    *_x(_ACK, "5.5.0", "lite", "ackLite and the test of its answer", (151, 153), (496, 570), (573, 575)),
    *_x(_CIT, "5.5.0", "metrics", _STATS, (278, 279), (348, 349)),
    *_x(_CIT, "5.5.0", "metrics", _POP_METRICS, (302, 302), (346, 346)),
    *_x(_CIT, "5.5.0", "slave", _REPLICA, (298, 299), (354, 355)),
    *_x(_CIT, "5.5.0", "logging", _POP_LOG, (340, 343)),
    *_x(_CIT, "5.5.0", "kv-path", "processRequestAsync's KV block, processChangeInvisibleTimeForOrderNew",
        (147, 165), (190, 232)),
    *_x(_CIT, "5.5.0", "lite", "processChangeInvisibleTimeForLite and the test of its answer", (130, 132), (367, 418)),
    *_x(_BUF, "5.5.0", "slave", "isShouldRunning (slave acting master, broker role) and run's slave branches",
        (74, 80), (95, 103), (126, 128)),
    # (buffer2: run's tail tests isInBrokerContainer at 129 and drains the buffer in 130-132 when
    # NOT in one, the default broker's graceful shutdown (graceful_restart): only 129 is left out)
    *_x(_BUF, "5.5.0", "multi-broker", "getServiceName in a broker container, run's test for one before its drain",
        (84, 86), (129, 129)),
    *_x(_BUF, "5.5.0", "logging", _POP_LOG, (251, 253), (325, 327), (401, 403), (462, 464), (485, 487),
        (501, 503), (528, 530), (544, 546), (558, 560), (565, 567), (590, 592), (653, 655), (705, 707),
        (759, 761), (794, 796)),
    *_x(_BUF, "5.5.0", "slave", _REPLICA, (638, 639), (700, 701), (754, 755), (789, 790)),
    *_x(_BUF, "5.5.0", "metrics", _POP_METRICS, (349, 349), (635, 635), (697, 697)),
    *_x(_REV, "5.5.0", "multi-broker", "getServiceName in a broker container", (89, 91)),
    *_x(_REV, "5.5.0", "slave", "!shouldRunPopRevive (a slave) skips", (219, 222), (350, 353), (508, 511),
        (546, 549), (557, 560), (668, 671), (682, 685)),
    *_x(_REV, "5.5.0", "logging", _POP_LOG, (140, 144), (214, 216), (389, 391), (404, 406), (430, 432)),
    *_x(_REV, "5.5.0", "metrics", _STATS, (151, 153), (249, 253)),
    *_x(_REV, "5.5.0", "metrics", _POP_METRICS + " and the messages-out metrics", (139, 139), (255, 261), (397, 397),
        (408, 408), (435, 435)),
    # read only by PopMetricsManager's revive-lag gauges
    *_x(_REV, "5.5.0", "metrics", "getReviveBehindMillis / getReviveBehindMessages", (637, 655)),
    *_x(_PULL, "5.5.0", "slave", "rejectRequest on a slave, slave-read suggestion and the slave's redirect",
        (297, 300), (688, 716)),
    *_x(_GET, "5.5.0", "metrics", "disk-fall-behind and store stats", (1024, 1027), (1039, 1043), (1045, 1048)),
    *_x(_GET, "5.5.0", "slave", "suggestPullingFromSlave", (1029, 1032)),
    *_x(_COM, "5.5.0", "unused", _UNUSED, (72, 87), (106, 139)),
    *_x(_COM, "5.5.0", "admin", _ADMIN, (140, 157), (327, 364), (371, 377)),
    # The long-polling service's log-only and container branches (popreach, 26 November 2026),
    # as the other classes': enablePopLog blocks, the log line of a key with more than 100
    # parked requests (the loop's statistics pass), getServiceName in a broker container.
    *_x(_PLP, "5.0.0", "logging", _POP_LOG + ", the log line of a key holding more than 100 requests",
        (821, 823), (831, 833)),
    *_x(_PLP, "5.0.0", "multi-broker", "getServiceName in a broker container", (727, 729)),
    *_x(_PLP, "5.5.0", "logging", _POP_LOG + ", the log line of a key holding more than 100 requests",
        (123, 125), (133, 135), (252, 254), (330, 332), (347, 349)),
    *_x(_PLP, "5.5.0", "multi-broker", "getServiceName in a broker container", (87, 89)),
    # 5.5.0 features a default broker never runs (popreach, 26 November 2026): the lines test
    # only the feature's switch or run only with it on; the default side of each test is
    # elsewhere (the plain needRetry comparison at 519, the retry topic v1 at 533-535 / 556-558).
    *_x(_PMP, "5.5.0", "off-default", "priority POP: usePriorityMode (a PRIORITY topic's group with a priorityFactor)",
        (516, 518), (524, 524)),
    *_x(_PMP, "5.5.0", "off-default", "retry topic v2 (enableRetryTopicV2, default false): the v1 retry reads",
        (521, 522), (528, 532), (551, 555)),
    *_x(_PMP, "5.5.0", "off-default", "isPopShouldStop (enablePopMessageThreshold, default false) and its stop",
        (715, 724), (887, 890)),
    # (appendAckAsync / appendCkAsync are not here: the swarm draws them as broker options,
    # reference/broker/config.py BROKER_OPTIONS, so their code counts)
    # -- admin (group deletion, offset reset): 5.5.0's pull-offset table is read and written only
    # by PopConsumerService (popConsumerKVServiceEnable) and resetOffsetInner's KV branch
    *_x(_COM, "5.5.0", "kv-path", "pull offsets: commitPullOffset, queryPullOffset, clearPullOffset",
        (222, 229), (268, 287)),
    # 5.0.0 ConsumerOrderInfoManager#get and #getConsumeCount: no caller in the release's jars
    *_x("ConsumerOrderInfoManager", "5.0.0", "unused", "get, getConsumeCount: no caller in the release", (183, 197)),
    # -- pull (PullMessageProcessor, 26 November 2026) --------------------------------------------
    # Static topics: TopicQueueMappingManager#buildTopicQueueMappingContext (5.0.0:203-207, 5.5.0
    # alike) gives a topic without a mapping a context whose mapping detail is null, so both
    # rewrites return null at their first test and the call sites never see a rewrite. Mappings
    # come only from mqadmin's static-topic commands, which spread a logic queue over brokers.
    *_x(_PULL, "5.0.0", "multi-broker", _STATIC_TOPIC, (87, 146), (152, 277), (353, 356), (626, 629)),
    *_x(_PULL, "5.5.0", "multi-broker", _STATIC_TOPIC, (96, 156), (162, 286), (366, 369)),
    # Refusals of a state only an admin sets: the broker's permission (UPDATE_BROKER_CONFIG),
    # autoCreateSubscriptionGroup off, consumeEnable / consumeBroadcastEnable off
    # (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP), a topic's perm without read (UPDATE_AND_CREATE_TOPIC),
    # the group's read-forbidden bit (UPDATE_AND_GET_GROUP_FORBIDDEN, AdminBrokerProcessor:375)
    *_x(_PULL, "5.0.0", "admin", _ADMIN_STATE, (304, 308), (319, 330), (343, 348), (399, 414)),
    *_x(_PULL, "5.5.0", "admin", _ADMIN_STATE, (317, 323), (335, 346), (356, 361), (428, 443)),
    # Consume-message hooks: no code of the release's jars calls BrokerController#
    # registerConsumeMessageHook (an embedder's API), so the list stays empty
    *_x(_PULL, "5.0.0", "unused", _HOOKS, (556, 623), (656, 669)),
    *_x(_PULL, "5.5.0", "unused", _HOOKS, (612, 614), (720, 790)),
    # RequestSource PROXY_FOR_BROADCAST / PROXY_FOR_STREAM: set only by the proxy's forwarded pulls
    *_x(_PULL, "5.5.0", "proxy", "the request-source cases of proxy-forwarded pulls", (382, 388)),
    # 5.5.0 broadcast offsets of the proxy's pulls: the forwarded client id (proxyPullBroadcast),
    # and an init offset >= 0, which BroadcastOffsetManager#queryInitOffset answers only to a
    # proxy pull or to a client id a proxy pull used before (fromProxy)
    *_x(_PULL, "5.5.0", "proxy", "broadcast offsets of proxy-forwarded pulls", (555, 558), (868, 869), (898, 899)),
    # rejectPullConsumerEnable (BrokerConfig, default false); cold-data flow control
    # (coldDataFlowControlEnable, default false: ColdDataCgCtrService#isCgNeedColdDataFlowCtr:187)
    # with its guard on the store's type and the wake-up's NO_SUSPEND_KEY test (set only by
    # ColdDataPullRequestHoldService)
    *_x(_PULL, "5.5.0", "off-default", "rejectPullConsumerEnable, cold-data flow control",
        (494, 505), (508, 531), (809, 809)),
    *_x(_PULL, "5.5.0", "lite", "a pull's liteTopic (LMQ of a lite subscription)", (563, 565)),
    *_x(_PULL, "5.5.0", "logging", "a woken pull's failed response write (logs only)", (817, 820)),
    # -- order (consumer order info, lock managers; 26 November 2026): the lock-free notification
    # of a lite topic's queue (LiteUtil.isLiteTopicQueue: an LMQ-backed lite subscription's queue,
    # PopLiteMessageProcessor's orderly POP) goes to the LiteEventDispatcher; a normal topic's
    # only passes the test, whose line goes with the lite code (as AckMessageProcessor's)
    *_x("QueueLevelConsumerOrderInfoLockManager", "5.5.0", "lite",
        "notifyLockIsFree's lite-topic dispatch and its test", (112, 115)),
    # 5.5.0 ConsumerOffsetManager#loadDataVersion: its one caller is RocksDBConsumerOffsetManager#merge
    # (super.loadDataVersion()), the manager BrokerController builds only with enableRocksDBStore
    *_x(_COM, "5.5.0", "off-default", "loadDataVersion: the RocksDB config store's merge only", (392, 409)),
    # -- buffer (PopBufferMergeService; 26 November 2026): conditions whose block only logs (not
    # behind isEnablePopLog): scanCommitOffset's "ck offset long time not commit" and "offset
    # queue size too long", scan's "ck finish fail, stay too long" and its once-a-second info line
    *_x(_BUF, "5.0.0", "logging", _BUF_LOG, (148, 151), (157, 160), (245, 247), (301, 305)),
    *_x(_BUF, "5.5.0", "logging", _BUF_LOG, (155, 158), (164, 167), (273, 275), (343, 347)),
    # putCkToStore's remote put (EscapeBridge#putMessageToSpecificQueue answers isRemotePut only
    # when it escapes the CK to another broker: a slave acting master)
    *_x(_BUF, "5.0.0", "multi-broker", "putCkToStore's remote put (EscapeBridge to another broker)", (552, 554)),
    *_x(_BUF, "5.5.0", "multi-broker", "handleCkMessagePutResult's remote put (EscapeBridge to another broker)",
        (646, 648)),
    # -- revive3 (PopReviveService, 26 November 2026): 5.5.0 reviveMsgFromCk's futures come from
    # EscapeBridge#getMessageAsync, which for the broker's own store is DefaultMessageStore
    # #getMessageAsync, CompletableFuture.completedFuture(getMessage(...)): whenComplete runs
    # inside reviveMsgFromCk and empties inflightReviveRequestMap, so mergeAndRevive's wait for
    # more than 3 CKs in flight (and the stale CK's rePutCK, 30 s later), the lambda's "no
    # longer in the map" test and its "an earlier CK still pending" break need a future that
    # is still pending: a CK of another broker (getMessageFromRemoteAsync, a broker container or
    # a slave acting as master) or a tiered store's (TieredMessageStore, off by default)
    *_x(_REV, "5.5.0", "multi-broker", "the in-flight revive wait: futures pending only for a remote broker's message",
        (529, 538), (592, 592), (598, 598)),
    # 5.5.0 AckMessageProcessor#shutdown: no class of the broker or proxy jars calls it
    # (BrokerController#shutdown calls #shutdownPopReviveService; javap of both jars)
    *_x(_ACK, "5.5.0", "unused", "shutdown (BrokerController calls shutdownPopReviveService)", (79, 83)),
    # -- revive4 (PopReviveService, 26 November 2026): 5.5.0 reviveRetry's suspended CK keeps the
    # reconsume times (125-126); a CK is suspended only by a changeInvisibleTime whose header says
    # `suspend` (ChangeInvisibleTimeProcessor:328), which only the proxy sets (rocketmq-proxy
    # ConsumerProcessor#changeInvisibleTime:421; no remoting client of 5.5.0 does)
    *_x(_REV, "5.5.0", "proxy", "reviveRetry's suspended CK (only the proxy's changeInvisibleTime sets suspend)",
        (125, 126)),
    # -- order4 (ConsumerOrderInfoManager, 26 November 2026): tests the release never makes true
    # (the scope policy's proof, each writer / caller cited):
    # - brokerController (and 5.5.0's queueLevelConsumerOrderInfoLockManager, a `new` object) are
    #   set only by the one-argument constructor (5.0.0:48-50, 5.5.0:58-61; no setter, transient);
    #   the broker builds its managers with the running controller only: 5.0.0 BrokerController:313
    #   `new ConsumerOrderInfoManager(this)`, 5.5.0 BrokerController:422 `new
    #   QueueLevelConsumerManager(this)` and PopLiteMessageProcessor:94 `new
    #   MemoryConsumerOrderInfoManager(brokerController)` (super(brokerController)). The no-argument
    #   constructor's instance is the one fastjson builds in decode (5.0.0:272, 5.5.0:366), of which
    #   decode reads the table alone: none of these methods ever runs on it;
    # - decode(null): decode's only callers are rocketmq-common's ConfigManager#load, after
    #   `null == jsonString || jsonString.length() == 0` sent it to loadBak (5.0.0:36-39,
    #   5.5.0:39-44), and #loadBak, only with a non-empty string (5.0.0:56-57, 5.5.0:67-68);
    # - fromJson answering null: fastjson gives null only for a text without an object ("null");
    #   the file's one writer is ConfigManager#persist, writing encode(true): 5.5.0
    #   RemotingSerializable.toJson(this) and 5.0.0's own builder (encode:280-310), both an object.
    *_x("ConsumerOrderInfoManager", "5.0.0", "unused",
        "null guards: a manager without a broker (autoClean, configFilePath), decode of null or of no object",
        (200, 202), (262, 262), (265, 265), (271, 271), (273, 273)),
    *_x("ConsumerOrderInfoManager", "5.5.0", "unused",
        "null guards: a manager without a broker or lock manager, decode of null or of no object",
        (80, 80), (295, 297), (356, 356), (359, 359), (365, 365), (367, 367), (369, 369), (383, 383)),
    # 5.5.0 reviveMsgFromCk's lambda returns !needRetry for a message it cannot read (576):
    # EscapeBridge#getMessageAsync:316-322 answers needRetry true only for a TieredMessageStore's
    # OFFSET_FOUND_NULL (off by default), or a remote broker's read (getMessageFromRemoteAsync)
    *_x(_REV, "5.5.0", "multi-broker", "the unreadable message's needRetry: a tiered store or a remote broker",
        (576, 576)),
    # -- revive6 (PopReviveService, 26 November 2026): tests the release never makes true.
    # - decodeMsgList's `messageBufferList != null` and `bb == null`: decodeMsgList runs only on
    #   a FOUND read (getMessage's switch); GetMessageResult's list is final, and every
    #   constructor the store calls fills it with `new ArrayList<>` (5.0.0 GetMessageResult:45, :51;
    #   5.5.0 :54, :60; the 7-argument one only for the NO_MATCH_LOGIC_QUEUE constant, :49, never
    #   FOUND); its elements come only from addMessage (mapedBuffer.getByteBuffer()), whose
    #   SelectMappedBufferResult is built from a slice() of the mapped buffer (5.0.0
    #   DefaultMappedFile:425/449, 5.5.0 :677/701; no other constructor call in the store's jar
    #   reaches getMessage);
    # - run's `sortList != null` (and `sortList == null`): ConsumeReviveObj#sortList's only
    #   writer is genSortList (5.0.0:483, 5.5.0:727), which mergeAndRevive calls first
    #   (5.0.0:355, 5.5.0:500); run reads sortList only after mergeAndRevive returned (a throw
    #   of either round method goes to run's catch).
    *_x(_REV, "5.0.0", "unused", _NEVER_TRUE_REVIVE, (240, 240), (243, 245), (450, 450), (458, 458)),
    *_x(_REV, "5.5.0", "unused", _NEVER_TRUE_REVIVE, (312, 312), (315, 317), (691, 691), (702, 702)),
    # -- store (DefaultMessageStore#getMessage, 26 November 2026): tests the release never makes
    # true, so their other side runs on every read and the tested block never runs:
    # - not readable: RunningFlags#getAndMakeNotReadable sets the bit and has no caller in any
    #   jar of the release (class files grepped: only RunningFlags itself names it);
    # - no consume queue: findConsumeQueue is ConsumeQueueStore#findOrCreateConsumeQueue, which
    #   creates a missing queue and never answers null (5.0.0:248-297, 5.5.0:390-437);
    # - maxPullSize past MAX_PULL_MSG_SIZE: every call reaches the 7-argument getMessage through
    #   the 6-argument overloads, which pass MAX_PULL_MSG_SIZE itself (5.0.0:685, 5.5.0:857/863);
    #   no other class of the release's jars calls it (descriptor grepped; the plugin store
    #   only forwards its caller's value);
    # - bufferTotal >= maxPullSize after isTheBatchFull answered false: that test already
    #   refused bufferTotal + sizePy > maxPullSize once something was read (sizePy > 0), and
    #   0 < maxPullSize (>= 100) before;
    # - getResult == null: assigned a new GetMessageResult at the top and never reassigned.
    *_x(_GET, "5.0.0", "unused", _DEAD, (698, 701), (715, 715), (736, 739), (775, 777), (839, 842), (853, 855)),
    *_x(_GET, "5.5.0", "unused", _DEAD, (874, 877), (899, 899), (920, 923), (961, 963), (1034, 1037),
        (1054, 1056)),
    # 5.5.0 compaction topics: CleanupPolicy COMPACTION is a topic attribute ("cleanup.policy")
    # only mqadmin's updateTopic sets (UPDATE_AND_CREATE_TOPIC with attributes); a producer's
    # auto-created topic has none (TopicConfigManager#createTopicInSendMessageMethod)
    *_x(_GET, "5.5.0", "admin", "a compaction topic's read (CompactionStore#getMessage)", (882, 884)),
    # 5.5.0 cold-data accounting: coldDataFlowControlEnable (MessageStoreConfig:444, default
    # false), as PullMessageProcessor's cold-data flow control above
    *_x(_GET, "5.5.0", "off-default", "cold-data accounting (coldDataFlowControlEnable)", (995, 997)),
    # -- polling3 (PopLongPollingService, PopMessageProcessor; 26 November 2026): 5.5.0's wake-up
    # callback is passed only by ConsumerLagCalculator#calculateLag (the consumer-lag gauge of
    # BrokerMetricsManager, with enableNotifyBeforePopCalculateLag): wakeUp's callback list and
    # processRequest's run of it serve the metric alone
    *_x(_PLP, "5.5.0", "metrics", "wakeUp's callback (the consumer-lag gauge's PopCommandCallback)", (268, 273)),
    *_x(_PMP, "5.5.0", "metrics", "a woken POP's callbacks (the consumer-lag gauge's PopCommandCallback)",
        (565, 568)),
    # a woken POP's failed response write, a failed zero-copy transfer: the listeners only log
    # (as PullMessageProcessor's)
    *_x(_PLP, "5.5.0", "logging", "a woken POP's failed response write (logs only)", (286, 290)),
    *_x(_PMP, "5.5.0", "logging", "a failed zero-copy transfer's listener (logs only)", (634, 636)),
    # pollLast: only NotificationProcessor builds its service with notifyLast (NotificationProcessor:66;
    # PopMessageProcessor:120 passes false), and only the proxy sends NOTIFICATION
    *_x(_PLP, "5.5.0", "proxy", "pollRemotingCommands' notifyLast (NotificationProcessor's service)", (427, 428)),
    # -- buffer3 (PopBufferMergeService#scanGarbage, 26 November 2026): `entry.getKey() == null`
    # never holds: commitOffsets is a ConcurrentHashMap (5.0.0:47-48, 5.5.0:51-52), whose
    # putVal throws NullPointerException for a null key, so its one writer (putOffsetQueue's
    # putIfAbsent, 5.0.0:373, 5.5.0:420) never stores one and its entry iterator never yields one
    *_x(_BUF, "5.0.0", "unused", "scanGarbage's null-key test (a ConcurrentHashMap has no null key)", (185, 187)),
    *_x(_BUF, "5.5.0", "unused", "scanGarbage's null-key test (a ConcurrentHashMap has no null key)", (192, 194)),
    # -- offsets2 (ConsumerOffsetManager, PullMessageProcessor; 26 November 2026): 5.5.0 tests the
    # release never makes true (the scope policy's proof, one per test; javap of the 5.5.0 jars):
    # - decode's null text (301): its only callers, ConfigManager#load:44 and #loadBak:68, pass
    #   a text that is neither null nor empty; its null object (303): fastjson answers null only
    #   for the text "null", and the only writer of the file, ConfigManager#persist:91-114 (and
    #   the .bak it copies), writes encode(true), the manager as a JSON object;
    # - updateDataVersion's null store (383): BrokerController#initialize builds the store
    #   (initializeMessageStore:891) before registerProcessor (970) and the services that
    #   commit offsets start, and setMessageStore (1403) has no caller in the release's jars;
    # - assignResetOffset's refusals (438): its broker caller, AdminBrokerProcessor#resetOffsetInner
    #   :2175, passes a topic with a TopicConfig and a group the manager contains (:2124, :2132:
    #   names TopicValidator#validateTopic / #validateGroup made non-blank at creation), queue
    #   ids from 0 (:2140 or the loop at :2155) and an offset within [min, max + 1] (:2142-2148,
    #   min >= 0 but for a RocksDB consume queue's error, DefaultMessageStore#getMinOffsetInQueue:1100)
    #   or from ConsumeQueueStore#getOffsetInQueueByTime,
    #   clamped to [min, max] (:201-203), or getMaxOffsetInQueue (>= 0); LmqConsumerOffsetManager
    #   :140 / ConsumerOffsetManagerV2:453 refuse the same first. A negative offset comes only from
    #   a lite subscription's OffsetOption (LiteSubscriptionRegistryImpl:364, 379): `lite`.
    # - PullMessageProcessor's `assert consumerFilterData != null` (409): the class's
    #   $assertionsDisabled test, true unless the JVM runs with -ea, which neither the JVM's
    #   default nor the distribution's bin/runbroker.sh sets (off-default)
    *_x(_COM, "5.5.0", "unused", "decode's null text and object, updateDataVersion's null store",
        (301, 301), (303, 303), (383, 384)),
    *_x(_COM, "5.5.0", "lite", "assignResetOffset's refusals (a lite subscription's negative offset only)",
        (438, 442)),
    *_x(_PULL, "5.5.0", "off-default", "an assert (Java assertions off: no -ea)", (409, 409)),
    # -- revive5 (PopReviveService, 26 November 2026): tests the release never makes true.
    # `brokerController != null` in addRetryTopicIfNotExist (5.5.0:167) / addRetryTopicIfNoExit
    # (5.0.0:139): the field is assigned only by the constructor (5.5.0:82, 5.0.0:61), whose one
    # caller (javap of every jar of the release) is AckMessageProcessor's constructor (5.5.0:70,
    # 5.0.0:56), passing the controller it has just dereferenced (5.0.0:53-54, 5.5.0:66-68); 5.5.0's
    # constructor dereferences it itself (:84). 5.0.0 reviveRetry's `getPopMessageProcessor() !=
    # null` (121): BrokerController#popMessageProcessor is final, assigned `new
    # PopMessageProcessor(this)` in the constructor (5.0.0:177, 301); no class of the release's
    # jars declares another getPopMessageProcessor.
    *_x(_REV, "5.5.0", "unused", "addRetryTopicIfNotExist's null controller (the constructor dereferences it)",
        (167, 167)),
    *_x(_REV, "5.0.0", "unused", "addRetryTopicIfNoExit's null controller, reviveRetry's null PopMessageProcessor "
        "(final fields set by the constructors)", (121, 121), (139, 139)),
    # getQueueId (5.5.0:96): called only by PopMetricsManager's revive-lag gauges (javap), as
    # getReviveBehindMillis above; isShouldRunPopRevive (5.0.0:78, 5.5.0:104): called only by
    # AckMessageProcessor#isPopReviveServiceRunning, the role probe excluded above (_ROLE)
    *_x(_REV, "5.5.0", "metrics", "getQueueId (PopMetricsManager's revive-lag gauges only)", (96, 96)),
    *_x(_REV, "5.5.0", "slave", _ROLE, (104, 104)),
    *_x(_REV, "5.0.0", "slave", _ROLE, (78, 78)),
    # -- polling4 (PopLongPollingService; 26 November 2026): tests the release never makes true.
    # - a null key or value in the polling map: 5.0.0's is a ConcurrentLinkedHashMap
    #   (PopMessageProcessor:100), 5.5.0's a Caffeine cache (PopLongPollingService:78); both
    #   refuse a null key or value on every put (NullPointerException), and the only writer puts
    #   buildPollingKey's string and a new set (5.0.0 #polling:625-628, 5.5.0 #polling:337);
    # - ConcurrentSkipListSet#add answering false: it does only when the comparator answers 0 for
    #   an element already there, and PopRequest.COMPARATOR never answers 0 (5.0.0 PopRequest:74-88,
    #   5.5.0 :94-105: expired, then the request's sequence number, else -1). So the timeout scan's
    #   re-add of a request not yet timed out (run) and polling's add always succeed.
    *_x(_PLP, "5.0.0", "unused", _NEVER_NULL, (761, 763), (805, 807)),
    *_x(_PLP, "5.0.0", "unused", _ADD_NEVER_FAILS, (815, 815), (817, 819)),
    *_x(_PLP, "5.5.0", "unused", _NEVER_NULL, (107, 109), (393, 395)),
    *_x(_PLP, "5.5.0", "unused", _ADD_NEVER_FAILS, (117, 117), (119, 121), (344, 344), (351, 354)),
    # -- races (26 November 2026): a test whose unreached side needs another thread to run between
    # two statements of one call. The model takes each request, and each service pass, as steps
    # whose lock and map updates are atomic, and the lockstep harness pauses a POP only at its
    # popTime read and between its popMsgFromQueue calls (Lockstep.Interleave), outside these.
    # - 5.0.0 QueueLockManager#tryLock: putIfAbsent finding an entry another thread put since get
    #   (909), get finding nothing after a putIfAbsent that succeeded (the clean-up removed it
    #   meanwhile, 916); both answer false, the answer of a held lock, which runs on every busy queue;
    # - #unLock finding no entry (5.0.0:951, 5.5.0:1106): the 60 s clean-up (cleanUnusedLock) removed
    #   it while its holder, between tryLock and unLock, held it for over 60 s; every holder
    #   (popMsgFromQueue, the orderly ack and changeInvisibleTime, the buffer's commit) holds it
    #   inside one call;
    # - the order info managers' `qs == null` in update (5.0.0:71, 5.5.0:102: checkBlock put the map
    #   moments before in the same popMsgFromQueue; only autoClean on the persist thread removes it)
    #   and putIfAbsent finding another's map (5.0.0:74 and 112, 5.5.0:105 and 161).
    *_x(_QLM, "5.0.0", "race", _RACE_LOCK, (909, 909), (916, 916)),
    *_x(_QLM, "5.0.0", "race", _RACE_UNLOCK, (951, 951)),
    *_x(_QLM, "5.5.0", "race", _RACE_UNLOCK, (1106, 1106)),
    *_x("ConsumerOrderInfoManager", "5.0.0", "race", _RACE_MAP, (71, 71), (74, 74), (112, 112)),
    *_x("ConsumerOrderInfoManager", "5.5.0", "race", _RACE_MAP, (102, 102), (105, 105), (161, 161)),
)


def for_target(label: str, release: str, table: Sequence[Excluded] = OUT_OF_SCOPE) -> tuple[Excluded, ...]:
    """The exclusions of one target row in one release."""
    return tuple(e for e in table if e.label == label and e.release == release)


def in_scope(report: Report, java_class: str, method: str | None, raw: Measured,
             excluded: Sequence[Excluded]) -> Measured:
    """``raw`` minus the per-line counters of the ``excluded`` lines of ``java_class`` (of
    its ``method`` for a per-method row). A ToolError when a range reaches into another class's
    (or method's) code: the declaration no longer matches the release's source."""
    if not excluded:
        return raw
    source = report.source_of[java_class]
    lines = report.lines.get(source, {})
    owner_of = method_at(report, source)
    line, branch = Counter(), Counter()
    for e in excluded:
        for nr in range(e.first, e.last + 1):
            if nr not in lines:
                continue  # a line without code (comment, brace, declaration)
            owner = owner_of(nr)
            if owner is None or owner[0] != java_class or (method is not None and owner[1] != method):
                where = f"{owner[0]}#{owner[1]}" if owner else "no method"
                raise ToolError(f"out-of-scope lines {e.first}..{e.last} of {e.label} ({e.release}): line {nr} is "
                                f"code of {where}, not of {java_class}{'#' + method if method else ''}")
            line, branch = line + lines[nr].line, branch + lines[nr].branch
    return Measured(_minus(raw.line, line), _minus(raw.branch, branch))


def _minus(a: Counter, b: Counter) -> Counter:
    return Counter(a.covered - b.covered, a.missed - b.missed)
