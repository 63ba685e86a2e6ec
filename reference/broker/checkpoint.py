"""PopCheckPoint, AckMsg, BatchAckMsg and the pure bit/offset rules on them.

The pure functions (``index_of_ack``, ``ack_offset_by_index``, ``set_bit``, ``get_bit``) take
plain ints and tuples so the z3 proofs can cross-check them; the classes delegate to them.
JSON forms follow the broker's JSON library (fastjson on 5.0.0, fastjson2 on 5.5.0; both write
the JSONField names, properties sorted by name, nulls omitted, getReviveTime() serialised as
"reviveTime", primitives always written).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Sequence

import attrs

from reference.common.javalang import to_long, to_byte, to_int


def ck_queue_id(queue_id: int, is_byte: Any) -> int:
    """PopCheckPoint.queueId as a CK stores it: 5.0.0's is a byte (``is_byte``), so an id past
    127 names another queue (F9). ``is_byte`` is read only for such an id, where it decides
    (attribution's consulted())."""
    return queue_id if -128 <= queue_id <= 127 or not is_byte else to_byte(queue_id)


def set_bit(bitmap: int, index: int, flag: bool = True) -> int:
    """DataConverter#setBit on a Java int: ``1 << index`` uses index mod 32, as Java does."""
    mask = to_int(1 << (index & 31))
    return to_int(bitmap | mask) if flag else to_int(bitmap & ~mask)


def get_bit(bitmap: int, index: int) -> bool:
    """DataConverter#getBit: ``(value & (1 << index)) != 0`` (index mod 32)."""
    return (bitmap & to_int(1 << (index & 31))) != 0


def index_of_ack(start_offset: int, num: int, diffs: Sequence[int] | None, ack_offset: int) -> int:
    """PopCheckPoint#indexOfAck: the bit index of ``ack_offset`` in the checkpoint, or -1.

    Old checkpoints (no diff list) cover ``[start, start + num)``; new ones look the narrowed
    ``(int) (ackOffset - startOffset)`` up in the diff list (List#indexOf).
    """
    if ack_offset < start_offset:
        return -1
    if not diffs:
        if ack_offset - start_offset < num:
            return to_int(ack_offset - start_offset)
        return -1
    target = to_int(ack_offset - start_offset)
    for i, diff in enumerate(diffs):
        if diff == target:
            return i
    return -1


def ack_offset_by_index(start_offset: int, diffs: Sequence[int] | None, index: int) -> int:
    """PopCheckPoint#ackOffsetByIndex(byte): ``start + index`` or ``start + diffs[index]``.

    A negative index or one past the list raises IndexError like Java's List#get.
    """
    index = to_byte(index)
    if not diffs:
        return start_offset + index
    if index < 0 or index >= len(diffs):
        raise IndexError(f"Index {index} out of bounds for length {len(diffs)}")
    return start_offset + diffs[index]


def full_mask(num: int) -> int:
    """The bitmap with bits ``0..num-1`` set (what 'every message acked' looks like)."""
    mask = 0
    for i in range(num):
        mask = set_bit(mask, i)
    return mask


def parse_java_int(text: str) -> int | None:
    """Integer.parseInt(text, 10), or None where it throws NumberFormatException: an optional
    sign, then one or more decimal digits (Character.digit: any Unicode decimal digit, not only
    ASCII), no blanks or underscores, within [-2**31, 2**31)."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body:
        return None
    value = 0
    for ch in body:
        digit = unicodedata.decimal(ch, None)
        if digit is None:
            return None
        value = value * 10 + digit
    value = -value if text[0] == "-" else value
    return value if -(1 << 31) <= value < (1 << 31) else None


@attrs.define(slots=True)
class PopCheckPoint:
    """store/pop/PopCheckPoint: one pop of up to 32 messages from one queue."""

    start_offset: int = 0
    pop_time: int = 0
    invisible_time: int = 0
    bit_map: int = 0
    num: int = 0  # byte
    queue_id: int = 0  # byte on v5.0
    topic: str | None = None
    cid: str | None = None
    revive_offset: int = 0
    queue_offset_diff: list[int] | None = None
    broker_name: str | None = None
    re_put_times: str | None = None  # v5.5 only
    # v5.5 (5.5.0) only: "nack without inc reconsume times" (PopCheckPoint#suspend, JSONField
    # "sp"). A primitive boolean, so fastjson2 writes "sp":false on every v5.5 checkpoint.
    suspend: bool = False

    @property
    def revive_time(self) -> int:
        """getReviveTime: popTime + invisibleTime (Java long addition: wraps)."""
        return to_long(self.pop_time + self.invisible_time)

    def parse_re_put_times(self) -> int:
        """parseRePutTimes (v5.5): 0 when unset, Integer.parseInt of the text, and
        Byte.MAX_VALUE (127) for any text parseInt rejects (the catch swallows it)."""
        if self.re_put_times is None:
            return 0
        parsed = parse_java_int(self.re_put_times)
        return 127 if parsed is None else parsed

    def add_diff(self, diff: int) -> None:
        """addDiff: append an (int) offset difference."""
        if self.queue_offset_diff is None:
            self.queue_offset_diff = []
        self.queue_offset_diff.append(to_int(diff))

    def index_of_ack(self, ack_offset: int) -> int:
        """indexOfAck (see the pure function)."""
        return index_of_ack(self.start_offset, self.num, self.queue_offset_diff, ack_offset)

    def ack_offset_by_index(self, index: int) -> int:
        """ackOffsetByIndex (see the pure function)."""
        return ack_offset_by_index(self.start_offset, self.queue_offset_diff, index)

    def to_json(self, with_reput_times: bool = False, with_suspend: bool | None = None) -> str:
        """JSON.toJSONString(ck) as the profile's release writes it.

        ``with_reput_times`` selects the v5.5 (5.5.0) record, which has both "rp" and "sp";
        ``with_suspend`` overrides the latter (default: same as ``with_reput_times``), for a
        release that has one field without the other.
        """
        if with_suspend is None:
            with_suspend = with_reput_times
        fields: dict[str, object] = {
            "bm": self.bit_map,
            "bn": self.broker_name,
            "c": self.cid,
            "d": self.queue_offset_diff,
            "it": self.invisible_time,
            "n": self.num,
            "pt": self.pop_time,
            "q": self.queue_id,
            "reviveTime": self.revive_time,
            "ro": self.revive_offset,
            "rp": self.re_put_times if with_reput_times else None,
            "so": self.start_offset,
            "sp": self.suspend if with_suspend else None,
            "t": self.topic,
        }
        return _dump(fields)

    @classmethod
    def from_json(cls, text: str) -> "PopCheckPoint":
        """JSON.parseObject(body, PopCheckPoint.class); unknown keys ignored like fastjson."""
        data = json.loads(text)
        return cls(
            start_offset=int(data.get("so", 0)),
            pop_time=int(data.get("pt", 0)),
            invisible_time=int(data.get("it", 0)),
            bit_map=to_int(int(data.get("bm", 0))),
            num=to_byte(int(data.get("n", 0))),
            queue_id=int(data.get("q", 0)),
            topic=data.get("t"),
            cid=data.get("c"),
            revive_offset=int(data.get("ro", 0)),
            queue_offset_diff=list(data["d"]) if data.get("d") is not None else None,
            broker_name=data.get("bn"),
            re_put_times=data.get("rp"),
            suspend=bool(data.get("sp", False)),
        )


@attrs.frozen
class AckMsg:
    """store/pop/AckMsg: one acknowledged offset of a checkpoint."""

    ack_offset: int
    start_offset: int
    consumer_group: str
    topic: str
    queue_id: int
    pop_time: int
    broker_name: str | None = None

    @property
    def merge_key(self) -> str:
        """The key matching the checkpoint this ack belongs to."""
        from reference.broker.keys import build_ck_merge_key

        return build_ck_merge_key(self.topic, self.consumer_group, self.queue_id, self.start_offset, self.pop_time)

    def to_json(self, short_names: bool) -> str:
        """JSON.toJSONString(ackMsg): bean names on v5.0, JSONField short names on v5.5."""
        return _dump(_ack_fields(self, short_names))

    @classmethod
    def from_json(cls, text: str, short_names: bool = True) -> "AckMsg":
        """JSON.parseObject(body, AckMsg.class). With ``short_names`` (v5.5: JSONField names
        with the bean names as alternateNames) either style is read; without (5.0.0: no
        JSONField on AckMsg) only the bean names, so a short-named body parses to defaults."""
        data = json.loads(text)

        def pick(short: str, long: str, default: object = None) -> object:
            if short_names and short in data:
                return data[short]
            return data.get(long, default)

        return cls(
            ack_offset=int(pick("ao", "ackOffset", 0)),  # type: ignore[arg-type]
            start_offset=int(pick("so", "startOffset", 0)),  # type: ignore[arg-type]
            consumer_group=pick("c", "consumerGroup"),  # type: ignore[arg-type]
            topic=pick("t", "topic"),  # type: ignore[arg-type]
            queue_id=int(pick("q", "queueId", 0)),  # type: ignore[arg-type]
            pop_time=int(pick("pt", "popTime", 0)),  # type: ignore[arg-type]
            broker_name=pick("bn", "brokerName"),  # type: ignore[arg-type]
        )


@attrs.frozen
class BatchAckMsg:
    """store/pop/BatchAckMsg (v5.5): AckMsg plus ackOffsetList ("aol")."""

    ack_offset_list: tuple[int, ...]
    start_offset: int
    consumer_group: str
    topic: str
    queue_id: int
    pop_time: int
    broker_name: str | None = None
    # AckMessageProcessor#appendAck sets ackOffset = -1 on a batch; a bare `new BatchAckMsg()`
    # keeps the long field's 0.
    ack_offset: int = 0

    @property
    def merge_key(self) -> str:
        """The key of the checkpoint the batch acks (as AckMsg#merge_key)."""
        from reference.broker.keys import build_ck_merge_key

        return build_ck_merge_key(self.topic, self.consumer_group, self.queue_id, self.start_offset, self.pop_time)

    @classmethod
    def from_json(cls, text: str) -> "BatchAckMsg":
        """Parse a BATCH_ACK_TAG body (short names; bean names as alternates)."""
        data = json.loads(text)
        single = AckMsg.from_json(text)
        offsets = data["aol"] if "aol" in data else data.get("ackOffsetList", [])
        return cls(tuple(int(o) for o in offsets), single.start_offset, single.consumer_group, single.topic,
                   single.queue_id, single.pop_time, single.broker_name, single.ack_offset)

    def to_json(self) -> str:
        """fastjson form: the inherited AckMsg fields plus "aol"."""
        base = AckMsg(self.ack_offset, self.start_offset, self.consumer_group, self.topic, self.queue_id,
                      self.pop_time, self.broker_name)
        fields = _ack_fields(base, True)
        fields["aol"] = list(self.ack_offset_list)
        return _dump(fields)

    def to_acks(self) -> list[AckMsg]:
        """The single acks this batch stands for, in list order."""
        return [
            AckMsg(off, self.start_offset, self.consumer_group, self.topic, self.queue_id, self.pop_time, self.broker_name)
            for off in self.ack_offset_list
        ]


def _ack_fields(ack: AckMsg, short_names: bool) -> dict[str, object]:
    if short_names:
        return {"ao": ack.ack_offset, "bn": ack.broker_name, "c": ack.consumer_group, "pt": ack.pop_time,
                "q": ack.queue_id, "so": ack.start_offset, "t": ack.topic}
    return {"ackOffset": ack.ack_offset, "brokerName": ack.broker_name, "consumerGroup": ack.consumer_group,
            "popTime": ack.pop_time, "queueId": ack.queue_id, "startOffset": ack.start_offset, "topic": ack.topic}


def _dump(fields: dict[str, object]) -> str:
    """fastjson default output: keys sorted, nulls dropped, no spaces."""
    present = {k: v for k, v in sorted(fields.items()) if v is not None}
    return json.dumps(present, separators=(",", ":"), ensure_ascii=False)
