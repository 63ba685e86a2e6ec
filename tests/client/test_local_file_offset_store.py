"""LocalFileOffsetStore on real files: layout, round trip, and every failure of load."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference.client.local_file_offset_store import LocalFileOffsetStore, SimulatedCrash, string_to_file
from reference.client.offset_store import ReadOffsetType
from reference.common.exceptions import MQClientException
from reference.common.message_queue import MessageQueue

MQ0, MQ1 = MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)


def _store(tmp_path: Path) -> LocalFileOffsetStore:
    return LocalFileOffsetStore(tmp_path, "127.0.0.1@1", "g")


def test_path_layout_and_round_trip(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.store_path == tmp_path / "127.0.0.1@1" / "g" / "offsets.json"
    store.update_offset(MQ0, 7, False)
    store.update_offset(MQ1, 9, False)
    store.persist_all({MQ0, MQ1})
    again = _store(tmp_path)
    again.load()
    assert again.offset_table == {MQ0: 7, MQ1: 9}
    assert again.read_offset(MQ1, ReadOffsetType.READ_FROM_STORE) == 9


def test_missing_file_loads_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.load()
    assert store.offset_table == {}
    assert store.read_offset(MQ0, ReadOffsetType.MEMORY_FIRST_THEN_STORE) == -1


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"offsetTable": 3}', b'{"offsetTable": [{"topic": 1}]}'])
def test_empty_or_corrupt_file_falls_back_to_the_bak(tmp_path: Path, content: bytes) -> None:
    store = _store(tmp_path)
    store.update_offset(MQ0, 1, False)
    store.persist_all({MQ0})
    store.update_offset(MQ0, 2, False)
    store.persist_all({MQ0})           # .bak now holds offset 1
    store.store_path.write_bytes(content)
    again = _store(tmp_path)
    again.load()
    assert again.offset_table == {MQ0: 1}


def test_corrupt_file_and_corrupt_bak_is_a_clear_error(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.update_offset(MQ0, 1, False)
    store.persist_all({MQ0})
    store.store_path.write_bytes(b"garbage")
    store.persist_all({MQ0})           # string2File copies the garbage into .bak
    store.store_path.write_bytes(b"garbage")
    with pytest.raises(MQClientException, match="offsets.json.bak is corrupt"):
        _store(tmp_path).load()
    assert _store(tmp_path).read_offset(MQ0, ReadOffsetType.READ_FROM_STORE) == -1  # swallowed: -1


@pytest.mark.parametrize("point, survives", [("after_tmp", 1), ("after_bak", 1), ("after_delete", 1)])
def test_a_crash_inside_a_write_keeps_the_previous_offsets(tmp_path: Path, point: str, survives: int) -> None:
    store = _store(tmp_path)
    store.update_offset(MQ0, 1, False)
    store.persist_all({MQ0})

    def crash(at: str) -> None:
        if at == point:
            raise SimulatedCrash(at)
    store.crash_hook = crash
    store.update_offset(MQ0, 2, False)
    with pytest.raises(SimulatedCrash):
        store.persist_all({MQ0})
    again = _store(tmp_path)
    again.load()
    assert again.offset_table == {MQ0: survives}


def test_persist_all_writes_only_the_given_queues_and_persist_one_is_empty(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.update_offset(MQ0, 3, False)
    store.update_offset(MQ1, 4, False)
    store.persist(MQ0)                 # LocalFileOffsetStore#persist does nothing
    assert not store.store_path.exists()
    store.persist_all({MQ1})
    again = _store(tmp_path)
    again.load()
    assert again.offset_table == {MQ1: 4}


def test_string_to_file_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "f.json"
    string_to_file("x", target)
    assert target.read_text() == "x" and not target.with_name("f.json.tmp").exists()
