"""Allocation strategies, allocate4Pop, doLoadBalance and `popverify allocate`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from popverify.checker.allocation import check_agreement, check_allocation, naive_bound_fails, sharing_degree
from popverify.commands.allocate import assignments
from popverify.errors import UsageError
from reference.broker.query_assignment import BROADCASTING, CLUSTERING, allocate4pop, do_load_balance
from reference.client.allocation import (allocate_averagely, allocate_averagely_by_circle, allocate_by_config,
                                         allocate_by_machine_room, allocate_consistent_hash,
                                         allocate_machine_room_nearby, md5_hash, sort_cids, sort_queues)
from reference.common.message_queue import MessageQueue

MQS = [MessageQueue("T", "b", q) for q in range(8)]


def ids(mqs: list[MessageQueue]) -> list[int]:
    return [m.queue_id for m in mqs]


def test_averagely_gives_contiguous_blocks_first_ones_larger() -> None:
    cids = ["c0", "c1", "c2"]
    assert [ids(allocate_averagely("g", c, MQS, cids)) for c in cids] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert ids(allocate_averagely("g", "c2", MQS[:2], cids)) == []  # more clients than queues
    assert ids(allocate_averagely("g", "c1", MQS[:2], cids)) == [1]


def test_averagely_by_circle_deals_round_robin() -> None:
    cids = ["c0", "c1", "c2"]
    assert [ids(allocate_averagely_by_circle("g", c, MQS, cids)) for c in cids] == [[0, 3, 6], [1, 4, 7], [2, 5]]


@pytest.mark.parametrize("strategy", [allocate_averagely, allocate_averagely_by_circle, allocate_consistent_hash])
def test_argument_checks_as_rocketmq(strategy) -> None:
    with pytest.raises(ValueError, match="currentCID is empty"):
        strategy("g", "", MQS, ["c0"])
    with pytest.raises(ValueError, match="mqAll is null or mqAll empty"):
        strategy("g", "c0", [], ["c0"])
    with pytest.raises(ValueError, match="cidAll is null or cidAll empty"):
        strategy("g", "c0", MQS, [])
    assert strategy("g", "stranger", MQS, ["c0"]) == []


def test_java_string_order_of_client_ids() -> None:
    assert sort_cids(["c2", "c10", "c1"]) == ["c1", "c10", "c2"]
    # c10 is second in Java order, so it gets the second block.
    result = do_load_balance(CLUSTERING, allocate_averagely, "g", "c10", MQS, ["c2", "c10", "c1"], None)
    assert result is not None and sorted(ids(list(result))) == [3, 4, 5]
    assert sort_queues([MessageQueue("T", "b", 2), MessageQueue("S", "z", 9), MessageQueue("T", "a", 5)]) == [
        MessageQueue("S", "z", 9), MessageQueue("T", "a", 5), MessageQueue("T", "b", 2)]


def test_consistent_hash_uses_md5_ring_and_covers_every_queue_once() -> None:
    assert md5_hash("abc") == 0x90015098
    cids = ["10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"]
    owned = [q for c in cids for q in ids(allocate_consistent_hash("g", c, MQS, cids))]
    assert sorted(owned) == list(range(8))
    with pytest.raises(ValueError):
        allocate_consistent_hash("g", "c0", MQS, ["c0"], virtual_node_cnt=-1)


def test_by_config_machine_room_and_nearby() -> None:
    assert allocate_by_config(MQS[:2])("g", "x", [], []) == MQS[:2]
    rooms = [MessageQueue("T", f"{room}@b{i}", q) for i, room in enumerate(["hz", "sh"]) for q in range(3)]
    by_room = allocate_by_machine_room({"hz"})
    assert [ids(by_room("g", c, rooms, ["c0", "c1"])) for c in ("c0", "c1")] == [[0, 2], [1]]
    nearby = allocate_machine_room_nearby(allocate_averagely, lambda mq: mq.broker_name.split("@")[0],
                                          lambda cid: cid.split("-")[0])
    cids = ["hz-c0", "hz-c1"]
    got = {c: [(m.broker_name, m.queue_id) for m in nearby("g", c, rooms, cids)] for c in cids}
    # hz queues split in the room; sh has no consumer, so its queues are shared by everyone
    assert got["hz-c0"] == [("hz@b0", 0), ("hz@b0", 1), ("sh@b1", 0), ("sh@b1", 1)]
    assert got["hz-c1"] == [("hz@b0", 2), ("sh@b1", 2)]


def test_allocate4pop_branches() -> None:
    cids = ["c0", "c1", "c2", "c3"]
    assert ids(allocate4pop(allocate_averagely, "g", "c0", MQS, cids, 0)) == [-1] * 8
    assert ids(allocate4pop(allocate_averagely, "g", "c0", MQS, cids, 3)) == [-1] * 8
    assert ids(allocate4pop(allocate_averagely, "g", "c3", MQS, cids, 1)) == [6, 7, 0, 1]
    assert ids(allocate4pop(allocate_averagely, "g", "c2", MQS[:2], cids, 1)) == [0]


def test_do_load_balance_broadcasting_and_nulls() -> None:
    assert do_load_balance(BROADCASTING, None, "g", "c0", MQS, None, None) == set(MQS)
    assert do_load_balance(CLUSTERING, allocate_averagely, "g", "c0", None, ["c0"], None) is None
    assert do_load_balance(CLUSTERING, allocate_averagely, "g", "c0", MQS, None, None) is None
    assert do_load_balance(CLUSTERING, None, "g", "c0", MQS, ["c0"], None) is None
    assert do_load_balance(CLUSTERING, allocate_averagely, "g", "", MQS, ["c0"], None) is None


@pytest.mark.parametrize("strategy", ["AVG", "AVG_BY_CIRCLE"])
def test_alloc_properties_exhaustively_for_small_sizes(strategy: str) -> None:
    for q in range(1, 13):
        for c in range(1, 13):
            cids = [f"c{i}" for i in range(c)]
            assert not check_allocation(q, cids, None, assignments(strategy, q, c, None))
            for s in range(0, 13):
                got = assignments(strategy, q, c, s)
                assert not check_allocation(q, cids, s, got), (q, c, s)
                worst = max(sum(1 for qs in got.values() if k in qs or qs == [-1]) for k in range(q))
                assert (worst > 1 + s) == naive_bound_fails(q, c, s), (q, c, s)


def test_naive_bound_smallest_counterexample() -> None:
    assert naive_bound_fails(1, 3, 1) and sharing_degree(1, 3, 1, 0) == 3
    assert not naive_bound_fails(1, 2, 1)


def test_agreement_between_clients() -> None:
    cids = ["c2", "c10", "c1", "c7"]
    def compute(cid: str, view: list[str]) -> list[int]:
        return ids(list(do_load_balance(CLUSTERING, allocate_averagely, "g", cid, MQS, view, 1) or ()))
    assert not check_agreement(compute, cids)


def test_checker_catches_a_broken_strategy() -> None:
    def broken(group, cid, mqs, cids):  # loses the last queue
        return [m for m in allocate_averagely(group, cid, mqs, cids) if m.queue_id != len(mqs) - 1]
    cids = ["c0", "c1", "c2"]
    got = {c: sorted(ids(list(do_load_balance(CLUSTERING, broken, "g", c, MQS, cids, 1) or ()))) for c in cids}
    found = {v.property_id for v in check_allocation(8, cids, 1, got)}
    assert {"ALLOC-1", "ALLOC-2"} <= found

    def unsorted(cid: str, view: list[str]) -> list[int]:  # forgets to sort the client list
        return ids(allocate_averagely("g", cid, MQS, view))
    assert check_agreement(unsorted, cids)


def test_allocate_cli_json_and_errors() -> None:
    proc = subprocess.run([sys.executable, "-m", "popverify", "allocate", "--strategy", "AVG", "--queues", "8",
                           "--clients", "4", "--share", "1", "--json"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"assignments": {"c0": [0, 1, 2, 3], "c1": [2, 3, 4, 5],
                                                       "c2": [4, 5, 6, 7], "c3": [0, 1, 6, 7]}}
    for bad in (["--strategy", "HASH", "--queues", "1", "--clients", "1"],
                ["--strategy", "AVG", "--queues", "0", "--clients", "1"],
                ["--strategy", "AVG", "--queues", "1", "--clients", "0"],
                ["--strategy", "AVG", "--queues", "1", "--clients", "1", "--share", "-1"]):
        proc = subprocess.run([sys.executable, "-m", "popverify", "allocate", *bad], capture_output=True, text=True,
                              check=False)
        assert proc.returncode == 2 and "error" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(UsageError):
        assignments("AVG", 1, 1, -2)
