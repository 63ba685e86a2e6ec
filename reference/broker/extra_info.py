"""ExtraInfoUtil: the receipt handle ("extraInfo") a POP consumer sends back with ack.

Format (buildExtraInfo): ``ckQueueOffset popTime invisibleTime reviveQid t brokerName queueId
[msgQueueOffset]`` separated by single spaces, ``t`` = "1" for a retry topic else "0".
Parsing errors raise ExtraInfoError (a ValueError, as Java's IllegalArgumentException /
NumberFormatException); the processors let it escape like Java does, and the remoting layer
answers SYSTEM_ERROR.
"""

from __future__ import annotations

import re

from reference.broker.keys import KEY_SEPARATOR, RETRY_GROUP_TOPIC_PREFIX, build_pop_retry_topic
from reference.common.javalang import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN

NORMAL_TOPIC = "0"
RETRY_TOPIC = "1"

# Long.parseLong / Integer.parseInt read digits with Character.digit(ch, 10), which accepts
# every Unicode decimal digit (category Nd: "\u0663", fullwidth "\uff13"...), not only ASCII.
# Python's \d (str pattern) is the same class and int() reads those digits.
_JAVA_INTEGER = re.compile(r"[+-]?\d+\Z")


class ExtraInfoError(ValueError):
    """Malformed extraInfo (IllegalArgumentException / NumberFormatException in Java)."""


def split(extra_info: str | None) -> list[str]:
    """ExtraInfoUtil#split: String.split(" ") -- trailing empty strings are removed."""
    if extra_info is None:
        raise ExtraInfoError("split extraInfo is null")
    parts = extra_info.split(KEY_SEPARATOR)
    while parts and parts[-1] == "":
        parts.pop()
    # Java returns [""] for "", and the trailing-empty removal leaves that single element.
    return parts if parts else [""] if extra_info == "" else parts


def _parse(text: str, lo: int, hi: int) -> int:
    """Long.valueOf / Integer.parseInt: optional sign, decimal digits (any script), range checked."""
    if not _JAVA_INTEGER.match(text):
        raise ExtraInfoError(f'For input string: "{text}"')
    value = int(text)
    if value < lo or value > hi:
        raise ExtraInfoError(f'For input string: "{text}"')
    return value


def _need(parts: list[str] | None, n: int, what: str) -> list[str]:
    if parts is None or len(parts) < n:
        raise ExtraInfoError(f"{what} fail, extraInfoStrs length {0 if parts is None else len(parts)}")
    return parts


def get_ck_queue_offset(parts: list[str]) -> int:
    """getCkQueueOffset (Long.valueOf of field 0)."""
    return _parse(_need(parts, 1, "getCkQueueOffset")[0], LONG_MIN, LONG_MAX)


def get_pop_time(parts: list[str]) -> int:
    """getPopTime (field 1)."""
    return _parse(_need(parts, 2, "getPopTime")[1], LONG_MIN, LONG_MAX)


def get_invisible_time(parts: list[str]) -> int:
    """getInvisibleTime (field 2)."""
    return _parse(_need(parts, 3, "getInvisibleTime")[2], LONG_MIN, LONG_MAX)


def get_revive_qid(parts: list[str]) -> int:
    """getReviveQid (Integer.parseInt of field 3)."""
    return _parse(_need(parts, 4, "getReviveQid")[3], INT_MIN, INT_MAX)


def get_real_topic(parts: list[str], topic: str, cid: str) -> str:
    """getRealTopic: the retry topic when field 4 is "1", else ``topic``."""
    if _need(parts, 5, "getRealTopic")[4] == RETRY_TOPIC:
        return build_pop_retry_topic(topic, cid)
    return topic


def get_retry(parts: list[str]) -> str:
    """Field 4 as is ("0" normal, "1" retry)."""
    return _need(parts, 5, "getRetry")[4]


def get_broker_name(parts: list[str]) -> str:
    """getBrokerName (field 5)."""
    return _need(parts, 6, "getBrokerName")[5]


def get_queue_id(parts: list[str]) -> int:
    """getQueueId (field 6)."""
    return _parse(_need(parts, 7, "getQueueId")[6], INT_MIN, INT_MAX)


def get_queue_offset(parts: list[str]) -> int:
    """getQueueOffset (field 7)."""
    return _parse(_need(parts, 8, "getQueueOffset")[7], LONG_MIN, LONG_MAX)


def build_extra_info(ck_queue_offset: int, pop_time: int, invisible_time: int, revive_qid: int, topic: str,
                     broker_name: str, queue_id: int, msg_queue_offset: int | None = None) -> str:
    """buildExtraInfo (7 fields) or its 8-field overload when ``msg_queue_offset`` is given."""
    t = RETRY_TOPIC if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) else NORMAL_TOPIC
    fields = [str(ck_queue_offset), str(pop_time), str(invisible_time), str(revive_qid), t, broker_name, str(queue_id)]
    if msg_queue_offset is not None:
        fields.append(str(msg_queue_offset))
    return KEY_SEPARATOR.join(fields)


def build_start_offset_info(builder: list[str], retry: bool, queue_id: int, start_offset: int) -> None:
    """buildStartOffsetInfo: append ``t qid offset``; entries joined by ';' (see ``joined``)."""
    builder.append((RETRY_TOPIC if retry else NORMAL_TOPIC) + KEY_SEPARATOR + str(queue_id) + KEY_SEPARATOR + str(start_offset))


def build_msg_offset_info(builder: list[str], retry: bool, queue_id: int, offsets: list[int]) -> None:
    """buildMsgOffsetInfo: append ``t qid o1,o2,...``."""
    builder.append((RETRY_TOPIC if retry else NORMAL_TOPIC) + KEY_SEPARATOR + str(queue_id) + KEY_SEPARATOR
                   + ",".join(str(o) for o in offsets))


def joined(builder: list[str]) -> str:
    """The StringBuilder text: entries separated by ';'."""
    return ";".join(builder)


def get_start_offset_info_map_key(topic: str, queue_id: int) -> str:
    """getStartOffsetInfoMapKey: ``t@queueId``."""
    return (RETRY_TOPIC if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) else NORMAL_TOPIC) + "@" + str(queue_id)
