"""An admin's group deletion and offset reset in the broker model (spec/profiles.md "Group
deletion and offset reset"): ConsumerOffsetManager's removeOffset and 5.5.0 reset table, each
release's reset, resetPopOffset and the auto-creation of a deleted group."""

from __future__ import annotations

from reference.broker.config import BrokerConfig, applicable_options, with_options
from reference.broker.consumer_order_info import OrderInfo
from reference.broker.keys import build_lock_key
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.common import response_code as rc
from reference.common.message_queue import MessageQueue
from reference.common.pop import INIT_MODE_MAX, PopRequest
from tests.broker.conftest import make_broker


def fill(broker, n: int, queue: int = 0) -> None:
    for _ in range(n):
        broker.put_message("T", queue, body=b"x")


def test_remove_offset_drops_the_group_only_and_in_memory() -> None:
    m = ConsumerOffsetManager(5000, use_server_side_reset=True)
    m.commit_offset("c", "G", "T", 0, 3)
    m.commit_offset("c", "GG", "T", 0, 4)      # another group whose name contains "G"
    m.commit_offset("c", "G", "a@b", 0, 5)     # a topic with '@': three parts, kept as in Java
    m.assign_reset_offset("T", "G", 1, 2)
    m.persist(0)
    assert m.remove_offset("G")
    assert m.offsets() == {("GG", "T", 0): 4, ("b@G", "a", 0): 5} and not m.has_offset_reset("T", "G", 1)
    m.restart()  # removeOffset does not persist: the snapshot brings them back (as F10's topic offsets)
    assert m.query_offset("G", "T", 0) == 3 and not m.has_offset_reset("T", "G", 1)


def test_reset_table_is_read_first_and_taken_once() -> None:
    m = ConsumerOffsetManager(5000, use_server_side_reset=True)
    m.commit_offset("c", "G", "T", 0, 7)
    assert not m.assign_reset_offset("T", "G", -1, 2) and not m.assign_reset_offset("T", "G", 0, -1)
    assert m.assign_reset_offset("T", "G", 0, 2)
    m.commit_offset("c", "G", "T", 0, 9)  # a client's commit overwrites the offset table ...
    assert m.query_offset("G", "T", 0) == 2  # ... but queryOffset answers the pending reset
    assert m.query_then_erase_reset_offset("T", "G", 0) == 2
    assert m.query_then_erase_reset_offset("T", "G", 0) is None and m.query_offset("G", "T", 0) == 9
    off = ConsumerOffsetManager(5000, use_server_side_reset=False)
    off.assign_reset_offset("T", "G", 0, 2)
    off.commit_offset("c", "G", "T", 0, 9)
    assert off.query_offset("G", "T", 0) == 9  # useServerSideResetOffset off: the table only


def test_v50_reset_is_a_plain_commit() -> None:
    b = make_broker("v5.0", queues=1)
    fill(b, 3)
    b.offsets.commit_offset("c", "G", "T", 0, 3)
    assert b.reset_offset("T", "G", 0, 1) == rc.SUCCESS and b.committed_offset("G", "T", 0) == 1
    assert b.reset_offset("T", "G", 0, 99) == rc.SUCCESS and b.committed_offset("G", "T", 0) == 99
    assert b.reset_offset("nope", "G", 0, 1) == rc.SUCCESS  # UPDATE_CONSUMER_OFFSET checks nothing


def test_v55_reset_refusals_and_the_accepted_max_plus_one() -> None:
    b = make_broker("v5.5", queues=1)
    fill(b, 3)
    assert b.reset_offset("nope", "G", 0, 1) == rc.TOPIC_NOT_EXIST
    assert b.reset_offset("T", "nope", 0, 1) == rc.SUBSCRIPTION_GROUP_NOT_EXIST  # no auto-create here
    assert b.reset_offset("T", "G", 0, 5) == rc.SYSTEM_ERROR  # offset > max + 1
    assert b.reset_offset("T", "G", 0, 4) == rc.SUCCESS  # max + 1: two past the last message
    assert b.committed_offset("G", "T", 0) == 4


def test_v55_reset_is_taken_by_the_next_pop() -> None:
    b = make_broker("v5.5", queues=1, enable_pop_buffer_merge=True)
    fill(b, 4)
    first = b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=4, invisible_time=60000))
    assert [m.queue_offset for m in first.result.messages] == [0, 1, 2, 3]
    lock_key = build_lock_key("T", "G", 0)
    assert b.buffer_merge.get_latest_offset(lock_key) == 4  # the buffer would serve from 4
    b.order_info.table.setdefault("T@G", {})[0] = OrderInfo(offset_list=[0])
    assert b.reset_offset("T", "G", 0, 1) == rc.SUCCESS
    # a client's commit is ignored while the reset is pending (ConsumerManageProcessor:192-200)
    b.update_consumer_offset("G", MessageQueue("T", b.broker_name, 0), 3)
    assert b.offsets.has_offset_reset("T", "G", 0) and b.committed_offset("G", "T", 0) == 1
    again = b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=4, invisible_time=60000))
    assert [m.queue_offset for m in again.result.messages] == [1, 2, 3]  # resetPopOffset
    assert not b.offsets.has_offset_reset("T", "G", 0) and b.order_info.get("T", "G", 0) is None


def test_v50_reset_back_is_overtaken_by_the_buffer() -> None:
    """5.0.0's reset is a commit: the merge buffer's latest offset still wins in getPopOffset."""
    b = make_broker("v5.0", queues=1, enable_pop_buffer_merge=True)
    fill(b, 4)
    b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=4, invisible_time=60000))
    b.reset_offset("T", "G", 0, 1)
    fill(b, 1)
    again = b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=4, invisible_time=60000))
    assert [m.queue_offset for m in again.result.messages] == [4]


def test_delete_group_and_its_auto_creation() -> None:
    b = make_broker("v5.0", queues=1)
    fill(b, 2)
    b.offsets.commit_offset("c", "G", "T", 0, 2)
    assert b.delete_group("G", clean_offset=False) == rc.SUCCESS
    assert "G" not in b.groups and b.committed_offset("G", "T", 0) == 2
    assert b.find_group("G") and "G" in b.groups  # findSubscriptionGroupConfig re-creates it
    b.delete_group("G", clean_offset=True)
    assert b.committed_offset("G", "T", 0) == -1
    fill(b, 3)
    op = b.pop(PopRequest("T", "G", queue_id=0, invisible_time=60000, init_mode=INIT_MODE_MAX))
    # a new group on 5.0.0 (init mode MAX): maxOffset - 1, the earlier messages skipped
    assert [m.queue_offset for m in op.result.messages] == [4] and "G" in b.groups
    strict = make_broker("v5.0", queues=1, auto_create_subscription_group=False)
    strict.delete_group("G", clean_offset=True)
    assert strict.pop(PopRequest("T", "G")).result.code == rc.SUBSCRIPTION_GROUP_NOT_EXIST


def test_v55_orderly_ack_commits_nothing_while_a_reset_is_pending() -> None:
    b = make_broker("v5.5", queues=1)
    fill(b, 3)
    got = b.pop(PopRequest("T", "G", queue_id=0, max_msg_nums=3, invisible_time=60000, order=True)).result
    assert b.reset_offset("T", "G", 0, 2) == rc.SUCCESS
    for m in got.messages:  # AckMessageProcessor#ackOrderly:421: hasOffsetReset → no commit
        assert b.ack("G", "T", 0, m.queue_offset, m.extra_info) == rc.SUCCESS
    assert b.offsets.offsets()[("G", "T", 0)] == 2 and b.offsets.has_offset_reset("T", "G", 0)


def test_v55_push_option_switches_the_server_side_reset_off() -> None:
    """offsets2: the push option useServerSideResetOffset=false sets the release's switch, so
    queryOffset skips a pending reset (ConsumerOffsetManager:243) and a client commit is not held
    back by it (ConsumerManageProcessor#updateConsumerOffset:192); v5.0 has no such option."""
    cfg = with_options(BrokerConfig.for_profile("v5.5"), ("useServerSideResetOffset=false",))
    assert BrokerConfig.for_profile("v5.5").server_side_reset_offset and not cfg.server_side_reset_offset
    assert applicable_options(BrokerConfig.for_profile("v5.0"), ("useServerSideResetOffset=false",)) == ()
    b = make_broker("v5.5", queues=1, server_side_reset_offset=False)
    fill(b, 3)
    b.offsets.assign_reset_offset("T", "G", 0, 1)  # a pending reset, as resetOffsetInner leaves one
    b.update_consumer_offset("G", MessageQueue("T", b.broker_name, 0), 3)
    assert b.committed_offset("G", "T", 0) == 3 and b.offsets.query_offset("G", "T", 0) == 3
