"""Proofs about offset rules: getMessage's status table, nextOffsetCorrection, the commit
offset of the POP buffer, and increase-only offset updates."""

from __future__ import annotations

import random
from typing import Any

from proofs.framework import Proof

STATUSES = ("NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE", "OFFSET_TOO_SMALL", "OFFSET_OVERFLOW_ONE",
            "OFFSET_OVERFLOW_BADLY", "IN_RANGE")
WRAPPERS = 4


def status_table(has_queue: Any, min_off: Any, max_off: Any, offset: Any, mutate: bool = False) -> list:
    """The status table as independent conditions (seed 004), one per status, in STATUSES order."""
    import z3
    too_small = (offset <= min_off) if mutate else (offset < min_off)
    return [
        z3.Not(has_queue),
        z3.And(has_queue, max_off == 0),
        z3.And(has_queue, max_off != 0, too_small),
        z3.And(has_queue, max_off != 0, offset == max_off),
        z3.And(has_queue, max_off != 0, offset > max_off),
        z3.And(has_queue, max_off != 0, offset >= min_off, offset < max_off),
    ]


def _partition(mutate: bool) -> tuple[list, list, Any]:
    """Under 0 <= min <= max, every input satisfies exactly one status condition."""
    import z3
    has_queue = z3.Bool("hasQueue")
    mn, mx, off = z3.BitVec("minOffset", 64), z3.BitVec("maxOffset", 64), z3.BitVec("offset", 64)
    conds = status_table(has_queue, mn, mx, off, mutate)
    exactly_one = z3.PbEq([(c, 1) for c in conds], 1)
    return [has_queue, mn, mx, off], [mn >= 0, mn <= mx], exactly_one


def _correction_in_range(mutate: bool) -> tuple[list, list, Any]:
    """On a master, nextBeginOffset after a range status lies in [min, max] (the next read is legal)."""
    import z3
    mn, mx, off = z3.BitVec("minOffset", 64), z3.BitVec("maxOffset", 64), z3.BitVec("offset", 64)
    nxt = z3.If(mx == 0, z3.BitVecVal(0, 64), z3.If(off < mn, mn, z3.If(off == mx, off, z3.If(off > mx, mx + (1 if mutate else 0), off))))
    return [mn, mx, off], [mn >= 0, mn <= mx, mx < (1 << 62)], z3.And(nxt >= mn, nxt <= mx)


def _commit_never_passes_unacked(mutate: bool) -> tuple[list, list, Any]:
    """scanCommitOffset: the committed offset is the nextBeginOffset of the last of the leading
    finished pops; pops are contiguous in the queue, so it never passes the first offset of
    the first unfinished pop (where the first un-acked message can be)."""
    import z3
    starts = [z3.BitVec(f"start{i}", 64) for i in range(WRAPPERS)]
    nexts = [z3.BitVec(f"next{i}", 64) for i in range(WRAPPERS)]
    done = [z3.Bool(f"done{i}") for i in range(WRAPPERS)]
    committed0 = z3.BitVec("committed0", 64)
    hyps = [committed0 >= 0, committed0 <= starts[0], starts[0] < (1 << 60)]
    for i in range(WRAPPERS):
        hyps += [nexts[i] > starts[i], nexts[i] - starts[i] <= 32]
        if i + 1 < WRAPPERS:
            hyps.append(starts[i + 1] == nexts[i])
    committed = committed0
    stop = z3.BoolVal(False)
    first_unfinished = nexts[-1]
    for i in reversed(range(WRAPPERS)):
        first_unfinished = z3.If(z3.Not(done[i]), starts[i], first_unfinished)
    for i in range(WRAPPERS):
        advance = z3.And(z3.Not(stop), done[i] if not mutate else z3.BoolVal(True))
        committed = z3.If(advance, nexts[i], committed)
        stop = z3.Or(stop, z3.Not(advance))
    return [committed0, *starts, *nexts, *done], hyps, committed <= first_unfinished


def increase_only_update(old: Any, new: Any, increase_only: Any, mutate: bool = False) -> Any:
    """RemoteBrokerOffsetStore#updateOffset: MixAll.compareAndIncreaseOnly when increaseOnly,
    otherwise a plain set (client/.../RemoteBrokerOffsetStore.java, both profiles)."""
    import z3
    keep = (old >= new) if mutate else (old > new)
    raised = z3.If(keep, old, new) if not mutate else z3.If(old >= new, new, old)
    return z3.If(increase_only, raised, new)


def _increase_only_monotone(mutate: bool) -> tuple[list, list, Any]:
    import z3
    old, new = z3.BitVec("old", 64), z3.BitVec("new", 64)
    result = increase_only_update(old, new, z3.BoolVal(True), mutate)
    return [old, new], [], z3.And(result >= old, result >= new, z3.Or(result == old, result == new))


def _cross_check_increase_only(n: int) -> int:
    """increase_only_update against RemoteBrokerOffsetStore.update_offset on random offsets."""
    import z3

    from reference.client.offset_store import RemoteBrokerOffsetStore
    from reference.common.message_queue import MessageQueue
    rnd = random.Random(11)
    mq = MessageQueue("T", "b", 0)
    for _ in range(n):
        old, new = rnd.randrange(-(1 << 63), 1 << 63), rnd.randrange(-(1 << 63), 1 << 63)
        flag = rnd.random() < 0.5
        store = RemoteBrokerOffsetStore("g", broker=None)  # type: ignore[arg-type]
        store.update_offset(mq, old, False)
        store.update_offset(mq, new, flag)
        enc = z3.simplify(increase_only_update(z3.BitVecVal(old, 64), z3.BitVecVal(new, 64), z3.BoolVal(flag)))
        assert enc.as_signed_long() == store.offset_table[mq], (old, new, flag)
    return n


def _cross_check_commit(n: int) -> int:
    """The commit encoding against PopBufferMergeService#scanCommitOffset on random pop queues."""
    from reference.broker.buffer_merge import PopBufferMergeService, PopCheckPointWrapper
    from reference.broker.checkpoint import PopCheckPoint, full_mask
    from reference.broker.config import BrokerConfig
    from reference.broker.offset_manager import ConsumerOffsetManager
    from reference.broker.queue_lock import QueueLockManager
    rnd = random.Random(5)
    for _ in range(n):
        offsets = ConsumerOffsetManager(5000, 0)
        service = PopBufferMergeService(BrokerConfig.for_profile("v5.5"), lambda: 0, offsets, QueueLockManager(),
                                        lambda ck, q: 0, lambda m, site: True, lambda a: "")
        start = rnd.randrange(0, 1000)
        done_flags, nexts = [], []
        offset = start
        for _ in range(WRAPPERS):
            num = rnd.randint(1, 32)
            ck = PopCheckPoint(start_offset=offset, num=num, topic="T", cid="g", queue_id=0, pop_time=1)
            for d in range(num):
                ck.add_diff(d)
            w = PopCheckPointWrapper(0, -1, ck, offset + num)
            done = rnd.random() < 0.6
            if done:
                w.bits = full_mask(num)
            done_flags.append(done)
            nexts.append(offset + num)
            service._put_offset_queue(w)
            offset += num
        service.scan_commit_offset()
        got = offsets.query_offset("g", "T", 0)
        leading = 0
        while leading < WRAPPERS and done_flags[leading]:
            leading += 1
        expected = nexts[leading - 1] if leading else -1
        assert got == expected, (done_flags, nexts, got)
        first_unfinished = start + sum(nexts[i] - (start if i == 0 else nexts[i - 1]) for i in range(leading))
        assert got <= first_unfinished or leading == 0
    return n


def _cross_check(n: int) -> int:
    """Status table and correction against reference.broker.store on random inputs."""
    import z3

    from reference.broker.store import get_message_status
    rnd = random.Random(3)
    done = 0
    for _ in range(n):
        mn = rnd.choice([0, rnd.randrange(0, 50)])
        mx = mn + rnd.choice([0, rnd.randrange(0, 50)])
        off = rnd.randrange(-5, mx + 10)
        has = rnd.random() < 0.9
        status, nxt = get_message_status(has, mn, mx, off)
        conds = status_table(z3.BoolVal(has), z3.BitVecVal(mn, 64), z3.BitVecVal(mx, 64), z3.BitVecVal(off, 64))
        chosen = [STATUSES[i] for i, c in enumerate(conds) if z3.is_true(z3.simplify(c))]
        expected = "IN_RANGE" if status.name == "NO_MATCHED_MESSAGE" else status.name
        assert chosen == [expected], (has, mn, mx, off, chosen, status)
        if has and status.name != "NO_MATCHED_MESSAGE" and mx > 0:
            # the corrected nextBeginOffset the range proof encodes (master)
            enc = off if off == mx else (mn if off < mn else (mx if off > mx else off))
            assert nxt == enc, (mn, mx, off, nxt)
        done += 1
    return done


PROOFS: list[Proof] = [
    Proof("offset-status-partition", "getMessage's status table: under 0 <= minOffset <= maxOffset every "
          "(queue exists?, min, max, offset) satisfies exactly one status condition", "all 64-bit offsets",
          _partition, _cross_check, properties=("OFF-1",)),
    Proof("offset-correction-in-range", "nextOffsetCorrection on a master puts nextBeginOffset in [min, max]",
          "0 <= min <= max < 2^62", _correction_in_range, _cross_check, properties=("OFF-1",)),
    Proof("offset-commit-before-first-unacked", "the POP buffer's committed offset never passes the first offset of "
          "the first unfinished checkpoint", f"{WRAPPERS} contiguous pops of 1..32 messages", _commit_never_passes_unacked,
          _cross_check_commit, properties=("OFF-1",)),
    Proof("offset-increase-only-monotone", "updateOffset(increaseOnly=true) never lowers the offset and yields "
          "max(old, new)", "all 64-bit offsets", _increase_only_monotone,
          _cross_check_increase_only, properties=("OFF-2",)),
]
