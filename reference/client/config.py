"""DefaultMQPushConsumer / ClientConfig values the model reads, per profile.

Defaults are those of DefaultMQPushConsumer and ClientConfig at rocketmq-all-5.0.0; a
difference on v5.5 is a field set in ``for_profile`` (spec/profiles.md).
"""

from __future__ import annotations

import attrs

from reference.common.profile import config_for_profile


@attrs.frozen
class ClientConfig:
    """Client-side configuration and profile switches (see spec/profiles.md)."""

    profile: str
    # DefaultMQPushConsumer
    consume_concurrently_max_span: int = 2000
    pull_threshold_for_queue: int = 1000
    pull_threshold_size_for_queue: int = 100          # MiB
    pull_threshold_for_topic: int = -1
    pull_threshold_size_for_topic: int = -1
    pull_interval: int = 0
    consume_message_batch_max_size: int = 1
    pull_batch_size: int = 32
    post_subscription_when_pull: bool = False
    max_reconsume_times: int = -1                      # -1: 16 for concurrent, Integer.MAX_VALUE for orderly
    suspend_current_queue_time_millis: int = 1000
    consume_timeout: int = 15                          # minutes
    pop_invisible_time: int = 60_000
    pop_batch_nums: int = 32
    pop_threshold_for_queue: int = 96
    # ClientConfig
    persist_consumer_offset_interval: int = 5_000
    heartbeat_broker_interval: int = 30_000
    poll_name_server_interval: int = 30_000
    # DefaultMQPushConsumerImpl#pullTimeDelayMillsWhenException (its own field, 3 s; the
    # ClientConfig field of the same name, 1 s, serves the lite pull consumer)
    pull_time_delay_mills_when_exception: int = 3_000
    # DefaultMQPushConsumerImpl constants
    pull_time_delay_mills_when_flow_control: int = 50
    pull_time_delay_mills_when_suspend: int = 1_000
    broker_suspend_max_time_millis: int = 15_000
    consumer_timeout_millis_when_suspend: int = 30_000
    # RebalanceService waitInterval (rocketmq.client.rebalance.waitInterval)
    rebalance_wait_interval: int = 20_000
    # ProcessQueue.REBALANCE_LOCK_INTERVAL (lockAll period), RebalancePushImpl.UNLOCK_DELAY_TIME_MILLS
    rebalance_lock_interval: int = 20_000
    unlock_delay_time_mills: int = 20_000
    # ConsumeMessageOrderlyService.MAX_TIME_CONSUME_CONTINUOUSLY
    max_time_consume_continuously: int = 60_000
    # ProcessQueue: v5.5 resets msgSize to 0 when msgCount drops to 0 (removeMessage,
    # commit); rocketmq-all-5.0.0 only subtracts (found by `popverify conformance` vs 5.3.3).
    pq_reset_size_when_empty: bool = False
    # RebalancePushImpl#removeUnnecessaryMessageQueue of an orderly clustering consumer: v5.5
    # (tryRemoveOrderMessageQueue) unlocks at once and takes the queue out even while a listener
    # holds the consume lock once the dropped queue's lock is older than unlockDelayTimeMills;
    # rocketmq-all-5.0.0 unlocks 20 s later while messages are cached, never while a listener works.
    try_remove_order_message_queue: bool = False
    # ConsumeMessageConcurrentlyService#processConsumeResult, RECONSUME_LATER: v5.5 skips the
    # send-back of a message no longer in its ProcessQueue ("expired and cleaned":
    # ProcessQueue#containsMessage); rocketmq-all-5.0.0 sends it back again.
    send_back_only_held: bool = False
    # mechanism switch for F5 (popverify/findings/attribution.py): a queue whose offset query
    # finds nothing starts at its max offset (CONSUME_FROM_LAST_OFFSET, as Java); False starts
    # it at the store's first offset, i.e. treats a never-flushed group as not new.
    unflushed_queue_starts_at_max_offset: bool = True
    # mechanism switch for F13: ProcessQueue#removeMessage (5.0.0:202-205, 5.5.0:198-204) and
    # #commit subtract the body length of the message as it is now; a listener that set a body
    # of another length (the ProcessQueue holds the same object) makes msgSize drift, which
    # pullMessage's size flow control reads. False subtracts the length counted at put.
    pq_size_counts_current_body: bool = True

    @classmethod
    def for_profile(cls, name: str) -> "ClientConfig":
        """The configuration of profile ``name``, a canonical name of
        reference.common.profile.PROFILE_NAMES (aliases are resolved by reference.profile.get_profile);
        ValueError otherwise."""
        return config_for_profile(cls, name, RELEASE_SWITCHES)


# Profile -> the ClientConfig fields that differ from the defaults above (rocketmq-all-5.0.0)
# at that release (spec/profiles.md).
RELEASE_SWITCHES: dict[str, dict[str, object]] = {
    "v5.0": {},
    "v5.5": {"pq_reset_size_when_empty": True, "try_remove_order_message_queue": True,
             "send_back_only_held": True},
}
