"""``popverify shrink FILE``: minimise a failing ITF trace by delta debugging over its schedule."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from popverify.args import output_file
from popverify.errors import UsageError
from popverify.sim.scenario import run_scenario, run_spec
from popverify.sim.shrink import shrink_to_trace
from popverify.trace.itf import TraceError, read_trace


MAX_SHRINK_STEPS = 20_000  # README "Bounds"


def run(args: argparse.Namespace) -> int:
    try:
        spec = run_spec(read_trace(args.file))
    except TraceError as err:
        raise UsageError(str(err)) from err
    try:
        original = run_scenario(spec["profile"], spec["seed"], 0, mode=spec["mode"], config=spec["config"],
                                schedule=spec["schedule"], mutant=spec["mutant"])
    except ValueError as err:
        raise UsageError(f"trace cannot be replayed: {err}") from err
    pids = sorted({v.property_id for v in original.violations})
    if args.property:
        if args.property not in pids:
            raise UsageError(f"the trace does not violate {args.property}; it violates {pids or 'nothing'}")
        pids = [args.property]
    if not pids:
        raise UsageError("the trace violates no property: nothing to shrink")
    pid = pids[0]
    if len(spec["schedule"]) > MAX_SHRINK_STEPS:
        raise UsageError(f"the trace has {len(spec['schedule'])} steps; shrink takes at most {MAX_SHRINK_STEPS} "
                         "(each of up to 2000 candidate runs replays the schedule)")
    out = args.out if args.out is not None else Path(args.file).with_suffix(".min.json")
    try:
        # checked before the (long) shrink: a folder or unwritable path fails now, not at the end
        out = output_file(str(out))
    except argparse.ArgumentTypeError as err:
        raise UsageError(f"--out: {err}") from err
    try:
        minimal, _ = shrink_to_trace(spec["profile"], spec["mode"], spec["seed"], spec["config"], spec["schedule"],
                                     pid, out, mutant=spec["mutant"])
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}") from err
    report = {"property": pid, "original_steps": len(spec["schedule"]), "minimal_steps": len(minimal),
              "trace": str(out)}
    print(json.dumps(report, indent=2) if args.json else
          f"{pid}: {len(spec['schedule'])} → {len(minimal)} steps; minimal trace {out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("shrink", help="minimise a failing trace (delta debugging over its schedule)")
    parser.add_argument("file")
    parser.add_argument("--property", default=None, help="the property to keep violated (default: the first)")
    parser.add_argument("--out", type=output_file, default=None,
                        help="where to write the minimal trace (default FILE.min.json)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
