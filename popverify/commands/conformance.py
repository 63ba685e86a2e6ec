"""``popverify conformance``: differential checks of the model against RocketMQ's Java code."""

from __future__ import annotations

import argparse
import json
import sys

from popverify.args import bounded_int, comma_list
from popverify.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from popverify.conformance import CHECKS, VERSIONS, run_checks

    if args.live:
        raise UsageError("--live (a real NameServer and Broker on loopback) is not built yet; "
                         "see spec/conformance.md")
    names = args.checks or tuple(CHECKS)
    unknown = set(names) - set(CHECKS)
    if unknown:
        raise UsageError(f"unknown check(s) {sorted(unknown)}; known: {', '.join(CHECKS)}")
    versions = args.versions or tuple(VERSIONS)
    if set(versions) - set(VERSIONS):
        raise UsageError(f"unknown version(s) {sorted(set(versions) - set(VERSIONS))}; known: {', '.join(VERSIONS)}")
    results = run_checks(args.cases, args.seed, versions, names,
                         progress=lambda m: print(f"[conformance] {m}", file=sys.stderr, flush=True))
    unexplained = sum(r.disagreements - r.explained for r in results)
    if args.json:
        print(json.dumps({"checks": [r.to_json() for r in results], "unexplained": unexplained}, indent=2,
                         sort_keys=True))
    else:
        for r in results:
            print(f"{r.version:6} {r.name:28} {r.cases:6} cases  {r.disagreements} disagreements"
                  + (f" ({r.explained} explained)" if r.explained else ""))
            for ex in r.examples:
                print(f"    e.g. {json.dumps(ex, sort_keys=True)[:400]}")
    return 1 if unexplained else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("conformance", help="compare the model with RocketMQ's own Java classes")
    parser.add_argument("--cases", type=bounded_int(1, 1_000_000), default=300,
                        help="random cases per check and version (default 300; 1..1000000)")
    parser.add_argument("--seed", type=bounded_int(-2 ** 63, 2 ** 63 - 1), default=0)
    parser.add_argument("--checks", type=comma_list(None, "check"), default=None,
                        help="comma list: allocation, process_queue, formats")
    parser.add_argument("--versions", type=comma_list(None, "version"), default=None,
                        help="comma list of RocketMQ versions: 5.0.0, 5.3.3")
    parser.add_argument("--live", action="store_true", help="also run a real broker on loopback (not built yet)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
