"""The model's schedules replayed on the lockstep harness (RocketMQ's real broker classes,
popverify/conformance/lockstep.py and confirm.py) for coverage: a fuzz campaign's corpus
(the Parquet runs `popverify fuzz --out DIR` writes), or, without one, a short blind
campaign computed here exactly as a campaign's first round computes it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from popverify.errors import UsageError
from popverify.sim.scenario import Action, ScenarioConfig


@attrs.frozen
class Schedule:
    """One run of a campaign: what the model ran, to be replayed on Java."""

    seed: int
    config: ScenarioConfig
    actions: tuple[Action, ...]
    mutant: str | None = None
    source: str = "corpus"  # "corpus" | the ITF trace file it came from


def load_corpus(corpus: Path, profile: str, limit: int, mode: str = "pop") -> list[Schedule]:
    """The ``mode`` runs of ``profile`` in a campaign folder, by seed, at most ``limit``. A
    UsageError when the folder holds none (a typo'd path must not measure nothing)."""
    from popverify.fuzz import store

    if not store.runs_dir(corpus).is_dir():
        raise UsageError(f"{corpus} is not a fuzz campaign folder (no runs/ with Parquet from `popverify fuzz --out`)")
    rows = store.load_rows(corpus, profile, mode)
    if not rows:
        raise UsageError(f"{corpus} has no {mode.upper()} runs of profile {profile}")
    return [Schedule(row["seed"], ScenarioConfig.from_json(json.loads(row["config"])),
                     tuple(Action.from_json(a) for a in json.loads(row["schedule"])))
            for _, row in sorted(rows.items())[:limit]]


def load_traces(paths: Sequence[Path], profile: str, mode: str = "pop") -> list[Schedule]:
    """The ``mode`` schedules of ``profile`` among popverify ITF traces (``simulate --trace``, a
    campaign's minimal counterexamples under ``traces/``); traces of another profile, or of the
    other mode, are left for that replay. A UsageError for a file that is not a popverify trace
    (a TLC counterexample is a behaviour of a spec, not a model schedule)."""
    from popverify.sim.scenario import run_spec
    from popverify.trace.itf import TraceError, read_trace

    out = []
    for path in paths:
        try:
            spec = run_spec(read_trace(path))
        except TraceError as err:
            raise UsageError(f"{path}: {err} (coverage replays popverify's own traces)") from err
        if spec["mode"] == mode and spec["profile"] == profile:
            out.append(Schedule(spec["seed"], spec["config"], spec["schedule"], spec["mutant"], str(path)))
    return out


def campaign_traces(corpus: Path, profile: str, mode: str = "pop") -> list[Path]:
    """A campaign folder's minimal ``mode`` counterexamples of ``profile`` (``DIR/traces``)."""
    return sorted((corpus / "traces").glob(f"{profile}-{mode}-*.itf.json"))


def short_campaign(out: Path, profile: str, runs: int, steps: int, mode: str = "pop") -> Path:
    """A blind campaign of ``runs`` ``mode`` runs under ``out`` (the rows a campaign's round 0
    writes, computed in this process by the same ``run_row``: no Spark start-up for a handful
    of runs). Returns ``out``, a corpus folder ``load_corpus`` reads."""
    from popverify.fuzz import store
    from popverify.fuzz.rows import run_row

    existing = store.load_rows(out, profile, mode) if store.runs_dir(out).is_dir() else {}
    missing = [seed for seed in range(runs) if seed not in existing]
    if missing:
        store.write_round(out, profile, mode, 0, [run_row(profile, mode, seed, steps, None, 0) for seed in missing])
    return out


# A replayed schedule's drain stops, on both sides, after this many rounds in a row whose POP got
# only messages the drain had already got (and acked), as five quiet rounds end it (Lockstep's
# stale_drain_rounds). A drain makes no such rounds unless an ack is lost: on v5.0 a queue id past
# 127 (finding F9) redelivers the same messages in every round, 400 rounds of POPs over every queue
# whose compared state grows each round (a 255-queue corpus run: 20 rounds 20 s, 120 rounds 450 s
# without JaCoCo). On /work/corpus/cov only those runs make such rounds at all. A drain stopped
# here is counted (``drains_cut``); neither side then checks the drain's liveness properties
# (PopChecker#finish with drained False).
STALE_DRAIN_ROUNDS = 5
MAX_INSERTED_STEPS = 256  # pop_steps inserted to finish one POP: far above any POP's store reads
# Actions after which virtual time has passed: PopLongPollingService checks its parked requests
# every 20 ms, so the replay runs its timeout scan (``long_poll``) right after each of them.
TIME_PASSING = frozenset({"advance", "clock_jump", "scan_stall"})


@attrs.define
class Adapted:
    """A schedule as the lockstep harness can run it, decided action by action from the
    replay's state (an iterable ``Lockstep.run`` consumes one action at a time):

    - what the model ran inside an in-flight POP runs inside it on Java too (its interleave),
      except what the harness cannot run there (confirm's ``runs_inside``: a second POP, a
      restart, anything inside a woken re-run): before that, ``pop_step`` actions of the POP's
      consumer are inserted until it answers;
    - a long-polling POP parks on both sides (confirm.py, long_poll_replay.py); while one is
      parked, a ``long_poll`` (the polling service's timeout scan) follows every action after
      which time has passed (TIME_PASSING), as Java's service wakes a timed-out request within
      20 ms, not when the schedule's next ``long_poll`` comes;
    - an action of a kind the harness cannot run (not in ``harness_kinds``, confirm's
      LOCKSTEP_KINDS) is dropped and counted by kind; every other kind runs, retention, topic
      deletion, refused puts and scan stalls included.

    What was changed is counted; ``len`` is the number of actions handed out so far."""

    actions: tuple[Action, ...]
    lockstep: Any
    consumers: int
    harness_kinds: frozenset[str]
    ran: list[Action] = attrs.Factory(list)
    inserted: int = 0
    dropped: dict[str, int] = attrs.Factory(dict)  # kind -> actions dropped
    polls: int = 0  # long_poll steps inserted

    def __iter__(self):
        from popverify.conformance.confirm import runs_inside

        for action in self.actions:
            if action.kind not in self.harness_kinds:
                self.dropped[action.kind] = self.dropped.get(action.kind, 0) + 1
                continue
            for _ in range(MAX_INSERTED_STEPS):
                pending = self.lockstep.pending
                if pending is None or (runs_inside(pending, action, self.consumers)
                                       and not self._reruns_woken(action)):
                    break
                self.inserted += 1
                yield self._ran(Action("pop_step", (pending.consumer,)))
            yield self._ran(action)
            if action.kind in TIME_PASSING and self.lockstep.long_polls.parked:
                self.polls += 1
                yield self._ran(Action("long_poll", ()))

    def _reruns_woken(self, action: Action) -> bool:
        """Whether ``action`` lets time pass while a woken long-polling POP waits for its re-run,
        or crashes or closes the consumer of such a POP.
        The model's PopWorld#_settle_requests then re-runs it (a woken request has no popTime,
        so it is always settled) before the in-flight POP's remaining queue visits, and Java
        cannot run a re-run inside another POP: the in-flight POP is stepped to its answer
        first, on both sides (seen on v5.5 corpus seed 12: the re-run took the orderly queue's
        message first on the model only)."""
        polls = self.lockstep.long_polls
        if action.kind in ("consumer_crash", "consumer_close"):
            # polling4: the crash runs the consumer's woken POP to its end on the model
            # (PopWorld#crash: run_to_end), and Java's re-run can only run once the in-flight POP
            # has answered with what the model ran inside it: the put that woke it among them
            # (offsets' v5.0 corpus seeds 23, 1099512627785: runWoken found no re-run queued)
            op = self.lockstep.driver.world.consumers[action.args[0] % self.consumers].op
            return any(p.op is op for p in polls.woken)
        return action.kind in TIME_PASSING and bool(polls.woken or polls.orphans_woken)

    def _ran(self, action: Action) -> Action:
        self.ran.append(action)
        return action

    def __len__(self) -> int:
        return len(self.ran)


def stop_record(schedule: Schedule, verdict: Any) -> dict[str, Any]:
    """Where one replayed schedule stopped (a divergence or an out-of-scope step), by seed: the
    entries of a replay summary's ``divergences`` (push_replay's too)."""
    return {"seed": schedule.seed, "source": schedule.source, "status": verdict.status, "step": verdict.step,
            "action": list(verdict.action), "key": verdict.key, "model": verdict.model, "java": verdict.java,
            "why": verdict.why}


def add_stop(stops: dict[str, int], seeds: dict[str, list[int]], why: str, schedule: Schedule) -> None:
    """Count one stop of class ``why`` and note its schedule's seed (the summary's ``stops`` and
    ``stop_seeds``: which schedules to replay one by one for each class)."""
    stops[why] = stops.get(why, 0) + 1
    seeds.setdefault(why, []).append(schedule.seed)


def replay(release: str, profile: str, jvm_args: Sequence[str], schedules: Sequence[Schedule],
           progress: Callable[[str], None] = lambda _: None, adapt: bool = True,
           stale_drain_rounds: int = STALE_DRAIN_ROUNDS) -> dict[str, Any]:
    """Replay ``schedules`` on one lockstep JVM of ``release`` started with ``jvm_args``,
    each ``Adapted`` to the harness's scope unless ``adapt`` is False, its drain stopped on both
    sides after ``stale_drain_rounds`` rounds in a row that got only messages it had got. Coverage counts what Java ran whether or not it
    agreed with the model; the verdicts (agrees / diverges / out of scope), the stops by class
    with their seeds and the adaptations are counted beside it."""
    from popverify.conformance.lockstep import LockstepClient, LockstepError
    try:
        from popverify.conformance.confirm import LOCKSTEP_KINDS, Lockstep, divergence_class
    except ImportError as err:  # confirm (issue 15) not in this build: the lockstep source fails loudly
        raise LockstepError(f"lockstep replay is not available: {err}") from err
    from popverify.mutants import applied

    statuses: dict[str, int] = {}
    stops: dict[str, int] = {}
    stop_seeds: dict[str, list[int]] = {}
    divergences: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    actions = ran = compared = inserted = polls = cut = 0
    traces = sum(1 for s in schedules if s.source != "corpus")
    with LockstepClient(release, jvm_args) as client:
        for i, schedule in enumerate(schedules):
            with applied(schedule.mutant):
                # every Lockstep begins with the harness's init: one JVM serves the whole corpus
                lockstep = Lockstep(profile, schedule.seed, schedule.config, client,
                                    stale_drain_rounds=stale_drain_rounds)
                plan = Adapted(schedule.actions, lockstep, schedule.config.consumers, LOCKSTEP_KINDS) \
                    if adapt else schedule.actions
                verdict = lockstep.run(plan)
            statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
            cut += lockstep.drain_cut
            if verdict.status != "agrees":
                # where replays stop bounds what they can cover: the first stop of each kind
                why = divergence_class(verdict) if verdict.status == "diverges" else f"out of scope: {verdict.why}"
                add_stop(stops, stop_seeds, why, schedule)
                divergences.append(stop_record(schedule, verdict))
            actions += len(schedule.actions)
            ran += len(plan)
            compared += verdict.steps
            if isinstance(plan, Adapted):
                inserted, polls = inserted + plan.inserted, polls + plan.polls
                for kind, n in plan.dropped.items():
                    dropped[kind] = dropped.get(kind, 0) + n
            if i % 10 == 9:
                progress(f"{release}: {i + 1}/{len(schedules)} schedules replayed")
    # A replay stops at its first divergence or out-of-scope step: Java ran (and JaCoCo counted)
    # the actions up to there (actions_run, with inserted pop_steps; steps_compared counts each
    # drain round as one step).
    return {"harness": "lockstep", "schedules": len(schedules), "traces": traces, "actions": actions,
            "actions_run": ran, "steps_compared": compared, "verdicts": dict(sorted(statuses.items())),
            "adapted": adapt, "pop_steps_inserted": inserted,
            "dropped": dict(sorted(dropped.items())), "stale_drain_rounds": stale_drain_rounds,
            "drains_cut": cut,
            "long_polls_inserted": polls, "stops": dict(sorted(stops.items())),
            "stop_seeds": dict(sorted(stop_seeds.items())), "divergences": divergences}
