"""``popverify replay FILE``: re-execute an ITF trace and confirm the same outcome."""

from __future__ import annotations

import argparse
import json

from popverify.errors import UsageError
from popverify.sim.scenario import run_scenario, run_spec
from popverify.trace.itf import TraceError, decode, read_trace, same_value


def replay(path: str) -> tuple[bool, dict, dict]:
    """Re-run the trace at ``path``; (same outcome?, recorded summary, replayed summary).
    States and outcome are compared with their types (``1`` is not ``true`` nor ``1.0``)."""
    doc = read_trace(path)
    spec = run_spec(doc)
    recorded = doc["#meta"]["popverify"].get("outcome")
    if recorded is not None and not isinstance(recorded, dict):
        raise TraceError("trace outcome is not an object")
    try:
        result = run_scenario(spec["profile"], spec["seed"], len(spec["schedule"]), mode=spec["mode"],
                              config=spec["config"], schedule=spec["schedule"], mutant=spec["mutant"],
                              record_trace=True)
    except ValueError as err:
        raise TraceError(f"trace cannot be replayed: {err}") from err
    assert result.trace is not None
    same_states = same_value(decode(result.trace["states"]), doc["states"])
    return same_states and same_value(result.summary(), recorded), recorded or {}, result.summary()


def run(args: argparse.Namespace) -> int:
    try:
        same, recorded, replayed = replay(args.file)
    except TraceError as err:
        raise UsageError(str(err)) from err
    if args.json:
        print(json.dumps({"file": args.file, "identical": same, "violations": replayed["violations"]},
                         sort_keys=True, indent=2))
    else:
        print(f"{args.file}: {'same outcome' if same else 'DIFFERENT outcome'}; "
              f"{len(replayed['violations'])} violation(s)")
        for v in replayed["violations"]:
            print(f"  {v['property']} at step {v['step']}: {v['message']}")
    return 0 if same else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("replay", help="re-execute an ITF trace and confirm the same outcome")
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
