"""``popverify verify``: every technique on defaults, one report."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

from popverify.args import bounded_int, comma_list, output_dir, spark_master
from popverify.conformance.confirm import MAX_STATEFUL_STEPS
from popverify.errors import UsageError
from popverify.fuzz import ENGINES
from popverify.tools import PROJECT_ROOT, ToolError, run_child
from reference.common.profile import PROFILE_NAMES

MAX_RUNS = 1_000_000   # fuzz runs per campaign (README "Bounds")
MAX_STEPS = 100_000    # steps per fuzz run
MAX_LOCKSTEP_CASES = 10_000  # lockstep schedules per profile
TECHNIQUES = ("tlc", "trace", "z3", "fuzz", "stateful", "conformance")
LIVE_DURATION_S = (10, 600)
MODES = ("pop", "push")
PROFILES = PROFILE_NAMES


def _progress(message: str) -> None:
    print(f"[verify] {message}", file=sys.stderr, flush=True)


def _z3() -> dict[str, Any]:
    from proofs.catalog import ALL
    start = time.perf_counter()
    proofs = []
    for proof in ALL.values():
        result = proof.run()
        proofs.append({**result.to_json(), "properties": list(proof.properties)})
        _progress(f"z3: {proof.name} {result.result}")
    ok = all(p["result"] == "proved" for p in proofs)
    return {"result": "proved" if ok else "failed", "seconds": round(time.perf_counter() - start, 2), "proofs": proofs}


def cfg_properties(cfg: Path) -> tuple[str, ...]:
    """The property IDs a TLC model checks: its INVARIANT / PROPERTY names spelled as IDs
    (``ALO_1`` → ALO-1)."""
    import re

    names: list[str] = []
    section = False
    for line in cfg.read_text(encoding="utf-8").splitlines():
        line = line.split("\\*")[0].strip()
        head, _, rest = line.partition(" ")
        if head in ("INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES"):
            section, line = True, rest
        elif head.isupper() and head.isalpha():
            section = False
        if section:
            names += re.findall(r"\b([A-Z]+)_(\d+)\b", line)
    return tuple(dict.fromkeys(f"{family}-{n}" for family, n in names))


def cfg_profile(cfg: Path) -> str | None:
    """The model's ``Profile`` constant ("v5.0" / "v5.5"), None for a profile-free spec."""
    import re

    found = re.search(r'Profile\s*=\s*"([^"]+)"', cfg.read_text(encoding="utf-8"))
    return found.group(1) if found else None


def _tlc() -> dict[str, Any]:
    from popverify.tlc.runner import models, run_model
    start = time.perf_counter()
    results = []
    for cfg in models("small"):
        r = run_model(cfg)
        results.append({**r.to_json(), "properties": list(cfg_properties(cfg)), "violated": r.violated,
                        "profile": cfg_profile(cfg)})
        if r.trace:  # never replayed on Java (abstract states); says which concrete trace confirms it
            from popverify.findings.confirmation import tlc_confirmation
            results[-1]["confirmation"] = tlc_confirmation(r.model, cfg.read_text(encoding="utf-8"), r.violated).text
        size = "initial states" if r.distinct_states is None else f"{r.distinct_states} states"
        _progress(f"tlc: {r.model} {r.result} ({size})")
    ok = all(r["result"] in ("ok", "expected-violation") for r in results)
    return {"result": "model-checked" if ok else "failed", "seconds": round(time.perf_counter() - start, 2),
            "models": results}


def _trace_validation(out: Path) -> dict[str, Any]:
    """TLC replays the reference push runs of both profiles against PushConsumerOffsets."""
    from popverify.tlc.trace_validation import REFERENCE_SEEDS, reference_trace, validate_trace
    start = time.perf_counter()
    traces = []
    for profile in PROFILES:
        for seed in REFERENCE_SEEDS[profile]:
            result = validate_trace(reference_trace(profile, seed, out / "validated-traces"))
            traces.append(result.to_json())
            _progress(f"trace validation: push {profile} seed {seed} {'valid' if result.valid else 'NOT valid'}")
    ok = all(t["valid"] for t in traces)
    return {"result": "valid" if ok else "failed", "seconds": round(time.perf_counter() - start, 2),
            "traces": traces}


def campaign_folder(out: Path, mode: str, profile: str, steps: int, mutant: str | None) -> Path:
    """Where one campaign of ``verify`` keeps its rows: keyed by everything that determines a
    row besides the seed, so a re-run with other --steps or --mutant starts its own campaign
    instead of reusing rows of another (the campaign's own manifest still refuses a mismatch)."""
    return out / "fuzz" / (f"{mode}-{profile}-steps{steps}" + (f"-mutant-{mutant}" if mutant else ""))


def _fuzz(runs: int, steps: int, out: Path, mutant: str | None, engine: str, master: str,
          confirm: bool = True) -> dict[str, Any]:
    """A swarm campaign per mode and profile, planned once (popverify/fuzz/) and run on Spark
    (local mode by default) or, with --engine python, on the plain loop: the same rows either
    way. Spark that cannot start is an error of the technique, never a silent switch to the
    loop. With ``confirm`` every signature's minimal counterexample is replayed on its
    release's lockstep harness (one JVM per release for all campaigns, verdicts cached under
    OUT/confirm-cache)."""
    from popverify.findings.confirmation import Confirmer

    confirmer = Confirmer(out / "confirm-cache", progress=_progress) if confirm else None
    try:
        return _campaigns(runs, steps, out, mutant, engine, master, confirmer)
    finally:
        if confirmer is not None:
            confirmer.close()


def _campaigns(runs: int, steps: int, out: Path, mutant: str | None, engine: str, master: str,
               confirmer: Any) -> dict[str, Any]:
    from popverify.fuzz.executors import LoopExecutor, spark_executor
    from popverify.verify import campaign as verify_campaign
    campaigns: dict[str, Any] = {}
    if engine == "spark":
        try:
            runner = spark_executor(master)
        except Exception as err:  # Py4J/JVM start-up failures have no narrower common type
            return {"engine": f"spark {master}", "result": "error", "campaigns": {},
                    "error": f"Spark did not start on {master} ({type(err).__name__}: {_first_line(err)}); "
                             "use --engine python to run the campaigns as a Python loop"}
    else:
        runner = LoopExecutor()
    from popverify.sim.scenario import MODES as ENGINE_MODES
    for mode in MODES:
        if mode not in ENGINE_MODES:  # a build without that mode: reported, not crashed on
            for profile in PROFILES:
                campaigns[f"{mode}/{profile}"] = {"profile": profile, "mode": mode,
                                                  "error": f"mode {mode} unavailable in this build"}
            continue
        for profile in PROFILES:
            key = f"{mode}/{profile}"
            _progress(f"fuzz {key}: {runs} runs of {steps} steps on {runner.engine}")
            try:
                campaigns[key] = verify_campaign.run_campaign(
                    profile, runs, steps, campaign_folder(out, mode, profile, steps, mutant), _progress,
                    mutant=mutant, mode=mode, executor=runner, confirmer=confirmer, confirm_skip="--no-confirm")
            except (ValueError, UsageError) as err:
                # e.g. a mode this build does not have, or a folder holding another campaign
                campaigns[key] = {"profile": profile, "mode": mode, "error": str(err)}
            if "error" in campaigns[key]:
                _progress(f"fuzz {key}: ERROR {campaigns[key]['error']}")
            else:
                from popverify.fuzz.domain import domain_line
                _progress(f"fuzz {key}: {domain_line(campaigns[key]['domain'])}")
    return {"engine": runner.engine, "campaigns": campaigns}


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [""])[0][:300]


# The property IDs each stateful machine checks (stateful_tests/, spec/properties.md).
STATEFUL_PROPERTIES: dict[str, tuple[str, ...]] = {
    "test_pop_broker_machine": ("ALO-1", "ALO-2", "NSR-1", "INV-1", "OFF-1", "OFF-2", "CKM-1"),
    "test_rebalance_machine": ("ALLOC-1", "ALLOC-2", "ALLOC-3", "ALLOC-4"),
    "test_push_consumer_machine": ("ALO-3", "OFF-3", "PQ-1", "PQ-2"),
    "test_offset_store_machine": ("OFF-4",),
}


def _stateful() -> dict[str, Any]:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="popverify-stateful-") as tmp:
        junit = Path(tmp) / "junit.xml"
        proc = run_child([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                          "stateful_tests"], cwd=PROJECT_ROOT)
        machines: dict[str, dict[str, Any]] = {}
        if junit.is_file():
            for case in ET.parse(junit).getroot().iter("testcase"):
                parts = case.get("classname", "").split(".")
                module = next((p for p in parts if p.startswith("test_")), parts[-1])
                entry = machines.setdefault(module, {"tests": 0, "failed": 0,
                                                     "properties": list(STATEFUL_PROPERTIES.get(module, ()))})
                entry["tests"] += 1
                entry["failed"] += any(child.tag in ("failure", "error") for child in case)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr.strip()[-200:]
    return {"result": "passed" if proc.returncode == 0 else "failed", "seconds": round(time.perf_counter() - start, 2),
            "detail": last, "machines": machines}


def _conformance(lockstep_cases: int, lockstep_steps: int) -> dict[str, Any]:
    """The pure-function checks against RocketMQ's classes, then the lockstep differential: per
    profile, ``lockstep_cases`` random POP swarm schedules of ``lockstep_steps`` actions, other
    actions inside in-flight POPs (`conformance --stateful --interleave`, seed 0), replayed step
    by step on the model and on that release's broker classes."""
    from popverify.conformance import run_checks
    from popverify.conformance.confirm import stateful_differential
    from popverify.conformance.lockstep import RELEASES, LockstepClient
    start = time.perf_counter()
    checks = [c.to_json() if hasattr(c, "to_json") else dict(c.__dict__) for c in run_checks()]
    unexplained = sum(c["disagreements"] - c.get("explained", 0) for c in checks)
    lockstep = []
    for profile, release in RELEASES.items():
        _progress(f"lockstep differential on rocketmq-broker {release}: {lockstep_cases} schedules of "
                  f"{lockstep_steps} steps, interleaved")
        began = time.perf_counter()
        with LockstepClient(release, full_jit=lockstep_cases >= 25) as client:
            part = stateful_differential(profile, lockstep_cases, 0, lockstep_steps, client, interleave=True)
        lockstep.append({**part.to_json(), "seconds": round(time.perf_counter() - began, 2)})
    diverged = any(entry["diverge"] for entry in lockstep)
    return {"result": "agrees" if unexplained == 0 and not diverged else "failed",
            "seconds": round(time.perf_counter() - start, 2), "checks": checks, "lockstep": lockstep}


def _confirmation_status(summary: dict[str, Any], no_confirm: bool) -> None:
    """The confirmation on Java of the campaigns' counterexamples, as a technique: skipped by
    --no-confirm, or unavailable (no JDK, Maven, harness) for a release a counterexample
    needed -- both make the outcome incomplete / failed, as any technique that did not run.
    A counterexample whose replay diverges is a failure of its campaign (report.failures)."""
    campaigns = summary["techniques"].get("fuzz", {}).get("campaigns", {})
    if no_confirm:
        summary["unavailable"]["confirm"] = "skipped (--no-confirm)"
        return
    why = sorted({f"rocketmq-broker {release}: {reason}" for camp in campaigns.values()
                  for release, reason in (camp.get("confirmation") or {}).get("unavailable", {}).items()})
    if why:
        summary["unavailable"]["confirm"] = "; ".join(why)
        _progress(f"confirmation on Java UNAVAILABLE: {'; '.join(why)}")


def _live(out: Path, duration_s: int) -> dict[str, Any]:
    """``--live``: a short live run (kill, pause) on each profile's release (popverify/live/suite.py)."""
    from popverify.commands.live import _client_logs_to
    from popverify.live.suite import live_entry
    _client_logs_to(out / "live" / "client.log")  # the client's gRPC callback tracebacks during faults
    return live_entry(out, duration_s=duration_s, progress=_progress)


def _guarded(name: str, step: Callable[[], dict[str, Any]], summary: dict[str, Any]) -> None:
    """Run one technique; a missing tool makes it unavailable (a failure of the run, named in
    the report), never a crash."""
    try:
        summary["techniques"][name] = step()
    except (ToolError, ImportError, FileNotFoundError) as err:
        summary["unavailable"][name] = f"{type(err).__name__}: {err}"
    except Exception as err:  # the tool itself broke: reported, and the run fails
        summary["techniques"][name] = {"result": "error", "error": f"{type(err).__name__}: {_first_line(err)}"}


def run(args: argparse.Namespace) -> int:
    from popverify.commands.doctor import collect
    from popverify.mutants import MUTANTS, unknown
    from popverify.verify import report

    skip = set(args.skip or ())
    if skip >= set(TECHNIQUES) and not args.live:
        raise UsageError("--skip names every technique: nothing would be checked")
    if args.mutant is not None and args.mutant not in MUTANTS:
        raise UsageError(unknown(args.mutant))
    out = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {out}: {err.strerror or err}") from err
    summary: dict[str, Any] = {"environment": collect(), "techniques": {}, "unavailable": {}}
    if "tlc" not in skip:
        _progress("TLC, small configs")
        _guarded("tlc", _tlc, summary)
    if "trace" not in skip:
        _progress("trace validation: reference push runs against PushConsumerOffsets")
        _guarded("trace", lambda: _trace_validation(out), summary)
    if "z3" not in skip:
        _progress("z3 proofs")
        _guarded("z3", _z3, summary)
    if "fuzz" not in skip:
        _guarded("fuzz", lambda: _fuzz(args.runs, args.steps, out, args.mutant, args.engine, args.master,
                                       confirm=not args.no_confirm), summary)
        _confirmation_status(summary, args.no_confirm)
    if "stateful" not in skip:
        _progress("stateful machines (CI profile)")
        _guarded("stateful", _stateful, summary)
    if "conformance" not in skip:
        _progress("conformance against RocketMQ's Java code (non-live)")
        _guarded("conformance", lambda: _conformance(args.lockstep_cases, args.lockstep_steps), summary)
    if args.live:
        # Real brokers of each profile's release on loopback; counts like every other technique
        # (errored, empty or unavailable = failure).
        _progress(f"live: RocketMQ of each profile's release, {args.live_duration} s each, faults kill,pause")
        _guarded("live", lambda: _live(out, args.live_duration), summary)
    for name in sorted(skip):
        summary["unavailable"][name] = "skipped (--skip)"
    # a coverage.json that `popverify coverage --out` wrote into this folder counts in the outcome
    report.attach_coverage(summary, out)
    failed = report.failures(summary)
    if not failed:
        summary["outcome"] = "ok: every technique ran, checked something, and every property expected to hold held"
    elif all(f.endswith(("(skipped (--skip))", "(skipped (--no-confirm))")) for f in failed):
        summary["outcome"] = "incomplete: " + "; ".join(failed)
    else:
        summary["outcome"] = "failed: " + "; ".join(failed)
    mutation_file = out / "mutation.json"  # written by `popverify mutate --out` into the same folder
    if mutation_file.is_file():
        try:
            summary["mutation"] = json.loads(mutation_file.read_text())
        except (OSError, ValueError) as err:
            summary["unavailable"]["mutation"] = f"unreadable {mutation_file.name}: {err}"
    try:
        report.write(summary, out)
    except OSError as err:
        raise UsageError(f"cannot write the report under {out}: {err.strerror or err}") from err
    from popverify.findings.triage import record
    record(out)  # signature history for `popverify findings`
    for line in failed:  # every failing technique on stderr too, not only in the report
        _progress(f"FAILED: {line}")
    if args.json:
        print(json.dumps({"outcome": summary["outcome"], "matrix": summary["matrix"]}, indent=2, sort_keys=True))
    else:
        print(f"{summary['outcome']}\nreport: {out / 'report.html'}\nsummary: {out / 'summary.json'}")
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("verify", help="run every technique on defaults and write one report")
    parser.add_argument("--out", type=output_dir, default="popverify-out/verify",
                        help="report folder (default popverify-out/verify)")
    parser.add_argument("--runs", type=bounded_int(1, MAX_RUNS), default=200,
                        help=f"fuzz runs per mode and profile (1..{MAX_RUNS})")
    parser.add_argument("--steps", type=bounded_int(1, MAX_STEPS), default=600,
                        help=f"steps per fuzz run (1..{MAX_STEPS})")
    parser.add_argument("--engine", choices=ENGINES, default="spark",
                        help="run the fuzz campaigns on Spark (default) or on the plain Python loop (same rows)")
    parser.add_argument("--master", type=spark_master, default="local[2]",
                        help="Spark master for the campaigns (default local[2]; local masters get task retries)")
    parser.add_argument("--skip", type=comma_list(TECHNIQUES, "technique"), default=None,
                        help=f"comma list of techniques to skip: {', '.join(TECHNIQUES)} (a skipped technique "
                             "makes the outcome 'incomplete', exit 1)")
    parser.add_argument("--mutant", default=None,
                        help="run the fuzz campaigns on a deliberately broken model (checks the suite itself)")
    parser.add_argument("--no-confirm", action="store_true",
                        help="do not replay the campaigns' minimal POP counterexamples on RocketMQ's broker classes "
                             "(reported as skipped: the outcome is 'incomplete', exit 1)")
    parser.add_argument("--lockstep-cases", type=bounded_int(1, MAX_LOCKSTEP_CASES), default=40,
                        help=f"random schedules per profile replayed in lockstep on the release's broker classes "
                             f"(1..{MAX_LOCKSTEP_CASES}; default 40)")
    parser.add_argument("--lockstep-steps", type=bounded_int(1, MAX_STATEFUL_STEPS), default=120,
                        help=f"actions per lockstep schedule (1..{MAX_STATEFUL_STEPS}; default 120)")
    parser.add_argument("--live", action="store_true",
                        help="also run a short live session (real namesrv, broker, proxy; faults kill,pause) on "
                             "each profile's release; needs a JDK and Maven (spec/live.md)")
    parser.add_argument("--live-duration", type=bounded_int(*LIVE_DURATION_S), default=60,
                        help=f"workload seconds of each live session, {LIVE_DURATION_S[0]}..{LIVE_DURATION_S[1]} "
                             "(default 60)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
