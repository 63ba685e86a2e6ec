"""AllocateMessageQueueStrategy implementations as pure functions (client rebalance package).

Each strategy takes (consumer_group, current_cid, mq_all, cid_all) with the lists already
sorted by the caller, as RebalanceImpl / QueryAssignmentProcessor sort them, and returns the
queues of ``current_cid`` in the order Java builds its result list. Argument checks follow
AbstractAllocateMessageQueueStrategy#check: empty cid or lists raise ValueError (Java's
IllegalArgumentException); a cid not in cid_all gets an empty list.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Sequence

from reference.common.javalang import java_div, string_sort_key
from reference.common.message_queue import MessageQueue


Strategy = Callable[[str, str, Sequence[MessageQueue], Sequence[str]], list[MessageQueue]]


def sort_queues(mqs: Sequence[MessageQueue]) -> list[MessageQueue]:
    """Collections.sort(mqAll)."""
    return sorted(mqs, key=MessageQueue.sort_key)


def sort_cids(cids: Sequence[str]) -> list[str]:
    """Collections.sort(cidAll): Java String order ("c10" before "c2")."""
    return sorted(cids, key=string_sort_key)


def check(current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> bool:
    """AbstractAllocateMessageQueueStrategy#check."""
    if not current_cid:
        raise ValueError("currentCID is empty")
    if not mq_all:
        raise ValueError("mqAll is null or mqAll empty")
    if not cid_all:
        raise ValueError("cidAll is null or cidAll empty")
    return current_cid in cid_all


def allocate_averagely(group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> list[MessageQueue]:
    """AllocateMessageQueueAveragely#allocate: contiguous blocks, the first ``mod`` one larger."""
    if not check(current_cid, mq_all, cid_all):
        return []
    n, c = len(mq_all), len(cid_all)
    index = list(cid_all).index(current_cid)
    mod = n % c
    if n <= c:
        average = 1
    elif mod > 0 and index < mod:
        average = java_div(n, c) + 1
    else:
        average = java_div(n, c)
    start = index * average if (mod > 0 and index < mod) else index * average + mod
    span = min(average, n - start)
    return [mq_all[(start + i) % n] for i in range(span)]


def allocate_averagely_by_circle(group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                                 cid_all: Sequence[str]) -> list[MessageQueue]:
    """AllocateMessageQueueAveragelyByCircle#allocate: queue i goes to client i mod C."""
    if not check(current_cid, mq_all, cid_all):
        return []
    index = list(cid_all).index(current_cid)
    return [mq_all[i] for i in range(index, len(mq_all)) if i % len(cid_all) == index]


def md5_hash(key: str) -> int:
    """ConsistentHashRouter.MD5Hash#hash: the first 4 digest bytes as an unsigned 32-bit long."""
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest()[:4], "big")


def allocate_consistent_hash(group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                             cid_all: Sequence[str], virtual_node_cnt: int = 10) -> list[MessageQueue]:
    """AllocateMessageQueueConsistentHash#allocate with the default MD5 ring.

    Virtual node keys are ``cid + "-" + i``; the ring is a TreeMap, so a later node with the
    same hash replaces the earlier one, as TreeMap#put does.
    """
    if virtual_node_cnt < 0:
        raise ValueError(f"illegal virtualNodeCnt :{virtual_node_cnt}")
    if not check(current_cid, mq_all, cid_all):
        return []
    ring: dict[int, str] = {}
    for cid in cid_all:
        existing = sum(1 for owner in ring.values() if owner == cid)
        for i in range(virtual_node_cnt):
            ring[md5_hash(f"{cid}-{i + existing}")] = cid
    if not ring:
        return []
    keys = sorted(ring)
    result = []
    for mq in mq_all:
        h = md5_hash(mq.java_str())
        pos = bisect_left(keys, h)
        owner = ring[keys[pos] if pos < len(keys) else keys[0]]
        if owner == current_cid:
            result.append(mq)
    return result


def allocate_by_config(message_queue_list: Sequence[MessageQueue]) -> Strategy:
    """AllocateMessageQueueByConfig: every client gets the configured list, no checks."""
    def allocate(group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        return list(message_queue_list)
    return allocate


def allocate_by_machine_room(consumeridcs: set[str]) -> Strategy:
    """AllocateMessageQueueByMachineRoom: queues of brokers named ``idc@name`` in the given
    machine rooms, split in blocks of size |premq| / C plus one of the remainder."""
    def allocate(group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        index = list(cid_all).index(current_cid)
        pre = [mq for mq in mq_all if len(parts := mq.broker_name.split("@")) == 2 and parts[0] in consumeridcs]
        mod, rem = divmod(len(pre), len(cid_all))
        result = pre[mod * index: mod * index + mod]
        if rem > index:
            result.append(pre[index + mod * len(cid_all)])
        return result
    return allocate


def allocate_machine_room_nearby(inner: Strategy, broker_room: Callable[[MessageQueue], str],
                                 consumer_room: Callable[[str], str]) -> Strategy:
    """AllocateMachineRoomNearby: allocate within the consumer's machine room first, then share
    the queues of rooms without a live consumer among all consumers."""
    def allocate(group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        mr2mq: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = broker_room(mq)
            if not room:
                raise ValueError(f"Machine room is null for mq {mq.java_str()}")
            mr2mq.setdefault(room, []).append(mq)
        mr2c: dict[str, list[str]] = {}
        for cid in cid_all:
            room = consumer_room(cid)
            if not room:
                raise ValueError(f"Machine room is null for consumer id {cid}")
            mr2c.setdefault(room, []).append(cid)
        result: list[MessageQueue] = []
        current_room = consumer_room(current_cid)
        mine = mr2mq.pop(current_room, None)
        if mine:
            result.extend(inner(group, current_cid, mine, mr2c.get(current_room) or []))
        for room in sorted(mr2mq, key=string_sort_key):  # TreeMap order
            if room not in mr2c:
                result.extend(inner(group, current_cid, mr2mq[room], cid_all))
        return result
    return allocate


STRATEGIES: dict[str, Strategy] = {
    "AVG": allocate_averagely,
    "AVG_BY_CIRCLE": allocate_averagely_by_circle,
    "CONSISTENT_HASH": allocate_consistent_hash,
}

__all__ = ["MessageQueue", "STRATEGIES", "allocate_averagely", "allocate_averagely_by_circle",
           "allocate_by_config", "allocate_by_machine_room", "allocate_consistent_hash",
           "allocate_machine_room_nearby", "check", "md5_hash", "sort_cids", "sort_queues"]
