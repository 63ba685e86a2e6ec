"""One live session: cluster up, topic and group, workload with faults, drain, stop, check.

Everything started (three JVMs, mqadmin runs, client threads) is stopped in ``finally``;
the live command turns SIGTERM into KeyboardInterrupt so that path also runs on a kill.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import attrs

from popverify.live.check import LiveVerdict, check_history
from popverify.live.check_push import check_push_history
from popverify.live.cluster import CLUSTER_NAME, Cluster, tls_files
from popverify.live.f2 import run_f2, run_f2_remoting
from popverify.live.faults import Fault, schedule
from popverify.live.history import History
from popverify.live.pop_process import PopConsumerProcess
from popverify.live.push import PushConsumer, build_push_client, wait_quiet_push
from popverify.live.report import write_report
from popverify.live.revive_kill import run_revive_kill
from popverify.tools import ToolError
from reference.common.profile import LATEST_PROFILE, RELEASES
from popverify.live.workload import GROUP, QUIET_S, TOPIC, Behaviour, Producer

QUEUES = 4
RESTART_TRIES = 2
CONSUMER_READY_S = 30.0
# Release -> the model profile whose expectations it is compared with (spec/expectations.json).
PROFILES = {release: profile for profile, release in RELEASES.items()}
DEFAULT_PROFILE = LATEST_PROFILE


@attrs.frozen
class LiveConfig:
    """Arguments of one live session (bounds are checked by the live command)."""

    release: str
    duration_s: int = 60
    faults: tuple[str, ...] = ()
    clients: int = 2
    seed: int = 0
    drain_s: int = 90
    out: Path = Path("popverify-out/live")
    behaviour: Behaviour = Behaviour()
    broken: Behaviour | None = None   # test-only: consumer 0 of the first generation behaves so
    keep_workdir: bool = False
    scenario: str = ""                # "f2" (popverify/live/f2.py) or "revive-kill" (revive_kill.py) instead of the workload
    mode: str = "pop"                 # "pop": SimpleConsumers through the proxy; "push": DefaultMQPushConsumer JVMs


@attrs.frozen
class LiveResult:
    """What a session produced."""

    config: LiveConfig
    verdict: LiveVerdict
    fault_schedule: tuple[Fault, ...]
    seconds: dict[str, float]
    drained: bool
    history_path: Path
    report_path: Path
    leftover_pids: tuple[int, ...]
    workdir: Path
    outcome: str = ""


class BrokerDidNotRestart(Exception):
    """The broker exited at every restart after a kill fault (its logs are in DIR/jvm/)."""


def _apply(fault: Fault, cluster: Cluster, consumers: list[Any], history: History,
           spawn: Callable[[int], Any]) -> None:
    begin = {"kind": fault.kind, "phase": "begin", "length_s": fault.length_s}
    if fault.kind == "kill":
        history.add("info", "fault", "nemesis", value=begin)
        cluster.kill("broker")
        history.add("info", "fault", "nemesis", value={"kind": "kill", "phase": "killed"})
        for attempt in range(RESTART_TRIES):
            try:
                cluster.start_component("broker")
                break
            except ToolError as err:
                # A broker that cannot start on its own store after SIGKILL is a result, not a
                # harness error: record it; the run stops after the last try.
                history.add("info", "fault", "nemesis", value={"kind": "kill", "phase": "restart_failed",
                                                               "attempt": attempt + 1}, error=str(err)[-500:])
        else:
            raise BrokerDidNotRestart(f"the broker did not start again after SIGKILL ({RESTART_TRIES} tries)")
    elif fault.kind == "pause":
        history.add("info", "fault", "nemesis", value=begin)
        cluster.pause("broker")
        time.sleep(fault.length_s)
        cluster.resume("broker")
    elif fault.kind == "proxy":
        history.add("info", "fault", "nemesis", value=begin)
        # SIGKILL: a SIGTERM'd 5.5.0 proxy spends ~30 s in its graceful gRPC shutdown
        # (ProxyConfig#grpcShutdownTimeSeconds), which made one restart take a minute.
        cluster.restart("proxy", hard=True)
    elif fault.kind == "consumer":
        history.add("info", "fault", "nemesis", value=dict(begin, target=f"consumer-{fault.target}"))
        victim = consumers[fault.target]
        victim.crash()
        consumers[fault.target] = spawn(fault.target)
    elif fault.kind == "timeout":
        history.add("info", "fault", "nemesis", value=begin)
        for c in consumers:
            c.timeout_window.set()
        time.sleep(fault.length_s)
        for c in consumers:
            c.timeout_window.clear()
    history.add("info", "fault", "nemesis", value={"kind": fault.kind, "phase": "end"})


def run_live(config: LiveConfig, progress: Callable[[str], None]) -> LiveResult:
    """Run one session and write history.jsonl, faults.json, summary.json and report.md to
    ``config.out``."""
    config.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"popverify-live-{config.release}-"))
    cluster = Cluster(config.release, workdir)
    history = History()
    faults = schedule(config.faults, config.duration_s, config.clients, config.seed)
    (config.out / "faults.json").write_text(json.dumps([f.to_json() for f in faults], indent=2) + "\n")
    seconds: dict[str, float] = {}
    consumers: list[Any] = []      # PopConsumerProcess (pop) or PushConsumer (push)
    retired: list[Any] = []
    producer: Producer | None = None
    drained = False
    outcome = ""
    aborted = ""
    generation = [0]

    push_classes: list[Path] = []

    def spawn(index: int) -> Any:
        generation[0] += 1
        behaviour = config.broken if config.broken is not None and generation[0] == 1 else config.behaviour
        name = f"consumer-{index}.{generation[0]}"
        if config.mode == "push":
            p = PushConsumer(name, cluster, history, push_classes[0], seed=config.seed * 1_000_003 + generation[0],
                             skip=behaviour.skip_processing)
            p.start()
            return p
        # A process of its own (popverify/live/pop_process.py): the consumer fault is a SIGKILL.
        c = PopConsumerProcess(name, cluster.proxy_endpoint, history, config.seed * 1_000_003 + generation[0],
                               behaviour, workdir, tls=cluster.tls)
        c.start()
        return c

    began = time.monotonic()
    try:
        progress(f"starting RocketMQ {config.release} namesrv, broker, proxy in {workdir}")
        cluster.start()
        if cluster.tls:
            # gRPC core reads its default roots once per process, from this file when set.
            os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = str(tls_files()[0])
        seconds["cluster_start"] = round(time.monotonic() - began, 1)
        t0 = time.monotonic()
        cluster.create_topic(TOPIC, QUEUES, on_retry=lambda value, error: history.add(
            "info", "admin", "runner", value=value, error=error))
        cluster.run_admin("updateSubGroup", "-c", CLUSTER_NAME, "-g", GROUP)
        seconds["admin"] = round(time.monotonic() - t0, 1)
        progress(f"topic {TOPIC} and group {GROUP} created; " + (f"scenario {config.scenario}" if config.scenario else
                 f"workload for {config.duration_s} s, {len(faults)} fault(s)"))
        t0 = time.monotonic()
        history.started_ms = time.time_ns() // 1_000_000
        if config.scenario == "f2":
            outcome = "proxy: " + run_f2(cluster.proxy_endpoint, history, progress, tls=cluster.tls)
            outcome += "; remoting: " + run_f2_remoting(cluster, history, progress)
            seconds["scenario"] = round(time.monotonic() - t0, 1)
            drained = True
        elif config.scenario == "revive-kill":
            outcome = run_revive_kill(cluster, history, progress)
            seconds["scenario"] = round(time.monotonic() - t0, 1)
            drained = True
        else:
            history.add("info", "phase", "runner", value="workload")
            if config.mode == "push":
                push_classes.append(build_push_client(cluster))
            consumers = [spawn(i) for i in range(config.clients)]
            ready = time.monotonic() + CONSUMER_READY_S
            if config.mode == "push":
                # Each PushClient says "start" once DefaultMQPushConsumer#start returned (its first
                # rebalance ran); CONSUME_FROM_FIRST_OFFSET makes a new group start at 0 anyway.
                while _push_started(history) < config.clients and time.monotonic() < ready:
                    time.sleep(0.2)
            # The group is new: a POP on a queue without a committed offset starts near its end
            # (PopMessageProcessor#getInitOffset, ConsumeInitMode.MAX), so messages sent before the
            # group's first pop are legitimately skipped (seen on 5.0.0). The producer starts
            # once the consumers have popped (empty) and so initialised the group's offsets.
            while config.mode == "pop" and _ok_receives(history) < 2 * config.clients and time.monotonic() < ready:
                time.sleep(0.2)
            history.add("info", "phase", "runner", value="produce")
            producer = Producer(cluster.proxy_endpoint, history, tls=cluster.tls)
            producer.start()
            seconds["consumers_ready"] = round(time.monotonic() - t0, 1)
            t0 = time.monotonic()  # the workload's duration (and the fault schedule) start with the producer
            pending = list(faults)
            while time.monotonic() - t0 < config.duration_s:
                if pending and time.monotonic() - t0 >= pending[0].at_s:
                    fault = pending.pop(0)
                    progress(f"fault at {time.monotonic() - t0:.1f} s: {fault.kind}")
                    before = list(consumers)
                    try:
                        _apply(fault, cluster, consumers, history, spawn)
                    except BrokerDidNotRestart as err:
                        aborted = str(err)
                        progress(aborted)
                        break
                    retired.extend(c for c in before if c not in consumers)
                time.sleep(0.1)
            seconds["workload"] = round(time.monotonic() - t0, 1)
            if aborted:
                pending = []
            for fault in pending:
                # Earlier faults (a broker restart) ran late; the schedule says which never ran.
                history.add("info", "fault", "nemesis", value={"kind": fault.kind, "phase": "skipped"})
                progress(f"fault {fault.kind} at {fault.at_s} s skipped: the workload ended first")
            producer.join(15)
        if not config.scenario and not aborted:
            history.add("info", "phase", "runner", value="drain")
            progress(f"drain: consumers ack everything, up to {config.drain_s} s")
            t0 = time.monotonic()
            if config.mode == "push":
                for c in consumers:
                    c.drain()
                drained = wait_quiet_push(history, config.drain_s)
                # Max offsets from the broker and the offset table, for PRG-3 (any live consumer).
                for c in consumers:
                    if c.alive() and c.report():
                        break
            else:
                for c in consumers:
                    c.draining.set()
                while time.monotonic() - t0 < config.drain_s:
                    if _quiet(history):
                        drained = True
                        break
                    time.sleep(0.5)
            seconds["drain"] = round(time.monotonic() - t0, 1)
        history.add("info", "phase", "runner", value="end")
    finally:
        if producer is not None:
            producer.stopping.set()
        if config.mode == "push":
            # Graceful shutdown persists the offsets (DefaultMQPushConsumerImpl#shutdown); in turn,
            # so that the broker sees each client leave.
            for c in consumers + retired:
                c.stop()
        else:
            for c in consumers + retired:
                c.stopping.set()
            for c in consumers + retired:
                c.join(10)
        t0 = time.monotonic()
        cluster.stop()
        seconds["stop"] = round(time.monotonic() - t0, 1)
        history.write(config.out / "history.jsonl")
        # The JVMs' own output (start banners, stack traces of failed starts) is small: keep it.
        (config.out / "jvm").mkdir(exist_ok=True)
        for out in [*workdir.glob("*.out"), *workdir.glob("*.err")]:
            shutil.copy(out, config.out / "jvm" / out.name)
        if not config.keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    seconds["total"] = round(time.monotonic() - began, 1)
    check = check_push_history if config.mode == "push" else check_history
    verdict = check(history.snapshot(), drained=not aborted)
    profile = PROFILES.get(config.release, DEFAULT_PROFILE)
    report_path = write_report(config.out, config.release, profile, history.snapshot(), verdict, faults, seconds,
                               drained, mode=config.mode)
    leftover = tuple(cluster.pids()) + tuple(p for c in consumers + retired if (p := c.pid()) is not None)
    result = LiveResult(config, verdict, tuple(faults), seconds, drained, config.out / "history.jsonl", report_path,
                        leftover, workdir, outcome or aborted)
    (config.out / "summary.json").write_text(json.dumps(summary_json(result), indent=2, sort_keys=True) + "\n")
    return result


def _push_started(history: History) -> int:
    """PushClient JVMs that reported their consumer started (the JVM's own ``start`` event)."""
    return sum(1 for op in history.snapshot() if op.f == "start" and isinstance(op.value, dict)
               and "instance" in op.value)


def _ok_receives(history: History) -> int:
    return sum(1 for op in history.snapshot() if op.f == "receive" and op.type == "ok")


def _quiet(history: History) -> bool:
    """Every acknowledged send acked (or maybe acked) and nothing delivered for QUIET_S."""
    sent = set()
    acked = set()
    last_delivery = 0
    ops = history.snapshot()
    for op in ops:
        if op.f == "send" and op.type == "ok":
            sent.add(op.key)
        elif op.f == "ack" and op.type in ("ok", "timeout"):
            acked.add(op.key)
        elif op.f == "deliver":
            last_delivery = op.time_ms
    now = time.time_ns() // 1_000_000
    return bool(sent) and sent <= acked and now - last_delivery >= QUIET_S * 1000


def summary_json(result: LiveResult) -> dict[str, object]:
    """The machine-readable summary of a session (``--json`` prints it)."""
    v = result.verdict
    return {
        "release": result.config.release, "mode": result.config.mode, "seed": result.config.seed, "duration_s": result.config.duration_s,
        "clients": result.config.clients, "faults": [f.to_json() for f in result.fault_schedule],
        "totals": v.totals.to_json(), "totals_consistent": v.totals.consistent(), "properties": v.checked,
        "violations": [x.to_json() for x in v.violations], "excused_violations": v.excused,
        "drained": result.drained, "seconds": result.seconds, "history": str(result.history_path),
        "report": str(result.report_path), "leftover_pids": list(result.leftover_pids),
        "workdir": str(result.workdir), "scenario": result.config.scenario, "outcome": result.outcome,
    }
