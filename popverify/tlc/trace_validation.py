"""Trace validation: check with TLC that a run of the reference model is a behaviour of a spec.

A push-mode ITF trace (from ``simulate``, ``fuzz`` or ``replay`` with ``--mode push``) records,
after every step, the state in PushConsumerOffsets' variables for each queue of the topic
(``observed``). For each queue, the projection turns the run into a log of spec steps (the
actions the Python step's events name) carrying the observed states, writes it as a TLA+ module
extending ``tlaplus/PushConsumerOffsetsTrace.tla`` and lets TLC replay it. The Python model
and the spec can then not drift apart silently: a step the spec does not allow, or a state the
spec does not reach that way, fails validation at that step. spec/trace-validation.md says what
is in scope and why.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from popverify.tlc.runner import TLAPLUS, run_model
from popverify.trace.itf import TraceError, read_trace
from reference.common.profile import canonical_profile

SPEC = "PushConsumerOffsets"
TRACE_SPEC = "PushConsumerOffsetsTrace"
TOPIC = "TopicTest"
# Python steps the spec does not model: broker restart (the broker's offsets roll back to the
# last flush) and retention (F5's territory). Orderly consumption is out of scope too.
OUT_OF_SCOPE = {"restart": "a broker restart", "expire": "retention (expire)"}
# Reference runs validated by CI and by ``popverify verify``: seeds per profile, the in-scope
# faults, 300 steps.
REFERENCE_SEEDS = {"v5.0": (3, 11), "v5.5": (7, 13)}
REFERENCE_FAULTS = ("consumer_crash", "lose_response", "dup_response", "clock_jump")
REFERENCE_STEPS = 300
# (consume_begin hands a batch to the listener: no variable of the spec moves until its
# consume_end, which is the spec's Consume like an atomic consume step)
QUIET = ("produce", "advance", "clock_jump", "hold", "lose_response", "dup_response", "drain", "consume_begin")


class ScopeError(TraceError):
    """A trace outside what the spec models: it cannot be validated (not a verdict)."""


@attrs.frozen
class LogEntry:
    """One spec step of the projected log."""

    action: str                       # Gain, Lose, Pull, Consume, ..., Stutter
    consumer: str
    offset: int = -1                  # Consume's message
    observed: dict[str, Any] | None = None
    step: int = -1                    # the Python step it comes from (-1: the consumers' start)

    def describe(self) -> str:
        arg = f"{self.consumer}, {self.offset}" if self.action == "Consume" else self.consumer
        return f"{self.action}({arg})"


@attrs.frozen
class QueueLog:
    """The projected log of one queue and the spec constants it needs."""

    queue: int
    consumers: tuple[str, ...]
    entries: tuple[LogEntry, ...]
    msgs: int
    max_crash: int
    max_rebalance: int


@attrs.frozen
class QueueVerdict:
    """TLC's verdict on one queue's log."""

    queue: int
    valid: bool
    entries: int
    replayed: int                     # log entries a behaviour of the spec followed
    python_steps: int
    distinct_states: int | None
    seconds: float
    failed_at: str | None = None      # the first entry no behaviour could take
    error: str | None = None          # TLC did not run to a verdict

    def to_json(self) -> dict[str, Any]:
        return {"queue": self.queue, "valid": self.valid, "entries": self.entries, "replayed": self.replayed,
                "python_steps": self.python_steps, "distinct_states": self.distinct_states,
                "seconds": round(self.seconds, 2), "failed_at": self.failed_at, "error": self.error}


@attrs.frozen
class ValidationResult:
    """The verdict on one trace file."""

    trace: str
    spec: str
    profile: str
    queues: tuple[QueueVerdict, ...]

    @property
    def valid(self) -> bool:
        return all(q.valid for q in self.queues)

    def to_json(self) -> dict[str, Any]:
        return {"trace": self.trace, "spec": self.spec, "profile": self.profile, "valid": self.valid,
                "queues": [q.to_json() for q in self.queues]}


def reference_trace(profile: str, seed: int, folder: Path, steps: int = REFERENCE_STEPS,
                    mutant: str | None = None, **config: Any) -> Path:
    """Run a push scenario with the reference faults (``config`` overrides the rest of the
    default push config) and write its ITF trace under ``folder``."""
    from popverify.sim.scenario import ScenarioConfig, run_scenario
    from popverify.trace.itf import write_trace

    scenario = attrs.evolve(ScenarioConfig.default_for("push"), faults=REFERENCE_FAULTS, **config)
    result = run_scenario(profile, seed, steps, mode="push", config=scenario, mutant=mutant, record_trace=True)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"push-{profile}-{seed}{'-' + mutant if mutant else ''}.itf.json"
    assert result.trace is not None
    write_trace(path, result.trace)
    return path


# -- projection -------------------------------------------------------------------------------
def project(doc: dict[str, Any]) -> list[QueueLog]:
    """The per-queue logs of a push trace; ScopeError when the run is outside the spec."""
    meta = doc["#meta"]["popverify"]
    if meta.get("mode") != "push":
        raise ScopeError(f"trace validation covers push-mode traces (PushConsumerOffsets); this trace is "
                         f"mode {meta.get('mode')!r} -- PopConsumption's abstraction (one queue, whole-queue "
                         f"batches, retry copies without checkpoints) does not cover the reference model's "
                         f"POP runs, see spec/trace-validation.md")
    from popverify.sim.scenario import config_from_trace

    config = meta.get("config", {})
    start = config_from_trace(config).start_offset
    if start:
        # PushConsumerOffsets begins every queue empty at offset 0; a run whose queues begin at
        # `start` (a campaign's drawn start_offset) is the same run with every offset shifted
        doc = _shifted(doc, start)
        meta = doc["#meta"]["popverify"]
    if config.get("consume_orderly"):
        raise ScopeError("an orderly push consumer (ConsumeMessageOrderlyService) is outside "
                         "PushConsumerOffsets: it has no queue locks")
    initial = meta.get("initial_observed")
    states = [s for s in doc["states"] if s.get("action", {}).get("kind") != "drain"]
    if not isinstance(initial, dict) or any("observed" not in s for s in states):
        raise ScopeError("the trace has no observed states (written by a popverify older than trace validation)")
    for state in states:
        kind = state["action"]["kind"]
        if state["action"].get("applied") and kind in OUT_OF_SCOPE:
            raise ScopeError(f"step {state['step']} is {OUT_OF_SCOPE[kind]}, which PushConsumerOffsets "
                             f"does not model")
    logs = []
    for q, start in enumerate(initial["queues"]):
        consumers = tuple(sorted(start["alive"]))
        entries = [LogEntry("Gain", c) for c in consumers if start["owns"][c]] or [LogEntry("Stutter", consumers[0])]
        entries[-1] = attrs.evolve(entries[-1], observed=start)
        prev, msgs = start, 0
        for state in states:
            cur = state["observed"]["queues"][q]
            for event in state["events"]:
                if event.get("type") == "produce" and event.get("queue") == q:
                    msgs = max(msgs, event["offset"] + 1)
            labels = _labels(state, q, prev, cur) or [("Stutter", consumers[0], -1)]
            step = state["step"]
            entries += [LogEntry(a, c, x, step=step) for a, c, x in labels]
            entries[-1] = attrs.evolve(entries[-1], observed=cur)
            prev = cur
        logs.append(QueueLog(q, consumers, tuple(entries), msgs,
                             sum(e.action == "Crash" for e in entries),
                             sum(e.action in ("Gain", "Lose") for e in entries) + 1))
    return logs


def _shifted(doc: dict[str, Any], start: int) -> dict[str, Any]:
    """The push trace with every offset of the consumed topic's queues moved down by ``start``
    (their first offset; -1, "none", stays); ScopeError for an offset below ``start``."""
    import copy

    def down(x: int) -> int:
        if x == -1:
            return -1
        if x < start:
            raise ScopeError(f"offset {x} below the queues' start {start}: not a shift of a run from 0")
        return x - start

    def observed(obs: dict[str, Any]) -> None:
        for q in obs["queues"]:
            for key in ("local", "next"):
                q[key] = {c: down(v) for c, v in q[key].items()}
            q["committed"] = down(q["committed"])
            q["pq"] = {c: [down(x) for x in v] for c, v in q["pq"].items()}
            q["consumed"] = [down(x) for x in q["consumed"]]

    doc = copy.deepcopy(doc)
    if isinstance(doc["#meta"]["popverify"].get("initial_observed"), dict):
        observed(doc["#meta"]["popverify"]["initial_observed"])
    prefix = f"{TOPIC}:"
    for state in doc["states"]:
        if "observed" in state:
            observed(state["observed"])
        for event in state["events"]:
            if event.get("type") == "produce":
                event["offset"] = down(event["offset"])
            elif str(event.get("queue", "")).startswith(prefix):
                for key in ("offsets", "sent_back"):
                    if key in event:
                        event[key] = [down(x) for x in event[key]]
    return doc


def _labels(state: dict[str, Any], q: int, prev: dict[str, Any], cur: dict[str, Any]) -> list[tuple[str, str, int]]:
    """The spec steps (action, consumer, offset) one Python step names for queue ``q``."""
    action = state["action"]
    kind = action["kind"]
    if not action.get("applied") or kind in QUIET:
        return []
    events = state["events"]
    event = events[0] if events else {}
    c = event.get("consumer") or f"c{action['args'][0] % len(prev['alive'])}"
    queue = f"{TOPIC}:{q}"
    if kind == "rebalance":
        return ([("Lose", c, -1)] if queue in event["removed"] else []) + \
               ([("Gain", c, -1)] if queue in event["added"] else [])
    if kind == "start":
        return [("Start", c, -1)] + ([("Gain", c, -1)] if cur["owns"][c] else [])
    if kind == "shutdown":   # persistConsumerOffset, then the ProcessQueues are dropped
        persisted = prev["owns"][c] and prev["local"][c] >= 0
        return ([("Persist", c, -1)] if persisted else []) + [("Crash", c, -1)]
    if kind == "consumer_crash":
        return [("Crash", c, -1)]
    if kind == "persist":
        return [("Persist", c, -1)] if prev["owns"][c] and prev["local"][c] >= 0 else []
    if kind == "pull":       # the pull's commitOffset (sent only when > 0)
        return [("Persist", c, -1)] if event.get("queue") == queue and event.get("commit_offset", 0) > 0 else []
    if kind == "deliver":
        if event.get("queue") != queue:
            return []
        added = set(cur["pq"][c]) - set(prev["pq"][c])
        if added:
            return [("Pull", c, -1)] * len(added)
        return [("CorrectTagsOffset", c, -1)] if cur["local"][c] != prev["local"][c] else []
    if kind in ("consume", "consume_end"):
        if event.get("queue") != queue or event.get("dropped"):
            return []
        ok = event["status"] in ("CONSUME_SUCCESS", "SUCCESS", "COMMIT")
        return [("Consume", c, x) for x in (event["offsets"] if ok else event["sent_back"])]
    if kind == "consumer_timer":
        gone = set(prev["pq"][c]) - set(cur["pq"][c]) if cur["owns"][c] else set()
        return [("CleanExpired", c, -1)] * len(gone)
    return []


# -- TLA+ ---------------------------------------------------------------------------------------
def tla_value(value: Any) -> str:
    """A JSON-like value as a TLA+ expression: dicts as records, lists of offsets as sets."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        if not value:
            return "[x \\in {} |-> 0]"
        return "[" + ", ".join(f"{k} |-> {tla_value(v)}" for k, v in value.items()) + "]"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "{" + ", ".join(tla_value(v) for v in sorted(value)) + "}"
    raise TypeError(f"no TLA+ form for {type(value).__name__}")


def _observation(obs: dict[str, Any] | None) -> str:
    if obs is None:
        return tla_value({})
    fields = {k: obs[k] for k in ("alive", "owns", "local", "next", "committed")}
    fields["pq"] = {c: set(v) for c, v in obs["pq"].items()}
    fields["consumed"] = set(obs["consumed"])
    return tla_value(fields)


def trace_module(log: QueueLog, name: str) -> str:
    """The model module holding the log."""
    rows = [f'    [a |-> "{e.action}", c |-> "{e.consumer}", x |-> {e.offset}, obs |-> {_observation(e.observed)}]'
            for e in log.entries]
    return "\n".join([
        f"---- MODULE {name} ----",
        f"EXTENDS {TRACE_SPEC}",
        f"TraceConsumers == {tla_value(set(log.consumers))}",
        "TraceLog == <<",
        ",\n".join(rows),
        ">>",
        "====",
        ""])


def trace_config(log: QueueLog, profile: str) -> str:
    """The TLC config replaying the log."""
    return "\n".join([
        f"CONSTANTS Consumers <- TraceConsumers  Log <- TraceLog  Msgs = {log.msgs}",
        f"  MaxCrash = {log.max_crash}  MaxRebalance = {log.max_rebalance}  Profile = \"{profile}\"",
        "INIT TraceInit",
        "NEXT TraceNext",
        "INVARIANT LogNotReplayed",
        "CHECK_DEADLOCK FALSE",
        ""])


def validate_log(log: QueueLog, profile: str, workers: int = 1, tlaplus: Path = TLAPLUS,
                 checked: dict[tuple[str, str], Any] | None = None) -> QueueVerdict:
    """Run TLC on one queue's log (against the specs in ``tlaplus``). ``checked`` holds TLC's
    results by log text: a queue whose log is another's (same entries, consumers and bounds; a
    wide push run has many idle queues with the same log) reuses its result (seconds 0)."""
    name = f"MCTrace_q{log.queue}"
    python_steps = len({e.step for e in log.entries if e.step >= 0})
    key = (trace_module(log, "MCTrace"), trace_config(log, profile))
    result = None if checked is None else checked.get(key)
    seconds = 0.0
    if result is None:
        with tempfile.TemporaryDirectory(prefix="popverify-validate-") as tmp:
            work = Path(tmp)
            for tla in (SPEC, TRACE_SPEC):
                shutil.copy(tlaplus / f"{tla}.tla", work / f"{tla}.tla")
            (work / f"{name}.tla").write_text(trace_module(log, name), encoding="utf-8")
            cfg = work / f"{name}.cfg"
            cfg.write_text(key[1], encoding="utf-8")
            result = run_model(cfg, workers=workers, spec=work / f"{name}.tla")
        seconds = result.seconds
        if checked is not None:
            checked[key] = result
    if result.violated == "LogNotReplayed":
        return QueueVerdict(log.queue, True, len(log.entries), len(log.entries), python_steps,
                            result.distinct_states, seconds)
    if result.result == "ok" and result.depth is not None:
        # Depth d: the longest behaviour has states l = 0 .. d-1, so entry d was not taken.
        failed = log.entries[min(result.depth, len(log.entries)) - 1]
        where = "the consumers' start" if failed.step < 0 else f"Python step {failed.step}"
        return QueueVerdict(log.queue, False, len(log.entries), result.depth - 1, python_steps,
                            result.distinct_states, seconds,
                            failed_at=f"{where}: {failed.describe()} is not a step of {SPEC} "
                                      f"to the observed state")
    return QueueVerdict(log.queue, False, len(log.entries), 0, python_steps, result.distinct_states,
                        seconds, error=result.output_tail)


def validate_trace(path: Path, workers: int = 1, queues: Iterable[int] | None = None,
                   tlaplus: Path = TLAPLUS) -> ValidationResult:
    """Validate one trace file (every queue, or those given); TraceError / ScopeError when the
    file cannot be validated at all."""
    doc = read_trace(path)
    logs = project(doc)
    wanted = set(queues) if queues is not None else None
    try:  # traces written before profiles were named after releases say "develop"
        profile = canonical_profile(doc["#meta"]["popverify"]["profile"])
    except ValueError as err:
        raise TraceError(str(err)) from None
    checked: dict[tuple[str, str], Any] = {}
    verdicts = tuple(validate_log(log, profile, workers, tlaplus, checked) for log in logs
                     if wanted is None or log.queue in wanted)
    return ValidationResult(str(path), SPEC, profile, verdicts)
