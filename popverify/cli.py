"""The ``popverify`` command line: one subcommand per module in ``popverify.commands``.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed namespace, returning the exit code). Command modules import
heavy dependencies (pyspark, z3) inside their functions, so ``popverify --help`` is quick.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from popverify import __version__
from popverify.errors import UsageError
from popverify.tools import ToolError

# Order is the order `popverify --help` lists them.
COMMANDS = (
    "doctor", "simulate", "replay", "bench", "allocate", "tlc", "prove",
    "fuzz", "shrink", "conformance", "mutate", "verify", "live",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available command registered."""
    parser = argparse.ArgumentParser(
        prog="popverify",
        description="Verification suite for Apache RocketMQ 5.x message consumption.")
    parser.add_argument("--version", action="version", version=f"popverify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"popverify.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"popverify.commands.{name}":
                continue  # not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``popverify`` script."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except UsageError as err:
        print(f"popverify {args.command}: error: {err}", file=sys.stderr)
        return 2
    except ToolError as err:
        print(f"popverify {args.command}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
