"""``popverify conformance``: differential checks of the model against RocketMQ's Java code."""

from __future__ import annotations

import argparse
import json
import sys

from popverify.args import bounded_int, comma_list
from popverify.errors import UsageError


def run_stateful(args: argparse.Namespace) -> int:
    """``--stateful``: random swarm schedules replayed in lockstep on model and Java."""
    import time

    from popverify.conformance.confirm import LOCKSTEP_FAULTS, MAX_STATEFUL_STEPS, OPT_IN_FAULTS, stateful_differential
    from popverify.conformance.lockstep import RELEASES, LockstepClient

    if not 1 <= args.cases <= 100_000:
        raise UsageError("--cases must be in 1..100000")
    if not 1 <= args.steps <= MAX_STATEFUL_STEPS:
        raise UsageError(f"--steps must be in 1..{MAX_STATEFUL_STEPS}")
    if args.checks:
        raise UsageError("--checks does not apply to --stateful")
    by_release = {v: p for p, v in RELEASES.items()}
    versions = args.versions or tuple(RELEASES.values())
    if set(versions) - set(by_release):
        raise UsageError(f"unknown version(s) for --stateful; known: {', '.join(by_release)}")
    reports = []
    for version in versions:
        # hundreds of schedules in one JVM: C2 pays for its slower start (lockstep_build)
        with LockstepClient(version, full_jit=args.cases >= 25) as client:
            reports.append(stateful_differential(
                by_release[version], args.cases, args.seed, args.steps, client, interleave=args.interleave,
                progress=(lambda m: print(f"[stateful] {m}", file=sys.stderr, flush=True)) if args.progress
                else (lambda _m: None), clock=time.monotonic,
                faults=LOCKSTEP_FAULTS + (OPT_IN_FAULTS if args.late_faults else ()), orderly=args.orderly,
                start_offsets=args.start_offsets))
    if args.json:
        out = []
        for r in reports:
            data = r.to_json()
            data.pop("seconds")  # wall times: not part of the byte-stable result
            data.pop("model_seconds")
            out.append(data)
        print(json.dumps({"stateful": out, "diverge": sum(r.diverge for r in reports)}, indent=2, sort_keys=True))
    else:
        for r in reports:
            print(f"{r.release:6} {r.profile:8} {r.cases} schedules: {r.agree} agree, {r.diverge} diverge, "
                  f"{r.out_of_scope} out of scope; {r.steps} steps compared in {r.seconds:.1f} s "
                  f"({r.cases / r.seconds if r.seconds else 0:.2f} schedules/s in lockstep; the model alone "
                  f"{r.cases / r.model_seconds if r.model_seconds else 0:.1f} schedules/s)")
            for cls, entry in sorted(r.classes.items()):
                ex = entry["example"]
                print(f"    {entry['count']:4} x {cls}   e.g. seed {ex['seed']} step {ex['step']} {ex['action']}: "
                      f"model {json.dumps(ex['model'], sort_keys=True)[:160]} java "
                      f"{json.dumps(ex['java'], sort_keys=True)[:160]}")
            if r.put_failures:
                print("    store puts refused: " + ", ".join(f"{site} {n}" for site, n in sorted(r.put_failures.items())))
            for reason, n in sorted(r.out_of_scope_reasons.items()):
                print(f"    {n:4} x out of scope: {reason}")
    return 1 if any(r.diverge for r in reports) else 0


def run(args: argparse.Namespace) -> int:
    from popverify.conformance import CHECKS, VERSIONS, run_checks

    if args.stateful:
        return run_stateful(args)
    if args.live:
        raise UsageError("--live is `popverify live --release 5.5.0` (a real NameServer, Broker and Proxy on "
                         "loopback, real POP clients, faults, the history checker); see spec/live.md")
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
                        help="comma list of RocketMQ versions: 5.0.0, 5.5.0")
    parser.add_argument("--live", action="store_true", help="points to `popverify live` (a real broker on loopback)")
    parser.add_argument("--stateful", action="store_true",
                        help="random POP schedules replayed in lockstep on the model and on RocketMQ's broker "
                             "classes (versions 5.0.0, 5.5.0); --cases schedules per version (1..100000)")
    parser.add_argument("--steps", type=int, default=50, help="--stateful: actions per schedule (1..500, default 50)")
    parser.add_argument("--interleave", action="store_true",
                        help="--stateful: let other actions run inside a POP (a stalled broker thread)")
    parser.add_argument("--late-faults", action="store_true",
                        help="--stateful: also draw the faults store_put_fail and scan_stall (refused store puts, a slow buffer scan)")
    parser.add_argument("--start-offsets", action="store_true",
                        help="--stateful: half the cases start every queue past offset 0 (start_offset drawn "
                             "across 0..Long.MAX_VALUE/20 - 2^20 with boundary bias, after every other field)")
    parser.add_argument("--orderly", action="store_true",
                        help="--stateful: the consumers pop orderly (order=true) and ack in offset order")
    parser.add_argument("--progress", action="store_true", help="--stateful: one line per schedule on stderr")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
