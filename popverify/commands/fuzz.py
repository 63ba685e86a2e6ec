"""``popverify fuzz``: a swarm fuzz campaign of the reference model on Spark."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from popverify.errors import UsageError
from popverify.sim.scenario import MODES


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from popverify.mutants import MUTANTS
    from spark_fuzz.campaign import campaign

    if args.runs < 1 or args.steps < 1 or args.rounds < 1:
        raise UsageError("--runs, --steps and --rounds must be >= 1")
    if args.compare_blind and args.rounds < 2:
        raise UsageError("--compare-blind needs --rounds >= 2 (one round is blind seeds already)")
    if args.mutant is not None and args.mutant not in MUTANTS:
        raise UsageError(f"unknown mutant {args.mutant!r}; known: {', '.join(MUTANTS)}")
    # an empty master (spark_fuzz/main.py under spark-submit) keeps the master spark-submit chose
    master = args.master or None
    with tqdm(total=args.runs, desc=f"fuzz {args.profile}/{args.mode}", unit="run", file=sys.stderr,
              disable=args.no_progress) as bar:
        summary = campaign(args.profile, args.mode, args.runs, args.steps, Path(args.out), master=master,
                           rounds=args.rounds, time_budget=args.time_budget, mutant=args.mutant,
                           progress=bar.update, compare_blind=args.compare_blind)
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print(f"{summary['runs']} runs, {summary['runs_per_s']} runs/s, {summary['steps_per_s']} steps/s; "
              f"report: {Path(args.out) / 'report.html'}")
        if "blind_baseline" in summary:
            blind = summary["blind_baseline"]["coverage"]
            print(f"  coverage: guided {summary['coverage']} vs blind {blind} points for the same budget "
                  f"({summary['coverage'] - blind:+d})")
        for v in summary["violations"]:  # by root-cause signature, unexplained first
            print(f"  {v.get('signature', v['property'])}{' UNEXPECTED' if v['unexpected'] else ''}: {v['runs']} "
                  f"run(s), first after {v.get('time_to_first_s')} s, minimal trace {v['trace']} "
                  f"({v['minimal_steps']} steps)")
    return 1 if any(v["unexpected"] for v in summary["violations"]) else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fuzz", help="run a distributed fuzz campaign on Spark (local mode by default)")
    parser.add_argument("--profile", choices=("v5.0", "develop"), required=True)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--mode", choices=tuple(MODES), default="pop")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default local[*])")
    parser.add_argument("--rounds", type=int, default=1, help="coverage-guided rounds (1 = blind seeds only)")
    parser.add_argument("--compare-blind", action="store_true",
                        help="also run blind seeds for the same budget (under OUT/blind-baseline) and compare")
    parser.add_argument("--time-budget", type=float, default=None, help="stop starting rounds after S seconds")
    parser.add_argument("--out", default="popverify-out/fuzz")
    parser.add_argument("--mutant", default=None, help="fuzz a deliberately broken model variant")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
