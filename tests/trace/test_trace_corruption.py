"""Corrupted traces: valid ITF traces mutated by a seeded generator (truncated, characters
flipped, values retyped, keys removed, huge and deeply nested values, unhashable values where
names belong, foreign JSON) and fed to ``replay`` (every case), ``shrink`` (cases of a small
violating trace) and ``tlc --validate`` (push cases that replay rejects or calls different).

Each case must end within a time bound in either a clean rejection (exit 2, one stderr
line, no traceback) or a correct verdict: exit 0 ("same outcome") only when the states
and outcome the file records are, value for value and type for type, those of the original.
"""

from __future__ import annotations

import copy
import json
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from popverify.cli import main

CASES_PER_CATEGORY = 40
CASE_BOUND_S = 10.0
SEED = 20261123


class CaseTimeout(Exception):
    """A case ran past CASE_BOUND_S (a hang)."""


@pytest.fixture(scope="module")
def originals(tmp_path_factory) -> dict[str, dict]:
    """Three valid traces: a clean POP run, a push run with observed states, and a small
    violating POP run (F1 of v5.0, shrunk) for shrink."""
    from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
    from popverify.sim.shrink import shrink_to_trace
    from popverify.trace.itf import write_trace

    base = tmp_path_factory.mktemp("originals")
    pop = run_scenario("v5.5", 3, 40, record_trace=True)
    push = run_scenario("v5.5", 4, 40, mode="push", record_trace=True)
    # F1's minimal schedule (tests/sim/test_sim_findings.py) padded with steps shrink removes
    config = ScenarioConfig(queues=1, consumers=1, enable_pop_buffer_merge=False)
    f1 = [Action("produce", (0,)), Action("scan", ()), Action("pop", (0, 0, False)), Action("advance", (3,)),
          Action("produce", (0,)), Action("pop_step", (0,)), Action("flush", ()), Action("consumer_crash", (0,))]
    found = run_scenario("v5.0", 0, 0, config=config, schedule=f1)
    pid = found.violations[0].property_id
    shrink_to_trace("v5.0", "pop", 0, config, found.schedule, pid, base / "violating.json")
    write_trace(base / "pop.json", pop.trace)
    write_trace(base / "push.json", push.trace)
    return {name: json.loads((base / f"{name}.json").read_text()) for name in ("pop", "push", "violating")}


# -- mutations -------------------------------------------------------------------------------------
def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indices) to a value in ``doc``."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def _pick_path(rng: random.Random, doc: Any, leaves_only: bool = False) -> tuple:
    paths = [p for p in _paths(doc) if p and (not leaves_only or not isinstance(_get(doc, p), (dict, list)))]
    # half the picks go to the run's metadata (fewer values, more consequences)
    meta = [p for p in paths if p[:2] == ("#meta", "popverify")]
    return rng.choice(meta if meta and rng.random() < 0.5 else paths)


def _retype(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return rng.choice([int(value), str(value).lower(), None])
    if isinstance(value, int):
        return rng.choice([float(value), bool(value % 2), str(value), [value], None])
    if isinstance(value, str):
        return rng.choice([len(value), [value], {"s": value}, None, True])
    if isinstance(value, list):
        return rng.choice([{str(i): v for i, v in enumerate(value)}, len(value), "list"])
    if isinstance(value, dict):
        return rng.choice([list(value.values()), "dict", 0])
    return rng.choice([0, "null", []])


def mutate(category: str, original: dict, rng: random.Random) -> str:
    """The text of one corrupted copy of ``original`` in ``category``."""
    text = json.dumps(original, sort_keys=True, indent=1)
    doc = copy.deepcopy(original)
    if category == "truncate":
        return text[:rng.randrange(0, len(text))]
    if category == "flip":
        chars = list(text)
        for _ in range(rng.randint(1, 3)):
            chars[rng.randrange(len(chars))] = rng.choice('0123456789{}[]",:tfn-.eE aZ\\')
        return "".join(chars)
    if category == "retype":
        path = _pick_path(rng, doc)
        return json.dumps(_set(doc, path, _retype(_get(doc, path), rng)))
    if category == "remove_keys":
        dict_paths = [p for p in _paths(doc) if p and isinstance(_get(doc, p[:-1]), dict)]
        for path in rng.sample(dict_paths, min(len(dict_paths), rng.randint(1, 2))):
            try:
                del _get(doc, path[:-1])[path[-1]]
            except (KeyError, TypeError):
                pass  # an ancestor went with the first removal
        return json.dumps(doc)
    if category == "huge":
        choice = rng.randrange(5)
        schedule = doc["#meta"]["popverify"]["schedule"]
        if choice == 0 and schedule:  # a time step of hours, days or years
            schedule[rng.randrange(len(schedule))] = [rng.choice(["advance", "clock_jump"]),
                                                      rng.choice([10 ** 12, 10 ** 7, 2 ** 53, -1])]
            return json.dumps(doc)
        path = _pick_path(rng, doc, leaves_only=True)
        if choice == 1:
            return json.dumps(_set(doc, path, 10 ** rng.randint(15, 4000)))
        if choice == 2:
            return json.dumps(_set(doc, path, {"#bigint": "9" * rng.randint(20, 6000)}))
        if choice == 3:
            return json.dumps(_set(doc, path, "x" * rng.randint(10 ** 4, 10 ** 6)))
        return json.dumps(_set(doc, path, list(range(rng.randint(10 ** 4, 2 * 10 ** 5)))))
    if category == "deep":
        depth = rng.choice([50, 900, 5_000, 200_000])
        marker = '"@@DEEP@@"'
        path = _pick_path(rng, doc)
        body = json.dumps(_set(doc, path, "@@DEEP@@"))
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        return body.replace(marker, opener * depth + "0" + closer * depth, 1)
    if category == "unhashable":
        meta = doc["#meta"]["popverify"]
        target = rng.choice(["profile", "mode", "mutant", "kind", "actions", "faults", "event", "seed"])
        bad = rng.choice([["v5.0"], {"p": 1}, [[1]], {"#set": [[1]]}])
        if target in ("profile", "mode", "mutant", "seed"):
            meta[target] = bad
        elif target == "kind" and meta["schedule"]:
            meta["schedule"][rng.randrange(len(meta["schedule"]))][0] = bad
        elif target in ("actions", "faults"):
            meta["config"][target] = [bad]
        else:
            state = doc["states"][rng.randrange(len(doc["states"]))]
            state["action"]["kind"] = bad
        return json.dumps(doc)
    if category == "foreign":
        return rng.choice([
            "[]", "1", '"trace"', "null", "{}", "", "\ufeff{}", '{"#meta": {}, "states": []}',
            '{"#meta": {"format": "ITF"}, "vars": ["x"], "states": [{"#meta": {"index": 0}, "x": 1}]}',
            '{"#meta": {"popverify": []}, "states": []}',
            '{"#meta": {"popverify": {}}, "states": [], "vars": []}',
            json.dumps({"outcome": "ok", "matrix": {}}),
            json.dumps({"#meta": {"popverify": {**original["#meta"]["popverify"], "schedule": "none"}},
                        "states": original["states"]}),
            json.dumps({"#meta": {"popverify": {**original["#meta"]["popverify"], "profile": "v9.9"}},
                        "states": original["states"]}),
            json.dumps({"#meta": {"popverify": {**original["#meta"]["popverify"], "mode": "pull"}},
                        "states": original["states"]}),
            json.dumps({"#meta": original["#meta"], "states": {"0": original["states"][0]}}),
            "\x00\x01\x02", "{" * 3 + "}" * 3, "[" * 100_000,
        ])
    raise AssertionError(category)


CATEGORIES = ("truncate", "flip", "retype", "remove_keys", "huge", "deep", "unhashable", "foreign")


# -- verdicts ----------------------------------------------------------------------------------------
def _strict_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b))
    return a == b


def _records_the_original(text: str, original: dict) -> bool:
    """Whether the corrupted text still records the original's states and outcome exactly
    (then "same outcome" is a correct verdict)."""
    try:
        doc = json.loads(text)
        return (_strict_equal(doc["states"], original["states"])
                and _strict_equal(doc["#meta"]["popverify"].get("outcome"), original["#meta"]["popverify"]["outcome"]))
    except (ValueError, RecursionError, KeyError, TypeError, AttributeError):
        return False


def _run(argv: list[str], capsys) -> tuple[int | str, str, float]:
    """main(argv) under a wall-clock bound: (exit code or "hang"/"traceback: ...", stderr, seconds)."""
    def on_alarm(_signum, _frame):
        raise CaseTimeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_BOUND_S)
    start = time.monotonic()
    try:
        code: int | str = main(argv)
    except CaseTimeout:
        code = "hang"
    except BaseException as err:  # an escaped exception is the traceback this test looks for
        code = f"traceback: {type(err).__name__}: {str(err)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    err = capsys.readouterr().err
    return code, err, time.monotonic() - start


def _judge(code: int | str, err: str, changed: bool) -> str:
    """"clean" (rejected or correct verdict) or what went wrong."""
    if isinstance(code, str):
        return code
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("[")]
    if "Traceback" in err:
        return "traceback on stderr"
    if code == 2:
        return "clean" if len(lines) == 1 else f"rejected with {len(lines)} stderr lines"
    if code == 0 and changed:
        return "false ok: a changed trace replayed as identical"
    return "clean" if code in (0, 1) else f"exit {code}"


COUNTS: dict[str, dict[str, int]] = {}


@pytest.mark.parametrize("category", CATEGORIES)
def test_corrupted_traces_are_rejected_or_judged_correctly(category: str, originals, tmp_path: Path,
                                                            capsys) -> None:
    rng = random.Random(f"{SEED}-{category}")
    failures: list[str] = []
    tally = COUNTS.setdefault(category, {"tried": 0, "clean": 0, "failing": 0, "rejected": 0, "hang": 0,
                                         "traceback": 0, "false_ok": 0})
    slowest = 0.0
    for i in range(CASES_PER_CATEGORY):
        name = ("pop", "push", "violating")[i % 3]
        original = originals[name]
        text = mutate(category, original, rng)
        path = tmp_path / f"{category}-{i}-{name}.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        changed = not _records_the_original(text, original)
        runs = [("replay", ["replay", str(path)])]
        code, err, seconds = _run(runs[0][1], capsys)
        outcomes = [("replay", code, err, seconds)]
        if name == "violating" and code == 2:
            outcomes.append(("shrink", *_run(["shrink", str(path), "--out", str(tmp_path / f"min-{i}.json")], capsys)))
        if name == "push" and code in (1, 2) and i % 4 == 1:  # TLC must never see these states
            outcomes.append(("tlc", *_run(["tlc", "--validate", str(path)], capsys)))
        for tool, code, err, seconds in outcomes:
            slowest = max(slowest, seconds)
            verdict = _judge(code, err, changed)
            tally["tried"] += 1
            tally["rejected"] += code == 2
            if verdict == "clean":
                tally["clean"] += 1
            else:
                tally["failing"] += 1
                tally["hang"] += verdict == "hang"
                tally["traceback"] += verdict.startswith("traceback")
                tally["false_ok"] += verdict.startswith("false ok")
                failures.append(f"{tool} {path.name}: {verdict} (stderr {err.strip()[-300:]!r})")
    print(f"\n[corruption] {category}: {json.dumps(tally, sort_keys=True)}, slowest {slowest:.2f}s")
    assert not failures, "\n".join(failures[:10])


def test_uncorrupted_traces_replay_identically(originals, tmp_path: Path, capsys) -> None:
    for name, doc in originals.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        code, err, _ = _run(["replay", str(path)], capsys)
        assert code == 0, err


@pytest.mark.parametrize(("mutation", "expected"), [
    (lambda d: _first_int_in_states(d, lambda v: True), 1),          # 1 became true
    (lambda d: _first_int_in_states(d, float), 1),                   # an int became a float
    (lambda d: d["#meta"]["popverify"]["schedule"].append(["advance", 10 ** 12]), 2),
    (lambda d: d["#meta"]["popverify"].update(profile="bogus"), 2),
    (lambda d: d["#meta"]["popverify"].update(seed=True), 2),
    (lambda d: d["#meta"]["popverify"]["config"].update(queues=True), 2),
], ids=["int-to-bool", "int-to-float", "advance-1e12", "bogus-profile", "bool-seed", "bool-queues"])
def test_named_corruptions_of_the_issue(mutation: Callable[[dict], Any], expected: int, originals, tmp_path: Path,
                                        capsys) -> None:
    doc = copy.deepcopy(originals["violating"])
    mutation(doc)
    path = tmp_path / "named.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, err, seconds = _run(["replay", str(path)], capsys)
    assert code == expected, err
    assert seconds < CASE_BOUND_S
    if expected == 2:
        code, err, seconds = _run(["shrink", str(path), "--out", str(tmp_path / "min.json")], capsys)
        assert code == 2 and "Traceback" not in err and seconds < CASE_BOUND_S, err


def _first_int_in_states(doc: dict, convert: Callable[[int], Any]) -> None:
    """Replace the first integer (not a bool) in the states, other than an index, with convert(it)."""
    for path in _paths(doc["states"]):
        value = _get(doc["states"], path)
        if type(value) is int and "#meta" not in path:
            _set(doc["states"], path, convert(value))
            return
    raise AssertionError("no integer in the states")
