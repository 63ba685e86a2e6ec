"""LocalFileOffsetStore: a broadcasting consumer's offsets in a real file
(client/consumer/store/LocalFileOffsetStore.java and MixAll#string2File at rocketmq-all-5.0.0).

Path: ``{dir}/{clientId}/{group}/offsets.json`` (dir is rocketmq.client.localOffsetStoreDir,
``~/.rocketmq_offsets`` by default). Writing follows MixAll#string2File step by step -- write
``.tmp``, copy the current file to ``.bak``, delete the file, rename ``.tmp`` -- and a crash
can be injected between the steps (``crash_hook``), which is how machine 5 exercises it.
Loading follows readLocalOffset: a missing or empty file, or one that does not parse, falls
back to ``.bak``; a ``.bak`` that does not parse is MQClientException.

Oddities kept (spec/offsets.md): ``persist(mq)`` is empty in Java (only persistAll writes);
persistAll writes only the queues it is given, so the file forgets every other queue;
readOffset(READ_FROM_STORE) re-reads the file and answers -1 (not -2) when it cannot.

The file body is JSON ``{"offsetTable": [{"brokerName", "queueId", "topic", "offset"}, ...]}``:
fastjson writes the map with MessageQueue objects as keys, which is not JSON; the model keeps
the same fields in a list (a deliberate abstraction).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from reference.client.offset_store import ReadOffsetType, increase_only_update
from reference.common.exceptions import MQClientException
from reference.common.message_queue import MessageQueue

# The points of MixAll#string2File a crash can fall between.
CRASH_POINTS = ("after_tmp", "after_bak", "after_delete")


class SimulatedCrash(Exception):
    """Raised by a crash hook: the process stops at that point of a write."""


def _file_to_string(path: Path) -> str | None:
    """MixAll#file2String: the content, or None when the file does not exist."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return None  # an unreadable file reads as nothing (IOException is logged in Java)


def _string_to_file_not_safe(text: str, path: Path) -> None:
    """MixAll#string2FileNotSafe: mkdirs the parent, write the file in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def string_to_file(text: str, path: Path, crash_hook: Callable[[str], None] = lambda point: None) -> None:
    """MixAll#string2File: .tmp written, previous content copied to .bak, file deleted, .tmp
    renamed. ``crash_hook(point)`` is called after each step and may raise SimulatedCrash."""
    tmp = path.with_name(path.name + ".tmp")
    _string_to_file_not_safe(text, tmp)
    crash_hook("after_tmp")
    previous = _file_to_string(path)
    if previous is not None:
        _string_to_file_not_safe(previous, path.with_name(path.name + ".bak"))
    crash_hook("after_bak")
    path.unlink(missing_ok=True)
    crash_hook("after_delete")
    os.replace(tmp, path)


def to_json(table: dict[MessageQueue, int]) -> str:
    """OffsetSerializeWrapper#toJson(true), in the model's JSON form."""
    entries = [{"brokerName": mq.broker_name, "queueId": mq.queue_id, "topic": mq.topic, "offset": offset}
               for mq, offset in sorted(table.items(), key=lambda kv: kv[0].sort_key())]
    return json.dumps({"offsetTable": entries}, indent=1)


def from_json(text: str) -> dict[MessageQueue, int]:
    """OffsetSerializeWrapper.fromJson; ValueError when the text is not such a document."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("offsetTable"), list):
        raise ValueError("not an OffsetSerializeWrapper")
    table: dict[MessageQueue, int] = {}
    for entry in data["offsetTable"]:
        if not isinstance(entry, dict):
            raise ValueError("bad offsetTable entry")
        topic, broker, qid, offset = entry.get("topic"), entry.get("brokerName"), entry.get("queueId"), entry.get("offset")
        if not (isinstance(topic, str) and isinstance(broker, str) and type(qid) is int and type(offset) is int):
            raise ValueError(f"bad offsetTable entry {entry!r}")
        table[MessageQueue(topic, broker, qid)] = offset
    return table


class LocalFileOffsetStore:
    """The offsets of one broadcasting consumer (client id) of a group."""

    def __init__(self, directory: Path, client_id: str, group: str,
                 crash_hook: Callable[[str], None] = lambda point: None) -> None:
        self.group = group
        self.store_path = Path(directory) / client_id / group / "offsets.json"
        self.offset_table: dict[MessageQueue, int] = {}
        self.crash_hook = crash_hook

    def _read_local_offset(self) -> dict[MessageQueue, int] | None:
        """readLocalOffset: the file, else its .bak (MQClientException if .bak is corrupt)."""
        content = _file_to_string(self.store_path)
        if content:
            try:
                return from_json(content)
            except ValueError:
                pass
        return self._read_local_offset_bak()

    def _read_local_offset_bak(self) -> dict[MessageQueue, int] | None:
        content = _file_to_string(self.store_path.with_name(self.store_path.name + ".bak"))
        if not content:
            return None
        try:
            return from_json(content)
        except ValueError as err:
            raise MQClientException(f"readLocalOffset Exception: {self.store_path}.bak is corrupt ({err})") from err

    def load(self) -> None:
        """load(): put every offset found on disk into memory; MQClientException when neither
        the file nor its .bak can be read."""
        table = self._read_local_offset()
        if table:
            self.offset_table.update(table)

    def update_offset(self, mq: MessageQueue | None, offset: int, increase_only: bool) -> None:
        """updateOffset, as RemoteBrokerOffsetStore does it."""
        if mq is None:
            return
        old = self.offset_table.get(mq)
        self.offset_table[mq] = offset if old is None else increase_only_update(old, offset, increase_only)

    def read_offset(self, mq: MessageQueue | None, read_type: ReadOffsetType) -> int:
        """readOffset: memory, or the file for READ_FROM_STORE (and MEMORY_FIRST_THEN_STORE when
        memory has nothing); -1 when not found or unreadable."""
        if mq is None:
            return -1
        if read_type in (ReadOffsetType.MEMORY_FIRST_THEN_STORE, ReadOffsetType.READ_FROM_MEMORY):
            if mq in self.offset_table:
                return self.offset_table[mq]
            if read_type is ReadOffsetType.READ_FROM_MEMORY:
                return -1
        try:
            table = self._read_local_offset()
        except MQClientException:
            return -1
        if table and mq in table:
            self.update_offset(mq, table[mq], False)
            return table[mq]
        return -1

    def persist_all(self, mqs: set[MessageQueue]) -> None:
        """persistAll: write the offsets of ``mqs`` (only those) to the file."""
        if not mqs:
            return
        table = {mq: offset for mq, offset in self.offset_table.items() if mq in mqs}
        try:
            string_to_file(to_json(table), self.store_path, self.crash_hook)
        except OSError:
            pass  # logged in Java; the next persistAll writes again

    def persist(self, mq: MessageQueue) -> None:
        """persist(mq): empty in LocalFileOffsetStore."""

    def remove_offset(self, mq: MessageQueue) -> None:
        """removeOffset: empty in LocalFileOffsetStore (the offset stays in memory)."""
