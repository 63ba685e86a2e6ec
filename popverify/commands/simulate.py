"""``popverify simulate``: one deterministic scenario of the reference model, as JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from popverify.errors import UsageError
from popverify.sim.scenario import FAULTS, MODES, ScenarioConfig, run_scenario
from reference.common.profile import PROFILE_NAMES


def parse_faults(text: str | None) -> tuple[str, ...]:
    """``--faults restart,expire`` → a tuple of known fault names (``all`` for every one)."""
    if not text:
        return ()
    if text == "all":
        return FAULTS
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise UsageError(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(FAULTS)} or 'all'")
    return names


def run(args: argparse.Namespace) -> int:
    if args.steps < 0 or args.steps > 10_000_000:
        raise UsageError("--steps must be between 0 and 10000000")
    try:
        config = ScenarioConfig(queues=args.queues, consumers=args.consumers,
                                enable_pop_buffer_merge=args.buffer_merge == "on",
                                faults=parse_faults(args.faults))
        config.validate()
        result = run_scenario(args.profile, args.seed, args.steps, mode=args.mode, config=config,
                              mutant=args.mutant, record_trace=args.trace is not None)
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.trace is not None:
        from popverify.trace.itf import write_trace
        assert result.trace is not None
        try:
            write_trace(Path(args.trace), result.trace)
        except OSError as err:
            raise UsageError(f"cannot write trace {args.trace}: {err.strerror or err}") from err
    if args.json:
        print(result.summary_json())
    else:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(result.counts.items()))
        print(f"{result.profile} {result.mode} seed {result.seed}: {result.steps} steps; {counts}")
        for v in result.violations:
            print(f"  {v.property_id} at step {v.step}: {v.message}")
        if not result.violations:
            print("  no violations")
    sys.stdout.flush()
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("simulate", help="run one deterministic scenario and check every property")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="develop")
    parser.add_argument("--mode", choices=tuple(MODES), default="pop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--queues", type=int, default=2)
    parser.add_argument("--consumers", type=int, default=2)
    parser.add_argument("--buffer-merge", choices=("on", "off"), default="off",
                        help="enablePopBufferMerge (RocketMQ's default is off)")
    parser.add_argument("--faults", default=None, help=f"comma list of {', '.join(FAULTS)}, or 'all'")
    parser.add_argument("--mutant", default=None, help="run a deliberately broken model variant (see popverify/mutants.py)")
    parser.add_argument("--trace", default=None, metavar="FILE", help="write the run as an ITF trace")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
