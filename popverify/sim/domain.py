"""How much of each argument's input domain runs reached (issue 17 item 3, the measurement).

A dimension is one value argument (``Arg.value``) of one action kind of one mode (``pop.change_invisible.
invisible_time``). Its declared domain is the argument's bounds (popverify/sim/actions.py);
its boundaries are the bounds themselves and every Java width limit inside them (0, +-1,
byte, short and int limits), or False and True for a bool. ``DomainReach`` collects, over
any number of runs (pass one to ``run_scenario(..., domain=...)``), the smallest and largest
value each dimension took and which boundaries were hit exactly; ``rows`` / ``table`` are
what a campaign report shows. A boundary not reached is a part of the model no run drove.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from popverify.sim.actions import ActionSpec, Arg

# Java width limits a value may pass through (byte, short, int), and the values next to 0.
WIDTH_LIMITS = (0, 1, -1, 127, -128, 255, 32767, -32768, 65535, 2 ** 31 - 1, -2 ** 31)


def boundaries(arg: Arg) -> tuple[Any, ...]:
    """The boundary values of ``arg``'s declared domain, in ascending order."""
    if arg.type is bool:
        return (False, True)
    return tuple(sorted({arg.lo, arg.hi} | {v for v in WIDTH_LIMITS if arg.lo <= v <= arg.hi}))


@attrs.define
class Dimension:
    """What runs drew for one argument: count, range and boundaries hit."""

    arg: Arg
    values: int = 0
    low: Any = None
    high: Any = None
    hit: set[Any] = attrs.Factory(set)

    def observe(self, value: Any) -> None:
        """One drawn or scheduled value."""
        self.values += 1
        if self.low is None or value < self.low:
            self.low = value
        if self.high is None or value > self.high:
            self.high = value
        # only boundary hits are kept: the set stays small on long campaigns
        if value in _boundary_set(self.arg):
            self.hit.add(value)

    def reached(self) -> tuple[Any, ...]:
        """The boundaries some run hit exactly."""
        return tuple(b for b in boundaries(self.arg) if b in self.hit)


class DomainReach:
    """Per-dimension reach, accumulated over runs (deterministic: depends only on the values)."""

    def __init__(self) -> None:
        self.dims: dict[str, Dimension] = {}

    def observe(self, mode: str, spec: ActionSpec, args: tuple) -> None:
        """Record the (already checked) arguments of one step."""
        for arg, value in zip(spec.args, args):
            if not arg.value:
                continue
            key = f"{mode}.{spec.name}.{arg.name}"
            dim = self.dims.get(key)
            if dim is None:
                dim = self.dims[key] = Dimension(arg)
            dim.observe(value)

    def declare(self, mode: str, specs: tuple[ActionSpec, ...]) -> None:
        """Make every argument of ``specs`` a dimension (so one never drawn shows as unreached)."""
        for spec in specs:
            for arg in spec.args:
                if arg.value:
                    self.dims.setdefault(f"{mode}.{spec.name}.{arg.name}", Dimension(arg))

    def rows(self) -> list[dict[str, Any]]:
        """One row per dimension (sorted by name): declared range, range reached, boundaries."""
        out = []
        for key in sorted(self.dims):
            dim = self.dims[key]
            bounds = boundaries(dim.arg)
            reached = dim.reached()
            out.append({"dimension": key, "type": dim.arg.type.__name__,
                        "declared": [bounds[0], bounds[-1]],
                        "reached": None if dim.low is None else [dim.low, dim.high], "values": dim.values,
                        "boundaries": list(bounds), "boundaries_reached": list(reached),
                        "all_reached": len(reached) == len(bounds)})
        return out

    def table(self) -> str:
        """The rows as a Markdown table."""
        lines = ["| dimension | declared | reached | boundaries hit |", "|---|---|---|---|"]
        for row in self.rows():
            reached = "never drawn" if row["reached"] is None else f"{row['reached'][0]}..{row['reached'][1]}"
            lines.append(f"| {row['dimension']} | {row['declared'][0]}..{row['declared'][1]} | {reached} | "
                         f"{len(row['boundaries_reached'])}/{len(row['boundaries'])} |")
        return "\n".join(lines)


@functools.cache
def _boundary_set(arg: Arg) -> frozenset[Any]:
    return frozenset(boundaries(arg))
