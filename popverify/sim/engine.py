"""The scenario engine (issue 17 item 1): one run loop for every mode.

A mode (``Mode``) is a tuple of action declarations (popverify/sim/actions.py) and a world
(the broker, its clients, the property checker and what the driver plays: network, threads,
time). The engine owns what every mode shares: the run's seeded generator and the weighted
choice of the next action, following a given schedule first, checking each entry against
its declaration before the model is called, turning a model exception into a MODEL-ERROR
finding (popverify/findings/model_error.py), publishing the typed events
(popverify/sim/events.py) to the checker, the counts and the trace recorder, coverage of
action pairs, the drain and the RunResult.

Public API for step-by-step drivers (the Hypothesis machines, conformance/confirm.py):
``Engine.step(action)`` runs one step exactly as ``run`` does; ``Engine.world`` is the state.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from popverify.checker.violation import Violation
from popverify.findings.model_error import MODEL_ERROR, ModelError, call_model
from popverify.sim.actions import ActionSpec
from popverify.sim.domain import DomainReach, boundaries
from popverify.sim.events import Event, FaultInjected, ModelErrorRaised, Subscriber
from popverify.trace.schedule import Action
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom
from reference.profile import get_profile

if TYPE_CHECKING:
    from popverify.sim.scenario import ScenarioConfig


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
    config: "ScenarioConfig"
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

    def trace_meta(self) -> dict[str, Any]:
        """What a trace needs to re-execute this run (popverify/trace/itf.py#trace_of)."""
        return {"profile": self.profile, "mode": self.mode, "seed": self.seed, "steps": self.steps,
                "config": self.config.to_json(), "mutant": self.mutant,
                "schedule": [a.to_json() for a in self.schedule], "outcome": self.summary()}


class World(Protocol):
    """What a mode's world offers the engine."""

    clock: VirtualClock
    checker: Any

    def subscriber(self) -> Subscriber: ...
    def check_state(self, step: int) -> None: ...
    def cover_step(self, kind: str, applied: bool) -> None: ...
    def drain(self) -> bool: ...
    def finish(self, drained: bool, step: int) -> None: ...
    def observe(self) -> dict[str, Any] | None: ...


# (profile, seed, config, check, publish, coverage) -> the world of a fresh run
WorldFactory = Callable[[str, int, "ScenarioConfig", bool, Callable[[Event], None], Coverage], Any]


@attrs.frozen
class Mode:
    """A mode: its action declarations (declaration order is the weighted choice's order)
    and the world they act on."""

    name: str
    actions: tuple[ActionSpec, ...]
    world: WorldFactory
    # The run's counts (their keys) and what each event type adds to them.
    counts: tuple[str, ...]
    counters: dict[type, Callable[[Any], tuple[tuple[str, int], ...]]]
    # Configuration fields the mode does not use: a run that sets one off its default is
    # rejected instead of silently ignoring it.
    ignores: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        # An action applied by a world method must name one: caught at import, not mid-run.
        missing = [a.name for a in self.actions if isinstance(a.apply, str) and not callable(
            getattr(self.world, a.apply, None))]
        names = [a.name for a in self.actions]
        if missing or len(set(names)) != len(names):
            raise TypeError(f"mode {self.name}: actions {missing} name no world method, or a kind is declared twice")
        partners = [a.name for i, a in enumerate(self.actions) if a.drawn_with and not any(
            b.name == a.drawn_with and (b.opt_in, b.fault) == (a.opt_in, a.fault) for b in self.actions[:i])]
        if partners:
            raise TypeError(f"mode {self.name}: {partners} must be drawn with an earlier kind of their own sort")

    def spec(self, kind: str) -> ActionSpec | None:
        """The declaration of ``kind`` in this mode, or None."""
        return next((a for a in self.actions if a.name == kind), None)

    def kinds(self, fault: bool) -> tuple[str, ...]:
        """The action kinds (``fault=False``) or fault kinds of the mode, in order."""
        return tuple(a.name for a in self.actions if a.fault == fault)

    def weights(self) -> dict[str, int]:
        """Non-fault kinds and their weights (opt-in kinds left out: popverify/sim/actions.py)."""
        return {a.name: a.weight for a in self.actions if not a.fault and not a.opt_in}

    def opt_in(self, fault: bool = False) -> tuple[str, ...]:
        """The opt-in action kinds (``fault=True``: opt-in fault kinds) of the mode, in order
        (run only when a configuration lists them)."""
        return tuple(a.name for a in self.actions if a.opt_in and a.fault == fault)

    def groups(self, kinds: Iterable[str]) -> tuple[tuple[str, ...], ...]:
        """``kinds`` as swarm draws decide them, in declaration order: each kind alone, except
        one declared ``drawn_with`` an earlier kind, which joins that kind's group (one coin for
        the group; popverify/sim/actions.py)."""
        wanted = set(kinds)
        groups: dict[str, list[str]] = {}
        for a in self.actions:
            if a.name in wanted:
                groups.setdefault(a.drawn_with if a.drawn_with in groups else a.name, []).append(a.name)
        return tuple(tuple(g) for g in groups.values())

    def always(self) -> frozenset[str]:
        """Kinds every swarm configuration keeps."""
        return frozenset(a.name for a in self.actions if a.always)


class Engine:
    """One scenario of a mode over a fresh world: the run loop."""

    def __init__(self, mode: Mode, profile: str, seed: int, config: "ScenarioConfig", check: bool,
                 record_trace: bool, domain: DomainReach | None = None) -> None:
        self.mode = mode
        # Where the arguments of every step go (popverify/sim/domain.py), when measured.
        self.domain = domain
        if domain is not None:
            domain.declare(mode.name, mode.actions)
            domain.observe_config(mode.name, config)
        self.profile = get_profile(profile).name  # canonical, also when called with an alias ("develop")
        self.seed = seed
        self.config = config
        self.rng = JavaRandom(seed)
        self.coverage = Coverage()
        self.schedule: list[Action] = []
        self.record_trace = record_trace
        self.states: list[dict[str, Any]] = []
        # The traced events of the current step, as ITF values (filled when recording).
        self.events: list[dict[str, Any]] = []
        self.step_no = 0
        self.model_error: ModelError | None = None
        self._prev_kind = "start"
        self._specs = {a.name: a for a in mode.actions}
        self.counts: dict[str, int] = dict.fromkeys(mode.counts, 0)
        self._subscribers: list[Subscriber] = []
        self.world = mode.world(profile, seed, config, check, self.publish, self.coverage)
        # A checker that is off ("bench --checker off", check=False) records nothing: not subscribed.
        self._subscribers = ([self.world.subscriber()] if check else []) + [self._count]
        # Weighted choice: the mode's actions the configuration keeps (all of them if it keeps
        # none of this mode's), then its faults in the configuration's order.
        kept = [a for a in mode.actions if not a.fault and a.name in config.actions] \
            or [a for a in mode.actions if not a.fault and not a.opt_in]
        faults = [self._specs[f] for f in config.faults if f in self._specs and self._specs[f].fault]
        self._choices = kept + faults
        self._cumulative: list[int] = []
        total = 0
        for spec in self._choices:
            total += spec.weight
            self._cumulative.append(total)
        self._total = total
        self._bias = config.domain_bias
        self.initial_observed = self.world.observe() if record_trace else None

    # -- the world's state, read through the engine -------------------------------------------
    @property
    def broker(self) -> Any:
        """The world's broker."""
        return self.world.broker

    @property
    def clock(self) -> VirtualClock:
        """The world's virtual clock."""
        return self.world.clock

    @property
    def checker(self) -> Any:
        """The world's property checker."""
        return self.world.checker

    # -- events ---------------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber) -> None:
        """Also hand every event published from now on to ``subscriber`` (after the world's
        checker and counts)."""
        self._subscribers.append(subscriber)

    def _count(self, event: Event, step: int, now: int) -> None:
        counter = self.mode.counters.get(type(event))
        if counter is not None:
            for key, n in counter(event):
                self.counts[key] += n

    def publish(self, event: Event) -> None:
        """Hand ``event`` to every subscriber (and to the trace when recording)."""
        step, now = self.step_no, self.world.clock.now()
        for subscriber in self._subscribers:
            subscriber(event, step, now)
        if self.record_trace and event.TRACED:
            self.events.append(event.to_json())

    # -- drawing --------------------------------------------------------------------------------
    def draw(self) -> Action:
        """Draw the next action and its arguments from the run's generator (with the
        configuration's boundary bias, if any)."""
        spec = self._choices[bisect.bisect_right(self._cumulative, self.rng.next_int(self._total))]
        args = spec.draw_args(self.rng, self.world)
        if self._bias:
            args = self._biased(spec, args)
        return Action(spec.name, args)

    def _biased(self, spec: ActionSpec, args: tuple) -> tuple:
        """Each value argument, with probability ``domain_bias`` %, replaced by one of its
        domain's boundaries (popverify/sim/domain.py#boundaries)."""
        out = list(args)
        for i, arg in enumerate(spec.args):
            if arg.value and self.rng.next_int(100) < self._bias:
                edges = boundaries(arg)
                out[i] = edges[self.rng.next_int(len(edges))]
        return tuple(out)

    # -- running --------------------------------------------------------------------------------
    def apply(self, action: Action, drawn: bool = False) -> bool:
        """Perform one action; False when it does not apply in this state (a no-op).

        ValueError when its arguments do not fit the declaration (checked before the model is
        called; ``drawn`` ones come from the declaration's own draw and are not checked again);
        an exception inside reference/ ends the run as a MODEL-ERROR finding.
        """
        spec = self._specs.get(action.kind)
        if spec is None:
            return False
        if not drawn:
            spec.check(action.args)
        if self.domain is not None:
            self.domain.observe(self.mode.name, spec, action.args)
        apply = spec.bind(self.world)
        ok, error = call_model(lambda: apply(*action.args))
        if error is not None:
            self._model_error(error)
            return False
        if ok and spec.fault:
            self.counts["faults"] += 1
            self.publish(FaultInjected(action.kind))
        self.coverage.add(f"action:{action.kind}:{'ok' if ok else 'skip'}")
        return bool(ok)

    def step(self, action: Action, drawn: bool = False) -> bool:
        """One step of the run (number ``step_no``, which then moves on by one): apply, count,
        cover, record the schedule, check the state, record the trace. Returns whether the
        action applied. ``drawn``: the action came from ``draw`` (its arguments fit)."""
        i = self.step_no
        self.coverage.step = i
        self.events = []
        applied = self.apply(action, drawn)
        if not applied:
            self.counts["skipped"] += 1
        self.coverage.add(f"edge:{self._prev_kind}>{action.kind}:{int(applied)}")
        self.world.cover_step(action.kind, applied)
        self._prev_kind = action.kind
        self.schedule.append(action)
        self.world.check_state(i)
        if self.record_trace:
            self._record(action, applied)
        self.step_no = i + 1
        return applied

    def run(self, steps: int, schedule: Sequence[Action] | None) -> None:
        """Run the given schedule, continued by drawn actions up to ``steps``, then the drain."""
        plan = list(schedule) if schedule is not None else []
        # A given schedule is followed first; up to ``steps``, drawn actions continue it (how
        # coverage-guided rounds extend a corpus prefix; replay and shrink pass steps <= len).
        total = max(len(plan), steps)
        for i in range(total):
            if i < len(plan):
                self.step(plan[i])
            else:
                self.step(self.draw(), drawn=True)
            if self.model_error is not None:
                return  # a model exception ends the run as a MODEL-ERROR finding
        self.step_no = total
        self.coverage.step = total
        drained = False
        if self.config.drain:
            self.events = []
            drained, error = call_model(self.world.drain)
            if error is not None:
                self._model_error(error)
                if self.record_trace:
                    self._record(Action("drain"), False)
                return
            if self.record_trace:
                self._record(Action("drain"), drained)
        self.world.finish(drained, total)

    def _model_error(self, error: ModelError) -> None:
        """A model exception: the run ends with a MODEL-ERROR violation at this step (loud even
        with the checker off); the traceback goes into the result and the trace."""
        self.model_error = error
        self.world.checker.violations.append(Violation(MODEL_ERROR, error.message, self.step_no))
        self.publish(ModelErrorRaised(error.message, error.traceback))

    def _record(self, action: Action, applied: bool) -> None:
        state = {"step": self.step_no, "now": self.world.clock.now(),
                 "action": {"kind": action.kind, "args": list(action.args), "applied": applied},
                 "events": self.events}
        observed = self.world.observe()
        if observed is not None:
            state["observed"] = observed
        self.states.append(state)

    def result(self, mutant: str | None) -> RunResult:
        """The RunResult of the finished run (trace in ITF when recorded)."""
        result = RunResult(seed=self.seed, profile=self.profile, mode=self.mode.name, steps=len(self.schedule),
                           config=self.config, counts=dict(self.counts),
                           violations=tuple(self.world.checker.violations), coverage=self.coverage.points(),
                           first_step=dict(self.coverage.first_step),
                           schedule=tuple(self.schedule), mutant=mutant,
                           model_traceback=self.model_error.traceback if self.model_error else None)
        if self.record_trace:
            from popverify.trace.itf import trace_of
            result = attrs.evolve(result, trace=trace_of(result.trace_meta(), self.states, self.initial_observed))
        return result
