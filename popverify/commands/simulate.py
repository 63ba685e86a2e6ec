"""``popverify simulate``: one deterministic scenario of the reference model, as JSON."""

from __future__ import annotations

import argparse
import sys

import attrs

from popverify.args import bounded_int, output_file, profile_name
from popverify.errors import UsageError
from popverify.sim.scenario import ALL_POP_FAULTS, MODES, PUSH_FAULTS, ScenarioConfig, run_scenario
from reference.common.profile import LATEST_PROFILE, PROFILE_NAMES


def _parse_kinds(text: str | None, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    """``a,b`` → a tuple of names out of ``known`` (``all`` for every one); UsageError otherwise."""
    if not text:
        return ()
    if text == "all":
        return known
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known) or 'none'} or 'all'")
    return names


def parse_faults(text: str | None, mode: str = "pop") -> tuple[str, ...]:
    """``--faults restart,expire`` → a tuple of the mode's fault names (``all`` for every one)."""
    return _parse_kinds(text, PUSH_FAULTS if mode == "push" else ALL_POP_FAULTS, f"{mode} fault(s)")


def parse_opt_in(text: str | None, mode: str) -> tuple[str, ...]:
    """``--opt-in consume_begin,consume_end`` → the mode's opt-in action kinds to add (``all``)."""
    return _parse_kinds(text, MODES[mode].opt_in(), f"{mode} opt-in action(s)")


MAX_STEPS = 10_000_000  # README "Bounds"


def run(args: argparse.Namespace) -> int:
    # options of the other mode are errors, not silently ignored
    if args.mode == "pop" and (args.orderly or args.fail_percent is not None):
        raise UsageError("--orderly and --fail-percent are push-mode options (add --mode push)")
    if args.mode == "push" and args.buffer_merge is not None:
        raise UsageError("--buffer-merge is a POP-mode option (PopBufferMergeService); push mode has no buffer")
    try:
        base = ScenarioConfig.default_for(args.mode)
        config = attrs.evolve(base, queues=args.queues, consumers=args.consumers,
                              actions=base.actions + parse_opt_in(args.opt_in, args.mode),
                              enable_pop_buffer_merge=args.buffer_merge == "on",
                              faults=parse_faults(args.faults, args.mode), consume_orderly=args.orderly,
                              consume_fail_percent=20 if args.fail_percent is None else args.fail_percent)
        config.validate()
        result = run_scenario(args.profile, args.seed, args.steps, mode=args.mode, config=config,
                              mutant=args.mutant, record_trace=args.trace is not None)
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.trace is not None:
        from popverify.trace.itf import write_trace
        assert result.trace is not None
        try:
            write_trace(args.trace, result.trace)
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
    parser.add_argument("--profile", type=profile_name, default=LATEST_PROFILE,
                        help=", ".join(PROFILE_NAMES) + " (develop is an alias of v5.5; default %(default)s)")
    parser.add_argument("--mode", choices=tuple(MODES), default="pop")
    parser.add_argument("--seed", type=bounded_int(-2 ** 63, 2 ** 63 - 1), default=0, help="a 64-bit integer")
    parser.add_argument("--steps", type=bounded_int(0, MAX_STEPS), default=1000, help=f"0..{MAX_STEPS:,}")
    parser.add_argument("--queues", type=bounded_int(1, 64), default=2, help="1..64")
    parser.add_argument("--consumers", type=bounded_int(1, 64), default=2, help="1..64")
    parser.add_argument("--buffer-merge", choices=("on", "off"), default=None,
                        help="POP: enablePopBufferMerge (RocketMQ's default, off)")
    parser.add_argument("--faults", default=None,
                        help=f"comma list of faults, or 'all'; pop: {', '.join(ALL_POP_FAULTS)}; push: {', '.join(PUSH_FAULTS)}")
    parser.add_argument("--opt-in", default=None, metavar="LIST",
                        help="opt-in action kinds to add, or 'all' (push: produce_sized, consume_begin, consume_end)")
    parser.add_argument("--orderly", action="store_true", help="push: an orderly listener (ConsumeMessageOrderlyService)")
    parser.add_argument("--fail-percent", type=bounded_int(0, 100), default=None,
                        help="push: how often the listener asks to reconsume later, in percent (default 20)")
    parser.add_argument("--mutant", default=None, help="run a deliberately broken model variant (see popverify/mutants.py)")
    parser.add_argument("--trace", type=output_file, default=None, metavar="FILE", help="write the run as an ITF trace")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
