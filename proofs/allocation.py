"""Proofs about allocate4Pop with AVG and AVG_BY_CIRCLE (reference.broker.query_assignment).

Sizes are 16-bit bit-vectors bounded by BOUND (products stay below 2**14), so z3 decides the non-linear arithmetic
(i * average, divisions) exactly; every Q, C, S in 1..BOUND (S in 0..BOUND) is covered.
"""

from __future__ import annotations

import random
from typing import Any

from proofs.framework import Proof

BOUND = 128
W = 16  # products stay below 2**14: no overflow, signed comparisons safe


def _bv(name: str) -> Any:
    import z3
    return z3.BitVec(name, W)


def avg_owns(i: Any, k: Any, q: Any, c: Any, mutate: bool = False) -> Any:
    """AllocateMessageQueueAveragely: does client index i get queue index k?"""
    import z3
    mod = z3.URem(q, c)
    big = z3.And(mod > 0, i < mod)
    average = z3.If(q <= c, z3.BitVecVal(1, W), z3.If(big, z3.UDiv(q, c) + 1, z3.UDiv(q, c)))
    start = z3.If(big, i * average, i * average + mod + (1 if mutate else 0))
    span = z3.If(average < q - start, average, q - start)
    # range = min(average, Q - start) may be <= 0; queues start..start+range-1 (no wrap then)
    return z3.And(q > start, k >= start, k - start < span)


def circle_owns(i: Any, k: Any, q: Any, c: Any, mutate: bool = False) -> Any:
    """AllocateMessageQueueAveragelyByCircle: queue k goes to client k mod C (k >= i)."""
    import z3
    return z3.And(k >= i, z3.URem(k, c) == (i + 1 if mutate else i), k < q)


def _sizes() -> tuple[list, list]:
    q, c, s = _bv("Q"), _bv("C"), _bv("S")
    hyps = [q >= 1, q <= BOUND, c >= 1, c <= BOUND, s >= 0, s <= BOUND]
    return [q, c, s], hyps


def _base_partition(owns) -> Any:
    def build(mutate: bool) -> tuple[list, list, Any]:
        import z3
        (q, c, _), hyps = _sizes()
        i, j, k = _bv("i"), _bv("j"), _bv("k")
        hyps += [i >= 0, i < c, j >= 0, j < c, k >= 0, k < q]
        # witness owner: the explicit inverse, so coverage needs no quantifier
        if owns is avg_owns:
            mod = z3.URem(q, c)
            base = z3.UDiv(q, c)
            owner = z3.If(q <= c, k, z3.If(k < mod * (base + 1), z3.UDiv(k, base + 1),
                                          mod + z3.UDiv(k - mod * (base + 1), base)))
        else:
            owner = z3.URem(k, c)
        disjoint = z3.Implies(z3.And(owns(i, k, q, c, mutate), owns(j, k, q, c, mutate)), i == j)
        covered = z3.And(owner >= 0, owner < c, owns(owner, k, q, c, mutate))
        return [q, c, i, j, k], hyps, z3.And(disjoint, covered)
    return build


def _shared_degree(owns) -> Any:
    """Shared branch (0 < S < C-1, C <= Q): client i holds queue k iff (owner(k) - i) mod C <= S,
    and the S + 1 holders (owner - d) mod C, d in 0..S, are pairwise distinct."""
    def build(mutate: bool) -> tuple[list, list, Any]:
        import z3
        (q, c, s), hyps = _sizes()
        o, i, d1, d2, k = _bv("owner"), _bv("i"), _bv("d1"), _bv("d2"), _bv("k")
        hyps += [s > 0, s < c - 1, c <= q, o >= 0, o < c, i >= 0, i < c, k >= 0, k < q, owns(o, k, q, c)]
        hyps += [d1 >= 0, d1 <= s, d2 >= 0, d2 <= s, d1 != d2]
        holder_of = lambda d: z3.URem(o + c - d, c)  # noqa: E731
        # client i holds k iff some step t in 0..S from i reaches the owner: (i + t) mod C == o
        t = _bv("t")
        reach = z3.And(t >= 0, t <= (s + 1 if mutate else s), z3.URem(i + t, c) == o)
        holds_iff = z3.Implies(reach, z3.ULE(z3.URem(o + c - i, c), s))
        distinct = holder_of(d1) != holder_of(d2)
        hyps.append(t >= 0)
        return [q, c, s, o, i, d1, d2, k, t], hyps, z3.And(holds_iff, distinct)
    return build


def _more_clients_degree(mutate: bool) -> tuple[list, list, Any]:
    """More-clients branch: queue q' is held by clients q' + t*Q, t = 0..floor((C-1-q')/Q),
    so by exactly floor((C-1-q')/Q) + 1 clients; and every client gets a queue (i mod Q < Q)."""
    import z3
    (q, c, s), hyps = _sizes()
    k, i = _bv("k"), _bv("i")
    hyps += [c > q, k >= 0, k < q, i >= 0, i < c]
    t_max = z3.UDiv(c - 1 - k, q) + (1 if mutate else 0)
    last_in = k + t_max * q <= c - 1
    next_out = k + (t_max + 1) * q > c - 1
    assigned = z3.URem(i, q) < q
    return [q, c, k, i], hyps, z3.And(last_in, next_out, assigned)


def _naive_bound_exact(mutate: bool) -> tuple[list, list, Any]:
    """max clients per queue > 1 + S  ⇔  (S <= 0 ∧ C > S+1) ∨ (0 < S < C-1 ∧ C > Q ∧ ceil(C/Q) > S+1)."""
    import z3
    (q, c, s), hyps = _sizes()
    ceil = z3.UDiv(c + q - 1, q)
    all_branch = z3.Or(s <= 0, s >= c - 1)
    max_degree = z3.If(all_branch, c, z3.If(c <= q, s + 1, ceil))
    condition = z3.Or(z3.And(s <= 0, c > s + 1),
                      z3.And(s > 0, s < c - 1, c > q, ceil > (s if mutate else s + 1)))
    return [q, c, s], hyps, (max_degree > s + 1) == condition


def naive_bound_witness() -> dict[str, int] | None:
    """z3's smallest-C witness that 'at most 1 + S clients per queue' fails with sharing on (S > 0)."""
    import z3
    (q, c, s), hyps = _sizes()
    opt = z3.Optimize()
    opt.add(*hyps, s > 0, s < c - 1, c > q, z3.UDiv(c + q - 1, q) > s + 1)
    opt.minimize(c)
    if opt.check() != z3.sat:
        return None
    m = opt.model()
    return {"Q": m[q].as_long(), "C": m[c].as_long(), "S": m[s].as_long()}


def _cross_check_strategies(n: int) -> int:
    """Evaluate the owns() encodings on random sizes against the Python strategies."""
    import z3

    from reference.client.allocation import allocate_averagely, allocate_averagely_by_circle
    from reference.common.message_queue import MessageQueue
    rnd = random.Random(20261122)
    done = 0
    for _ in range(n):
        qn, cn = rnd.randint(1, 40), rnd.randint(1, 40)
        mqs = [MessageQueue("T", "b", x) for x in range(qn)]
        cids = [f"c{x:03d}" for x in range(cn)]
        i = rnd.randrange(cn)
        for fn, owns in ((allocate_averagely, avg_owns), (allocate_averagely_by_circle, circle_owns)):
            mine = {m.queue_id for m in fn("g", cids[i], mqs, cids)}
            enc = {k for k in range(qn) if z3.is_true(z3.simplify(owns(z3.BitVecVal(i, W), z3.BitVecVal(k, W),
                                                                         z3.BitVecVal(qn, W), z3.BitVecVal(cn, W))))}
            if mine != enc:
                raise AssertionError(f"encoding disagrees with {fn.__name__} for Q={qn} C={cn} i={i}: {mine} != {enc}")
            done += 1
    return done


def _cross_check_allocate4pop(n: int) -> int:
    """The degree formulas and the naive-bound condition the proofs encode, evaluated by z3 on
    random sizes, against the holders allocate4pop actually produces (AVG and AVG_BY_CIRCLE)."""
    import z3

    from reference.broker.query_assignment import allocate4pop
    from reference.client.allocation import allocate_averagely, allocate_averagely_by_circle
    from reference.common.message_queue import MessageQueue
    rnd = random.Random(99)
    for _ in range(n):
        qn, cn, sn = rnd.randint(1, 20), rnd.randint(1, 20), rnd.randint(0, 21)
        mqs = [MessageQueue("T", "b", x) for x in range(qn)]
        cids = [f"c{x:03d}" for x in range(cn)]
        strategy = rnd.choice([allocate_averagely, allocate_averagely_by_circle])
        holders = {k: set() for k in range(qn)}
        for cid in cids:
            for mq in allocate4pop(strategy, "g", cid, mqs, cids, sn):
                for k in (range(qn) if mq.queue_id == -1 else [mq.queue_id]):
                    holders[k].add(cid)
        q, c, s = (z3.BitVecVal(v, W) for v in (qn, cn, sn))
        for k in range(qn):
            kk = z3.BitVecVal(k, W)
            degree = z3.If(z3.Or(s <= 0, s >= c - 1), c, z3.If(c <= q, s + 1, z3.UDiv(c - 1 - kk, q) + 1))
            assert z3.simplify(degree).as_long() == len(holders[k]), (qn, cn, sn, k)
        condition = z3.Or(z3.And(s <= 0, c > s + 1),
                          z3.And(s > 0, s < c - 1, c > q, z3.UDiv(c + q - 1, q) > s + 1))
        assert z3.is_true(z3.simplify(condition)) == (max(len(h) for h in holders.values()) > sn + 1), (qn, cn, sn)
    return n


PROOFS: list[Proof] = [
    Proof("alloc-avg-partition", "AVG: the base allocation is disjoint and complete (every queue has exactly one "
          "owner, given explicitly)", f"1 <= Q, C <= {BOUND}", _base_partition(avg_owns), _cross_check_strategies, properties=("ALLOC-1", "ALLOC-2",)),
    Proof("alloc-circle-partition", "AVG_BY_CIRCLE: the base allocation is disjoint and complete (owner k mod C)",
          f"1 <= Q, C <= {BOUND}", _base_partition(circle_owns), _cross_check_strategies, properties=("ALLOC-1", "ALLOC-2",)),
    Proof("alloc4pop-avg-shared-degree", "allocate4Pop shared branch with AVG: a queue's holders are exactly the "
          "S + 1 distinct clients owner - d mod C, d = 0..S", f"1 <= Q, C <= {BOUND}, 0 < S < C - 1 <= Q - 1",
          _shared_degree(avg_owns), _cross_check_allocate4pop, properties=("ALLOC-2",)),
    Proof("alloc4pop-circle-shared-degree", "allocate4Pop shared branch with AVG_BY_CIRCLE: exactly S + 1 holders",
          f"1 <= Q, C <= {BOUND}, 0 < S < C - 1 <= Q - 1", _shared_degree(circle_owns), _cross_check_allocate4pop, properties=("ALLOC-2",)),
    Proof("alloc4pop-more-clients-degree", "allocate4Pop with C > Q: queue k has exactly floor((C-1-k)/Q) + 1 "
          "clients and every client is assigned", f"1 <= Q < C <= {BOUND}", _more_clients_degree, _cross_check_allocate4pop, properties=("ALLOC-2", "ALLOC-3",)),
    Proof("alloc4pop-naive-bound-exact", "'at most 1 + S clients per queue' fails exactly when S <= 0 and C > S + 1, "
          "or 0 < S < C - 1, C > Q and ceil(C/Q) > S + 1", f"1 <= Q, C <= {BOUND}, 0 <= S <= {BOUND}",
          _naive_bound_exact, _cross_check_allocate4pop, properties=("ALLOC-2",)),
]
