"""Injectivity of the keys RocketMQ builds by concatenation (reference/broker/keys.py).

Field ranges are those of the Java types: queueId an int, offsets and popTime longs (popTime
a millisecond timestamp: 13 digits from 2001 to 2286), topic and group names non-empty and
without ``@`` (TopicValidator's alphabet ``[%|a-zA-Z0-9_-]``). ``String.valueOf`` of an int or
a long is its shortest decimal with a leading ``-`` when negative.

Separator keys are encoded character by character (a length and an uninterpreted character
function per part, the key's character at position x defined piecewise), because z3's string
solver answers "unknown" on these universally quantified claims. The hypotheses are instances
of "the two keys are equal at every position" and "no part contains @" at the positions the
argument needs (the separators of both keys and an arbitrary position i of each part); the
claim holds for that arbitrary i, hence for all.

- ``{topic}@{group}`` (ConsumerOffsetManager) and ``{topic}@{group}@{queueId}`` (queue lock,
  commit-offset queue, polling key): the parts are determined (proved), and the queueId by its
  decimal form (proved over int). Mutants drop the separator or the sign: refuted.
- The CK merge key ``topic + group + queueId + startOffset + popTime`` (PopCheckPointWrapper,
  PopReviveService's CK map, the AckMsg lookups): for one topic and group it determines the CK
  while queue ids are 0..9 (proved); over queue ids up to 15 it does not (the mutant is refuted:
  ``merge_key_witness``: queue 1 at start offset 10 and queue 11 at start offset 0 with the
  same popTime). Distinct (topic, group) pairs collide as well ("ab"+"c" = "a"+"bc").
"""

from __future__ import annotations

import random
from typing import Any

from proofs.framework import Proof

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MAX = (1 << 63) - 1
POP_TIME_MIN, POP_TIME_MAX = 10 ** 12, 10 ** 13 - 1
AT = ord("@")


def jstr(x: Any) -> Any:
    """String.valueOf(int/long) as a z3 string term."""
    import z3
    return z3.If(x >= 0, z3.IntToStr(x), z3.Concat(z3.StringVal("-"), z3.IntToStr(-x)))


def _separated(parts: int, mutate: bool) -> tuple[list, list, Any]:
    """Two keys p0 @ p1 [@ p2], parts non-empty without '@': equal keys have equal parts.
    The mutant joins the parts without a separator."""
    import z3
    sep = 0 if mutate else 1
    lens = [[z3.Int(f"len{s}_{k}") for k in range(parts)] for s in (1, 2)]
    chars = [[z3.Function(f"char{s}_{k}", z3.IntSort(), z3.IntSort()) for k in range(parts)] for s in (1, 2)]
    start = []
    for s in (0, 1):
        st = [z3.IntVal(0)]
        for k in range(1, parts):
            st.append(st[-1] + lens[s][k - 1] + sep)
        start.append(st)
    length = [start[s][-1] + lens[s][-1] for s in (0, 1)]

    def key_at(s: int, x: Any) -> Any:
        expr = z3.IntVal(-1)
        for k in reversed(range(parts)):
            expr = z3.If(z3.And(x >= start[s][k], x < start[s][k] + lens[s][k]), chars[s][k](x - start[s][k]), expr)
            if k > 0 and sep:
                expr = z3.If(x == start[s][k] - 1, z3.IntVal(AT), expr)
        return expr

    i = z3.Int("i")
    points = [start[s][k] - 1 for s in (0, 1) for k in range(1, parts)]
    points += [start[s][k] + i for s in (0, 1) for k in range(parts)]
    hyps = [lens[s][k] >= 1 for s in (0, 1) for k in range(parts)] + [length[0] == length[1]]
    for p in points:
        hyps.append(z3.Implies(z3.And(p >= 0, p < length[0]), key_at(0, p) == key_at(1, p)))
        for s in (0, 1):
            for k in range(parts):
                y = p - start[s][k]
                hyps.append(z3.Implies(z3.And(y >= 0, y < lens[s][k]), chars[s][k](y) != AT))
    claim = z3.And(*[lens[0][k] == lens[1][k] for k in range(parts)],
                   *[z3.Implies(z3.And(i >= 0, i < lens[0][k]), chars[0][k](i) == chars[1][k](i))
                     for k in range(parts)])
    return [*lens[0], *lens[1], i], hyps, claim


def _int_decimal(mutate: bool) -> tuple[list, list, Any]:
    """String.valueOf(int) is injective over int (the mutant forgets the sign)."""
    import z3
    q1, q2 = z3.Ints("queueId1 queueId2")
    enc = (lambda x: z3.IntToStr(z3.If(x >= 0, x, -x))) if mutate else jstr
    hyps = [q1 >= INT_MIN, q1 <= INT_MAX, q2 >= INT_MIN, q2 <= INT_MAX, enc(q1) == enc(q2)]
    return [q1, q2], hyps, q1 == q2


def _merge_key(mutate: bool) -> tuple[list, list, Any]:
    """For one topic and group (a common prefix), queueId+startOffset+popTime as decimals
    determines the CK while queue ids are 0..9; the mutant allows queue ids up to 15 (and keeps
    start offsets below 16 and one popTime, so that its counterexample is a schedule the driver
    can produce)."""
    import z3
    q1, q2, s1, s2, p1, p2 = z3.Ints("queueId1 queueId2 startOffset1 startOffset2 popTime1 popTime2")
    top_q, top_s = (15, 15) if mutate else (9, LONG_MAX)
    hyps = []
    for q, s, p in ((q1, s1, p1), (q2, s2, p2)):
        hyps += [q >= 0, q <= top_q, s >= 0, s <= top_s, p >= POP_TIME_MIN, p <= POP_TIME_MAX]
    if mutate:  # the collision that matters: one POP request visits every queue with one popTime
        hyps.append(p1 == p2)
    hyps.append(z3.Concat(jstr(q1), jstr(s1), jstr(p1)) == z3.Concat(jstr(q2), jstr(s2), jstr(p2)))
    return [q1, s1, p1, q2, s2, p2], hyps, z3.And(q1 == q2, s1 == s2, p1 == p2)


def merge_key_witness() -> dict[str, int]:
    """z3's collision of two CK merge keys of one topic and group within the driver's reach
    (the refutation of the merge-key claim with queue ids up to 15)."""
    result = ALL_KEYS["keys-merge-key-injective-below-10-queues"].run(mutate=True)
    assert result.result == "refuted" and result.counterexample is not None, result
    return result.counterexample


def _cross_check(n: int) -> int:
    """The z3 string encodings of the three builders evaluate to what reference/broker/keys.py
    builds, on random names, queue ids (incl. -1) and offsets."""
    import z3

    from reference.broker.keys import build_ck_merge_key, build_lock_key, build_offset_table_key
    rng = random.Random(7)
    alphabet = "abcXYZ019%|_-"
    for _ in range(n):
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        g = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        q = rng.randint(-1, 300)
        s, p = rng.randint(0, 10 ** 6), rng.randint(POP_TIME_MIN, POP_TIME_MAX)
        at, tv, gv = z3.StringVal("@"), z3.StringVal(t), z3.StringVal(g)
        assert z3.simplify(z3.Concat(tv, at, gv, at, jstr(z3.IntVal(q)))).as_string() == build_lock_key(t, g, q)
        assert z3.simplify(z3.Concat(tv, at, gv)).as_string() == build_offset_table_key(t, g)
        merge = z3.Concat(tv, gv, jstr(z3.IntVal(q)), jstr(z3.IntVal(s)), jstr(z3.IntVal(p)))
        assert z3.simplify(merge).as_string() == build_ck_merge_key(t, g, q, s, p), (t, g, q, s, p)
    return n


PROOFS = (
    Proof("keys-offset-table-injective", "{topic}@{group} (ConsumerOffsetManager key) determines topic and group",
          "names non-empty without '@', any length", lambda m: _separated(2, m), _cross_check, ("OFF-1", "OFF-2")),
    Proof("keys-lock-injective", "{topic}@{group}@{queueId} (queue lock, commit-offset queue, polling key) "
          "determines its three parts", "names non-empty without '@', decimal queueId", lambda m: _separated(3, m),
          None, ("OFF-1", "OFF-2")),
    Proof("keys-queue-id-decimal-injective", "String.valueOf(queueId) determines queueId (the lock key's last part)",
          "queueId any int, -1 included", _int_decimal, None, ("OFF-1",)),
    Proof("keys-merge-key-injective-below-10-queues", "for one topic and group, the CK merge key determines "
          "queueId, startOffset and popTime while queue ids are 0..9 (not beyond: merge_key_witness)",
          "queueId 0..9, startOffset any long >= 0, popTime 13 digits", _merge_key, None, ("CKM-1", "ALO-1")),
)
ALL_KEYS: dict[str, Proof] = {p.name: p for p in PROOFS}
