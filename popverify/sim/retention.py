"""Retention faults: the store's two retention stages as actions (issue 17 item 3).

- ``expire(queue_id, count)`` (swarm fault since before the engine; same draws): retention
  reaches the ``count`` oldest messages of a queue of the consumed topic. The commit-log
  stage deletes every file up to the one holding the last of them (whole files, oldest
  first, across all queues and topics; never the newest file), then the consume-queue stage
  runs -- the two services of one cleanFilesPeriodically tick in 5.0.0
  (DefaultMessageStore: cleanCommitLogService.run(); cleanConsumeQueueService.run()).
- ``expire_commit_log(count)`` (opt-in): only the commit-log stage, ``count`` files.
- ``clean_consume_queue()`` (opt-in): only the consume-queue stage.

With the two opt-in faults other steps run between the stages: reads in between see
MESSAGE_WAS_REMOVING (and Java's commit-log-position-0 oddity, reference/broker/store.py).

Each stage publishes what it took from the checker's obligations: ``Expired`` per queue of
the consumed topic whose readable messages now start higher, ``RetentionLost`` for messages
whose retry copy, CK, ACK or parked timer copy was in a deleted file.
"""

from __future__ import annotations

from typing import Any

from popverify.sim.actions import Arg, fault, index
from popverify.sim.events import Expired, RetentionLost
from reference.broker.checkpoint import AckMsg, BatchAckMsg, PopCheckPoint
from reference.broker.keys import ACK_TAG, BATCH_ACK_TAG, CK_TAG, RETRY_GROUP_TOPIC_PREFIX
from reference.common.message import MessageExt

# Files one expire_commit_log step may delete (the draw: 1..3).
MAX_FILES_PER_STEP = 1_000_000


def _readable(world: Any) -> list[int]:
    store, topic = world.broker.store, world.topic
    return [store.first_readable_offset(topic, q) for q in range(world.config.queues)]


def _lost_uniqs(world: Any, messages: list[MessageExt]) -> set[str]:
    """Messages whose retry copy, CK, ACK (revive topic) or parked copy is among ``messages``."""
    store = world.broker.store
    out: set[str] = set()

    def covered(topic: str | None, queue_id: int, offsets: list[int]) -> None:
        for off in offsets:
            unit = store.unit_at(topic or "", queue_id, off)
            if unit is not None and unit.uniq_key:
                out.add(unit.uniq_key)

    for m in messages:
        if m.topic.startswith(RETRY_GROUP_TOPIC_PREFIX) and m.uniq_key:
            out.add(m.uniq_key)
        elif m.tags == CK_TAG:
            ck = PopCheckPoint.from_json(m.body.decode())
            diffs = ck.queue_offset_diff or list(range(max(ck.num, 0)))
            covered(ck.topic, ck.queue_id, [ck.start_offset + d for d in diffs])
        elif m.tags == ACK_TAG:
            ack = AckMsg.from_json(m.body.decode())
            covered(ack.topic, ack.queue_id, [ack.ack_offset])
        elif m.tags == BATCH_ACK_TAG:
            batch = BatchAckMsg.from_json(m.body.decode())
            covered(batch.topic, batch.queue_id, list(batch.ack_offset_list))
    return out


def _publish(world: Any, first_file_before: int, readable_before: list[int]) -> None:
    store = world.broker.store
    for qid, (before, after) in enumerate(zip(readable_before, _readable(world))):
        if after > before:
            # the checkers know messages by their stored queue offsets (5.0.0's burnt offsets
            # put them past their consume-queue index)
            world.publish(Expired(qid, store.queue_offset_at(world.topic, qid, after), world.topic))
    first_after = store.first_commit_log_file()
    if first_after > first_file_before:
        gone = store.messages_in_files(first_file_before, first_after) + \
            world.broker.timer.parked_in_files(first_file_before, first_after)
        lost = _lost_uniqs(world, gone)
        if lost:
            world.publish(RetentionLost(tuple(sorted(lost))))


def expire_files(world: Any, queue_id: int, count: int) -> int | None:
    """How many of the oldest commit-log files ``expire(queue_id, count)`` asks the commit-log
    stage to delete (up to the file of the queue's count-th oldest message; 0 when that file
    is already gone), or None when the queue has no message to expire."""
    broker, store, topic = world.broker, world.broker.store, world.topic
    qid = queue_id % world.config.queues
    lo, hi = broker.min_offset(topic, qid), broker.max_offset(topic, qid)
    target = min(lo + count, hi) - 1
    if target < lo:
        return None
    return store.files_up_to(topic, qid, target)


def _expire(world: Any, queue_id: int, count: int) -> bool:
    """Retention reaches the ``count`` oldest messages of a queue: both stages."""
    broker, store = world.broker, world.broker.store
    files = expire_files(world, queue_id, count)
    if files is None:
        return False
    first, readable = store.first_commit_log_file(), _readable(world)
    if files > 0:
        broker.delete_commit_log_files(files)
    # the first readable file moves when files were deleted or a held one was shut down
    moved = store.first_commit_log_file() != first
    cleaned = broker.clean_consume_queues()
    if not moved and not cleaned:
        return False
    _publish(world, first, readable)
    return True


def _expire_commit_log(world: Any, count: int) -> bool:
    """The commit-log stage alone: the ``count`` oldest files."""
    store = world.broker.store
    first, readable = store.first_commit_log_file(), _readable(world)
    world.broker.delete_commit_log_files(count)
    if store.first_commit_log_file() == first:  # nothing deleted, no held file shut down
        return False
    _publish(world, first, readable)
    return True


def _clean_consume_queue(world: Any) -> bool:
    """The consume-queue stage alone."""
    store = world.broker.store
    first, readable = store.first_commit_log_file(), _readable(world)
    if not world.broker.clean_consume_queues():
        return False
    _publish(world, first, readable)
    return True


EXPIRE = fault("expire", _expire, (index("queue_id"), index("count")),
               lambda rng, w: (rng.next_int(w.config.queues), 1 + rng.next_int(3)))
# Retention's stages one at a time are opt-in faults (ActionSpec.opt_in): they came after the
# configurations tests/sim/test_engine_digests.py pins; the swarm's late draw lists them.
# (count is how many files, a choice like an index: not a value dimension of the domain table)
EXPIRE_COMMIT_LOG = fault("expire_commit_log", _expire_commit_log,
                          (Arg("count", int, 1, MAX_FILES_PER_STEP, value=False),),
                          lambda rng, w: (1 + rng.next_int(3),), opt_in=True)
CLEAN_CONSUME_QUEUE = fault("clean_consume_queue", _clean_consume_queue, opt_in=True)
