"""Proofs about the PopCheckPoint encoding (reference.broker.checkpoint).

Bitmaps are Java ints (32-bit bit-vectors); offsets are Java longs (64-bit); a checkpoint
holds num <= 32 messages (PopMessageProcessor caps maxMsgNums at 32) whose diffs are the
strictly increasing queue-offset differences popMsgFromQueue records (diffs[0] = 0).
"""

from __future__ import annotations

import random
from typing import Any

from proofs.framework import Proof

DIFFS = 6  # symbolic diff-list length for the round trip (any length behaves alike: indexOf scans)


def set_bit(bitmap: Any, index: Any, mutate: bool = False) -> Any:
    """DataConverter#setBit: bitmap | (1 << (index & 31))."""
    import z3
    shift = (index + 1 if mutate else index) & 31
    return bitmap | (z3.BitVecVal(1, 32) << shift)


def get_bit(bitmap: Any, index: Any) -> Any:
    """DataConverter#getBit: (bitmap & (1 << (index & 31))) != 0."""
    import z3
    return (bitmap & (z3.BitVecVal(1, 32) << (index & 31))) != 0


def _bitmap_laws(mutate: bool) -> tuple[list, list, Any]:
    import z3
    b, i, j = z3.BitVec("bitmap", 32), z3.BitVec("i", 32), z3.BitVec("j", 32)
    hyps = [i >= 0, i < 32, j >= 0, j < 32]
    get_after_set = get_bit(set_bit(b, i, mutate), i)
    others_kept = z3.Implies(i != j, get_bit(set_bit(b, i, mutate), j) == get_bit(b, j))
    idempotent = set_bit(set_bit(b, i, mutate), i, mutate) == set_bit(b, i, mutate)
    commutes = set_bit(set_bit(b, i, mutate), j, mutate) == set_bit(set_bit(b, j, mutate), i, mutate)
    return [b, i, j], hyps, z3.And(get_after_set, others_kept, idempotent, commutes)


def _num_limit(mutate: bool) -> tuple[list, list, Any]:
    """Indexes 0..31 have distinct bits; (documented) index 32 would alias index 0."""
    import z3
    i, j = z3.BitVec("i", 32), z3.BitVec("j", 32)
    limit = 33 if mutate else 32
    hyps = [i >= 0, i < limit, j >= 0, j < limit, i != j]
    one = z3.BitVecVal(1, 32)
    return [i, j], hyps, (one << (i & 31)) != (one << (j & 31))


def index_of_ack(start: Any, diffs: list, ack: Any, mutate: bool = False) -> Any:
    """PopCheckPoint#indexOfAck with a diff list: indexOf((int) (ack - start)), or -1."""
    import z3
    if_not = z3.BitVecVal(-1, 32)
    target = z3.Extract(31, 0, ack - start)
    result = if_not
    for idx in reversed(range(len(diffs))):  # first match wins, like List#indexOf
        result = z3.If(diffs[idx] == target, z3.BitVecVal(idx + (1 if mutate and idx == 0 else 0), 32), result)
    return z3.If(ack < start, if_not, result)


def ack_offset_by_index(start: Any, diffs: list, index: int) -> Any:
    """PopCheckPoint#ackOffsetByIndex: start + diffs[index] (int diff widened to long)."""
    import z3
    return start + z3.SignExt(32, diffs[index])


def _round_trip(mutate: bool) -> tuple[list, list, Any]:
    """For every index i < n: indexOfAck(ackOffsetByIndex(i)) == i; and an offset inside the
    checkpoint's span that is not one of its messages maps to -1."""
    import z3
    start = z3.BitVec("startOffset", 64)
    diffs = [z3.BitVec(f"diff{i}", 32) for i in range(DIFFS)]
    other = z3.BitVec("otherOffset", 64)
    hyps = [start >= 0, start < (1 << 62), diffs[0] == 0]
    hyps += [z3.And(diffs[i] < diffs[i + 1]) for i in range(DIFFS - 1)]
    hyps += [diffs[-1] < (1 << 30)]
    trips = z3.And(*[index_of_ack(start, diffs, ack_offset_by_index(start, diffs, i), mutate) == i
                     for i in range(DIFFS)])
    hyps += [other >= start, other <= start + z3.SignExt(32, diffs[-1])]
    hyps += [other != ack_offset_by_index(start, diffs, i) for i in range(DIFFS)]
    misses = index_of_ack(start, diffs, other, mutate) == -1
    return [start, other, *diffs], hyps, z3.And(trips, misses)


def _acks_commute(mutate: bool) -> tuple[list, list, Any]:
    """Applying two acks (set their bits) in either order, or one twice, gives the same bitmap;
    the CK is done (all num bits set) regardless of ack order."""
    import z3
    b, i, j = z3.BitVec("bitmap", 32), z3.BitVec("i", 32), z3.BitVec("j", 32)
    hyps = [i >= 0, i < 32, j >= 0, j < 32]
    ij = set_bit(set_bit(b, i), j, mutate)
    ji = set_bit(set_bit(b, j), i)
    iij = set_bit(set_bit(set_bit(b, i), i), j)
    return [b, i, j], hyps, z3.And(ij == ji, iij == ij)


def _cross_check(n: int) -> int:
    """Evaluate encodings on random inputs against reference.broker.checkpoint."""
    import z3

    from reference.broker import checkpoint as ck
    rnd = random.Random(7)
    done = 0
    for _ in range(n):
        bitmap = rnd.randrange(-(1 << 31), 1 << 31)
        i = rnd.randrange(32)
        enc = z3.simplify(set_bit(z3.BitVecVal(bitmap, 32), z3.BitVecVal(i, 32))).as_signed_long()
        assert enc == ck.set_bit(bitmap, i), (bitmap, i)
        assert z3.is_true(z3.simplify(get_bit(z3.BitVecVal(bitmap, 32), z3.BitVecVal(i, 32)))) == ck.get_bit(bitmap, i)
        start = rnd.randrange(0, 1 << 40)
        diffs = sorted(rnd.sample(range(1, 500), DIFFS - 1))
        diffs = [0, *diffs]
        ack = start + rnd.choice([*diffs, rnd.randrange(-3, 503)])
        enc_idx = z3.simplify(index_of_ack(z3.BitVecVal(start, 64), [z3.BitVecVal(d, 32) for d in diffs],
                                           z3.BitVecVal(ack, 64))).as_signed_long()
        assert enc_idx == ck.index_of_ack(start, len(diffs), diffs, ack), (start, diffs, ack)
        k = rnd.randrange(DIFFS)
        assert ck.ack_offset_by_index(start, diffs, k) == start + diffs[k]
        done += 1
    return done


def _cross_check_num_limit(n: int) -> int:
    """reference.broker.checkpoint.set_bit gives 32 distinct bits for indexes 0..31 and aliases 32 to 0."""
    from reference.broker import checkpoint as ck
    bits = {ck.set_bit(0, i) for i in range(32)}
    assert len(bits) == 32 and ck.set_bit(0, 32) == ck.set_bit(0, 0)
    return max(n, 33)


PROOFS: list[Proof] = [
    Proof("ck-bitmap-set-get", "setBit then getBit: the bit is set, every other bit unchanged; setBit idempotent "
          "and order-independent", "all 32-bit bitmaps, indexes 0..31", _bitmap_laws, _cross_check, properties=("CKM-1",)),
    Proof("ck-num-limit", "indexes 0..31 map to distinct bitmap bits (a CK of up to 32 messages, the POP maximum, "
          "cannot alias; index 32 would alias index 0)", "indexes 0..31", _num_limit, _cross_check_num_limit, properties=("CKM-1",)),
    Proof("ck-index-round-trip", "indexOfAck(ackOffsetByIndex(i)) = i for every message of a checkpoint, and an "
          "offset inside its span that is not one of its messages gives -1",
          f"startOffset in [0, 2^62), {DIFFS} strictly increasing diffs from 0, below 2^30", _round_trip,
          _cross_check, properties=("CKM-1",)),
    Proof("ck-acks-idempotent-commutative", "acks commute and a repeated ack changes nothing", "all bitmaps",
          _acks_commute, _cross_check, properties=("CKM-1",)),
]
