"""5.5.0 batch ack: the BatchAckMsgs are put in the client's HashMap order (MQClientAPIImpl
#batchAckMessageAsync: `new ArrayList<>(batchAckMap.values())`, keys
retry@queueId@ckQueueOffset@popTime), and with a pending store put failure that order decides
which one is refused. Found by the lockstep differential with forced store put failures (5.5.0:
the model refused the first group in insertion order, Java the first in hash order)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reference.common import response_code as rc
from reference.common.pop import AckEntry
from reference.common.pop import PopRequest
from reference.common.javalang import hash_map_order

from tests.broker.conftest import make_broker

HASH_ORDER_JAVA = """
import java.util.*;
public class HashOrder {
    public static void main(String[] a) {
        Map<String, Integer> m = new HashMap<>();
        for (String k : a) m.put(k, 0);
        System.out.println(String.join(",", m.keySet()));
    }
}
"""


def _keys(n: int) -> list[str]:
    return [f"{q % 2}@{q % 4}@{7 * q}@{1_700_000_001_234 + 37 * q}" for q in range(n)]


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JDK")
@pytest.mark.parametrize("n", [3, 12, 13, 40])  # no resize, at the threshold, one and two resizes
def test_hash_map_order_is_java_s(tmp_path: Path, n: int) -> None:
    src = tmp_path / "HashOrder.java"
    src.write_text(HASH_ORDER_JAVA)
    keys = _keys(n)
    out = subprocess.run(["java", str(src), *keys], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().split(",") == hash_map_order(keys)


def test_hash_map_order_differs_from_insertion_order() -> None:
    keys = _keys(12)
    assert sorted(hash_map_order(keys)) == sorted(keys) and hash_map_order(keys) != keys


def test_a_pending_failure_refuses_the_first_batch_in_hash_order() -> None:
    b = make_broker("v5.5", queues=4)
    for q in range(4):
        b.put_message("T", q, b"m%d" % q)
    held = b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=32, invisible_time=60_000)).result.messages
    assert len(held) == 4  # one CK per queue: four BatchAcks
    b.put_faults.arm(1)
    entries = [AckEntry(m.ack_topic, m.queue_id, m.queue_offset, m.extra_info) for m in held]
    assert b.batch_ack("G", entries) == [rc.SUCCESS] * 4
    stored = {(a.queue_id, a.ack_offset) for a in b.stored_acks()}
    refused_queue = ({m.queue_id for m in held} - {q for q, _ in stored})
    assert b.put_faults.failed == ["ack"] and len(refused_queue) == 1
    # the refused one is the first key in HashMap order, whatever the handles' order
    keys = {}
    for m in held:
        parts = m.extra_info.split(" ")
        keys[f"{parts[4]}@{parts[6]}@{parts[0]}@{parts[1]}"] = m.queue_id
    assert refused_queue == {keys[hash_map_order(list(keys))[0]]}
