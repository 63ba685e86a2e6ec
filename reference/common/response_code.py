"""RocketMQ response codes the broker model returns (ResponseCode / RemotingSysResponseCode).

Values are those of org.apache.rocketmq.common.protocol.ResponseCode at rocketmq-all-5.0.0
(the same numbers on v5.5). Note the real clash: NO_MESSAGE, POLLING_FULL and
POLLING_TIMEOUT reuse 208..210 next to the ACL codes (209/210) -- kept as Java declares them.
"""

from __future__ import annotations

# RemotingSysResponseCode
SUCCESS = 0
SYSTEM_ERROR = 1
SYSTEM_BUSY = 2
REQUEST_CODE_NOT_SUPPORTED = 3

# ResponseCode
MESSAGE_ILLEGAL = 13
SERVICE_NOT_AVAILABLE = 14
NO_PERMISSION = 16
TOPIC_NOT_EXIST = 17
TOPIC_EXIST_ALREADY = 18
PULL_NOT_FOUND = 19
PULL_RETRY_IMMEDIATELY = 20
PULL_OFFSET_MOVED = 21
QUERY_NOT_FOUND = 22
SUBSCRIPTION_PARSE_FAILED = 23
SUBSCRIPTION_NOT_EXIST = 24
SUBSCRIPTION_NOT_LATEST = 25
SUBSCRIPTION_GROUP_NOT_EXIST = 26
FILTER_DATA_NOT_EXIST = 27
FILTER_DATA_NOT_LATEST = 28
# v5.5 only (org.apache.rocketmq.remoting.protocol.ResponseCode at 5.5.0; absent at 5.0.0)
INVALID_PARAMETER = 29
NO_MESSAGE = 208
POLLING_FULL = 209
POLLING_TIMEOUT = 210

NAMES: dict[int, str] = {
    value: name
    for name, value in sorted(globals().items())
    if name.isupper() and isinstance(value, int)
}


def name_of(code: int) -> str:
    """Symbolic name of a response code (the first declared for shared values)."""
    return NAMES.get(code, str(code))
