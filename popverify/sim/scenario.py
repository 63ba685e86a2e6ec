"""The scenario API every technique runs: one seeded, deterministic run of the model.

``run_scenario`` is the contract used by ``simulate``, ``replay``, ``shrink``, the stateful
machines, the Spark campaigns and mutation testing. A run is fully determined by
(profile, mode, seed, steps, config, schedule, mutant); with ``schedule`` given the driver
follows it first and then draws actions until ``steps`` (replay and delta debugging pass
``steps <= len(schedule)``; coverage-guided rounds pass a mutated corpus prefix and let the
run continue from where it got).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from typing import Any

import attrs

from reference.common.javalang import JavaRandom


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


@attrs.frozen
class Violation:
    """A property violated at a step of a run (step == steps: in the final drain)."""

    property_id: str
    message: str
    step: int

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property_id, "message": self.message, "step": self.step}


# Action kinds a POP scenario can draw, with their default weights. Faults are separate so
# swarm testing can switch them on and off.
POP_ACTIONS: dict[str, int] = {
    "produce": 12, "pop": 10, "pop_step": 10, "ack": 10, "change_invisible": 3, "batch_ack": 2,
    "advance": 8, "scan": 6, "timer": 4, "revive": 5, "flush": 2, "long_poll": 1, "consumer_crash": 1,
}
FAULTS: tuple[str, ...] = ("restart", "expire", "delete_recreate", "clock_jump", "stall")
FAULT_WEIGHT = 1
# Faults added by issue 16, kept apart so that every user of FAULTS (verify's campaign and
# mutation runs, their expectations) runs as before: store_put_fail (the store refuses puts,
# reference/broker/put_failure.py) and scan_stall (a slow PopBufferMergeService scan: the
# buffer stops serving). The swarm draw decides them after every other field, so earlier
# seeds keep their configurations; `--faults` and explicit configurations take them too.
LATE_FAULTS: tuple[str, ...] = ("store_put_fail", "scan_stall")
ALL_POP_FAULTS: tuple[str, ...] = FAULTS + LATE_FAULTS

# Push mode: producers, push consumers joining and leaving, their pull / consume / persist
# steps, and the faults of the push path (spec/push.md). Names shared with POP mean the same.
PUSH_ACTIONS: dict[str, int] = {
    "produce": 12, "start": 2, "shutdown": 1, "rebalance": 4, "pull": 12, "deliver": 12, "hold": 3,
    "consume": 14, "persist": 3, "consumer_timer": 2, "advance": 6,
}
PUSH_FAULTS: tuple[str, ...] = ("consumer_crash", "restart", "lose_response", "dup_response", "expire", "clock_jump")
PUSH_ALWAYS: frozenset[str] = frozenset({"produce", "start", "rebalance", "pull", "deliver", "consume", "advance"})
# Action kinds every POP swarm configuration keeps.
POP_ALWAYS: frozenset[str] = frozenset({"produce", "pop", "pop_step", "ack", "advance"})


@attrs.frozen
class ScenarioConfig:
    """What a run may do (swarm testing draws one per run, within documented ranges).

    Ranges drawn by ``draw``: queues 1..4, consumers 1..3, invisible time 1..60 s (step
    1 s), max messages per pop 1..8, buffer merge on or off, each action kind kept with
    probability 0.8 (produce/pop/pop_step/ack/advance always kept), each fault kept with
    probability 0.3 unless ``faults`` is given explicitly, services on their periods with
    probability 0.75.
    """

    queues: int = 2
    consumers: int = 2
    invisible_time: int = 10_000
    max_msg_nums: int = 4
    enable_pop_buffer_merge: bool = False
    actions: tuple[str, ...] = tuple(POP_ACTIONS)
    faults: tuple[str, ...] = ()
    drain: bool = True
    # The buffer scan and the timer keep their periods while time passes (see
    # pop_driver._pass_time); False lets the scheduler starve them.
    services_on_period: bool = True
    # Push mode: orderly listener instead of concurrent, and how often the listener fails
    # (RECONSUME_LATER / SUSPEND_CURRENT_QUEUE_A_MOMENT), in percent.
    consume_orderly: bool = False
    consume_fail_percent: int = 20

    def to_json(self) -> dict[str, Any]:
        """JSON form (lists for tuples)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items()}

    @classmethod
    def from_json(cls, data: Any) -> "ScenarioConfig":
        """Inverse of to_json; ValueError naming a bad field."""
        if not isinstance(data, dict):
            raise ValueError("config must be an object")
        known = {f.name for f in attrs.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config fields: {sorted(unknown)}")
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        config = cls(**fields)
        config.validate()
        return config

    def validate(self) -> None:
        """ValueError if a value is out of its range."""
        if not 1 <= self.queues <= 64 or not 1 <= self.consumers <= 64:
            raise ValueError("queues and consumers must be in 1..64")
        if self.invisible_time <= 0 or not 1 <= self.max_msg_nums <= 32:
            raise ValueError("invisible_time must be > 0 and max_msg_nums in 1..32")
        if not 0 <= self.consume_fail_percent <= 100:
            raise ValueError("consume_fail_percent must be in 0..100")
        bad = [a for a in self.actions if a not in POP_ACTIONS and a not in PUSH_ACTIONS]
        bad += [f for f in self.faults if f not in ALL_POP_FAULTS and f not in PUSH_FAULTS]
        if bad:
            raise ValueError(f"unknown action or fault kinds: {bad}")

    @classmethod
    def draw(cls, rng: JavaRandom, faults: Sequence[str] | None = None, mode: str = "pop") -> "ScenarioConfig":
        """A swarm configuration drawn from ``rng`` within the documented ranges."""
        if mode == "push":
            return cls.draw_push(rng, faults)
        actions = tuple(a for a in POP_ACTIONS if a in POP_ALWAYS or rng.next_int(10) < 8)
        chosen = tuple(faults) if faults is not None else \
            tuple(f for f in FAULTS if rng.next_int(10) < 3)
        queues, consumers = 1 + rng.next_int(4), 1 + rng.next_int(3)
        invisible_time, max_msg_nums = 1000 * (1 + rng.next_int(60)), 1 + rng.next_int(8)
        merge, on_period = rng.next_boolean(), rng.next_int(4) != 0
        if faults is None:
            chosen += tuple(f for f in LATE_FAULTS if rng.next_int(10) < 3)
        return cls(queues=queues, consumers=consumers, invisible_time=invisible_time, max_msg_nums=max_msg_nums,
                   enable_pop_buffer_merge=merge, actions=actions, faults=chosen, services_on_period=on_period)

    @classmethod
    def draw_push(cls, rng: JavaRandom, faults: Sequence[str] | None = None) -> "ScenarioConfig":
        """A push-mode swarm configuration: queues 1..4, consumers 1..3, each optional action
        kept with probability 0.8, each fault with 0.3, orderly with 0.25, listener failure
        0..40 %."""
        actions = tuple(a for a in PUSH_ACTIONS if a in PUSH_ALWAYS or rng.next_int(10) < 8)
        chosen = tuple(faults) if faults is not None else tuple(f for f in PUSH_FAULTS if rng.next_int(10) < 3)
        return cls(queues=1 + rng.next_int(4), consumers=1 + rng.next_int(3), actions=actions, faults=chosen,
                   consume_orderly=rng.next_int(4) == 0, consume_fail_percent=rng.next_int(41))

    @classmethod
    def default_for(cls, mode: str) -> "ScenarioConfig":
        """The default configuration of a mode (push: the push action kinds)."""
        if mode == "push":
            return cls(actions=tuple(PUSH_ACTIONS))
        return cls()




class Coverage:
    """A run's coverage points, each with the first step that reached it (guided fuzzing
    replays a parent up to the step where it reached its rarest point)."""

    def __init__(self) -> None:
        self.first_step: dict[str, int] = {}
        self.step = 0

    def add(self, point: str) -> None:
        self.first_step.setdefault(point, self.step)

    def points(self) -> frozenset[str]:
        return frozenset(self.first_step)


@attrs.frozen
class RunResult:
    """The outcome of one run."""

    seed: int
    profile: str
    mode: str
    steps: int
    config: ScenarioConfig
    counts: dict[str, int]
    violations: tuple[Violation, ...]
    coverage: frozenset[str]
    schedule: tuple[Action, ...]
    mutant: str | None = None
    trace: dict[str, Any] | None = None
    first_step: dict[str, int] = attrs.field(factory=dict, eq=False, repr=False)
    # The full traceback of a MODEL-ERROR (popverify/findings/model_error.py), else None.
    model_traceback: str | None = attrs.field(default=None, eq=False, repr=False)

    def summary(self) -> dict[str, Any]:
        """The JSON object ``popverify simulate --json`` prints."""
        return {
            "seed": self.seed, "profile": self.profile, "mode": self.mode, "steps": self.steps,
            "mutant": self.mutant, "config": self.config.to_json(), "counts": dict(sorted(self.counts.items())),
            "violations": [v.to_json() for v in self.violations],
            "coverage": len(self.coverage),
        } | ({"model_traceback": self.model_traceback} if self.model_traceback is not None else {})

    def summary_json(self) -> str:
        """Canonical (byte-stable) JSON text of ``summary()``."""
        return json.dumps(self.summary(), sort_keys=True, indent=2)


MODES: dict[str, str] = {"pop": "popverify.sim.pop_driver", "push": "popverify.sim.push_driver"}


def run_scenario(profile: str, seed: int, steps: int, *, mode: str = "pop",
                 config: ScenarioConfig | None = None, schedule: Sequence[Action] | None = None,
                 check: bool = True, mutant: str | None = None, record_trace: bool = False) -> RunResult:
    """Run one scenario; same arguments, same result (byte for byte in its JSON forms).

    ValueError for an unknown profile, mode or mutant, or a bad config.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known modes: {', '.join(MODES)}")
    try:
        driver_module = importlib.import_module(MODES[mode])
    except ModuleNotFoundError as err:
        raise ValueError(f"mode {mode!r} is not available in this build") from err
    if steps < 0:
        raise ValueError("steps must be >= 0")
    if config is not None:
        config.validate()
    from popverify.mutants import applied
    with applied(mutant):
        return driver_module.run(profile, seed, steps, config=config, schedule=schedule, check=check,
                                 mutant=mutant, record_trace=record_trace)
