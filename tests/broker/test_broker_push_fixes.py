"""Model defects found by the push lockstep (spec/conformance.md "Push lockstep"): each fixed
rule, with its Java line."""

import pytest

from reference.common.message import MessageExt
from reference.broker.send_back import get_retry_topic
from reference.broker.store import MessageStore
from reference.broker.timer import TimerService
from reference.common.clock import VirtualClock

from tests.broker.conftest import make_broker


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_send_backs_copy_is_due_at_store_time_plus_its_delay_not_on_the_timer_wheel(profile):
    """ScheduleMessageService's DeliverDelayedMessageTimerTask#executeOnTimeup delivers a
    delay-level message once deliverTimestamp (store time + the level's delay) is reached; the
    model parked it in its 1 s timer wheel and delivered it up to 999 ms late."""
    b = make_broker(profile, queues=1)
    b.put_message("T", 0, b"m")
    msg = b.store.look_message_by_offset("T", 0, 0)
    b.clock.advance(1_100)  # send back 100 ms into a second
    sent_back_at = b.clock.now()
    assert b.consumer_send_msg_back("G", msg, 3, 16) == 0
    assert b.timer.next_delivery() == sent_back_at + 10_000  # level 3: 10 s, exactly
    retry = get_retry_topic("G")
    b.clock.advance(9_999)
    b.timer_step()
    assert b.store.get_max_offset_in_queue(retry, 0) == 0
    b.clock.advance(1)
    b.timer_step()
    assert b.store.get_max_offset_in_queue(retry, 0) == 1


@pytest.mark.parametrize("profile, code", [("v5.0", 1), ("v5.5", 0)])
def test_a_retried_messages_send_back_is_refused_only_by_5_0_s_origin_topic_check(profile, code):
    """AbstractSendMessageProcessor#consumerSendMsgBack: the retry copy is stored in %RETRY%
    while the client names its original topic; 5.0.0 answers SYSTEM_ERROR ("failed to check
    the topic name", lines 158-165), 5.5.0 has no such check and sends it back again (found by
    the push coverage replay on 5.5.0)."""
    b = make_broker(profile, queues=1)
    b.put_message("T", 0, b"m")
    b.clock.advance(1_000)
    assert b.consumer_send_msg_back("G", b.store.look_message_by_offset("T", 0, 0), 1, 16) == 0
    b.clock.advance(1_000)
    b.timer_step()
    retry = get_retry_topic("G")
    copy = b.store.look_message_by_offset(retry, 0, 0).copy()
    assert copy is not None and copy.topic == retry
    copy.topic = "T"  # DefaultMQPushConsumerImpl#resetRetryAndNamespace, as the client consumes it
    assert b.consumer_send_msg_back("G", copy, 2, 16) == code


@pytest.mark.parametrize("delay_level, due", [(True, 1_001_500), (False, 1_002_000)])
def test_only_delay_level_messages_skip_the_timer_wheels_precision(delay_level, due):
    """A timer message (a checkpoint: TimerMessageStore) stays due at the end of its 1 s slot; a
    delay-level one (ScheduleMessageService) at its deliver time."""
    timer = TimerService(MessageStore(VirtualClock().now))
    timer.put(MessageExt(topic="t", queue_id=0, deliver_time_ms=1_001_500), delay_level=delay_level)
    assert timer.next_delivery() == due


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_consumers_heartbeat_creates_its_groups_retry_topic(profile):
    """ClientManageProcessor#heartBeat: createTopicInSendMessageBackMethod(%RETRY%group,
    retryQueueNums) for a group SubscriptionGroupManager finds or auto-creates; the model made it
    at the first send-back only."""
    b = make_broker(profile)
    assert get_retry_topic("G2") not in b.topics
    b.register_consumer("G2", "c1", ("T",))
    assert b.topics[get_retry_topic("G2")] == 1 and "G2" in b.groups


def test_no_retry_topic_for_a_group_that_is_neither_found_nor_auto_created():
    """heartBeat skips a consumer whose subscription group config is null (autoCreateSubscriptionGroup off)."""
    b = make_broker(auto_create_subscription_group=False)
    b.register_consumer("G2", "c1", ("T",))
    assert get_retry_topic("G2") not in b.topics
    b.register_consumer("G", "c1", ("T",))
    assert b.topics[get_retry_topic("G")] == 1
