"""A schedule entry: one step of a run as a trace carries it (``[kind, *args]``).

It lives with the trace format, below the engine, so that the trace reader and writer do
not import the simulator (docs: shared design, "Trace -> Sim never").
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Action:
    """One scheduled step: a kind and JSON-able positional arguments."""

    kind: str
    args: tuple = ()

    def to_json(self) -> list:
        """``[kind, *args]``."""
        return [self.kind, *self.args]

    @classmethod
    def from_json(cls, data: Any) -> "Action":
        """Inverse of to_json; ValueError on a malformed entry."""
        if not isinstance(data, list) or not data or not isinstance(data[0], str):
            raise ValueError(f"malformed action {data!r}")
        for arg in data[1:]:
            if not isinstance(arg, (int, str, bool)) or isinstance(arg, float):
                raise ValueError(f"malformed action argument {arg!r}")
        return cls(data[0], tuple(data[1:]))
