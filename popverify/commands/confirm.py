"""``popverify confirm TRACE...``: replay POP traces step by step on the model and on
RocketMQ's real broker classes (the lockstep harness), compare every observable.

Exit 0: every trace agrees; 1: a trace diverges or needs something out of the harness's
scope (never reported as agreement); 2: bad input (unreadable, corrupt, foreign or push
trace, unknown profile or version), checked for every trace before any JVM starts.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from popverify.errors import UsageError


def _load(path: str) -> dict[str, Any]:
    from popverify.conformance.lockstep import RELEASES
    from popverify.sim.scenario import run_spec
    from popverify.trace.itf import TraceError, read_trace

    try:
        spec = run_spec(read_trace(path))
    except TraceError as err:
        raise UsageError(str(err)) from err
    if spec["mode"] != "pop":
        raise UsageError(f"{path} is a {spec['mode']} trace; confirm replays POP traces only "
                         f"(the push path has no lockstep harness yet)")
    if spec["profile"] not in RELEASES:
        raise UsageError(f"{path}: profile {spec['profile']!r} has no RocketMQ release; known: {', '.join(RELEASES)}")
    if not spec["schedule"]:
        raise UsageError(f"{path} has an empty schedule: nothing to confirm")
    return spec


def run(args: argparse.Namespace) -> int:
    from popverify.conformance.confirm import run_lockstep
    from popverify.conformance.lockstep import RELEASES, LockstepClient
    from popverify.mutants import MUTANTS

    if args.version is not None and args.version not in RELEASES.values():
        raise UsageError(f"unknown version {args.version!r}; known: {', '.join(RELEASES.values())}")
    specs = [(path, _load(path)) for path in args.traces]
    for path, spec in specs:
        if spec["mutant"] is not None and spec["mutant"] not in MUTANTS:
            raise UsageError(f"{path}: unknown mutant {spec['mutant']!r}")
    clients: dict[str, LockstepClient] = {}
    results = []
    try:
        for path, spec in specs:
            release = args.version or RELEASES[spec["profile"]]
            if release not in clients:
                clients[release] = LockstepClient(release)
            verdict = run_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"], clients[release],
                                   spec["mutant"], release=release)
            results.append((path, verdict))
    finally:
        for client in clients.values():
            client.close()
    if args.json:
        print(json.dumps([{"file": path, **v.to_json()} for path, v in results], sort_keys=True, indent=2))
    else:
        for path, v in results:
            print(f"{path}: {v.headline()}")
            if v.status == "diverges":
                print(f"  model: {json.dumps(v.model, sort_keys=True)}")
                print(f"  java:  {json.dumps(v.java, sort_keys=True)}")
            if v.finding is not None:
                print(f"  {', '.join(v.model_violations)}: {v.finding}")
    return 0 if all(v.status == "agrees" for _, v in results) else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("confirm", help="replay POP traces on the model and on RocketMQ's real broker, "
                                            "step by step")
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="ITF traces written by simulate --trace")
    parser.add_argument("--version", default=None,
                        help="RocketMQ release to compare with (5.0.0 or 5.5.0; default: the trace profile's)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
