"""ConsumerManager and RebalanceLockManager: who is in a consumer group, and who holds the
orderly-consumption lock of each queue (broker/client/ConsumerManager.java,
broker/client/rebalance/RebalanceLockManager.java)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from reference.common.javalang import string_sort_key
from reference.common.message_queue import MessageQueue

# ConsumerManager#CHANNEL_EXPIRED_TIMEOUT: a client silent this long is scanned out.
CHANNEL_EXPIRED_TIMEOUT = 120_000
# RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME (rocketmq.broker.rebalance.lockMaxLiveTime)
BROKER_REBALANCE_LOCK_MAX_LIVE_TIME = 60_000


@attrs.frozen
class SubscriptionData:
    """A heartbeat's subscription of one topic: expression, its type and the client's subVersion
    (DefaultMQPushConsumer's is "*", TAG; the model's heartbeats carry subVersion 0)."""

    sub_string: str = "*"
    expression_type: str = "TAG"
    sub_version: int = 0


@attrs.define
class ClientChannelInfo:
    """One registered client of a group: its subscriptions and last heartbeat."""

    client_id: str
    topics: tuple[str, ...]
    last_update_timestamp: int


class ConsumerManager:
    """Group → registered clients, maintained by heartbeats and channel events."""

    def __init__(self, now: Callable[[], int]) -> None:
        self._now = now
        self._groups: dict[str, dict[str, ClientChannelInfo]] = {}
        # ConsumerGroupInfo#subscriptionTable: group -> topic -> the subscription a pull without
        # its own reads (findSubscriptionData)
        self._subscriptions: dict[str, dict[str, SubscriptionData]] = {}

    def register_consumer(self, group: str, client_id: str, topics: tuple[str, ...],
                          subscription: SubscriptionData = SubscriptionData()) -> bool:
        """registerConsumer (a heartbeat, ``subscription`` on each of ``topics``): True when the
        group's client set changed, which is when Java notifies the group's clients
        (NOTIFY_CONSUMER_IDS_CHANGED). ConsumerGroupInfo#updateSubscription keeps a topic's
        subscription until a later subVersion replaces it (5.0.0:150-172, 5.5.0:174-197); the
        model's push consumers all subscribe the same topics, whose removal it does not model."""
        table = self._subscriptions.setdefault(group, {})
        for topic in topics:
            old = table.get(topic)
            if old is None or subscription.sub_version > old.sub_version:
                table[topic] = subscription
        clients = self._groups.setdefault(group, {})
        info = clients.get(client_id)
        if info is None:
            clients[client_id] = ClientChannelInfo(client_id, tuple(topics), self._now())
            return True
        info.topics = tuple(topics)
        info.last_update_timestamp = self._now()
        return False

    def unregister_consumer(self, group: str, client_id: str) -> bool:
        """unregisterConsumer / doChannelCloseEvent: True when the client was registered."""
        clients = self._groups.get(group, {})
        removed = clients.pop(client_id, None) is not None
        if not clients:
            self._groups.pop(group, None)
            self._subscriptions.pop(group, None)  # the ConsumerGroupInfo goes with its last client
        return removed

    def scan_not_active_channel(self) -> list[tuple[str, str]]:
        """scanNotActiveChannel: drop clients silent for CHANNEL_EXPIRED_TIMEOUT."""
        gone = []
        for group in sorted(self._groups):
            for client_id, info in sorted(self._groups[group].items()):
                if self._now() - info.last_update_timestamp > CHANNEL_EXPIRED_TIMEOUT:
                    gone.append((group, client_id))
        for group, client_id in gone:
            self.unregister_consumer(group, client_id)
        return gone

    def get_consumer_id_list(self, group: str) -> list[str]:
        """ConsumerGroupInfo#getAllClientId. Java iterates a ConcurrentHashMap (hash order);
        every caller sorts, so the model returns Java string order."""
        return sorted(self._groups.get(group, {}), key=string_sort_key)

    def has_group(self, group: str) -> bool:
        """getConsumerGroupInfo(group) != null."""
        return group in self._groups

    def subscribes(self, group: str, topic: str) -> bool:
        """ConsumerGroupInfo#findSubscriptionData(topic) != null (any client subscribes it)."""
        return any(topic in info.topics for info in self._groups.get(group, {}).values())

    def subscription(self, group: str, topic: str) -> SubscriptionData:
        """findSubscriptionData(topic) of a group that ``subscribes`` it."""
        return self._subscriptions[group][topic]

    def clear(self) -> None:
        """A broker restart loses every channel; clients register again on their heartbeat."""
        self._groups.clear()
        self._subscriptions.clear()


@attrs.define
class LockEntry:
    """RebalanceLockManager.LockEntry."""

    client_id: str
    last_update_timestamp: int


class RebalanceLockManager:
    """Per group and queue, which client may consume it orderly (broker side, 60 s lease)."""

    def __init__(self, now: Callable[[], int], max_live_time: int = BROKER_REBALANCE_LOCK_MAX_LIVE_TIME) -> None:
        self._now = now
        self._max_live_time = max_live_time
        self._table: dict[str, dict[MessageQueue, LockEntry]] = {}

    def _expired(self, entry: LockEntry) -> bool:
        return self._now() - entry.last_update_timestamp > self._max_live_time

    def _is_locked(self, group: str, mq: MessageQueue, client_id: str) -> bool:
        """isLocked: held by ``client_id`` and not expired; renews the lease when so."""
        entry = self._table.get(group, {}).get(mq)
        if entry is None:
            return False
        locked = entry.client_id == client_id and not self._expired(entry)
        if locked:
            entry.last_update_timestamp = self._now()
        return locked

    def try_lock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> set[MessageQueue]:
        """tryLockBatch: the queues now locked by ``client_id`` (free, expired or already its own)."""
        locked: set[MessageQueue] = set()
        not_locked = []
        for mq in mqs:
            (locked.add(mq) if self._is_locked(group, mq, client_id) else not_locked.append(mq))
        table = self._table.setdefault(group, {})
        for mq in not_locked:
            entry = table.get(mq)
            if entry is None:
                entry = LockEntry(client_id, self._now())
                table[mq] = entry
            if entry.client_id == client_id and not self._expired(entry):
                entry.last_update_timestamp = self._now()
                locked.add(mq)
            elif self._expired(entry):
                entry.client_id = client_id
                entry.last_update_timestamp = self._now()
                locked.add(mq)
        return locked

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> None:
        """unlockBatch: release the queues ``client_id`` holds; others' locks are left alone."""
        table = self._table.get(group)
        if table is None:
            return
        for mq in mqs:
            entry = table.get(mq)
            if entry is not None and entry.client_id == client_id:
                del table[mq]

    def holder(self, group: str, mq: MessageQueue) -> str | None:
        """The live lock holder of ``mq`` (inspection)."""
        entry = self._table.get(group, {}).get(mq)
        return None if entry is None or self._expired(entry) else entry.client_id

    def clear(self) -> None:
        """The lock table lives in memory: a restart loses it."""
        self._table.clear()
