"""Write and read run traces in the Informal Trace Format (ITF).

Format: https://apalache-mc.org/docs/adr/015adr-trace.html — ``{"#meta": {...}, "vars":
[...], "states": [{"#meta": {"index": i}, var: value, ...}]}`` with integers outside the
JSON-safe range as ``{"#bigint": "..."}``. ``#meta.popverify`` carries everything needed to
re-execute the run (profile, mode, seed, config, mutant and the schedule); each state holds
the step, virtual time, the action and the typed events it produced.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from popverify import __version__
from popverify.sim.scenario import Action, RunResult, ScenarioConfig

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
            return int(value["#bigint"])
        if set(value) == {"#tup"} or set(value) == {"#set"}:
            return [_decode(v) for v in next(iter(value.values()))]
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def trace_of(result: RunResult, states: list[dict[str, Any]],
             initial_observed: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ITF document of a run whose per-step states were recorded (``initial_observed``:
    the observed state before the first step, for trace validation)."""
    meta = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "popverify",
        "description": f"popverify {result.mode} run, profile {result.profile}, seed {result.seed}",
        "popverify": {
            "version": __version__, "profile": result.profile, "mode": result.mode, "seed": result.seed,
            "steps": result.steps, "config": result.config.to_json(), "mutant": result.mutant,
            "schedule": [a.to_json() for a in result.schedule],
            "outcome": result.summary(),
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
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise TraceError(f"cannot read trace {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise TraceError(f"trace {path} is not UTF-8 text") from err
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise TraceError(f"trace {path} is not valid JSON: {err.msg} at line {err.lineno}") from err
    if not isinstance(doc, dict) or "states" not in doc or "#meta" not in doc or not isinstance(doc["states"], list):
        raise TraceError(f"{path} is not an ITF trace (needs #meta, vars and states)")
    meta = doc["#meta"].get("popverify") if isinstance(doc["#meta"], dict) else None
    if not isinstance(meta, dict):
        raise TraceError(f"{path} is an ITF trace but not one written by popverify (no #meta.popverify)")
    return _decode(doc)


def run_spec(doc: dict[str, Any]) -> dict[str, Any]:
    """The arguments to re-execute a trace: profile, mode, seed, config, schedule, mutant, steps."""
    meta = doc["#meta"]["popverify"]
    try:
        schedule = tuple(Action.from_json(a) for a in meta["schedule"])
        config = ScenarioConfig.from_json(meta["config"])
        spec = {"profile": meta["profile"], "mode": meta["mode"], "seed": int(meta["seed"]),
                "config": config, "schedule": schedule, "mutant": meta.get("mutant")}
    except (KeyError, TypeError, ValueError) as err:
        raise TraceError(f"trace metadata is incomplete or malformed: {err}") from err
    if not isinstance(spec["profile"], str) or not isinstance(spec["mode"], str):
        raise TraceError("trace metadata is malformed: profile and mode must be strings")
    return spec


def timeline(states: list[dict[str, Any]]) -> list[str]:
    """One readable line per state: step, time, action and its events (receipt handles left out)."""
    rows = []
    for state in states:
        action = state["action"]
        events = "; ".join(", ".join(f"{k}={v}" for k, v in e.items() if k != "handle") for e in state["events"])
        rows.append(f"#{state['step']} t={state['now']} {action['kind']}{tuple(action['args'])}"
                    + (f" → {events}" if events else ""))
    return rows
