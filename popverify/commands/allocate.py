"""``popverify allocate``: the assignment doLoadBalance computes for clients c0..c{C-1}."""

from __future__ import annotations

import argparse
import json

from popverify.args import bounded_int
from popverify.errors import UsageError
from reference.broker.query_assignment import CLUSTERING, do_load_balance
from reference.client.allocation import STRATEGIES
from reference.common.message_queue import MessageQueue

MAX_QUEUES = 1_024   # README "Bounds": the answer is printed per client, and each client's
MAX_CLIENTS = 128    # allocation walks every queue
TOPIC = "TopicTest"
BROKER = "broker-a"


def assignments(strategy: str, queues: int, clients: int, share: int | None) -> dict[str, list[int]]:
    """{client: sorted distinct queue ids (-1 = all queues)} as doLoadBalance returns them."""
    if strategy not in ("AVG", "AVG_BY_CIRCLE"):
        raise UsageError(f"unknown strategy {strategy!r}; choose AVG or AVG_BY_CIRCLE")
    if not 1 <= queues <= MAX_QUEUES or not 1 <= clients <= MAX_CLIENTS:
        raise UsageError(f"--queues must be in 1..{MAX_QUEUES} and --clients in 1..{MAX_CLIENTS}")
    if share is not None and not 0 <= share <= MAX_CLIENTS:
        raise UsageError(f"--share must be in 0..{MAX_CLIENTS}")
    mqs = [MessageQueue(TOPIC, BROKER, q) for q in range(queues)]
    cids = [f"c{i}" for i in range(clients)]
    out: dict[str, list[int]] = {}
    for cid in cids:
        assigned = do_load_balance(CLUSTERING, STRATEGIES[strategy], "GID", cid, mqs, cids, share)
        out[cid] = sorted({mq.queue_id for mq in assigned or ()})
    return out


def run(args: argparse.Namespace) -> int:
    result = assignments(args.strategy, args.queues, args.clients, args.share)
    if args.json:
        print(json.dumps({"assignments": result}, sort_keys=False))
    else:
        mode = f"POP, popShareQueueNum {args.share}" if args.share is not None else "plain"
        print(f"{args.strategy} ({mode}), {args.queues} queues, {args.clients} clients:")
        for cid, qs in result.items():
            print(f"  {cid}: {'all queues (-1)' if qs == [-1] else qs}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("allocate", help="show the broker-side rebalance (allocate4Pop) result")
    parser.add_argument("--strategy", required=True, help="AVG or AVG_BY_CIRCLE")
    parser.add_argument("--queues", type=bounded_int(1, MAX_QUEUES), required=True, help=f"1..{MAX_QUEUES}")
    parser.add_argument("--clients", type=bounded_int(1, MAX_CLIENTS), required=True, help=f"1..{MAX_CLIENTS}")
    parser.add_argument("--share", type=bounded_int(0, MAX_CLIENTS), default=None,
                        help=f"popShareQueueNum (POP mode), 0..{MAX_CLIENTS}")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
