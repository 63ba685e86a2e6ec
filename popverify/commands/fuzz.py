"""``popverify fuzz``: a swarm fuzz campaign of the reference model, on Spark or on the plain loop."""

from __future__ import annotations

import argparse
import json
import sys

from popverify.args import bounded_float, bounded_int, output_dir, profile_name, spark_master
from popverify.errors import UsageError
from popverify.fuzz import ENGINES
from popverify.sim.scenario import MODES

# Upper bounds (README "Bounds"): beyond them a campaign would run for days on one machine;
# split it into resumed campaigns instead.
MAX_RUNS = 10_000_000
MAX_STEPS = 100_000
MAX_ROUNDS = 10_000
MAX_TIME_BUDGET_S = 30 * 24 * 3600.0


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from popverify.fuzz.campaign import campaign
    from popverify.fuzz.executors import executor
    from popverify.mutants import MUTANTS, unknown

    if args.rounds > args.runs:
        raise UsageError(f"--rounds {args.rounds} is more than --runs {args.runs}: every round needs a run")
    if args.compare_blind and args.rounds < 2:
        raise UsageError("--compare-blind needs --rounds >= 2 (one round is blind seeds already)")
    if args.mutant is not None and args.mutant not in MUTANTS:
        raise UsageError(unknown(args.mutant))
    # an empty master (spark_fuzz/main.py under spark-submit) keeps the master spark-submit chose
    master = args.master or None
    runner = executor(args.engine, master)
    from popverify.findings.confirmation import Confirmer

    # every signature's minimal POP counterexample is replayed on its release's lockstep
    # harness (popverify/findings/confirmation.py); verdicts cached in the campaign folder
    confirmer = None if args.no_confirm else Confirmer(
        args.out / "confirm-cache", progress=lambda m: None if args.no_progress else print(m, file=sys.stderr))
    try:
        with tqdm(total=args.runs, desc=f"fuzz {args.profile}/{args.mode}", unit="run", file=sys.stderr,
                  disable=args.no_progress) as bar:
            summary = campaign(args.profile, args.mode, args.runs, args.steps, args.out, runner,
                               rounds=args.rounds, time_budget=args.time_budget, mutant=args.mutant,
                               progress=bar.update, compare_blind=args.compare_blind, confirmer=confirmer,
                               confirm_skip="--no-confirm")
    finally:
        if confirmer is not None:
            confirmer.close()
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print(f"{summary['runs']} runs, {summary['runs_per_s']} runs/s, {summary['steps_per_s']} steps/s; "
              f"report: {args.out / 'report.html'}")
        if "blind_baseline" in summary:
            blind = summary["blind_baseline"]["coverage"]
            print(f"  coverage: guided {summary['coverage']} vs blind {blind} points for the same budget "
                  f"({summary['coverage'] - blind:+d})")
        from popverify.fuzz.domain import domain_line
        from popverify.sim.domain import table_of
        print(f"  {domain_line(summary['domain'])}")
        print("\n".join("  " + line for line in table_of(summary["domain"]).splitlines()))
        for v in summary["violations"]:  # by root-cause signature, unexplained first
            print(f"  {v.get('signature', v['property'])}{' UNEXPECTED' if v['unexpected'] else ''}: {v['runs']} "
                  f"run(s), first after {v.get('time_to_first_s')} s, minimal trace {v['trace']} "
                  f"({v['minimal_steps']} steps)")
            c = v.get("confirmation") or {}
            print(f"    on Java: {'MODEL QUESTION: ' if c.get('model_question') else ''}{c.get('text')}")
    questions = summary["confirmation"]["model_questions"]
    unavailable = summary["confirmation"].get("unavailable") or {}
    for line in questions:  # a counterexample Java does not reproduce: the model is in question
        print(f"[fuzz] MODEL QUESTION: {line}", file=sys.stderr)
    for release, why in sorted(unavailable.items()):
        print(f"[fuzz] confirmation on rocketmq-broker {release} unavailable: {why} (--no-confirm to skip it)",
              file=sys.stderr)
    return 1 if any(v["unexpected"] for v in summary["violations"]) or questions or unavailable else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fuzz", help="run a swarm fuzz campaign on Spark (local mode by default) or the plain loop")
    parser.add_argument("--profile", type=profile_name, required=True,
                        help="v5.0 or v5.5 (develop is an alias of v5.5)")
    parser.add_argument("--runs", type=bounded_int(1, MAX_RUNS), default=1000,
                        help=f"runs in the campaign (1..{MAX_RUNS:,}; a resume counts the runs already done)")
    parser.add_argument("--mode", choices=tuple(MODES), default="pop")
    parser.add_argument("--steps", type=bounded_int(1, MAX_STEPS), default=500, help=f"steps per run (1..{MAX_STEPS:,})")
    parser.add_argument("--engine", choices=ENGINES, default="spark",
                        help="run the campaign on Spark (default) or on the plain Python loop (same plan, same rows)")
    parser.add_argument("--master", type=spark_master, default="local[*]",
                        help="Spark master URL (default local[*]; local masters get 4 attempts per task)")
    parser.add_argument("--rounds", type=bounded_int(1, MAX_ROUNDS), default=1,
                        help=f"coverage-guided rounds (1 = blind seeds only; 1..{MAX_ROUNDS})")
    parser.add_argument("--compare-blind", action="store_true",
                        help="also run blind seeds for the same budget (under OUT/blind-baseline) and compare")
    parser.add_argument("--time-budget", type=bounded_float(0, MAX_TIME_BUDGET_S, low_open=True), default=None,
                        help="stop starting rounds after S seconds (0 < S <= 30 days)")
    parser.add_argument("--out", type=output_dir, default="popverify-out/fuzz",
                        help="campaign folder; a resume must use the same --profile/--mode/--steps/--mutant/--rounds")
    parser.add_argument("--mutant", default=None, help="fuzz a deliberately broken model variant")
    parser.add_argument("--no-confirm", action="store_true",
                        help="do not replay the minimal POP counterexamples on RocketMQ's broker classes (lockstep "
                             "harness); each is reported 'skipped (--no-confirm)'")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
