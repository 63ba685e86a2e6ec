"""Write and read run traces in the Informal Trace Format (ITF).

Format: https://apalache-mc.org/docs/adr/015adr-trace.html — ``{"#meta": {...}, "vars":
[...], "states": [{"#meta": {"index": i}, var: value, ...}]}`` with integers outside the
JSON-safe range as ``{"#bigint": "..."}``. ``#meta.popverify`` carries everything needed to
re-execute the run (profile, mode, seed, config, mutant and the schedule); each state holds
the step, virtual time, the action and the typed events it produced.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from popverify import __version__
from popverify.trace.schedule import Action

# Bounds on what a trace may ask (README "Bounds"): a schedule is replayed step by step and
# every millisecond of virtual time passes in service slices, so a trace asking for
# ``["advance", 10**12]`` would run for hours. Drawn schedules stay far below these.
MAX_TRACE_STEPS = 200_000
MAX_TRACE_BYTES = 256 * 2 ** 20
MAX_ADVANCE_MS = 3_600_000            # one advance or clock_jump action: at most one hour
MAX_TRACE_VIRTUAL_MS = 6 * 3_600_000  # all advance/clock_jump actions of a trace together
MAX_INVISIBLE_TIME_MS = 3_600_000
JAVA_INT = 2 ** 31                    # other integer arguments are Java ints
MAX_ARG_CHARS = 1_000
_TIME_ACTIONS = ("advance", "clock_jump")

ITF_VARS = ["step", "now", "action", "events"]
# Push traces add ``observed``: the state in PushConsumerOffsets' variables after the step.
_SAFE = 2 ** 53


class TraceError(ValueError):
    """A trace file that is not a popverify ITF trace (corrupt, foreign or truncated)."""


def _encode(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -_SAFE < value < _SAFE else {"#bigint": str(value)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    raise TypeError(f"cannot encode {type(value).__name__} in ITF")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"#bigint"}:
            digits = value["#bigint"]
            if not isinstance(digits, str) or not re.fullmatch(r"-?\d{1,40}", digits):
                raise TraceError(f"malformed #bigint {str(digits)[:40]!r} (at most 40 digits)")
            return int(digits)
        if set(value) == {"#tup"} or set(value) == {"#set"}:
            return [_decode(v) for v in next(iter(value.values()))]
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def decode(value: Any) -> Any:
    """An ITF value as plain JSON values (``#bigint`` as int, ``#tup``/``#set`` as lists);
    TraceError for a malformed ``#bigint``."""
    return _decode(value)


def trace_of(run: dict[str, Any], states: list[dict[str, Any]],
             initial_observed: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ITF document of a run whose per-step states were recorded.

    ``run`` holds profile, mode, seed, steps, config (JSON), mutant, schedule (JSON) and
    outcome (the run's summary): popverify/sim/engine.py#RunResult.trace_meta.
    ``initial_observed``: the observed state before the first step, for trace validation."""
    meta = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "popverify",
        "description": f"popverify {run['mode']} run, profile {run['profile']}, seed {run['seed']}",
        "popverify": {
            "version": __version__, "profile": run["profile"], "mode": run["mode"], "seed": run["seed"],
            "steps": run["steps"], "config": run["config"], "mutant": run["mutant"],
            "schedule": run["schedule"], "outcome": run["outcome"],
        },
    }
    if initial_observed is not None:
        meta["popverify"]["initial_observed"] = initial_observed
    itf_states = [{"#meta": {"index": i}, **state} for i, state in enumerate(states)]
    variables = ITF_VARS + (["observed"] if states and "observed" in states[0] else [])
    return _encode({"#meta": meta, "vars": variables, "states": itf_states})


def write_trace(path: Path, trace: dict[str, Any]) -> None:
    """Write an ITF document as canonical JSON (stable bytes for the same run)."""
    path.write_text(json.dumps(trace, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def read_trace(path: Path) -> dict[str, Any]:
    """Read and validate a popverify ITF trace; TraceError says what is wrong."""
    try:
        # a device or FIFO (/dev/zero) would be read forever, a huge file into memory
        if Path(path).exists() and not Path(path).is_file():
            raise TraceError(f"cannot read trace {path}: not a regular file")
        if Path(path).exists() and Path(path).stat().st_size > MAX_TRACE_BYTES:
            raise TraceError(f"trace {path} is larger than {MAX_TRACE_BYTES // 2 ** 20} MiB")
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise TraceError(f"cannot read trace {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise TraceError(f"trace {path} is not UTF-8 text") from err
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise TraceError(f"trace {path} is not valid JSON: {err.msg} at line {err.lineno}") from err
    except ValueError as err:  # e.g. an integer literal beyond Python's digit limit
        raise TraceError(f"trace {path} is not usable JSON: {str(err).splitlines()[0]}") from err
    except RecursionError as err:
        raise TraceError(f"trace {path} is nested too deeply") from err
    if not isinstance(doc, dict) or "states" not in doc or "#meta" not in doc or not isinstance(doc["states"], list):
        raise TraceError(f"{path} is not an ITF trace (needs #meta, vars and states)")
    meta = doc["#meta"].get("popverify") if isinstance(doc["#meta"], dict) else None
    if not isinstance(meta, dict):
        raise TraceError(f"{path} is an ITF trace but not one written by popverify (no #meta.popverify)")
    try:
        return _decode(doc)
    except RecursionError as err:
        raise TraceError(f"trace {path} is nested too deeply") from err


def trace_spec(doc: dict[str, Any], modes: Sequence[str]) -> dict[str, Any]:
    """The arguments to re-execute a trace as the trace holds them: profile, mode (one of
    ``modes``), seed, config (its JSON object), schedule (Actions), mutant.

    TraceError for anything a run could not start from or would not finish in bounded time:
    unknown profile, mode or mutant, a config that is not an object, a seed that is not a
    64-bit integer, or a schedule beyond the bounds above. The config's fields are checked by
    the simulator (popverify/sim/scenario.py#run_spec)."""
    from popverify.mutants import MUTANTS
    from reference.common.profile import PROFILE_ALIASES, PROFILE_NAMES, canonical_profile

    MODES = tuple(modes)
    meta = doc["#meta"]["popverify"]
    for key in ("profile", "mode", "seed", "config", "schedule"):
        if key not in meta:
            raise TraceError(f"trace metadata is incomplete: no {key}")
    profile, mode, seed, mutant = meta["profile"], meta["mode"], meta["seed"], meta.get("mutant")
    if not isinstance(profile, str) or (profile not in PROFILE_NAMES and profile not in PROFILE_ALIASES):
        raise TraceError(f"trace names an unknown profile {short(profile)}; known: {', '.join(PROFILE_NAMES)}")
    profile = canonical_profile(profile)  # traces written before the rename say "develop"
    if not isinstance(mode, str) or mode not in MODES:
        raise TraceError(f"trace names an unknown mode {short(mode)}; known: {', '.join(MODES)}")
    if mutant is not None and (not isinstance(mutant, str) or mutant not in MUTANTS):
        raise TraceError(f"trace names an unknown mutant {short(mutant)}")
    if type(seed) is not int or not -2 ** 63 <= seed < 2 ** 63:
        raise TraceError(f"trace seed {short(seed)} is not a 64-bit integer")
    schedule = _schedule(meta["schedule"])
    config = meta["config"]
    if not isinstance(config, dict):
        raise TraceError("trace config is not an object")
    return {"profile": profile, "mode": mode, "seed": seed, "config": config, "schedule": schedule,
            "mutant": mutant}


def short(value: Any) -> str:
    """``repr(value)``, cut to 60 characters (for error messages)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _schedule(raw: Any) -> tuple[Action, ...]:
    """The schedule, every action checked against the bounds (TraceError names the first
    offending step)."""
    if not isinstance(raw, list):
        raise TraceError("trace schedule is not a list")
    if len(raw) > MAX_TRACE_STEPS:
        raise TraceError(f"trace schedule has {len(raw)} steps; at most {MAX_TRACE_STEPS} are replayed")
    schedule = []
    virtual = 0
    for step, entry in enumerate(raw):
        try:
            action = Action.from_json(entry)
        except ValueError as err:
            raise TraceError(f"trace schedule step {step}: {short(entry)} is not an action") from err
        if len(action.kind) > MAX_ARG_CHARS:
            raise TraceError(f"trace schedule step {step}: action kind longer than {MAX_ARG_CHARS} characters")
        for arg in action.args:
            if isinstance(arg, str) and len(arg) > MAX_ARG_CHARS:
                raise TraceError(f"trace schedule step {step}: argument longer than {MAX_ARG_CHARS} characters")
            if type(arg) is int and not -JAVA_INT <= arg < JAVA_INT:
                raise TraceError(f"trace schedule step {step}: argument {arg} is outside a Java int")
        if action.kind in _TIME_ACTIONS and action.args and type(action.args[0]) is int:
            ms = action.args[0]
            if not 0 <= ms <= MAX_ADVANCE_MS:
                raise TraceError(f"trace schedule step {step}: {action.kind} {ms} ms is outside 0..{MAX_ADVANCE_MS} "
                                 "ms (one hour of virtual time per action)")
            virtual += ms
            if virtual > MAX_TRACE_VIRTUAL_MS:
                raise TraceError(f"trace schedule asks for more than {MAX_TRACE_VIRTUAL_MS} ms of virtual time "
                                 f"(by step {step})")
        schedule.append(action)
    return tuple(schedule)


def same_value(left: Any, right: Any) -> bool:
    """Deep equality that also compares types: ``1`` is not ``true`` and ``1`` is not ``1.0``
    (Python's ``==`` says both are equal)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    return bool(left == right)


def timeline(states: list[dict[str, Any]]) -> list[str]:
    """One readable line per state: step, time, action and its events (receipt handles left out)."""
    rows = []
    for state in states:
        action = state["action"]
        events = "; ".join(", ".join(f"{k}={v}" for k, v in e.items() if k != "handle") for e in state["events"])
        rows.append(f"#{state['step']} t={state['now']} {action['kind']}{tuple(action['args'])}"
                    + (f" → {events}" if events else ""))
    return rows
