"""What the push and POP consumers ask of a broker (MQClientAPIImpl's surface), as a Protocol.

The consumer model is sans-IO for pulls: it *returns* a PullMessageRequestHeader and is later
handed the PullMessageResponse (or ``None`` for a timeout / lost response) by the driver, so
the driver can delay, lose or duplicate responses. The remaining calls are synchronous, as
they are short blocking RPCs (or oneways) in Java. ``reference.broker.broker.Broker``
implements this Protocol; a failing RPC raises ``OSError`` (MQBrokerException /
RemotingException in Java).
"""

from __future__ import annotations

from typing import Protocol

from reference.common.message import MessageExt
from reference.common.message_queue import MessageQueue


class ConsumerBrokerApi(Protocol):
    """Broker calls of a consumer client (one broker; ``broker_name`` of its queues)."""

    broker_name: str

    # heartbeat / ConsumerManager
    def register_consumer(self, group: str, client_id: str, topics: tuple[str, ...]) -> int: ...

    def unregister_consumer(self, group: str, client_id: str) -> int: ...

    def get_consumer_id_list(self, group: str) -> list[str]: ...  # GET_CONSUMER_LIST_BY_GROUP

    # route: the queues the client sees for a topic (TopicRouteData → subscribe queue set)
    def topic_queues(self, topic: str) -> list[MessageQueue]: ...

    # offsets (ConsumerManageProcessor); query raises OffsetNotFound when the broker has none
    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int: ...

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None: ...

    def get_max_offset(self, mq: MessageQueue) -> int: ...

    def search_offset(self, mq: MessageQueue, timestamp: int) -> int: ...

    # consume failures: AdminBrokerProcessor#consumerSendMsgBack (→ %RETRY%group or DLQ)
    def consumer_send_msg_back(self, group: str, msg: MessageExt, delay_level: int,
                               max_reconsume_times: int) -> int: ...

    # the client's fallback: its internal producer sends the message to %RETRY%group
    def send_message_back_as_normal_message(self, group: str, msg: MessageExt, max_reconsume_times: int) -> int: ...

    # orderly: RebalanceLockManager on the broker
    def lock_batch_mq(self, group: str, client_id: str, mqs: list[MessageQueue]) -> set[MessageQueue]: ...

    def unlock_batch_mq(self, group: str, client_id: str, mqs: list[MessageQueue]) -> None: ...
