"""``popverify prove [NAME...]``: run the z3 proofs about the reference model's rules."""

from __future__ import annotations

import argparse
import json

from popverify.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from proofs.allocation import naive_bound_witness
    from proofs.catalog import ALL

    unknown = [n for n in args.names if n not in ALL]
    if unknown:
        raise UsageError(f"unknown proof(s) {', '.join(unknown)}; known: {', '.join(ALL)}")
    names = args.names or list(ALL)
    results = [ALL[n].run() for n in names]
    if args.json:
        out = {"proofs": [r.to_json() for r in results]}
        if "alloc4pop-naive-bound-exact" in names:
            out["naive_bound_witness"] = naive_bound_witness()
        print(json.dumps(out, indent=2))
    else:
        for r in results:
            proof = ALL[r.name]
            print(f"  {r.result:<8} {r.seconds:6.2f}s  {r.name}: {proof.statement} [{proof.bound}]")
            if r.counterexample:
                print(f"           counterexample: {r.counterexample}")
        if "alloc4pop-naive-bound-exact" in names:
            print(f"  witness that 'at most 1 + S clients per queue' fails with sharing on: {naive_bound_witness()}")
    return 0 if all(r.result == "proved" for r in results) else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("prove", help="run the z3 proofs (allocation, checkpoint encoding, offsets)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="proofs to run (default: all)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
