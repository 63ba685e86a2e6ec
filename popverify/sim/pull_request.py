"""PULL_MESSAGE requests a well-behaved DefaultMQPushConsumer of the run's group never sends, as
one opt-in push-mode action (issue 16: PullMessageProcessor's request validation, the
subscription a pull carries, getMessage's range statuses and tag filtering).

``pull_request(c, queue_id, kind)``: client ``c`` sends one pull (no suspend, no commit flag)
shaped by PULL_KINDS. Each shape is one a real client sends to a default broker:

- ``lite_all``: LITE_PULL_MESSAGE with its own subscription "*" (DefaultLitePullConsumer, which
  always sets the subscription flag: DefaultLitePullConsumerImpl#pull → PullSysFlag with
  subscription true);
- ``sub_tag``: the subscription flag with the tag expression "TagA" (a push consumer with
  postSubscriptionWhenPull, a pull consumer): the untagged messages are filtered out
  (NO_MATCHED_MESSAGE, PULL_RETRY_IMMEDIATELY);
- ``sub_bad_tag``: the tag expression "||" (FilterAPI#build throws: SUBSCRIPTION_PARSE_FAILED);
- ``sub_sql``: the SQL92 expression "TAGS = 'TagA'" (SYSTEM_ERROR unless the broker option
  enablePropertyFilter is on; with it, getMessage tests each message read against it:
  ExpressionMessageFilter#isMatchedByCommitLog);
- ``no_topic``: a topic the broker does not have (a client with a stale route);
- ``queue_minus_one``, ``queue_past_end``: a queue id outside the topic's read queues (a
  hand-made MessageQueue, a route older than a queue-count change);
- ``other_group``: a group that sent no heartbeat (SUBSCRIPTION_NOT_EXIST);
- ``sub_version_ahead``: a subVersion later than the broker's (the heartbeat of a changed
  subscription not arrived yet: SUBSCRIPTION_NOT_LATEST);
- ``offset_below_min``, ``offset_at_max``, ``offset_past_max``: offsets a consumer holds after
  retention or a reset (OFFSET_TOO_SMALL / OFFSET_OVERFLOW_ONE / _BADLY, NO_MESSAGE_IN_QUEUE);
- ``broadcast``: a pull of a BROADCASTING DefaultMQPushConsumer of another group, after its
  heartbeat (5.5.0's broadcast offsets: PullMessageProcessor#queryBroadcastPullInitOffset and
  #updateBroadcastPulledOffset; Broker#register_consumer says why the answers are clustering's);
- ``unsubscribed_topic``: that broadcast consumer's pull of a topic it does not subscribe (the
  push group's retry topic: a subscription changed before its heartbeat; SUBSCRIPTION_NOT_EXIST);
  ``broadcast_moved``: its pull past the queue's end (PULL_OFFSET_MOVED: the moved offset is the
  one recorded); ``broadcast_other_channel``: its pull on a connection its heartbeat did not use
  (the broker finds no channel and records nothing).
- ``broadcast_active`` (offsets helper): the broadcast group's pull after a heartbeat with
  consumeType CONSUME_ACTIVELY (a DefaultMQPullConsumer / DefaultLitePullConsumer in
  BROADCASTING: 5.5.0's PullMessageProcessor#isBroadcast:848 is false, no broadcast offset);
- ``sql_held``, ``sql_held_bad`` (offsets helper): a consumer of its own group whose heartbeat
  subscribes the topic with an SQL92 expression (DefaultMQPushConsumer#subscribe(topic,
  MessageSelector.bySql(...)), subVersion SQL_SUB_VERSION) pulls without the subscription flag:
  the broker reads the filter data its heartbeat registered (ConsumerFilterManager): "a > 1"
  compiles (SYSTEM_ERROR with enablePropertyFilter off, else the messages whose property
  matches: none has "a"); "a >" does not (FILTER_DATA_NOT_EXIST).

``produce_tagged(queue_id)`` (store helper) stores a message with the tag "TagA" (a producer
with Message#setTags), so that the filtering kinds (``sub_tag``, ``sub_sql``) meet matching
and non-matching messages in one read (DefaultMessageStore#getMessage's filters once something
was found). Its swarm coin is the last of all (ScenarioConfig.draw_domain); a run that lists it
draws, with the broker option enablePropertyFilter on, one pull_request in two among the
filtering kinds. A run with litePullMessageEnable off draws ``lite_all`` one time in four
(offsets2).

The answer goes to no push consumer (the sender is another client on the same channel name):
it changes no push consumer's state; the broker's only changes are the auto-created
subscription groups, the broadcast and SQL92 groups' members and the SQL92 filter data.
The lockstep replay sends the same request to PullMessageProcessor (push_lockstep.py).
"""

from __future__ import annotations

from typing import Any

from popverify.sim.actions import Arg, _produce, index, opt_in
from reference.broker.consumer_manager import SubscriptionData
from reference.common import response_code as rc
from reference.common.javalang import JavaRandom
from reference.common.remoting import FLAG_SUBSCRIPTION, PullMessageRequestHeader

PULL_KINDS: tuple[str, ...] = ("lite_all", "sub_tag", "sub_bad_tag", "sub_sql", "no_topic", "queue_minus_one",
                               "queue_past_end", "other_group", "sub_version_ahead", "offset_below_min",
                               "offset_at_max", "offset_past_max", "broadcast", "unsubscribed_topic",
                               "broadcast_moved", "broadcast_other_channel",
                               # offsets helper: appended last
                               "broadcast_active", "sql_held", "sql_held_bad")
# the kinds sent as the broadcast group, each after its heartbeat
_BROADCAST_KINDS = ("broadcast", "unsubscribed_topic", "broadcast_moved", "broadcast_other_channel",
                    "broadcast_active")
OTHER_GROUP = "GID_popverify_other"
BROADCAST_GROUP = "GID_popverify_broadcast"
# the SQL92 kinds: a group each, the expression its heartbeat subscribes and the subVersion of
# that heartbeat and of the pull (equal: the broker's subscription is the latest)
SQL_GROUPS = {"sql_held": ("GID_popverify_sql", "a > 1"), "sql_held_bad": ("GID_popverify_sql_bad", "a >")}
SQL_SUB_VERSION = 1
NO_TOPIC = "TopicNotThere"
# (subscription, expressionType) of the kinds that carry their own subscription
# The tag of produce_tagged's messages, which sub_tag and sub_sql select
FILTER_TAG = "TagA"
_OWN_SUBSCRIPTION = {"lite_all": ("*", "TAG"), "sub_tag": (FILTER_TAG, "TAG"), "sub_bad_tag": ("||", "TAG"),
                     "sub_sql": (f"TAGS = '{FILTER_TAG}'", "SQL92")}
# the kinds a run with produce_tagged and enablePropertyFilter favours (one draw in two)
_FILTER_KINDS = ("sub_tag", "sub_sql")
MAX_MSG_NUMS = 32  # DefaultMQPushConsumer#pullBatchSize's bound; the lite consumer's default is 10


def request_of(world: Any, c: int, queue_id: int, kind: str) -> PullMessageRequestHeader:
    """The header of a ``kind`` pull from client ``c`` on queue ``queue_id`` of the run's topic."""
    from popverify.sim.push_driver import GROUP, RETRY_TOPIC, TOPIC

    broker = world.broker
    # unsubscribed_topic: the broadcast group (subscribed to TOPIC only) asks the push group's retry topic
    topic = RETRY_TOPIC if kind == "unsubscribed_topic" else TOPIC
    queues = broker.topics.get(topic, world.config.queues)
    qid = queue_id % queues
    low, high = broker.min_offset(topic, qid), broker.max_offset(topic, qid)
    group, offset, sub_version = GROUP, low, 0
    if kind == "no_topic":
        topic = NO_TOPIC
    elif kind == "queue_minus_one":
        qid = -1
    elif kind == "queue_past_end":
        qid = queues
    elif kind == "other_group":
        group = OTHER_GROUP
    elif kind == "sub_version_ahead":
        sub_version = 1
    elif kind == "offset_below_min":
        offset = low - 1
    elif kind == "offset_at_max":
        offset = high
    elif kind in ("offset_past_max", "broadcast_moved"):
        offset = high + 1
    if kind in _BROADCAST_KINDS:
        group = BROADCAST_GROUP
    elif kind in SQL_GROUPS:
        group, sub_version = SQL_GROUPS[kind][0], SQL_SUB_VERSION
    subscription, expression_type = _OWN_SUBSCRIPTION.get(kind, ("*", "TAG"))
    return PullMessageRequestHeader(
        group, topic, qid, offset, MAX_MSG_NUMS, FLAG_SUBSCRIPTION if kind in _OWN_SUBSCRIPTION else 0, 0, 0,
        subscription=subscription, sub_version=sub_version, client_id=client_id_of(world, c, kind),
        expression_type=expression_type, lite_pull=kind == "lite_all")


def client_id_of(world: Any, c: int, kind: str) -> str:
    """The sender: consumer slot ``c``'s client, or for ``broadcast`` a client of its own (a
    second channel: a crash of the push consumer closes only its own)."""
    name = world.client(c).name
    if kind in SQL_GROUPS:
        return f"{name}@sql"
    return f"{name}@broadcast" if kind in _BROADCAST_KINDS and kind != "broadcast_other_channel" else name


def _pull_request(world: Any, c: int, queue_id: int, kind: int) -> bool:
    """Client ``c`` sends a PULL_KINDS[kind] pull; the answer is recorded, not delivered. A
    ``broadcast`` pull follows its client's heartbeat (the broker keeps a group it has not heard
    from for 120 s: each such pull heartbeats first, as the client's 30 s heartbeat would)."""
    from popverify.sim.push_driver import TOPIC

    name = PULL_KINDS[kind % len(PULL_KINDS)]
    if name in _BROADCAST_KINDS:
        # broadcast_other_channel: the heartbeat's channel is not the pull's (findChannel finds none)
        world.broker.register_consumer(BROADCAST_GROUP, client_id_of(world, c, "broadcast"), (TOPIC,), broadcast=True,
                                       active=name == "broadcast_active")
    elif name in SQL_GROUPS:
        group, expression = SQL_GROUPS[name]
        world.broker.register_consumer(group, client_id_of(world, c, name), (TOPIC,),
                                       subscription=SubscriptionData(expression, "SQL92", SQL_SUB_VERSION))
    response = world.broker.pull_message(request_of(world, c, queue_id, name))
    assert response is not None, "a pull without the suspend flag is answered at once"
    world.coverage.add(f"pull_request:{name}:{rc.name_of(response.code)}")
    return True


def _draw(rng: JavaRandom, world: Any) -> tuple:
    c, queue_id = rng.next_int(world.config.consumers), rng.next_int(world.config.queues)
    # store helper: the coin is drawn only in runs listing produce_tagged with enablePropertyFilter
    # on (the others draw as before)
    if PRODUCE_TAGGED.name in world.config.actions and "enablePropertyFilter" in world.config.broker_options \
            and rng.next_boolean():
        return c, queue_id, PULL_KINDS.index(_FILTER_KINDS[rng.next_int(len(_FILTER_KINDS))])
    # offsets2: a run with litePullMessageEnable off sends its lite pull one time in four, so the
    # refusal (PullMessageProcessor 5.0.0:310, 5.5.0:325) meets its option among the 20 push runs
    # coverage replays (drawn at 1 in 19 it went missing when the swarm's draws moved)
    if "litePullMessageEnable=false" in world.config.broker_options and rng.next_int(4) == 0:
        return c, queue_id, PULL_KINDS.index("lite_all")
    return c, queue_id, rng.next_int(len(PULL_KINDS))


def _produce_tagged(world: Any, queue_id: int) -> bool:
    """A producer stores a message tagged FILTER_TAG (actions.py#_produce with its tag)."""
    return _produce(world, queue_id, tags=FILTER_TAG)


# weight 12, pull's (offsets helper; 6 before): coverage replays 20 push runs, 9 or so of them
# with pull_request, and each of the 19 kinds must meet the broker options it depends on there
PULL_REQUEST = opt_in("pull_request", 12, _pull_request,
                      (index("c"), index("queue_id"), Arg("kind", int, 0, len(PULL_KINDS) - 1, value=False)), _draw,
                      late=True)
# store helper: late and after_options, its swarm coin is the last of all (ScenarioConfig.draw_domain)
PRODUCE_TAGGED = opt_in("produce_tagged", 6, _produce_tagged, (index("queue_id"),),
                        lambda rng, w: (rng.next_int(w.config.queues),), late=True, after_options=True)
