"""``popverify confirm TRACE...``: replay POP and push traces step by step on the model and on
RocketMQ's real broker classes (the lockstep harness), compare every observable.

Exit 0: every trace agrees; 1: a trace diverges or needs something out of the harness's
scope (never reported as agreement); 2: bad input (unreadable, corrupt, foreign or a mutant push
trace, unknown profile or version), checked for every trace before any JVM starts.

``--findings``: replay the known findings' minimal traces (spec/findings/traces/, one per
finding and release; popverify/findings/finding_traces.py) on their releases and print the
verdict table; ``--update-spec`` first rewrites the traces from the model, then writes
spec/findings/verdicts.json and the tables in spec/findings/README.md and spec/properties.md.
Exit 0 when every verdict is what the model predicts (reproduced where the model violates
the property, agrees-and-holds where it does not, or out of scope / not run with the reason);
1 when a replay diverges (a model question), a violation is not reproduced, or the harness
is unavailable.
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
    if spec["mode"] not in ("pop", "push"):
        raise UsageError(f"{path} is a {spec['mode']} trace; confirm replays POP and push traces only")
    if spec["mode"] == "push" and spec["mutant"] is not None:
        raise UsageError(f"{path} is the push counterexample of mutant {spec['mutant']!r}; the mutation exists "
                         f"only in the model")
    if spec["mode"] == "push":
        from popverify.sim.push_driver import PUSH_MODE_ACTIONS

        specs = {a.name: a for a in PUSH_MODE_ACTIONS}
        for action in spec["schedule"]:
            if action.kind in specs:
                try:
                    specs[action.kind].check(action.args)
                except ValueError as err:  # checked here, before any JVM starts
                    raise UsageError(f"{path}: {err}") from err
    if spec["profile"] not in RELEASES:
        raise UsageError(f"{path}: profile {spec['profile']!r} has no RocketMQ release; known: {', '.join(RELEASES)}")
    if not spec["schedule"]:
        raise UsageError(f"{path} has an empty schedule: nothing to confirm")
    return spec


def _findings(args: argparse.Namespace) -> int:
    """``--findings [--update-spec]``: the verdict table of F1..F7 on every release."""
    import sys

    from popverify.findings import finding_traces as ft
    from popverify.findings.confirmation import Confirmer

    if args.traces or args.version is not None:
        raise UsageError("--findings replays the checked-in finding traces: give no TRACE and no --version")
    if args.update_spec:
        ft.write_traces()
    with Confirmer(None, progress=lambda m: print(f"[confirm] {m}", file=sys.stderr, flush=True)) as confirmer:
        try:
            rows = ft.confirm_findings(confirmer, progress=lambda m: print(f"[confirm] {m}", file=sys.stderr,
                                                                          flush=True))
        except ValueError as err:
            raise UsageError(str(err)) from err
    if args.update_spec:
        ft.update_spec(rows)
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print(ft.table(rows))
    bad = [r for r in rows if r["confirmation"]["model_question"] or r["confirmation"]["status"] == "unavailable"
           or (r["confirmation"]["status"] in ("reproduced", "holds") and
               (r["confirmation"]["status"] == "reproduced") != r["model_violates"])]
    for r in bad:
        print(f"[confirm] NOT AS THE MODEL SAYS: {r['finding']} on {r['release']}: {r['confirmation']['text']}",
              file=sys.stderr)
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    if args.findings:
        return _findings(args)
    if args.update_spec:
        raise UsageError("--update-spec goes with --findings")
    if not args.traces:
        raise UsageError("give TRACE files to replay, or --findings")
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
            if spec["mode"] == "push":
                from popverify.conformance.push_lockstep import run_push_lockstep

                verdict = run_push_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"],
                                            clients[release], release)
            else:
                verdict = run_lockstep(spec["profile"], spec["seed"], spec["config"], spec["schedule"],
                                       clients[release], spec["mutant"], release=release)
            results.append((path, spec["mode"], verdict))
    finally:
        for client in clients.values():
            client.close()
    def finding(mode: str, v: Any) -> str | None:
        if mode == "push" and v.model_violations and v.status == "agrees":
            # the push replay runs the model's client against Java's answers (spec/conformance.md)
            return (f"every broker answer the model's push consumers acted on agrees with rocketmq-broker "
                    f"{v.release}; the client side is the model's (not run on Java)")
        return v.finding

    if args.json:
        print(json.dumps([{"file": path, "mode": mode, **v.to_json(), "finding": finding(mode, v)}
                          for path, mode, v in results], sort_keys=True, indent=2))
    else:
        for path, mode, v in results:
            print(f"{path}: {v.headline()}")
            if v.status == "diverges":
                print(f"  model: {json.dumps(v.model, sort_keys=True)}")
                print(f"  java:  {json.dumps(v.java, sort_keys=True)}")
            if finding(mode, v) is not None:
                print(f"  {', '.join(v.model_violations)}: {finding(mode, v)}")
    return 0 if all(v.status == "agrees" for _, _, v in results) else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("confirm", help="replay POP traces on the model and on RocketMQ's real broker, "
                                            "step by step")
    parser.add_argument("traces", nargs="*", metavar="TRACE", help="ITF traces written by simulate --trace")
    parser.add_argument("--version", default=None,
                        help="RocketMQ release to compare with (5.0.0 or 5.5.0; default: the trace profile's)")
    parser.add_argument("--findings", action="store_true",
                        help="replay the known findings' minimal traces (spec/findings/traces) on every release")
    parser.add_argument("--update-spec", action="store_true",
                        help="with --findings: rewrite the traces from the model, then spec/findings/verdicts.json and "
                             "the verdict tables of spec/findings/README.md and spec/properties.md")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
