"""Model defects found by lockstep replay on RocketMQ's own broker classes
(popverify conformance --stateful, spec/conformance.md): each fixed rule, with its Java line."""

import pytest

from reference.broker.pop_processor import PopRequest
from reference.broker.keys import build_pop_retry_topic

from tests.broker.conftest import make_broker
from tests.broker.test_broker_ack_revive import INV, popped, run_revive


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_revive_creating_the_retry_topic_commits_its_offset_zero(profile):
    """PopReviveService#addRetryTopicIfNoExit -> initPopRetryOffset: commitOffset(group,
    retryTopic, 0, 0) when the group has no offset there (5.0.0 and 5.5.0)."""
    b = make_broker(profile)
    retry = build_pop_retry_topic("T", "G")
    popped(b, n=1)
    assert b.offsets.query_offset("G", retry, 0) == -1
    assert run_revive(b) == [0]
    assert b.offsets.query_offset("G", retry, 0) == 0


def test_restart_starts_ck_message_number_again():
    """PopMessageProcessor's constructor: ckMessageNumber = new AtomicLong(); a restart builds a
    new processor, so the next POP's reviveQid is 0 % reviveQueueNum again."""
    b = make_broker()
    for _ in range(3):
        b.put_message("T", 0, b"m")
        assert b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=1, invisible_time=INV)).result.messages
    b.restart()
    b.put_message("T", 0, b"m")
    assert b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=1, invisible_time=INV)).result.revive_qid == 0


@pytest.mark.parametrize("profile, expected", [("v5.0", "ascending"), ("v5.5", "descending")])
def test_pop_of_all_queues_visits_them_in_the_release_order(profile, expected):
    """5.0.0 visits (randomQ + i) % n; 5.5.0's popMsgFromTopic visits
    ((priorityOrderAsc ? n - 1 - i : i) + randomQ) % n with priorityOrderAsc true by default."""
    b = make_broker(profile, queues=4)
    for q in range(4):
        b.put_message("T", q, b"m")
    result = b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=32, invisible_time=INV)).result
    order = [m.queue_id for m in result.messages]
    steps = {(b_ - a) % 4 for a, b_ in zip(order, order[1:])}
    assert sorted(order) == [0, 1, 2, 3]
    assert steps == ({1} if expected == "ascending" else {3})
