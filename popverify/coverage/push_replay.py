"""The model's push-mode schedules replayed on the lockstep harness for coverage: a fuzz
campaign's push runs (``popverify fuzz --mode push --out DIR``) and its minimal push traces
(``DIR/traces``), each through PushLockstep (popverify/conformance/push_lockstep.py), which
sends every broker request the model's push consumers make to RocketMQ's own processors
(PullMessageProcessor, ConsumerManageProcessor, ClientManageProcessor, AdminBrokerProcessor,
QueryAssignmentProcessor after each rebalance, SendMessageProcessor for send-back).

Loading a corpus and the JaCoCo plumbing are replay.py's and measure.py's; this module only
runs the push schedules and summarises them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from popverify.coverage.replay import (Schedule, add_stop, campaign_traces, load_corpus, load_traces,
                                      stop_record)


def load(corpus: Path, profile: str, limit: int, traces: Sequence[Path] = ()) -> list[Schedule]:
    """The push schedules of ``profile`` in ``corpus`` (at most ``limit`` runs, by seed, plus
    the campaign's minimal push traces) and those among ``traces``; no runs when the campaign
    has none (`popverify coverage` refuses --push-schedules > 0 on such a corpus first)."""
    from popverify.fuzz import store

    runs = load_corpus(corpus, profile, limit, "push") if store.load_rows(corpus, profile, "push") else []
    return runs + load_traces([*campaign_traces(corpus, profile, "push"), *traces], profile, "push")


def replay(release: str, profile: str, jvm_args: Sequence[str], schedules: Sequence[Schedule],
           progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Replay ``schedules`` with PushLockstep on one lockstep JVM of ``release`` started with
    ``jvm_args``. Nothing is adapted: PushLockstep sends every request a push action makes,
    and a request it has no counterpart for stops the schedule "out of scope" with the
    reason, counted here. Coverage counts what Java ran whatever the verdict."""
    from popverify.conformance.confirm import divergence_class
    from popverify.conformance.lockstep import LockstepClient
    from popverify.conformance.push_lockstep import PushLockstep
    from popverify.mutants import applied

    statuses: dict[str, int] = {}
    stops: dict[str, int] = {}
    stop_seeds: dict[str, list[int]] = {}
    requests: dict[str, int] = {}
    divergences: list[dict[str, Any]] = []
    actions = ran = compared = 0
    with LockstepClient(release, jvm_args) as client:
        for i, schedule in enumerate(schedules):
            with applied(schedule.mutant):
                lockstep = PushLockstep(profile, schedule.seed, schedule.config, client)
                verdict = lockstep.run(schedule.actions)
            statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
            if verdict.status == "diverges":
                add_stop(stops, stop_seeds, divergence_class(verdict), schedule)
                divergences.append(stop_record(schedule, verdict))
            elif verdict.status == "out of scope":
                why = f"out of scope: {verdict.action[0] if verdict.action else '?'}: {verdict.why}"
                add_stop(stops, stop_seeds, why, schedule)
                divergences.append(stop_record(schedule, verdict))
            for name, n in lockstep.calls_compared.items():
                requests[name] = requests.get(name, 0) + n
            actions += len(schedule.actions)
            # a stopped replay ran its actions up to the stopping one, which Java ran in part
            ran += len(schedule.actions) if verdict.status == "agrees" else min(len(schedule.actions),
                                                                                 (verdict.step or 0) + 1)
            compared += verdict.steps
            if i % 10 == 9:
                progress(f"{release}: {i + 1}/{len(schedules)} push schedules replayed")
    return {"harness": "push", "schedules": len(schedules), "traces": sum(1 for s in schedules if s.source != "corpus"),
            "actions": actions, "actions_run": ran, "steps_compared": compared,
            "verdicts": dict(sorted(statuses.items())), "adapted": False,
            "requests_compared": dict(sorted(requests.items())), "stops": dict(sorted(stops.items())),
            "stop_seeds": dict(sorted(stop_seeds.items())), "divergences": divergences}
