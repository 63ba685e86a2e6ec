"""The client's checked exceptions (org.apache.rocketmq.client.exception), shared by every path.

Java has one MQClientException and one MQBrokerException; the model had two
MQClientException classes (the local offset store's and the rebalance's). They are one class
here, as in Java: each ``except`` in the model sits around code that raises only its own.
"""

from __future__ import annotations

from reference.common import response_code as rc


class MQClientException(Exception):
    """MQClientException: the local offset store cannot be loaded (both the file and its .bak
    are unreadable), or computePullFromWhereWithException fails (the queue is not added this
    rebalance round)."""


class MQBrokerException(Exception):
    """MQBrokerException: a response code processPullResponse does not map (the PullCallback's
    onException)."""

    def __init__(self, code: int, remark: str | None) -> None:
        super().__init__(f"{rc.name_of(code)}: {remark}")
        self.code = code
