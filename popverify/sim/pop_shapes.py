"""POP requests of shapes no POP consumer of the run sends (issue 16: PopMessageProcessor's
request validation and getInitOffset's modes).

``pop_shape`` is an opt-in POP-mode action whose swarm coin comes after every other field of a
configuration (``ActionSpec.after_options``), so a configuration drawn before it keeps every
field and a schedule without it runs as before. Consumer ``c`` sends one POP of a *shape*
(SHAPES) on queue ``queue_id`` (-1: every queue). Each shape is a request a real client can
send: another consumer group (SHAPE_GROUP, popping with initMode MAX or a tag filter), a topic
that does not exist, a group name TopicValidator refuses, an expression type no filter exists
for, a header without bornTime, a bornTime far behind, a pollTime that has already run out, an
empty or absent expression (with maxMsgNums 0: nothing is read), a topic an admin made
write-only, a group whose consumption an admin disabled, an orderly POP with the filter
(5.0.0 takes the broker's arrival time for every bornTime, so there the stale and the run-out
bornTime are a plain POP and a long poll of SHAPE_GROUP: BrokerConfig.pop_keeps_client_born_time),
(polling3) a long poll with the filter, which parks, and (polling4) initMode MAX's first POP of
a topic an admin created and nobody writes (an empty queue).

None of them delivers a message, so the run's properties are the consumed group's as before:
the shapes that reach the queues pop for SHAPE_GROUP (or BAD_GROUP) with a tag filter no
stored message matches (the run's messages carry no tags: tagsCode 0, ExpressionMessageFilter
#isMatchedByConsumeQueue), which the store answers NO_MATCHED_MESSAGE; the broker then commits
that group's offsets and buffers its mock CKs (PopBufferMergeService#addCkMock), on the model
and on Java alike. The POP is the consumer's request in flight (a ``pop_step`` goes on with
it), and the lockstep replay sends the same header (popverify/conformance/confirm.py).
"""

from __future__ import annotations

from typing import Any

import attrs

from popverify.sim.actions import ActionSpec, Arg, index, opt_in
from popverify.sim.events import PopBegun
from popverify.sim.request_domain import NO_TOPIC
from reference.common.javalang import JavaRandom
from reference.common.pop import INIT_MODE_MAX, PopRequest

SHAPES: tuple[str, ...] = ("init_max", "tag_filter", "no_topic", "bad_group", "unknown_type", "born_unset",
                           "born_stale", "poll_expired", "exp_empty", "exp_absent", "topic_unreadable",
                           "group_disabled", "orderly_filter", "tag_poll", "init_max_empty")
# The group of the shapes that reach the queues: a second group of the same topic.
SHAPE_GROUP = "GID_popverify_shape"
# init_max's own group: no other shape initialises its offsets first (getInitOffset runs at a
# group's first POP of a queue: empty, holding messages or starting past 0).
MAX_GROUP = "GID_popverify_max"
# init_max_empty (polling4): a topic an admin created (mqadmin updateTopic, one queue) that no
# producer writes: MAX_GROUP's first POP of its empty queue meets getInitOffset's max - 1 < 0
# (5.0.0 #getPopOffset:568-572; 5.5.0 #getInitOffset:921-931, checkInMemByConsumeOffset false)
EMPTY_TOPIC = "TopicEmpty"
# A name TopicValidator#validateGroup refuses (a space): 5.5.0 creates no such group.
BAD_GROUP = "GID popverify shape"
# topic_unreadable / group_disabled: an admin made the topic write-only (perm 2, mqadmin updateTopic
# -p 2) or the group's consumption disabled (updateSubGroup consumeEnable false), once, just before.
WRITE_ONLY_TOPIC = "TopicWriteOnly"
DISABLED_GROUP = "GID_popverify_disabled"
# A tag no stored message has (produce stores no tags, or produce_tags' PRODUCE_TAG).
NO_MATCH_TAG = "popverify_no_match"
# An expression type FilterFactory has no filter for.
UNKNOWN_EXP_TYPE = "POPVERIFY"
# born_stale: bornTime this far behind the broker's now (isTimeoutTooMuch: more than 500 ms past
# bornTime + pollTime). poll_expired: a pollTime of POLL_MS whose end is EXPIRED_BY_MS away
# (isTimeoutTooMuch not yet, PopRequest#isTimeout already: now > bornTime + pollTime - 50).
STALE_MS = 1000
POLL_MS = 1000
EXPIRED_BY_MS = 10


def shaped_request(world: Any, shape: str, queue_id: int, client: str) -> PopRequest:
    """The POP request of ``shape`` on ``queue_id`` (already reduced) of consumer ``client``."""
    now = world.clock.now()
    base = PopRequest(topic=world.topic, group=SHAPE_GROUP, queue_id=queue_id, max_msg_nums=world.config.max_msg_nums,
                      invisible_time=world.config.invisible_time, client=client, tags=frozenset({NO_MATCH_TAG}))
    changes: dict[str, Any] = {
        "init_max": {"init_mode": INIT_MODE_MAX, "group": MAX_GROUP},
        "tag_filter": {},
        "no_topic": {"topic": NO_TOPIC},
        "bad_group": {"group": BAD_GROUP},
        "unknown_type": {"tags": None, "exp_type": UNKNOWN_EXP_TYPE, "exp": NO_MATCH_TAG},
        "born_unset": {"born_time": 0},
        "born_stale": {"born_time": now - STALE_MS},
        "poll_expired": {"poll_time": POLL_MS, "born_time": now - POLL_MS + EXPIRED_BY_MS},
        # no filter at all (processRequest's default subscription): maxMsgNums 0 reads nothing
        "exp_empty": {"tags": None, "exp": "", "max_msg_nums": 0},
        "exp_absent": {"tags": None, "exp_type": None, "max_msg_nums": 0},
        "topic_unreadable": {"topic": WRITE_ONLY_TOPIC},
        "group_disabled": {"group": DISABLED_GROUP},
        # an orderly POP meeting NO_MATCHED_MESSAGE (5.5.0 commits nextBeginOffset, no mock CK)
        "orderly_filter": {"order": True},
        # polling3: a long poll with the filter: it parks, and 5.5.0's arrival test keeps it
        # parked past the run's puts (PopLongPollingService#notifyMessageArriving:239-249)
        "tag_poll": {"poll_time": POLL_MS},
        "init_max_empty": {"init_mode": INIT_MODE_MAX, "group": MAX_GROUP, "topic": EMPTY_TOPIC},
    }[shape]
    return attrs.evolve(base, **changes)


def admin_requests(broker: Any, shape: str) -> list[dict[str, Any]]:
    """The harness requests (AdminPermOps) of the admin's change ``shape`` needs before its POP,
    none when ``broker`` (the model's) already has it."""
    if shape == "topic_unreadable" and WRITE_ONLY_TOPIC not in broker.unreadable_topics:
        return [{"op": "writeOnlyTopic", "topic": WRITE_ONLY_TOPIC}]
    if shape == "group_disabled" and DISABLED_GROUP not in broker.consume_disabled:
        return [{"op": "disableGroup", "group": DISABLED_GROUP}]
    if shape == "init_max_empty" and EMPTY_TOPIC not in broker.topics:
        return [{"op": "createTopic", "topic": EMPTY_TOPIC, "queues": 1}]
    return []


def _admin_setup(broker: Any, shape: str) -> None:
    """The admin's change ``shape`` needs, made on the model's ``broker`` (admin_requests)."""
    for request in admin_requests(broker, shape):
        if request["op"] == "writeOnlyTopic":
            broker.create_topic(WRITE_ONLY_TOPIC, 1)
            broker.unreadable_topics.add(WRITE_ONLY_TOPIC)
        elif request["op"] == "createTopic":
            broker.create_topic(EMPTY_TOPIC, 1)
        else:
            broker.create_group(DISABLED_GROUP)
            broker.consume_disabled.add(DISABLED_GROUP)


def _pop_shape(world: Any, c: int, shape: int, queue_id: int) -> bool:
    """Consumer ``c`` sends a POP of SHAPES[shape] on ``queue_id`` (-1 or below: every queue,
    else modulo the queues)."""
    consumer = world.consumer(c)
    if consumer.op is not None:
        return False
    qid = -1 if queue_id < 0 else queue_id % world.config.queues
    name = SHAPES[shape]
    _admin_setup(world.broker, name)
    consumer.op = world.broker.begin_pop(shaped_request(world, name, qid, consumer.name))
    world.coverage.add(f"pop_shape:{name}")
    world.publish(PopBegun(consumer.name, qid))
    return world._advance_op(consumer)


def _pop_shape_draw(rng: JavaRandom, world: Any) -> tuple:
    qid = -1 if rng.next_int(3) == 0 else rng.next_int(world.config.queues)
    return (rng.next_int(world.config.consumers), rng.next_int(len(SHAPES)), qid)


# Weight 4 (as produce_sized): a run that lists it sends a few of its shapes per 100 steps.
POP_SHAPE = opt_in("pop_shape", 4, _pop_shape,
                   (index("c"), Arg("shape", int, 0, len(SHAPES) - 1, value=False), index("queue_id")),
                   _pop_shape_draw, after_options=True)
