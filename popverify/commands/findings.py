"""``popverify findings DIR``: triage a fuzz or verify output folder by root-cause signature."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from popverify.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from popverify.findings.triage import triage

    folder = Path(args.dir)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder")
    try:
        rows, compared = triage(folder)
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.json:
        print(json.dumps({"folder": str(folder), "compared_with_previous": compared,
                          "signatures": [r.to_json() for r in rows]}, indent=2, sort_keys=True))
        return 0
    if not rows:
        print(f"{folder}: no violations")
        return 0
    print(f"{folder}: {len(rows)} signature(s)" + ("" if compared else " (no previous campaign here: nothing marked new)"))
    for r in rows:
        mark = "NEW " if r.new else "    "
        status = "UNEXPECTED" if r.unexpected else "expected"
        first = f"round {r.first_round}, {r.time_to_first_s} s" if r.first_round is not None else f"{r.time_to_first_s} s"
        print(f"{mark}{r.campaign}  {r.signature}  [{status}]  {r.runs} run(s); first seen {first}; "
              f"shortest {r.minimal_steps} steps: {r.trace}")
        print(textwrap.indent(textwrap.fill(r.message, 100), "      "))
        java = ("MODEL QUESTION: " if r.model_question else "") + r.confirmation
        print(textwrap.indent(textwrap.fill(f"on Java: {java}", 100), "      "))
        print(textwrap.indent(textwrap.fill(r.explanation, 100), "      "))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("findings", help="triage a fuzz or verify output folder by root-cause signature")
    parser.add_argument("dir", help="a `popverify fuzz --out` or `popverify verify --out` folder")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
