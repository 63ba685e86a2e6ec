"""An admin's requests on the consumed group, as opt-in actions of the POP mode.

- ``delete_group(clean_offset)``: DELETE_SUBSCRIPTIONGROUP (AdminBrokerProcessor#
  deleteSubscriptionGroup), the group's offsets removed too when ``clean_offset``
  (Broker#delete_group). Consumers keep popping: their next POP re-creates the group
  (auto-create), and with its offsets gone it starts where a new group starts.
- ``reset_offset(queue_id, to)``: one queue of the group reset to an offset drawn from
  ``max(min - 1, 0) .. max + 2`` (both releases' refusals and 5.5.0's accepted ``max + 1``
  included), as each release does it (Broker#reset_offset; spec/profiles.md "Group deletion
  and offset reset").

- ``delete_group_persist(clean_offset)``: while some consumer holds a message, ``delete_group``,
  then the consumer order info's 10 s persist runs before any POP re-creates the group
  (Broker#persist_order_info): its encode's autoClean drops the deleted group's order info
  (5.0.0 ConsumerOrderInfoManager#autoClean:224, 5.5.0 QueueLevelConsumerManager#autoClean:319). A plain ``delete_group`` is almost always
  followed by the group's next POP (auto-create) long before the next persist, so the clean-up
  never sees the group gone; the orderly acks and changes of the batches in flight then meet no
  order info (commitAndNext:215/219, updateNextVisibleTime:276/281 on 5.5.0).

- ``topic_shrink_persist`` (order3): while the order info holds a queue past the first, an admin
  updates the topic to fewer queues (UPDATE_AND_CREATE_TOPIC, as mqadmin updateTopic -r -w: the
  count that leaves out the last such queue), the order info's 10 s persist runs, and the admin
  restores the queue count: autoClean drops the order info of the queues past the new count
  (5.0.0 ConsumerOrderInfoManager#autoClean:240, 5.5.0 QueueLevelConsumerManager#autoClean:335),
  so their batches in flight block no later POP.

All four are deliberate skips or re-deliveries: their events (GroupDeleted, OffsetReset,
TopicShrunk) tell the
checker which obligations the admin took away (spec/properties.md "Admin requests"). Opt-in
(ActionSpec.opt_in): the configurations tests/sim/test_engine_digests.py pins keep their runs;
the swarm's late draw lists them, after the opt-in faults (``late``), so the configurations
drawn before keep their faults.
"""

from __future__ import annotations

from typing import Any

import attrs

from popverify.sim.actions import JAVA_INT_MAX, MAX_TIME_ARG_MS, Arg, flag, index, opt_in
from popverify.sim.events import FaultInjected, GroupDeleted, OffsetReset, TopicRecreated, TopicShrunk
from reference.broker.buffer_merge import GARBAGE_SCAN_PERIOD_MS
from reference.broker.keys import build_pop_retry_topic
from reference.common import response_code as rc


def reset_target(min_offset: int, max_offset: int, to: int) -> int:
    """The offset ``reset_offset``'s choice ``to`` names: ``max(min - 1, 0) .. max + 2``."""
    base = max(min_offset - 1, 0)
    return base + to % (max_offset + 3 - base)


def _delete_group(world: Any, clean_offset: bool) -> bool:
    code = world.broker.delete_group(world.group, clean_offset)
    world.coverage.add(f"delete_group:{'clean' if clean_offset else 'keep'}")
    if code != rc.SUCCESS:
        return False
    world.publish(GroupDeleted(clean_offset))
    return True


def _reset_offset(world: Any, queue_id: int, to: int) -> bool:
    broker, topic, group = world.broker, world.topic, world.group
    qid = queue_id % world.config.queues
    offset = reset_target(broker.min_offset(topic, qid), broker.max_offset(topic, qid), to)
    before = broker.committed_offset(group, topic, qid)
    code = broker.reset_offset(topic, group, qid, offset)
    world.coverage.add(f"reset_offset:{rc.NAMES.get(code, code)}:{'back' if offset < before else 'forward'}")
    world.publish(OffsetReset(qid, offset, before, code, broker.store.queue_offset_at(topic, qid, offset)))
    return code == rc.SUCCESS


# weight 1 each (an admin's request is rare beside the consumers' traffic)
DELETE_GROUP = opt_in("delete_group", 1, _delete_group, (flag("clean_offset"),),
                      lambda rng, w: (rng.next_boolean(),), late=True)
RESET_OFFSET = opt_in("reset_offset", 1, _reset_offset, (index("queue_id"), index("to")),
                      lambda rng, w: (rng.next_int(w.config.queues), rng.next_int(JAVA_INT_MAX)), late=True)
ADMIN_ACTIONS = (DELETE_GROUP, RESET_OFFSET)


# order2 (helper "order", session 9): a deletion the order info's persist sees
def _delete_group_persist(world: Any, clean_offset: bool) -> bool:
    if not any(c.held for c in world.consumers):
        return False  # the admin acts while batches are in flight (their order info to drop)
    deleted = _delete_group(world, clean_offset)
    world.broker.persist_order_info()
    return deleted


# weight 4 (2 left most of its runs without a deletion while batches were in flight), so that
# acks and changes of the batches in flight follow it; drawn after every other field (after_options,
# after pop_shape) without a coin: listed by exactly the orderly configurations (late_if: only they
# have order info to clean; every other configuration keeps its run)
DELETE_GROUP_PERSIST = attrs.evolve(opt_in("delete_group_persist", 4, _delete_group_persist, (flag("clean_offset"),),
                                           lambda rng, w: (rng.next_boolean(),), after_options=True),
                                    late_if="pop_orderly")


# order3 (session 10): a topic update the order info's persist sees
def _topic_shrink_persist(world: Any) -> bool:
    queues, order_info = world.config.queues, world.broker.order_info
    held = [q for q in range(1, queues) if order_info.get(world.topic, world.group, q) is not None]
    if not held:
        return False  # no queue past the first has order info to drop
    to = max(held)  # the count that drops the last queue with order info (and none before it)
    world.broker.create_topic(world.topic, to)
    world.broker.persist_order_info()
    world.broker.create_topic(world.topic, queues)
    world.publish(TopicShrunk(to))
    return True


# weight 3; drawn after every other field (after delete_group_persist) without a coin: listed by
# exactly the orderly configurations (late_if: only they have order info), as delete_group_persist
TOPIC_SHRINK_PERSIST = attrs.evolve(opt_in("topic_shrink_persist", 3, _topic_shrink_persist, (),
                                           lambda rng, w: (), after_options=True),
                                    late_if="pop_orderly")


# -- offsets helper (issue 16): an admin's deletions of what the run does not consume ------------
# A default broker holds the offsets of more than the consumed topic and group (other groups,
# other topics); ConsumerOffsetManager#cleanOffsetByTopic and #removeOffset test each key by
# String#contains, then by the split on '@' (5.0.0:76-86 / 308-320, 5.5.0:88-104 / 411-435),
# and 5.5.0's deleteTopic asks whichGroupByTopic (:790) first. The run's own keys are all
# "TopicTest@GID_popverify..." and its deletions name them, so those tests never see a key of
# another topic or group. OTHER_DELETIONS: what the admin deletes, each a request mqadmin sends
# (deleteTopic -t, deleteSubGroup -g with cleanOffset), none of it the consumed topic or group:
# - ``topic_prefix``: DELETE_TOPIC of a topic whose name is a prefix of the consumed one (no
#   config here: the broker answers SUCCESS and cleans what it has): every key contains the
#   name, none is its;
# - ``topic_other``: DELETE_TOPIC of another topic: no key contains its name;
# - ``group_other``: DELETE_SUBSCRIPTIONGROUP with cleanOffset of another group (no config
#   here): no key contains its name.
OTHER_DELETIONS: dict[str, tuple[str, str]] = {"topic_prefix": ("topic", "Topic"),
                                               "topic_other": ("topic", "TopicUnused"),
                                               "group_other": ("group", "CID_popverify_unused")}


def other_deletion(kind: int) -> tuple[str, str, str]:
    """(its name, "topic" or "group", the name deleted) of the OTHER_DELETIONS ``kind`` indexes."""
    name = list(OTHER_DELETIONS)[kind % len(OTHER_DELETIONS)]
    return (name, *OTHER_DELETIONS[name])


def _delete_other(world: Any, kind: int) -> bool:
    name, what, target = other_deletion(kind)
    code = world.broker.delete_topic(target) if what == "topic" else world.broker.delete_group(target, True)
    world.coverage.add(f"delete_other:{name}:{rc.NAMES.get(code, code)}")
    return code == rc.SUCCESS


# weight 1 (an admin's request); drawn with delete_group (one swarm coin for both: no new draw,
# every configuration drawn before keeps its fields), declared last of the POP mode's kinds
DELETE_OTHER = attrs.evolve(opt_in("delete_other", 1, _delete_other,
                                   (Arg("kind", int, 0, len(OTHER_DELETIONS) - 1, value=False),),
                                   lambda rng, w: (rng.next_int(len(OTHER_DELETIONS)),), drawn_with="delete_group"),
                            late=True)


# polling3 (issue 16): a deletion the long-polling service's clean-up sees
def _topic_deleted(world: Any) -> None:
    """The checker's notice that the consumed topic was deleted (and is created again): the
    delete_recreate fault's admin act, so the properties that assume no topic deletion (INV-1,
    OFF-1, OFF-2, CKM-1, PRG-1: checker/properties.py) stop being checked."""
    world.publish(TopicRecreated())
    world.publish(FaultInjected("delete_recreate"))


def _delete_poll(world: Any, topic: bool) -> bool:
    """Once a POP has long-polled, the admin deletes the consumed group with its offsets (5.5.0
    re-creates a group deleted without them at once: Broker#delete_group) or the topic (created
    again right after, as ``delete_recreate``), and the polling service's loop passes in between, before
    any POP re-creates the group: its cleanUnusedResource, when due, drops the topicCidMap entries
    and polling keys of what is gone, with their parked requests (5.0.0
    PopMessageProcessor$PopLongPollingService#cleanUnusedResource:740-775, 5.5.0
    PopLongPollingService#cleanUnusedResource:372-407; the loop runs every 20 ms, a long-polling
    client re-POPs only when answered). A parked request's key stays in the polling map once empty."""
    broker = world.broker
    if not broker.pop_polling.clean_due(broker.clock.now()):
        # the deletion this stands for is one the clean-up sees: none due (no POP ever parked,
        # the loop's pass stops before it, run:100 / :796; or cleaned less than 5 minutes ago)
        return False
    if topic:
        broker.delete_topic(world.topic)
    elif not _delete_group(world, True):
        return False
    broker.long_polling_step()
    world.coverage.add(f"delete_poll:{'topic' if topic else 'group'}")
    if topic:
        broker.create_topic(world.topic, world.config.queues)
        _topic_deleted(world)
    return True


# weight 6 (the clean-up is due once per broker lifetime in a run's minutes: most draws are
# no-ops); its swarm coin last of all (after_options, after delete_group_persist's listing)
DELETE_POLL = opt_in("delete_poll", 6, _delete_poll, (flag("topic"),), lambda rng, w: (rng.next_boolean(),),
                     after_options=True)


# buffer3 (issue 16): a deletion the merge buffer's garbage scan sees
def _delete_idle(world: Any, topic: bool) -> bool:
    """While the merge buffer keeps commit-offset queues, the admin deletes the consumed group
    with its offsets (or the topic), then no request comes for GARBAGE_SCAN_PERIOD_MS (the
    time passes as an ``advance``) and one more pass of the merge loop runs: its scanGarbage,
    due by then, drops the queues of what is gone (5.0.0 PopBufferMergeService#scanGarbage:194-
    203, 5.5.0:201-210). A deletion a POP follows re-creates the group (auto-created) before the
    scan, so the scan never saw one; 5.5.0's scan re-creates it too while a CK of it is buffered
    (isSubscriptionGroupNotExist). The topic is created again after, as ``delete_recreate``."""
    broker = world.broker
    if broker.buffer_merge.buffer or not broker.buffer_merge.commit_offsets or broker.in_flight_pops() \
            or broker.parked_pops():
        # nothing the garbage scan could drop; or CKs still buffered, whose acks the idle would
        # keep from merging (their scans store them); or a POP in flight, which the idle would
        # settle after the deletion, or a parked one (a crashed consumer's too), which the idle
        # would time out and re-run after it (the replay runs both before the step's requests)
        return False
    if topic:
        broker.delete_topic(world.topic)
        _topic_deleted(world)  # (the checker's notice of the deletion, before the idle)
    elif not _delete_group(world, True):
        return False
    world.advance(GARBAGE_SCAN_PERIOD_MS)
    broker.buffer_merge_scan()
    world.coverage.add(f"delete_idle:{'topic' if topic else 'group'}")
    if topic:
        broker.create_topic(world.topic, world.config.queues)
    return True


# weight 1 (an admin's request; each costs 30 s of the run's time); listed, no coin drawn, last
# of all (scenario.py LISTED_LAST) by exactly the configurations with the buffer merge on and
# its default stay time (late_if merge_long_stay: only merge-on runs have commit-offset queues;
# the short-stay ones store the partly acked CKs, whose acks the 30 s would keep from merging)
DELETE_IDLE = attrs.evolve(opt_in("delete_idle", 1, _delete_idle, (flag("topic"),), lambda rng, w: (rng.next_boolean(),),
                                  after_options=True),
                           late_if="merge_long_stay")
# -- revive5 (issue 16): an admin's topic change that a revive pass sees ------------------------
# delete_recreate and delete_poll re-create the topic at once, so PopReviveService#mergeAndRevive
# never met a CK whose normal topic is gone (5.0.0:373, 5.5.0:518: it skips the CK and moves the
# revive offset past it); the topic's queue count never changed under a revive with 5.5.0's
# useSeparateRetryQueue (addRetryTopicIfNotExist:178 re-creates the retry topic with the new count,
# initPopRetryOffset:160 keeps the offsets its queues have); and a deleted group came back at the
# revive's findSubscriptionGroupConfig (auto-create), unless autoCreateSubscriptionGroup is off
# (the option AUTO_GROUP_OPTION: then the CK is skipped, 5.0.0:378, 5.5.0:523).
TOPIC_REVIVE_HOW: tuple[str, ...] = ("delete", "grow", "delete_group")
# The change lasts until the CK it waits for is this far past its revive time: the timer delivers
# a CK a second before it (1 s wheel) and mergeAndRevive takes a CK only once the round's end
# time is more than ackTimeInterval + SECOND (2 s) past it (5.0.0:369, 5.5.0:512).
TOPIC_REVIVE_MARGIN_MS = 4000


def _topic_revive(world: Any, how: int, qid: int, ms: int) -> bool:
    """The admin deletes the consumed topic (``how`` 0), gives it one more queue (1) or deletes
    the consumed group with its offsets (2); ``ms`` of virtual time pass (the services on their
    periods, as an ``advance``), the timer delivers and the revive service of revive queue ``qid``
    runs a round; then the admin restores what changed (UPDATE_AND_CREATE_TOPIC with the queue
    count, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP). Not applied while a consumer's POP is in flight
    or parked, a crashed consumer's parked POP included (the POP of a deleted topic or group is
    delete_poll's; the time passing would re-run it after the change, the replay before it: v5.0
    corpus seed 61 of 26 November 2026, ``orphan.response``)."""
    broker, queues = world.broker, world.config.queues
    if any(c.op is not None for c in world.consumers) or broker.in_flight_pops() or broker.parked_pops() \
            or not 0 <= how < len(TOPIC_REVIVE_HOW):
        return False
    if how == 0:
        broker.delete_topic(world.topic)
    elif how == 1:
        broker.create_topic(world.topic, queues + 1)
    else:
        broker.delete_group(world.group, True)
    world.pass_time(ms)
    broker.timer_step()
    world.revive(qid % broker.config.revive_queue_num)
    if how == 2:
        broker.create_group(world.group)
    else:
        broker.create_topic(world.topic, queues)
    world.coverage.add(f"topic_revive:{TOPIC_REVIVE_HOW[how]}")
    if how == 0:  # a deletion and re-creation: delete_recreate's excuse and assumptions
        _topic_deleted(world)
    elif how == 2:  # what the group had not acked is not owed (its offsets went with it)
        world.publish(GroupDeleted(True))
    return True


def topic_revive_draw(rng: Any, world: Any) -> tuple:
    """(how, the revive queue, the duration): the revive queue and revive time of the stored CK
    of the consumed topic that revives first (its retry topic's too), else a drawn queue and one
    invisible time; ``how`` by a coin."""
    how = rng.next_int(len(TOPIC_REVIVE_HOW))
    now, retry = world.clock.now(), build_pop_retry_topic(world.topic, world.group)
    cks = [s for s in world.broker.stored_checkpoints() if s.ck.topic in (world.topic, retry)]
    if not cks:
        return how, rng.next_int(world.broker.config.revive_queue_num), world.config.invisible_time
    first = min(cks, key=lambda s: s.ck.revive_time)
    return how, first.revive_queue_id, min(max(first.ck.revive_time - now, 0) + TOPIC_REVIVE_MARGIN_MS,
                                           MAX_TIME_ARG_MS)


# weight 3 (an admin's request; at the fault weight, 1 in ~90 steps, a third of the runs listing it
# would not revive a CK during one); its swarm coin last of all (drawn_last: every field drawn
# before keeps its value, ScenarioConfig.draw_domain)
TOPIC_REVIVE = attrs.evolve(opt_in("topic_revive", 3, _topic_revive,
                                   (Arg("how", int, 0, len(TOPIC_REVIVE_HOW) - 1, value=False), index("qid"),
                                    # the wait is the CK's (topic_revive_draw): a choice, not a value
                                    Arg("ms", int, 0, MAX_TIME_ARG_MS, value=False)), topic_revive_draw),
                            drawn_last=True)
