"""The input domain: its dimensions, their ranges and boundaries, and how much of it runs
reached (issue 17 item 3).

A dimension is one value argument (``Arg.value``) of one action kind of one mode (``pop.change_invisible.
invisible_time``). Its declared domain is the argument's bounds (popverify/sim/actions.py);
its boundaries are the bounds themselves and every Java width limit inside them (0, +-1,
byte, short and int limits), or False and True for a bool. ``DomainReach`` collects, over
any number of runs (pass one to ``run_scenario(..., domain=...)``), the smallest and largest
value each dimension took and which boundaries were hit exactly; ``rows`` / ``table`` are
what a campaign report shows. A boundary not reached is a part of the model no run drove.

Configuration dimensions (``CONFIG_DIMENSIONS``) are swarm fields a run keeps throughout: the
queue count and the offset its queues start at. Each is declared once here with the Java
type's range, the broker's own limit and where the model stops (``java``); the swarm draws
them late (ScenarioConfig.draw_domain) and a campaign's table shows them beside the action
arguments (``{mode}.config.{field}``).
"""

from __future__ import annotations

import functools
from typing import Any

from collections.abc import Iterable, Sequence

import attrs

from popverify.sim.actions import ActionSpec, Arg

# Java width limits a value may pass through (byte, short, int), the values next to 0, and
# the limits of a long narrowed to an int (just past Integer.MAX_VALUE, the unsigned int).
WIDTH_LIMITS = (0, 1, -1, 127, -128, 255, 32767, -32768, 65535, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 32 - 1, 2 ** 32)
LONG_MAX = 2 ** 63 - 1

# Queue count. Java: readQueueNums / writeQueueNums are ints, and the broker sets no upper bound
# (AdminBrokerProcessor#updateAndCreateTopic copies them from the request header; TopicConfig
# only defaults them to 16). The model stops at 1024 queues: every queue is a consume queue, a
# POP with queueId -1 may visit all of them and a push consumer rebalances and pulls each,
# so a run's cost grows with the count (spec/fuzzing.md "The input domain").
MAX_QUEUES = 1024
# Push mode stops at 64: every queue is a ProcessQueue with its pull requests, and the drain
# pulls each one every round (a 1024-queue push run of 100 steps takes ~30 s here).
MAX_PUSH_QUEUES = 64
# ConsumeQueue.CQ_STORE_UNIT_SIZE: a consume queue unit is 20 bytes, and the unit of offset n
# sits at file position n * 20 (ConsumeQueue#putMessagePositionInfo, expectLogicOffset =
# cqOffset * CQ_STORE_UNIT_SIZE; files are named by that position, UtilAll#offset2FileName).
CQ_STORE_UNIT_SIZE = 20
# The largest offset a queue can start at: n * 20 must fit a long, with room for the 2^20
# messages a run could store after it (steps are bounded by 100,000). A long offset beyond
# Long.MAX_VALUE / 20 is unreachable on a real store: the model stops there.
MAX_START_OFFSET = LONG_MAX // CQ_STORE_UNIT_SIZE - 2 ** 20


@attrs.frozen
class ConfigDimension:
    """A configuration field a run keeps: its model domain (``arg``) and what Java allows."""

    field: str
    arg: Arg
    java: str
    modes: tuple[str, ...] = ("pop", "push")


CONFIG_DIMENSIONS: tuple[ConfigDimension, ...] = (
    ConfigDimension("queues", Arg("queues", int, 1, MAX_QUEUES),
                    "int 1..2^31-1 (no broker check: AdminBrokerProcessor#updateAndCreateTopic); model stops at 1024",
                    ("pop",)),
    ConfigDimension("queues", Arg("queues", int, 1, MAX_PUSH_QUEUES),
                    "int 1..2^31-1 (no broker check: AdminBrokerProcessor#updateAndCreateTopic); push model stops at 64",
                    ("push",)),
    ConfigDimension("start_offset", Arg("start_offset", int, 0, MAX_START_OFFSET),
                    "long; a consume queue's offset n sits at file position n*20, so n <= Long.MAX_VALUE/20 "
                    "(ConsumeQueue#putMessagePositionInfo); model stops 2^20 below"),
)


def config_dimensions(mode: str) -> dict[str, Arg]:
    """The configuration dimensions of ``mode``: field -> its model domain."""
    return {cdim.field: cdim.arg for cdim in CONFIG_DIMENSIONS if mode in cdim.modes}


def start_queues(broker: Any, topic: str, config: Any) -> None:
    """Every queue of ``topic`` begins at ``config.start_offset`` (nothing when 0)."""
    if config.start_offset:
        for queue_id in range(config.queues):
            broker.start_queue_at(topic, queue_id, config.start_offset)


def boundary_draw(rng: Any, arg: Arg) -> int:
    """A value of ``arg``'s domain: one of its boundaries (half the time) or a value
    log-uniform by bit length above its low end."""
    edges = boundaries(arg)
    if rng.next_int(2) == 0:
        return edges[rng.next_int(len(edges))]
    span = arg.hi - arg.lo
    bits = 1 + rng.next_int(span.bit_length())
    low = 1 << (bits - 1)
    return arg.lo + min(span, low + _next_below(rng, low))


def _next_below(rng: Any, n: int) -> int:
    """A value in 0..n-1 for any positive n (30 bits at a time from the run's generator)."""
    value, width = 0, 0
    while (1 << width) < n:
        value = (value << 30) | rng.next_int(1 << 30)
        width += 30
    return value % n


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
        """Make every argument of ``specs`` and every configuration dimension of ``mode`` a
        dimension (so one never drawn shows as unreached)."""
        for spec in specs:
            for arg in spec.args:
                if arg.value:
                    self.dims.setdefault(f"{mode}.{spec.name}.{arg.name}", Dimension(arg))
        for cdim in CONFIG_DIMENSIONS:
            if mode in cdim.modes:
                self.dims.setdefault(f"{mode}.config.{cdim.field}", Dimension(cdim.arg))

    def observe_config(self, mode: str, config: Any) -> None:
        """Record the configuration dimensions of one run."""
        for cdim in CONFIG_DIMENSIONS:
            if mode in cdim.modes:
                key = f"{mode}.config.{cdim.field}"
                self.dims.setdefault(key, Dimension(cdim.arg)).observe(getattr(config, cdim.field))

    def observe_run(self, mode: str, specs: Sequence[ActionSpec], config: Any, schedule: Iterable[Any]) -> None:
        """Record a finished run from its configuration and schedule (what a campaign row keeps:
        the same values the engine saw, so a campaign's table needs no extra column)."""
        by_name = {s.name: s for s in specs}
        self.observe_config(mode, config)
        for action in schedule:
            spec = by_name.get(action.kind)
            if spec is not None:
                self.observe(mode, spec, action.args)

    def rows(self) -> list[dict[str, Any]]:
        """One row per dimension (sorted by name): declared range, range reached, boundaries
        (those hit and those not), and for a configuration dimension what Java allows."""
        notes = {(m, cdim.field): cdim.java for cdim in CONFIG_DIMENSIONS for m in cdim.modes}
        out = []
        for key in sorted(self.dims):
            dim = self.dims[key]
            bounds = boundaries(dim.arg)
            reached = dim.reached()
            mode, owner, name = key.split(".", 2)
            out.append({"dimension": key, "type": dim.arg.type.__name__,
                        "declared": [bounds[0], bounds[-1]],
                        "reached": None if dim.low is None else [dim.low, dim.high], "values": dim.values,
                        "boundaries": list(bounds), "boundaries_reached": list(reached),
                        "unreached": [b for b in bounds if b not in dim.hit],
                        "all_reached": len(reached) == len(bounds),
                        "java": notes.get((mode, name), "") if owner == "config" else ""})
        return out

    def table(self) -> str:
        """The rows as a Markdown table."""
        return table_of(self.rows())


def table_of(rows: Sequence[dict[str, Any]]) -> str:
    """Domain rows (DomainReach.rows, or a summary's ``domain``) as a Markdown table: per
    dimension the declared range, the range reached, and the boundaries not reached."""
    lines = ["| dimension | declared | reached | boundaries hit | not reached |", "|---|---|---|---|---|"]
    for row in rows:
        reached = "never drawn" if row["reached"] is None else f"{row['reached'][0]}..{row['reached'][1]}"
        missing = ", ".join(str(b) for b in row["unreached"]) or "-"
        lines.append(f"| {row['dimension']} | {row['declared'][0]}..{row['declared'][1]} | {reached} | "
                     f"{len(row['boundaries_reached'])}/{len(row['boundaries'])} | {missing} |")
    return "\n".join(lines)


@functools.cache
def _boundary_set(arg: Arg) -> frozenset[Any]:
    return frozenset(boundaries(arg))
