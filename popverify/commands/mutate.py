"""``popverify mutate``: AST mutation testing of the reference model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from popverify.errors import UsageError

DEFAULT_FILES = ("broker/ack_processor.py,broker/buffer_merge.py,broker/checkpoint.py,broker/offset_manager.py,"
                 "broker/pop_processor.py,broker/revive.py")


def run(args: argparse.Namespace) -> int:
    from popverify.verify import mutation

    operators = tuple(o for o in args.operators.split(",") if o)
    files = tuple(f for f in args.files.split(",") if f)
    missing = [f for f in files if ".." in Path(f).parts or not (mutation.REFERENCE / f).is_file()]
    if missing:
        raise UsageError(f"no such reference file(s): {missing}")
    if args.max_mutants < 1 or args.seeds < 1 or args.steps < 1:
        raise UsageError("--max-mutants, --seeds and --steps must be >= 1")
    if args.per_operator is not None and not 1 <= args.per_operator <= 10_000:
        raise UsageError("--per-operator must be in 1..10000")
    try:
        result = mutation.run(operators, files, args.max_mutants, args.seeds, args.steps,
                              lambda m: print(f"[mutate] {m}", file=sys.stderr, flush=True),
                              techniques=tuple(t for t in args.techniques.split(",") if t),
                              per_operator=args.per_operator)
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.out:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "mutation.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot write under {out}: {err.strerror or err}") from err
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        for m in result["mutants"]:
            print(f"{'KILLED ' if m['killed'] else 'SURVIVED'} {m['mutant']} {' '.join(m['by'])}")
        for op, t in result["by_operator"].items():
            print(f"operator {op}: {t['killed']}/{t['total']} killed")
        for name, t in result["techniques"].items():
            if "unavailable" in t:
                print(f"{name}: unavailable ({t['unavailable']})")
            else:
                print(f"{name}: {t['killed']}/{t['total']} killed, score {t['score']}"
                      + (f", {t['mean_seconds']}s per mutant" if t.get("mean_seconds") is not None else ""))
    return 0


def mutation_operators() -> tuple[str, ...]:
    """The AST operators (imported lazily: the CLI starts fast)."""
    from popverify.verify.mutation import OPERATORS
    return OPERATORS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("mutate", help="mutation testing: which mutants of the model each technique kills")
    parser.add_argument("--operators", default=",".join(mutation_operators()),
                        help="comma list: " + ", ".join(mutation_operators()))
    parser.add_argument("--techniques", default="simulation,push,z3",
                        help="comma list of simulation (POP), push, z3 (cross-checks), stateful, conformance, "
                             "trace (TLC trace validation of the reference push runs)")
    parser.add_argument("--files", default=DEFAULT_FILES, help="comma list of files relative to reference/")
    parser.add_argument("--max-mutants", type=int, default=100, help="mutate at most this many sites (file order)")
    parser.add_argument("--per-operator", type=int, default=None,
                        help="sample at most this many sites per operator, evenly spaced (1..10000; default: all)")
    parser.add_argument("--seeds", type=int, default=3, help="simulation seeds per profile")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--out", default=None, help="also write mutation.json here (verify's --out shows it)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
