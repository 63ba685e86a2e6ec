"""``popverify tlc``: model-check the TLA+ specs with TLC and report states, depth and time."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from popverify.args import bounded_float, bounded_int, output_dir
from popverify.errors import UsageError
from popverify.tlc.runner import MAX_TIMEOUT_S, MAX_WORKERS


def run(args: argparse.Namespace) -> int:
    from popverify.tlc.runner import TLAPLUS, counterexample_itf, models, run_model

    if args.validate:
        if args.models or args.update_readme:
            raise UsageError("--validate takes trace files only (no models, no --update-readme)")
        return _validate(args)

    tier = "deep" if args.deep else "small" if args.small else "default"
    if args.models:
        cfgs = []
        for name in args.models:
            path = Path(name)
            if not path.exists():
                path = TLAPLUS / (name if name.endswith(".cfg") else name + ".cfg")
            if not path.exists() or path.suffix != ".cfg":
                raise UsageError(f"no model file {name!r} (give a tlaplus/MC*.cfg path or name)")
            cfgs.append(path)
    else:
        cfgs = models(tier)
    if not cfgs:
        raise UsageError(f"no {tier} models under {TLAPLUS}: nothing to check")
    from popverify.findings.confirmation import tlc_confirmation

    results = [run_model(cfg, workers=args.workers, timeout=args.timeout) for cfg in cfgs]
    # a counterexample's confirmation on Java: TLC's abstract states have no concrete schedule;
    # a negative check that names its finding points at that finding's confirmed concrete trace
    confirmations = {r.model: tlc_confirmation(r.model, cfg.read_text(encoding="utf-8"), r.violated)
                     for cfg, r in zip(cfgs, results) if r.trace}
    failed = False
    for r in results:
        if r.result in ("violation", "unexpected-pass", "error", "timeout"):
            failed = True
        if r.trace:
            out = args.out
            path = out / f"{r.model}.itf.json"
            doc = counterexample_itf(r)
            doc["#meta"]["confirmation"] = confirmations[r.model].text
            try:
                out.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            except OSError as err:
                raise UsageError(f"cannot save the counterexample under {out}: {err.strerror or err}") from err
    if args.json:
        print(json.dumps({"models": [{**r.to_json(), **({"confirmation": confirmations[r.model].text}
                                                        if r.model in confirmations else {})} for r in results]},
                         indent=2))
    else:
        for r in results:
            print(f"  {r.result:<18} {r.model:<28} distinct {_figure(r.distinct_states)}, depth {_figure(r.depth)}, "
                  f"{r.seconds:.1f}s")
            if r.trace:
                print(f"    {r.violated} violated; counterexample (saved under {args.out}):")
                for i, state in enumerate(r.trace):
                    print(f"    step {i}: " + ", ".join(f"{k} = {v}" for k, v in sorted(state.items())))
                print(f"    on Java: {confirmations[r.model].text}")
            if r.result in ("error", "timeout"):
                print("    " + r.output_tail.replace("\n", "\n    "))
    if args.update_readme:
        _update_readme(TLAPLUS / "README.md", results)
    return 1 if failed else 0


def _validate(args: argparse.Namespace) -> int:
    """``--validate TRACE...``: is each run a behaviour of its spec? Exit 1 when one is not."""
    from popverify.tlc.trace_validation import validate_trace
    from popverify.trace.itf import TraceError, read_trace

    from popverify.commands.replay import replay

    results = []
    for path in args.validate:
        try:
            # Only a trace its own run reproduces is validated: its observed states are then the
            # model's, not an edited or corrupt file's (which the projection cannot read).
            check_observed(read_trace(path))
            identical, _, _ = replay(str(path))
            if not identical:
                raise TraceError("its recorded states are not what its run produces (an edited or corrupt "
                                 "trace; `popverify replay` shows the difference)")
            results.append(validate_trace(Path(path), workers=args.workers))
        except TraceError as err:
            raise UsageError(f"cannot validate {path}: {err}") from err
    if args.json:
        print(json.dumps({"traces": [r.to_json() for r in results]}, indent=2))
    else:
        for r in results:
            verdict = "valid" if r.valid else "NOT a behaviour"
            print(f"  {verdict:<16} {r.trace}: {r.spec}, profile {r.profile}")
            for q in r.queues:
                line = (f"    queue {q.queue}: {q.replayed}/{q.entries} spec steps from {q.python_steps} "
                        f"Python steps, {q.seconds:.1f}s")
                print(line + (f" -- {q.failed_at}" if q.failed_at else ""))
                if q.error:
                    print("      TLC gave no verdict:\n      " + q.error.replace("\n", "\n      "))
    return 0 if all(r.valid for r in results) else 1


def check_observed(doc: dict) -> None:
    """TraceError unless every ``observed`` state (and ``initial_observed``) is an object whose
    values are integers, strings, booleans or lists/objects of them: what the trace
    validation turns into TLA+ values."""
    from popverify.trace.itf import TraceError

    def plain(value, depth: int = 0) -> bool:
        if depth > 8:
            return False
        if isinstance(value, (bool, int, str)):
            return not isinstance(value, int) or isinstance(value, bool) or abs(value) < 2 ** 63
        if isinstance(value, list):
            return all(plain(v, depth + 1) for v in value)
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v, depth + 1) for k, v in value.items())
        return False

    meta = doc["#meta"]["popverify"]
    observed = [meta["initial_observed"]] if "initial_observed" in meta else []
    for i, state in enumerate(doc["states"]):
        if not isinstance(state, dict):
            raise TraceError(f"state {i} is not an object")
        if "observed" in state:
            observed.append(state["observed"])
    for i, value in enumerate(observed):
        if not isinstance(value, dict) or not plain(value):
            raise TraceError(f"observed state {i} is not an object of plain values")


def _figure(value: int | None) -> str:
    """A state count or depth; TLC prints none when it stops in the initial states."""
    return "-" if value is None else str(value)


def _update_readme(readme: Path, results) -> None:
    """Replace the rows of the models just run in the generated results table of
    tlaplus/README.md; rows of other models stay (a deep model need not be re-run with every
    change to a small one), and new models are appended."""
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    text = readme.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise UsageError(f"{readme} has no {start} ... {end} block")
    head, rest = text.split(start, 1)
    table, tail = rest.split(end, 1)
    rows = [line for line in table.strip().splitlines()[2:] if line.startswith("| ")]
    fresh = {r.model: f"| {r.model} | {r.result} | {_figure(r.distinct_states)} | {_figure(r.depth)} | {r.seconds:.1f} |"
             for r in results}
    merged = [fresh.pop(row.split("|")[1].strip(), row) for row in rows] + list(fresh.values())
    header = ["| model | outcome | distinct states | depth | seconds |", "| --- | --- | --- | --- | --- |"]
    readme.write_text(head + start + "\n" + "\n".join(header + merged) + "\n" + end + tail, encoding="utf-8")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("tlc", help="model-check the TLA+ specs with TLC")
    parser.add_argument("models", nargs="*", metavar="MODEL", help="tlaplus/MC*.cfg files or names (default: a tier)")
    tier = parser.add_mutually_exclusive_group()
    tier.add_argument("--small", action="store_true", help="the CI configs")
    tier.add_argument("--deep", action="store_true", help="the deep configs")
    parser.add_argument("--workers", type=bounded_int(1, MAX_WORKERS), default=2, help=f"TLC worker threads (1..{MAX_WORKERS})")
    parser.add_argument("--timeout", type=bounded_float(0, MAX_TIMEOUT_S, low_open=True), default=7200,
                        help="seconds per model before TLC is stopped (0 < S <= 7 days)")
    parser.add_argument("--out", type=output_dir, default="popverify-out/tlc",
                        help="where counterexamples are saved as ITF")
    parser.add_argument("--update-readme", action="store_true", help="put these models' results into the table of tlaplus/README.md")
    parser.add_argument("--validate", action="append", metavar="TRACE", default=[],
                        help="check that a push-mode ITF trace (simulate, fuzz, replay) is a behaviour of "
                             "PushConsumerOffsets (repeatable)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
