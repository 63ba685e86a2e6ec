"""Requests over the API's whole argument domain (issue 17 item 3; issue 16's refused paths).

Three opt-in POP-mode actions send requests a well-behaved client never sends, so that the
broker's request validation (spec/broker.md "Request validation") is driven by the fuzzer:

- ``pop_request``: a POP with a raw queueId (-1 reads every queue, past the topic's read
  queues is refused, below -1 reads every queue too), maxMsgNums (0, negative, 32, 33, ...)
  and invisibleTime (0, negative, the int limits); non-orderly, but in an orderly
  configuration with a non-positive invisibleTime (``raw_pop_is_orderly``);
- ``ack_request``: an ACK_MESSAGE for a held message whose fields are altered by a *handle
  kind* (HANDLE_KINDS): the same handle twice, a garbled or truncated receipt handle, another
  consumer group, a topic that does not exist, a queueId at -1 or past the end, an offset
  below the queue's min, at its max or past it;
- ``change_invisible_request``: a CHANGE_MESSAGE_INVISIBLETIME with the same alterations (but
  the ones whose success would write a CK for another group or a stale handle, see below)
  and an invisibleTime anywhere in a Java int;
- ``batch_ack_request``: a BATCH_ACK_MESSAGE without a body, without its acks list or with an
  empty one (drawn after every other field);
- ``revive_topic_put`` (revive6): a producer's message to the revive topic
  (rmq_sys_REVIVE_LOG_<cluster>: a topic the broker creates read-write and that
  TopicValidator#isNotAllowedSendTopic does not refuse) that no broker writes: a CK without a
  topic or without a consumer group, an ACK without a broker name, another tag
  (REVIVE_TOPIC_PUTS); the revive rounds read and skip them (drawn last of all).

What is left out, and why: an ack whose offset names *another* stored message of the same
CK (it acks a message the client never consumed: ALO is then lost by the client's lie, not
by the broker), a changeInvisibleTime for another group (its CK revives into a retry topic
nobody consumes) or with a stale handle (a second CK revives a message its consumer already
acked, the documented oddity of spec/broker.md); the checker would report those as the
broker's violations.

A refused request leaves the message held: the consumer still acks it normally later. Each
request publishes a ``RequestSent`` event (the fields sent, the response code): the lockstep
replay sends the same fields to Java (popverify/conformance/confirm.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from popverify.sim.actions import JAVA_INT_MAX, JAVA_INT_MIN, ActionSpec, Arg, index, opt_in
from popverify.sim.events import Event, PopBegun
from reference.broker.ack_processor import BATCH_ACK_BODY_KINDS
from reference.broker.extra_info import get_revive_qid, split
from reference.broker.keys import ACK_TAG, CK_TAG, POP_ORDER_REVIVE_QUEUE
from reference.common import response_code as rc
from reference.common.message import PROPERTY_TIMER_DELIVER_MS
from reference.common.pop import PopRequest
from reference.common.javalang import JavaRandom

# How an ack / changeInvisibleTime request differs from the held message's own.
HANDLE_KINDS: tuple[str, ...] = ("duplicate", "garbled", "truncated", "other_group", "no_topic", "queue_minus_one",
                                 "queue_past_end", "offset_below_min", "offset_at_max", "offset_past_max")
# The kinds changeInvisibleTime takes (module docstring: the others would be the client's fault).
CHANGE_KINDS: tuple[str, ...] = tuple(k for k in HANDLE_KINDS if k not in ("duplicate", "other_group"))
# order3: the kinds ChangeInvisibleTimeProcessor refuses before it reads the handle or the offset
# (the topic test, then `queueId >= readQueueNums || queueId < 0`: 5.0.0:74-88, 5.5.0:112-127), sent
# even by a consumer that holds nothing (queue 0, offset 0, an empty handle: the refusal does not
# read them), so that most runs listing the action send one (5.5.0:120 was met in 1 run of 60).
UNHELD_CHANGE_KINDS = frozenset({"no_topic", "queue_minus_one", "queue_past_end"})
UNHELD_HANDLE = ""
OTHER_GROUP = "GID_popverify_other"
NO_TOPIC = "TopicNotThere"
# Values a POP's maxMsgNums / invisibleTime / queueId take besides uniform draws (the limits).
MAX_MSG_EDGES = (JAVA_INT_MIN, -1, 0, 1, 31, 32, 33, JAVA_INT_MAX)
INVISIBLE_EDGES = (JAVA_INT_MIN, -1, 0, 1, 1000, 60_000, JAVA_INT_MAX)


@attrs.frozen
class RequestSent(Event):
    """A request of the argument domain (``op``: pop is traced by PopBegun/PopAnswered; ack,
    change_invisible here): the fields sent and the response code."""

    TYPE: ClassVar[str] = "request"
    op: str
    kind: str
    group: str
    topic: str
    queue: int
    offset: int
    handle: str
    invisible_time: int
    code: int


def altered(kind: str, world: Any, topic: str, queue_id: int, offset: int,
            handle: str) -> tuple[str, str, int, int, str]:
    """(group, topic, queueId, offset, extraInfo) of a request of handle kind ``kind`` for the
    held message (topic, queue_id, offset, handle)."""
    group = world_group(world)
    store = world.broker.store
    if kind == "garbled":
        return group, topic, queue_id, offset, "x" + handle.replace(" ", "")  # field 0 is no long
    if kind == "truncated":
        return group, topic, queue_id, offset, " ".join(handle.split(" ")[:3])  # getReviveQid: [3] missing
    if kind == "other_group":
        return OTHER_GROUP, topic, queue_id, offset, handle
    if kind == "no_topic":
        return group, NO_TOPIC, queue_id, offset, handle
    if kind == "queue_minus_one":
        return group, topic, -1, offset, handle
    if kind == "queue_past_end":
        return group, topic, world.broker.topics.get(topic, 0), offset, handle
    if kind == "offset_below_min":
        return group, topic, queue_id, store.get_min_offset_in_queue(topic, queue_id) - 1, handle
    if kind == "offset_at_max":
        return group, topic, queue_id, store.get_max_offset_in_queue(topic, queue_id), handle
    if kind == "offset_past_max":
        return group, topic, queue_id, store.get_max_offset_in_queue(topic, queue_id) + 1, handle
    assert kind == "duplicate", kind
    return group, topic, queue_id, offset, handle


def world_group(world: Any) -> str:
    """The consumed group (the POP mode's)."""
    from popverify.sim.pop_driver import GROUP

    return GROUP


def raw_pop_is_orderly(world: Any, invisible_time: int) -> bool:
    """Whether a raw POP carries the order flag: in an orderly configuration, one with a
    non-positive invisibleTime. PopMessageProcessor validates neither (5.0.0, 5.5.0), and such
    an orderly batch's OrderInfo has no lock-free time (5.5.0 QueueLevelConsumerManager.OrderInfo
    #getLockFreeTimestamp: null, so QueueLevelConsumerOrderInfoLockManager#updateLockFreeTimestamp
    :86 and #recover:70 take their null side). Every other raw POP of an orderly configuration
    is non-orderly, as a misconfigured client's (F14, F18). A rule, not a draw: no schedule's
    draws move."""
    return bool(world.config.pop_orderly) and invisible_time <= 0


def _pop_request(world: Any, c: int, queue_id: int, max_msg_nums: int, invisible_time: int) -> bool:
    """Consumer ``c`` sends a POP with raw queueId, maxMsgNums and invisibleTime (no long poll;
    orderly as raw_pop_is_orderly says)."""
    consumer = world.consumer(c)
    if consumer.op is not None:
        return False
    request = PopRequest(topic=world.topic, group=world_group(world), queue_id=queue_id, max_msg_nums=max_msg_nums,
                         invisible_time=invisible_time, poll_time=0, client=consumer.name,
                         order=raw_pop_is_orderly(world, invisible_time))
    consumer.op = world.broker.begin_pop(request)
    world.publish(PopBegun(consumer.name, queue_id))
    return world._advance_op(consumer)  # a refused POP is answered at once (collect: its code)


def _ack_request(world: Any, c: int, at: int, kind: int) -> bool:
    """Consumer ``c`` sends an ack for the message it holds at ``at``, altered by HANDLE_KINDS[kind]."""
    consumer = world.consumer(c)
    if not consumer.held:
        return False
    name = HANDLE_KINDS[kind % len(HANDLE_KINDS)]
    i = at % len(consumer.held)
    held = consumer.held[i]
    if name == "duplicate":
        consumer.held.pop(i)
        world.ack(consumer, held)  # the real ack (an Acked event); the second is the duplicate
    group, topic, queue_id, offset, handle = altered(name, world, held.ack_topic, held.queue_id, held.offset,
                                                     held.extra_info)
    code = world.broker.ack(group, topic, queue_id, offset, handle)
    world.coverage.add(f"ack_request:{name}:{rc.NAMES.get(code, code)}")
    world.publish(RequestSent("ack", name, group, topic, queue_id, offset, handle, 0, code))
    return True


def _change_invisible_request(world: Any, c: int, at: int, kind: int, invisible_time: int) -> bool:
    """Consumer ``c`` changes the invisible time of the message it holds at ``at`` with a request
    altered by CHANGE_KINDS[kind]; the held message keeps its handle (every kind is refused or
    names nothing the consumer holds). A consumer holding nothing sends the UNHELD_CHANGE_KINDS
    only."""
    consumer = world.consumer(c)
    name = CHANGE_KINDS[kind % len(CHANGE_KINDS)]
    if consumer.held:
        held = consumer.held[at % len(consumer.held)]
        fields = (held.ack_topic, held.queue_id, held.offset, held.extra_info)
    elif name in UNHELD_CHANGE_KINDS:
        fields = (world.topic, 0, 0, UNHELD_HANDLE)
    else:
        return False
    group, topic, queue_id, offset, handle = altered(name, world, *fields)
    result = world.broker.change_invisible_time(group, topic, queue_id, offset, handle, invisible_time)
    world.coverage.add(f"change_invisible_request:{name}:{rc.NAMES.get(result.code, result.code)}")
    world.publish(RequestSent("change_invisible", name, group, topic, queue_id, offset, handle, invisible_time,
                              result.code))
    return True


def _batch_ack_request(world: Any, body: int) -> bool:
    """A BATCH_ACK_MESSAGE whose body is BATCH_ACK_BODY_KINDS[body] (no body, no acks list, an
    empty one): refused, nothing written (revive3, issue 16: AckMessageProcessor 5.5.0:175-182)."""
    name = BATCH_ACK_BODY_KINDS[body % len(BATCH_ACK_BODY_KINDS)]
    code = world.broker.batch_ack_without_acks(name)
    world.coverage.add(f"batch_ack_request:{name}:{rc.NAMES.get(code, code)}")
    world.publish(RequestSent("batch_ack", name, world_group(world), "", 0, 0, "", 0, code))
    return True


def _edge_or(rng: JavaRandom, edges: tuple[int, ...], lo: int, hi: int) -> int:
    """One of ``edges`` half the time, else uniform in lo..hi (small)."""
    if rng.next_boolean():
        return edges[rng.next_int(len(edges))]
    return lo + rng.next_int(hi - lo + 1)


def _pop_request_draw(rng: JavaRandom, world: Any) -> tuple:
    queues = world.config.queues
    # queueId: -1 (all), each queue, the first past the end, a far one, one below -1
    choice = rng.next_int(queues + 4)
    qid = (-1, queues, JAVA_INT_MAX, -2)[choice - queues] if choice >= queues else choice
    return (rng.next_int(world.config.consumers), qid, _edge_or(rng, MAX_MSG_EDGES, 1, 32),
            _edge_or(rng, INVISIBLE_EDGES, 1000, 60_000))


def _ack_request_draw(rng: JavaRandom, world: Any) -> tuple:
    return (rng.next_int(world.config.consumers), rng.next_int(64), rng.next_int(len(HANDLE_KINDS)))


def _change_request_draw(rng: JavaRandom, world: Any) -> tuple:
    return (rng.next_int(world.config.consumers), rng.next_int(64), rng.next_int(len(CHANGE_KINDS)),
            _edge_or(rng, INVISIBLE_EDGES, 1000, 60_000))


# revive3 (issue 16): batch acks with a body no client sends, drawn after every other field
# (its swarm coin last of all, ScenarioConfig.draw_domain) so that earlier draws keep their values
BATCH_ACK_REQUEST = opt_in("batch_ack_request", 1, _batch_ack_request,
                           (Arg("body", int, 0, len(BATCH_ACK_BODY_KINDS) - 1, value=False),),
                           lambda rng, w: (rng.next_int(len(BATCH_ACK_BODY_KINDS)),), after_options=True)

# order4: requests an orderly consumer sends for a message it holds, each reaching a test of the
# order info the other draws meet rarely (spec/profiles.md "orderly_stray"):
# - ``offset_at_max``: an ack of the queue's max offset with the batch's own handle while the order
#   info holds the queue's batch: commitAndNext's loop ends without a match, MESSAGE_ILLEGAL
#   (5.0.0:155/167, 5.5.0:237/249); skipped when the queue has no order info (commitAndNext would
#   commit max + 1 past messages nobody consumed: the client's lie, module docstring);
# - ``at_group_ack``: an ack of the held message by STRAY_GROUP, a group name holding '@' (no
#   validator on the ack path reads the group): 5.5.0's ackOrderly commits the offset for it and
#   checkBlock puts an empty ``topic@GID@stray`` map, which autoClean and recover skip for its
#   three parts (5.5.0 QueueLevelConsumerManager:306, QueueLevelConsumerOrderInfoLockManager:63);
# - ``at_group_change``: a changeInvisibleTime of the held message by STRAY_GROUP: 5.5.0's orderly
#   branch finds no map (updateNextVisibleTime:276) or, after an ``at_group_ack``, the empty one
#   (:281); no CK is written (5.0.0 writes one to revive queue 999, which no service reads);
# - ``stale_change``: a changeInvisibleTime by the consumed group with the handle of an earlier
#   pop (its popTime one less): 5.5.0 finds the queue's OrderInfo of another pop and ignores it
#   (updateNextVisibleTime:285), answering SUCCESS; 5.0.0 as ``at_group_change``.
STRAY_KINDS: tuple[str, ...] = ("offset_at_max", "at_group_ack", "at_group_change", "stale_change")
STRAY_GROUP = "GID_popverify@stray"
STRAY_INVISIBLE_MS = 30_000


def stale(handle: str) -> str:
    """``handle`` with its popTime (field 1) one less: the handle of an earlier pop."""
    parts = handle.split(" ")
    return " ".join([parts[0], str(int(parts[1]) - 1), *parts[2:]])


def _orderly_stray(world: Any, c: int, at: int, kind: int) -> bool:
    """Consumer ``c`` sends the STRAY_KINDS[kind] request for the orderly message it holds at ``at``
    (skipped for a message of a non-orderly POP)."""
    consumer = world.consumer(c)
    if not consumer.held:
        return False
    name = STRAY_KINDS[kind % len(STRAY_KINDS)]
    held = consumer.held[at % len(consumer.held)]
    topic, queue_id, handle = held.ack_topic, held.queue_id, held.extra_info
    parts = split(handle)
    if len(parts) < 4 or get_revive_qid(parts) != POP_ORDER_REVIVE_QUEUE:
        # a message held without a handle (the POP's answer had no offset info for its queue), or
        # a non-orderly POP's (pop_request): a change would write a CK for another group
        return False
    if name == "offset_at_max":
        if world.broker.order_info.get(topic, world_group(world), queue_id) is None:
            return False
        group, topic, queue_id, offset, handle = altered(name, world, topic, queue_id, held.offset, handle)
    elif name == "stale_change":
        group, offset, handle = world_group(world), held.offset, stale(handle)
    else:
        group, offset = STRAY_GROUP, held.offset
    if name in ("at_group_change", "stale_change"):
        code = world.broker.change_invisible_time(group, topic, queue_id, offset, handle, STRAY_INVISIBLE_MS).code
        op, invisible_time = "change_invisible", STRAY_INVISIBLE_MS
    else:
        code, op, invisible_time = world.broker.ack(group, topic, queue_id, offset, handle), "ack", 0
    world.coverage.add(f"orderly_stray:{name}:{rc.NAMES.get(code, code)}")
    world.publish(RequestSent(op, name, group, topic, queue_id, offset, handle, invisible_time, code))
    return True


# weight 4 (one kind in four per draw); drawn after every other field without a coin: listed by
# exactly the orderly configurations (late_if: only their handles reach the order info), as
# topic_shrink_persist
ORDERLY_STRAY = attrs.evolve(
    opt_in("orderly_stray", 4, _orderly_stray,
           (index("c"), index("index"), Arg("stray_kind", int, 0, len(STRAY_KINDS) - 1, value=False)),
           lambda rng, w: (rng.next_int(w.config.consumers), rng.next_int(64), rng.next_int(len(STRAY_KINDS))),
           after_options=True),
    late_if="pop_orderly")
# revive6 (issue 16): what revive_topic_put sends to a revive queue, by kind: (tags, body, timed).
# Each is read and skipped by PopReviveService#consumeReviveMessage (5.5.0 / 5.0.0 lines): a CK
# whose topic (393 / 319) or consumer group is null; an ACK without a broker name (5.5.0:409, its
# merge key then the broker's own name; its CK is not found: `continue`); a tag that is neither CK,
# ACK nor (5.5.0) BatchAck (428 / 327). Bodies stay valid JSON: an unparsable CK or ACK body throws
# in consumeReviveMessage, and every later round of that revive queue throws at it. ``timed``: the
# message carries TIMER_DELIVER_MS = the put's time, as a producer's timer message due at once
# (HookUtils#transformTimerMessage stores it directly); the round reads its deliver time.
# "untimed_tag" has none: 5.0.0's getDeliverTimeMs throws at it, every later round of the queue
# too (BrokerConfig.deliver_time_answers_zero; a candidate finding): explicit schedules only,
# the swarm draws the first REVIVE_PUT_DRAWN kinds so that its runs keep their revive.
REVIVE_TOPIC_PUTS: dict[str, tuple[str, str, bool]] = {
    "ck_no_topic": (CK_TAG, "{}", False),
    "ck_no_group": (CK_TAG, '{"t":"TopicTest"}', False),
    "ack_no_broker": (ACK_TAG, '{"topic":"TopicTest","consumerGroup":"GID_popverify"}', False),
    "other_tag": ("popverify", "{}", True),
    "untimed_tag": ("popverify", "{}", False),
}
REVIVE_PUT_KINDS: tuple[str, ...] = tuple(REVIVE_TOPIC_PUTS)
REVIVE_PUT_DRAWN = 4


def _revive_topic_put(world: Any, queue: int, kind: int) -> bool:
    """A producer's message of REVIVE_PUT_KINDS[kind] to revive queue ``queue`` (modulo the
    revive queues): stored like any message; the revive rounds skip it (revive6)."""
    name = REVIVE_PUT_KINDS[kind]
    tags, body, timed = REVIVE_TOPIC_PUTS[name]
    broker = world.broker
    qid = queue % broker.config.revive_queue_num
    props = {PROPERTY_TIMER_DELIVER_MS: str(broker.clock.now())} if timed else None
    result = broker.put_message(broker.revive_topic, qid, body=body.encode(), tags=tags, properties=props)
    world.coverage.add(f"revive_topic_put:{name}:{rc.NAMES.get(result.code, result.code)}")
    world.publish(RequestSent("revive_topic_put", name, "", broker.revive_topic, qid, result.queue_offset, "", 0,
                              result.code))
    return True


# revive6: drawn last of all (ActionSpec.drawn_last) so every earlier draw keeps its value
REVIVE_TOPIC_PUT = opt_in("revive_topic_put", 1, _revive_topic_put,
                          (index("queue"), Arg("kind", int, 0, len(REVIVE_PUT_KINDS) - 1, value=False)),
                          lambda rng, w: (rng.next_int(64), rng.next_int(REVIVE_PUT_DRAWN)), drawn_last=True)

# The opt-in actions (weight 1 each: a run is still mostly well-formed traffic).
REQUEST_DOMAIN_ACTIONS: tuple[ActionSpec, ...] = (
    opt_in("pop_request", 1, _pop_request,
           (index("c"), Arg("queue_id"), Arg("max_msg_nums"), Arg("invisible_time")), _pop_request_draw),
    opt_in("ack_request", 1, _ack_request,
           (index("c"), index("index"), Arg("handle_kind", int, 0, len(HANDLE_KINDS) - 1)), _ack_request_draw),
    opt_in("change_invisible_request", 1, _change_invisible_request,
           (index("c"), index("index"), Arg("handle_kind", int, 0, len(CHANGE_KINDS) - 1), Arg("invisible_time")),
           _change_request_draw),
)
