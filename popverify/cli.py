"""The ``popverify`` command line: one subcommand per module in ``popverify.commands``.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed namespace, returning the exit code). Command modules import
heavy dependencies (pyspark, z3) inside their functions, so ``popverify --help`` is quick.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from popverify import __version__
from popverify.errors import UsageError
from popverify.tools import (Terminated, ToolError, install_signal_handlers, restore_signal_handlers,
                             terminating_signal)

# Order is the order `popverify --help` lists them.
COMMANDS = (
    "doctor", "simulate", "replay", "bench", "allocate", "tlc", "prove",
    "fuzz", "shrink", "conformance", "confirm", "mutate", "verify", "findings", "coverage", "live",
)


class ArgumentError(Exception):
    """A bad command line, as argparse words it (exit 2, one line on stderr)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``popverify CMD: error: ...`` instead of a usage block,
    raised so that ``main`` (also when called in-process) prints it and returns 2."""

    def error(self, message: str):  # type: ignore[override]
        raise ArgumentError(f"{self.prog}: error: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available command registered."""
    parser = Parser(
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
    """Entry point of the ``popverify`` script: the command's exit code; 2 for bad arguments
    or input, 1 for a missing tool, 128+N when interrupted by signal N (children and scratch
    folders are cleaned up as the interruption unwinds)."""
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except ArgumentError as err:
        _say(str(err))
        return 2
    if not getattr(args, "func", None):
        _say(f"popverify: error: a command is required: {', '.join(sorted(parser_commands(parser)))} "
             "(see popverify --help)")
        return 2
    previous = install_signal_handlers()
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe (``| head``) fails here, inside the handlers below
        return code
    except UsageError as err:
        _say(f"popverify {args.command}: error: {_one_line(err)}")
        return 2
    except ToolError as err:
        _say(f"popverify {args.command}: error: {err}")
        return 1
    except BrokenPipeError:
        # stdout closed early (``| head``): not an error of ours; silence the flush at exit
        _silence_stdout()
        return 0
    except Terminated as err:
        _say(f"popverify {args.command}: terminated by {err}")
        return 128 + err.signum
    except KeyboardInterrupt:
        _say(f"popverify {args.command}: interrupted")
        return 130
    except Exception:
        signum = terminating_signal()
        if signum is None:
            raise
        # py4j (Spark) turns an interrupted call into its own error: still the interruption
        _say(f"popverify {args.command}: terminated by {signal.Signals(signum).name}")
        return 128 + signum
    finally:
        restore_signal_handlers(previous)


def parser_commands(parser: argparse.ArgumentParser) -> list[str]:
    """The subcommand names registered on ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def _one_line(err: Exception) -> str:
    """An error message on one line (tool output after the first line is dropped)."""
    text = str(err).strip()
    first, _, rest = text.partition("\n")
    return first + (" [...]" if rest.strip() else "")


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (BrokenPipeError, ValueError):
        pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush raises no BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
