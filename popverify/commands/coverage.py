"""``popverify coverage``: line and branch coverage of RocketMQ's consumption-path classes
while the model's cases and schedules run on the Java harnesses under JaCoCo."""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from popverify.conformance.lockstep import RELEASES
from popverify.args import profile_name
from popverify.errors import UsageError

PROFILES = tuple(RELEASES)
HARNESSES = ("conformance", "lockstep", "all")
# Documented bounds of the numeric arguments (README, spec/coverage.md).
MAX_CASES = 10_000
MAX_SCHEDULES = 10_000
MAX_STEPS = 5_000


def _progress(message: str) -> None:
    print(f"[coverage] {message}", file=sys.stderr, flush=True)


def _check(args: argparse.Namespace) -> None:
    if not 1 <= args.cases <= MAX_CASES:
        raise UsageError(f"--cases must be in 1..{MAX_CASES}")
    if not 0 <= args.schedules <= MAX_SCHEDULES:
        raise UsageError(f"--schedules must be in 0..{MAX_SCHEDULES}")
    if not 0 <= args.push_schedules <= MAX_SCHEDULES:
        raise UsageError(f"--push-schedules must be in 0..{MAX_SCHEDULES}")
    if not 1 <= args.steps <= MAX_STEPS:
        raise UsageError(f"--steps must be in 1..{MAX_STEPS}")
    if args.harness == "lockstep" and not args.schedules and not args.push_schedules:
        raise UsageError("--harness lockstep with --schedules 0 and --push-schedules 0 replays nothing")
    if args.corpus is not None and args.harness == "conformance":
        raise UsageError("--corpus is replayed on the lockstep harness; drop it or use --harness lockstep|all")
    if args.traces and args.harness == "conformance":
        raise UsageError("--traces are replayed on the lockstep harness; drop them or use --harness lockstep|all")
    for trace in args.traces:
        if not Path(trace).is_file():
            raise UsageError(f"--traces {trace}: no such file")
    if args.corpus is not None and not Path(args.corpus).is_dir():
        raise UsageError(f"--corpus {args.corpus}: no such folder")


def _replay(release: str, profile: str, jvm_args: list[str], *, schedules: list, corpus: Path,
            push: bool = False) -> dict[str, Any]:
    from popverify.coverage import push_replay, replay

    run = push_replay.replay if push else replay.replay
    return {**run(release, profile, jvm_args, schedules, _progress), "corpus": str(corpus)}


def _schedules(args: argparse.Namespace, out: Path, profile: str) -> tuple[Path, list, list]:
    """The corpus folder and the POP and push schedules replayed for ``profile``: the
    campaign's (``--corpus``) or a short blind campaign of each mode under ``out/corpus``; plus
    the campaign's and ``--traces``' traces of each mode. A replay asked for (``--schedules`` or
    ``--push-schedules`` above 0) that the corpus has no runs for is a UsageError: it would
    replay nothing and its classes would read 0 % as if measured."""
    from popverify.coverage import push_replay, replay
    from popverify.fuzz import store

    traces = [Path(t) for t in args.traces]
    if args.corpus:
        corpus = Path(args.corpus)
        if not store.runs_dir(corpus).is_dir():
            replay.load_corpus(corpus, profile, args.schedules)  # its UsageError: not a campaign folder
    else:
        corpus = out / "corpus"
        for mode, runs in (("pop", args.schedules), ("push", args.push_schedules)):
            if runs:
                replay.short_campaign(corpus, profile, runs, args.steps, mode)
    for mode, flag, runs, fuzz in (("pop", "--schedules", args.schedules, ""),
                                   ("push", "--push-schedules", args.push_schedules, " --mode push")):
        if runs and not store.load_rows(corpus, profile, mode):
            raise UsageError(f"{flag} {runs}: {corpus} has no {mode.upper()} runs of profile {profile}, so that replay "
                             f"would measure nothing (add them with `popverify fuzz --profile {profile}{fuzz} --out "
                             f"{corpus}`, or pass {flag} 0)")
        if not runs and replay.load_traces(traces, profile, mode):
            raise UsageError(f"--traces has {mode.upper()} traces but {flag} is 0 ({mode} replay off)")
    pop: list = []
    push: list = []
    if args.schedules:
        pop = replay.load_corpus(corpus, profile, args.schedules)
        pop += replay.load_traces(replay.campaign_traces(corpus, profile) + traces, profile)
    if args.push_schedules:
        push = push_replay.load(corpus, profile, args.push_schedules, traces)
    return corpus, pop, push


def _command(args: argparse.Namespace, profile: str | None = None) -> str:
    """The command line that reproduces a profile's figures (recorded in spec/coverage.json):
    ``args``' own, or for ``profile`` alone."""
    parts = ["popverify", "coverage", "--harness", args.harness, "--cases", str(args.cases), "--seed", str(args.seed)]
    if args.harness != "conformance":
        parts += ["--schedules", str(args.schedules), "--push-schedules", str(args.push_schedules)]
        parts += ["--corpus", args.corpus] if args.corpus else ["--steps", str(args.steps)]
        if args.traces:
            parts += ["--traces", *args.traces]
    if profile or args.profile:
        parts += ["--profile", profile or args.profile]
    return " ".join(shlex.quote(p) for p in parts)


def run(args: argparse.Namespace) -> int:
    """Measure, write coverage.json and coverage.md under --out, print the table."""
    _check(args)
    from popverify.coverage import jacoco, tables
    from popverify.coverage.measure import measure_profile

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    profiles = [args.profile] if args.profile else list(PROFILES)
    result: dict[str, Any] = {"jacoco": jacoco.JACOCO_VERSION, "harness": args.harness, "cases": args.cases,
                              "seed": args.seed, "profiles": {}}
    failed = []
    # every profile's schedules before any measurement: a corpus without what was asked for
    # fails in seconds, not after the first profile's replays
    replays = {profile: _schedules(args, out, profile) for profile in profiles} \
        if args.harness in ("lockstep", "all") else {}
    for profile in profiles:
        lockstep = push = None
        if profile in replays:
            corpus, pop_schedules, push_schedules = replays[profile]
            if pop_schedules:
                lockstep = functools.partial(_replay, schedules=pop_schedules, corpus=corpus)
            if push_schedules:
                push = functools.partial(_replay, schedules=push_schedules, corpus=corpus, push=True)
        measured = measure_profile(profile, out / "jacoco", args.cases, args.seed, lockstep=lockstep,
                                   conformance=args.harness != "lockstep", progress=_progress, push=push)
        result["profiles"][profile] = measured
        failed += [f"{profile} {name}: {s['error']}" for name, s in measured["sources"].items() if "error" in s]
    (out / "coverage.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    table = "\n".join(tables.sources_line(p) for p in result["profiles"].values()) + "\n\n" \
        + tables.markdown(result["profiles"])
    (out / "coverage.md").write_text(table, encoding="utf-8")
    uncovered = []
    for profile in result["profiles"].values():
        if "classes" in profile:
            path = out / f"uncovered-{profile['release']}.md"
            path.write_text(tables.uncovered_markdown(profile, _command(args, profile["profile"])), encoding="utf-8")
            uncovered.append(str(path))
    if args.update_spec:
        from popverify.tools import PROJECT_ROOT
        tables.update_spec(PROJECT_ROOT / "spec" / "coverage.md", PROJECT_ROOT / "spec" / "coverage.json",
                           result, _command(args))
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print(table, end="")
        print(f"coverage: {out / 'coverage.json'}, {out / 'coverage.md'}; left to cover: {', '.join(uncovered)}")
    for failure in failed:
        print(f"popverify coverage: FAILED {failure}", file=sys.stderr)
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("coverage", help="line/branch coverage of RocketMQ's consumption path under the model's runs")
    parser.add_argument("--profile", type=profile_name, default=None,
                        help="measure one profile (default all: " + ", ".join(f"{p} on rocketmq {r}" for p, r in RELEASES.items()) + ")")
    parser.add_argument("--harness", choices=HARNESSES, default="all",
                        help="conformance: the non-live checks; lockstep: schedules on the broker's classes; all (default)")
    parser.add_argument("--corpus", default=None, metavar="DIR",
                        help="a fuzz campaign folder (`popverify fuzz --out DIR`) whose POP and push schedules are "
                             "replayed (default: a short blind campaign of --schedules POP and --push-schedules push "
                             "runs under --out/corpus)")
    parser.add_argument("--traces", nargs="+", default=[], metavar="TRACE",
                        help="popverify POP or push ITF traces replayed too (simulate --trace, counterexamples); "
                             "a campaign folder's own traces/ are replayed with --corpus")
    parser.add_argument("--cases", type=int, default=100, help=f"conformance cases per check, 1..{MAX_CASES} (default 100)")
    parser.add_argument("--schedules", type=int, default=20,
                        help=f"POP schedules replayed per profile, 0..{MAX_SCHEDULES} (default 20; 0: none); a corpus "
                             "without POP runs of the profile is an error unless 0")
    parser.add_argument("--push-schedules", type=int, default=20,
                        help=f"push schedules replayed per profile on the push lockstep, 0..{MAX_SCHEDULES} "
                             "(default 20; 0: none): the corpus's push runs (a corpus without them is an error unless 0), or a "
                             "short blind push campaign")
    parser.add_argument("--steps", type=int, default=200,
                        help=f"steps per run of the default short campaign, 1..{MAX_STEPS} (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the conformance cases")
    parser.add_argument("--out", default="popverify-out/coverage", help="folder for coverage.json, coverage.md, jacoco/ "
                                                                          "(exec and XML), corpus/ (default popverify-out/coverage)")
    parser.add_argument("--update-spec", action="store_true",
                        help="merge the figures into spec/coverage.json and the table of spec/coverage.md")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
