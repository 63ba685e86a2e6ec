"""``popverify mutate``: AST mutation testing of the reference model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from popverify.args import bounded_int, comma_list, output_dir
from popverify.errors import UsageError

DEFAULT_FILES = ("broker/ack_processor.py,broker/buffer_merge.py,broker/checkpoint.py,broker/offset_manager.py,"
                 "broker/pop_processor.py,broker/revive.py")


def run(args: argparse.Namespace) -> int:
    from popverify.verify import mutation

    operators = args.operators
    files = args.files
    root = mutation.REFERENCE.resolve()

    def inside(name: str) -> bool:
        # relative, no "..", a Python file of reference/ (``reference/x`` joined to "/etc/passwd"
        # would otherwise be /etc/passwd)
        path = (mutation.REFERENCE / name).resolve()
        return (not Path(name).is_absolute() and ".." not in Path(name).parts and path.suffix == ".py"
                and path.is_file() and root in path.parents)

    missing = [f for f in files if not inside(f)]
    if missing:
        raise UsageError(f"not a Python file of reference/: {', '.join(missing)} (give paths relative to reference/)")
    try:
        result = mutation.run(operators, files, args.max_mutants, args.seeds, args.steps,
                              lambda m: print(f"[mutate] {m}", file=sys.stderr, flush=True),
                              techniques=args.techniques,
                              per_operator=args.per_operator, only=args.sites)
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.out is not None:
        out = args.out
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
    parser.add_argument("--operators", type=comma_list(mutation_operators(), "operator"),
                        default=",".join(mutation_operators()),
                        help="comma list: " + ", ".join(mutation_operators()))
    parser.add_argument("--techniques", type=comma_list(None, "technique"), default="simulation,push,z3,targeted",
                        help="comma list of simulation (POP), push, z3 (cross-checks), targeted (fixed "
                             "configurations for locks, orderly push, failing listeners, boundaries), stateful, "
                             "conformance, trace (TLC trace validation of the reference push runs)")
    parser.add_argument("--files", type=comma_list(None, "file"), default=DEFAULT_FILES,
                        help="comma list of files relative to reference/")
    parser.add_argument("--max-mutants", type=bounded_int(1, 10_000), default=100,
                        help="mutate at most this many sites (file order; 1..10000)")
    parser.add_argument("--per-operator", type=bounded_int(1, 10_000), default=None,
                        help="sample at most this many sites per operator, evenly spaced (1..10000; default: all)")
    parser.add_argument("--sites", type=comma_list(None, "site"), default=None,
                        help="comma list of mutant ids (FILE:LINE:COL:OPERATOR, as printed) to judge only those "
                             "(e.g. an earlier run's survivors); each must be a site of --operators in --files")
    parser.add_argument("--seeds", type=bounded_int(1, 1_000), default=3, help="simulation seeds per profile (1..1000)")
    parser.add_argument("--steps", type=bounded_int(1, 100_000), default=300, help="1..100000")
    parser.add_argument("--out", type=output_dir, default=None,
                        help="also write mutation.json here (verify's --out shows it)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
