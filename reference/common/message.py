"""MessageExt: the stored message record the store, POP and revive paths pass around."""

from __future__ import annotations

import attrs

# MessageConst property keys the model uses.
PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX = "UNIQ_KEY"
PROPERTY_POP_CK = "POP_CK"
PROPERTY_FIRST_POP_TIME = "1ST_POP_TIME"
PROPERTY_TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
PROPERTY_REAL_TOPIC = "REAL_TOPIC"
PROPERTY_REAL_QUEUE_ID = "REAL_QID"
PROPERTY_RETRY_TOPIC = "RETRY_TOPIC"
PROPERTY_ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
PROPERTY_DELAY_TIME_LEVEL = "DELAY"
PROPERTY_MAX_OFFSET = "MAX_OFFSET"
PROPERTY_MIN_OFFSET = "MIN_OFFSET"
PROPERTY_TAGS = "TAGS"
PROPERTY_ORIGIN_GROUP = "ORIGIN_GROUP"


# MessageStoreConfig#maxMessageSize (4 MiB): MessageExtEncoder#encode refuses a body longer
# than it (bodyLength > maxMessageBodySize, which the constructor sets to maxMessageSize) with
# MESSAGE_ILLEGAL (read in rocketmq-store 5.5.0; 5.0.0's store sources are not in the cache,
# the same rule is assumed -- spec/broker.md "Message size limits").
MAX_MESSAGE_SIZE = 4 * 1024 * 1024
# MessageExtEncoder#encode: a properties string longer than Short.MAX_VALUE is refused
# (PROPERTIES_SIZE_EXCEEDED; SendMessageProcessor#handlePutMessageResult answers MESSAGE_ILLEGAL).
MAX_PROPERTIES_LENGTH = 32767


# MessageExtEncoder#calMsgLength with IPv4 born and store hosts (5.0.0 and 5.5.0): the fixed
# fields of a stored record, around its body, topic and properties string.
STORED_RECORD_OVERHEAD = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + 1 + 2


def properties_length(properties: dict[str, str], last_separator: bool = True) -> int:
    """Length of MessageDecoder#messageProperties2String(properties): name, value and two
    separators per property (the CRC32 reservation is off by default); without
    ``last_separator`` (rocketmq-common 5.0.0:595-597 deletes the string's last character,
    5.5.0 keeps it: BrokerConfig.properties_keep_last_separator) one less."""
    length = sum(len(k) + len(v) + 2 for k, v in properties.items())
    return length - 1 if length and not last_separator else length


@attrs.define(slots=True)
class MessageExt:
    """One message as the store holds it (MessageExt / MessageExtBrokerInner).

    ``queue_offset`` and ``store_timestamp`` are assigned by the store on put; ``properties``
    carries UNIQ_KEY (message identity, preserved into the retry topic) and 1ST_POP_TIME.
    ``deliver_time_ms`` > 0 routes the put through the timer (Message#setDeliverTimeMs).
    """

    topic: str
    queue_id: int
    body: bytes = b""
    tags: str | None = None
    properties: dict[str, str] = attrs.field(factory=dict)
    reconsume_times: int = 0
    deliver_time_ms: int = 0
    queue_offset: int = -1
    store_timestamp: int = 0
    born_timestamp: int = 0
    # Physical offset in the CommitLog (assigned by the store; one global sequence in the
    # model): what consumerSendMsgBack looks a message up by.
    commit_log_offset: int = -1

    @property
    def size(self) -> int:
        """Body bytes (what ProcessQueue's msgSize and the model's callers weigh)."""
        return len(self.body)

    @property
    def stored_size(self) -> int:
        """The stored record's length, the consume-queue unit's sizePy (calMsgLength): the
        properties string carries the tags as TAGS (Message#setTags)."""
        tags = len("TAGS") + len(self.tags) + 2 if self.tags else 0
        return STORED_RECORD_OVERHEAD + len(self.body) + len(self.topic.encode()) + \
            properties_length(self.properties) + tags

    @property
    def uniq_key(self) -> str | None:
        """The message's identity (UNIQ_KEY property)."""
        return self.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)

    def copy(self) -> "MessageExt":
        """A shallow copy with its own properties dict (what a read hands out)."""
        return attrs.evolve(self, properties=dict(self.properties))
