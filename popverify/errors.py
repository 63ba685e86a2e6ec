"""Errors the CLI turns into a clear message instead of a traceback."""


class UsageError(Exception):
    """Bad arguments or bad input file; the message says what is wrong (exit code 2)."""
