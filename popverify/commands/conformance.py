"""``popverify conformance``: differential checks of the model against RocketMQ's Java code."""

from __future__ import annotations

import argparse
import json
import sys

from popverify.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from popverify.conformance import CHECKS, VERSIONS, run_checks

    if args.live:
        raise UsageError("--live is `popverify live --release 5.5.0` (a real NameServer, Broker and Proxy on "
                         "loopback, real POP clients, faults, the history checker); see spec/live.md")
    if args.cases < 1:
        raise UsageError("--cases must be >= 1")
    names = tuple(n for n in (args.checks or ",".join(CHECKS)).split(",") if n)
    unknown = set(names) - set(CHECKS)
    if unknown:
        raise UsageError(f"unknown check(s) {sorted(unknown)}; known: {', '.join(CHECKS)}")
    versions = tuple(v for v in (args.versions or ",".join(VERSIONS)).split(",") if v)
    if set(versions) - set(VERSIONS):
        raise UsageError(f"unknown version(s); known: {', '.join(VERSIONS)}")
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
    parser.add_argument("--cases", type=int, default=300, help="random cases per check and version (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checks", default=None, help="comma list: allocation, process_queue, formats")
    parser.add_argument("--versions", default=None, help="comma list of RocketMQ versions: 5.0.0, 5.3.3")
    parser.add_argument("--live", action="store_true", help="points to `popverify live` (a real broker on loopback)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
