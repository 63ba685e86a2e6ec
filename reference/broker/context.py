"""BrokerContext: the narrow view of the broker that the request processors use.

In Java, PopMessageProcessor, AckMessageProcessor and ChangeInvisibleTimeProcessor each hold
the BrokerController and reach what they need through it. The model's processors are typed
against this Protocol instead of the whole ``Broker`` facade: it lists exactly the members
they read or call (tests/broker/test_broker_context.py checks both that ``Broker`` has every
member and that the processors use nothing else), so a processor that starts to depend on more
of the broker shows up as a change here. Typing only: ``Broker`` is what is passed at run time.

PopReviveService (revive.py) and PopBufferMergeService (buffer_merge.py) already take their
collaborators one by one (store, offsets, locks, callables), not the broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reference.broker.buffer_merge import PopBufferMergeService
    from reference.broker.checkpoint import AckMsg, PopCheckPoint
    from reference.broker.config import BrokerConfig
    from reference.broker.consumer_order_info import ConsumerOrderInfoManager
    from reference.broker.offset_manager import ConsumerOffsetManager
    from reference.broker.pop_processor import PopLongPollingService
    from reference.broker.queue_lock import QueueLockManager
    from reference.broker.store import MessageStore
    from reference.common.clock import VirtualClock
    from reference.common.javalang import JavaRandom
    from reference.common.message import MessageExt


class BrokerContext(Protocol):
    """What PopOperation / PopLongPollingService, ack_message / batch_ack / put_ack and
    change_invisible_time use of the broker (BrokerController's getters in Java)."""

    config: BrokerConfig                   # brokerConfig / messageStoreConfig
    clock: VirtualClock                    # System.currentTimeMillis
    rng: JavaRandom                        # PopMessageProcessor's random (retry-first choice)
    topics: dict[str, int]                 # TopicConfigManager: topic -> read queue nums
    groups: set[str]                       # SubscriptionGroupManager's table (no auto-create)
    unreadable_topics: set[str]            # TopicConfig#perm not readable (PermName#isReadable)
    consume_disabled: set[str]             # SubscriptionGroupConfig#consumeEnable false
    store: MessageStore                    # DefaultMessageStore
    offsets: ConsumerOffsetManager         # ConsumerOffsetManager
    queue_locks: QueueLockManager          # PopMessageProcessor#queueLockManager
    buffer_merge: PopBufferMergeService    # PopMessageProcessor#popBufferMergeService
    pop_polling: PopLongPollingService     # PopMessageProcessor's polling map and counters
    revive_topic: str                      # PopMessageProcessor#reviveTopic
    acks_received: list[AckMsg]            # the model's record of every ack written (checkers)
    order_info: ConsumerOrderInfoManager   # ConsumerOrderInfoManager (5.0.0) / QueueLevelConsumerManager (5.5.0)

    def find_group(self, group: str) -> bool:
        """SubscriptionGroupManager#findSubscriptionGroupConfig (auto-creates a missing group)."""
        ...

    def note_orderly_read(self, topic: str, queue_id: int, pop_time: int) -> None:
        """The model's record of the topic incarnation an orderly POP read (F12's switch only)."""
        ...

    def is_stale_orderly_handle(self, topic: str, queue_id: int, pop_time: int) -> bool:
        """Whether an orderly POP of that popTime read an earlier incarnation of the topic."""
        ...

    def note_orderly_handle_renewed(self, topic: str, queue_id: int, old_pop_time: int, new_pop_time: int) -> None:
        """F12's record follows an orderly handle that a changeInvisibleTime re-issued."""
        ...

    def next_ck_message_number(self) -> int:
        """PopMessageProcessor#ckMessageNumber.getAndIncrement()."""
        ...

    def ack_json(self, ack: AckMsg) -> str:
        """The ACK message body in this profile's JSON form."""
        ...

    def put_revive_message(self, msg: MessageExt, site: str = "ack") -> bool:
        """Put into the revive topic (through the timer when it carries a deliver time)."""
        ...

    def put_ck_message(self, ck: PopCheckPoint, revive_qid: int, site: str = "buffer_ck") -> int:
        """buildCkMsg + put; a non-negative marker, or -1 when the store refused the put."""
        ...
