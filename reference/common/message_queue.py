"""MessageQueue: a topic's queue on one broker, the unit allocation hands out and offsets key on.

org.apache.rocketmq.common.message.MessageQueue lives in rocketmq-common, below both the
client (rebalance, offset stores) and the broker (QueryAssignmentProcessor); so does this.
"""

from __future__ import annotations

import attrs

from reference.common.javalang import string_sort_key


@attrs.frozen(order=False)
class MessageQueue:
    """org.apache.rocketmq.common.message.MessageQueue; ``sort_key`` gives its compareTo order."""

    topic: str
    broker_name: str
    queue_id: int

    def sort_key(self) -> tuple:
        """Java compareTo: topic, then brokerName (String order), then queueId."""
        return (string_sort_key(self.topic), string_sort_key(self.broker_name), self.queue_id)

    def java_str(self) -> str:
        """MessageQueue#toString (the consistent-hash key)."""
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"
