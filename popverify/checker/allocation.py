"""ALLOC properties of broker-side rebalance (spec/allocation.md), checked on one full view.

``assignment`` maps every client id to the queue ids doLoadBalance gives it (-1 = all
queues). The checks take the view (Q queues, the client list, popShareQueueNum S) and
report violations by ID.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from popverify.checker.violation import Violation
from reference.common.javalang import string_sort_key


def sharing_degree(queues: int, clients: int, share: int, queue: int) -> int:
    """The exact number of clients allocate4Pop gives queue ``queue`` (0-based in sorted order)."""
    if share <= 0 or share >= clients - 1:
        return clients
    if clients <= queues:
        return share + 1
    return (clients - 1 - queue) // queues + 1


def naive_bound_fails(queues: int, clients: int, share: int) -> bool:
    """Exactly when "at most 1 + popShareQueueNum clients per queue" is false for some queue."""
    if share <= 0:
        return clients > share + 1  # "0 = every client pops every queue"
    return share < clients - 1 and clients > queues and -(-clients // queues) > share + 1


def check_allocation(queues: int, cids: Sequence[str], share: int | None,
                     assignment: Mapping[str, Sequence[int]]) -> list[Violation]:
    """ALLOC-1..4 on a complete assignment (POP mode when ``share`` is not None)."""
    out: list[Violation] = []
    order = sorted(cids, key=string_sort_key)
    holders: dict[int, set[str]] = {q: set() for q in range(queues)}
    for cid, qs in assignment.items():
        for q in qs:
            for real in (range(queues) if q == -1 else [q]):
                holders[real].add(cid)
    uncovered = [q for q, hs in holders.items() if not hs]
    if uncovered:
        out.append(Violation("ALLOC-1", f"queues {uncovered} assigned to no client", 0))
    if share is None:
        shared = [q for q, hs in holders.items() if len(hs) > 1]
        if shared:
            out.append(Violation("ALLOC-2", f"plain strategy gave queues {shared} to more than one client", 0))
    else:
        for q in range(queues):
            want = sharing_degree(queues, len(order), share, q)
            if len(holders[q]) != want:
                out.append(Violation("ALLOC-2", f"queue {q} shared by {len(holders[q])} clients, allocate4Pop "
                                                f"gives exactly {want} (Q={queues}, C={len(order)}, S={share})", 0))
    if share is not None or len(order) <= queues:
        idle = [c for c in order if not assignment.get(c)]
        if idle:
            out.append(Violation("ALLOC-3", f"clients {idle} got no queue", 0))
    return out


def check_agreement(compute: Callable[[str, Sequence[str]], Sequence[int]], cids: Sequence[str]) -> list[Violation]:
    """ALLOC-4: clients with the same view agree: the result does not depend on the order in
    which the client list was reported (each client computes from its own copy)."""
    forward = {c: sorted(compute(c, list(cids))) for c in cids}
    backward = {c: sorted(compute(c, list(reversed(cids)))) for c in cids}
    if forward != backward:
        return [Violation("ALLOC-4", "assignment depends on the order of the client list", 0)]
    return []
