"""Generator strategies for the z3 witnesses of proofs/keys.py, and their reach detector.

``merge_key_collision`` turns the merge-key witness (two CKs of one topic and group, queue q1
at start offset s1 and queue q2 at start offset s2, one popTime, equal keys) into a schedule
the POP driver runs: move each queue's offset to its start offset, put one message on each, and
pop every queue in one request. ``key_witnesses`` reports which witnesses a run reached (the
driver adds them as ``key-witness:NAME`` coverage points, which campaigns count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from popverify.trace.schedule import Action
from reference.broker.checkpoint import PopCheckPoint
from reference.broker.keys import CK_TAG, build_ck_merge_key

if TYPE_CHECKING:
    from popverify.sim.scenario import ScenarioConfig
    from reference.broker.broker import Broker


def _drain_queue(queue: int, count: int) -> list[Action]:
    """Put ``count`` messages on ``queue``, pop them with consumer 0 and ack them."""
    if count == 0:
        return []
    steps = [Action("produce", (queue,)) for _ in range(count)]
    steps += [Action("pop", (0, queue, False))] + [Action("pop_step", (0,)) for _ in range(3)]
    steps += [Action("ack", (0, 0)) for _ in range(count)]
    return steps


def merge_key_collision(q1: int, s1: int, q2: int, s2: int) -> tuple["ScenarioConfig", list[Action]]:
    """A configuration and schedule under which two CKs of one POP request collide on their
    merge key (queue q1 from offset s1, queue q2 from offset s2); nothing acks them, so revive
    has to tell them apart."""
    from popverify.sim.scenario import ScenarioConfig  # the POP driver imports this module

    queues = max(q1, q2) + 1
    config = ScenarioConfig(queues=queues, consumers=1, invisible_time=10_000, max_msg_nums=32,
                            actions=("produce", "pop", "pop_step", "ack", "advance", "revive"))
    steps = _drain_queue(q1, s1) + _drain_queue(q2, s2)
    steps += [Action("advance", (200,)), Action("produce", (q1,)), Action("produce", (q2,))]
    steps += [Action("pop", (0, -1, False))] + [Action("pop_step", (0,)) for _ in range(queues + 2)]
    return config, steps


class HandleKeys:
    """Watches the receipt handles a run delivers: two handles whose CKs differ (queue, start
    offset or popTime) but share a merge key reach the merge-key witness. Cheap enough to run
    on every delivery (one split and one dict lookup)."""

    def __init__(self, group: str) -> None:
        self._group = group
        self._seen: dict[str, tuple[str, int, int, int]] = {}
        self.reached: set[str] = set()

    def observe(self, ack_topic: str, queue_id: int, extra_info: str) -> None:
        """A delivered message of ``ack_topic`` queue ``queue_id`` with handle ``extra_info``."""
        fields = extra_info.split(" ")
        start, pop_time = int(fields[0]), int(fields[1])
        ident = (ack_topic, queue_id, start, pop_time)
        key = build_ck_merge_key(ack_topic, self._group, queue_id, start, pop_time)
        if self._seen.setdefault(key, ident) != ident:
            self.reached.add("merge")


def key_witnesses(broker: "Broker") -> list[str]:
    """The key witnesses this broker's history reached: ``merge`` when two different CKs (any
    topic, group, queue, start offset, popTime) were written or buffered with one merge key."""
    seen: dict[str, tuple] = {}
    points = [w.ck for w in broker.buffered_checkpoints()]
    # a CK replaced in the buffer by a colliding one is still queued for its offset commit
    points += [w.ck for q in broker.buffer_merge.commit_offsets.values() for w in q if w.ck.num > 0]
    for qid in range(broker.config.revive_queue_num):
        points += [PopCheckPoint.from_json(m.body.decode()) for m in broker.store.snapshot_queue(broker.revive_topic, qid)
                   if m.tags == CK_TAG]
    points += [PopCheckPoint.from_json(m.body.decode()) for m in broker.timer_pending() if m.tags == CK_TAG]
    for ck in points:
        ident = (ck.topic, ck.cid, ck.queue_id, ck.start_offset, ck.pop_time)
        key = build_ck_merge_key(ck.topic or "", ck.cid or "", ck.queue_id, ck.start_offset, ck.pop_time)
        if seen.setdefault(key, ident) != ident:
            return ["merge"]
    return []
