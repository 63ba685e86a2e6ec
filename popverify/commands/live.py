"""``popverify live``: a real RocketMQ NameServer, Broker and Proxy on loopback, real POP
clients, seeded faults, and the model's history checker over what the clients saw."""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
from pathlib import Path
from types import FrameType

from popverify.errors import UsageError

# Bounds (documented in README.md and spec/live.md).
DURATION_S = (10, 1800)
CLIENTS = (1, 8)
DRAIN_S = (30, 600)
SEED = (0, 2**31 - 1)
RELEASE_RE = re.compile(r"^5\.\d+\.\d+$")


def _bounded(name: str, value: int, bounds: tuple[int, int]) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise UsageError(f"--{name} must be between {bounds[0]} and {bounds[1]} (got {value})")
    return value


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # run_live's finally stops every JVM it started


def _client_logs_to(path: Path) -> None:
    """The Python client's gRPC callbacks log a traceback for every refused heartbeat while a
    fault holds the proxy or broker down (concurrent.futures 'exception calling callback');
    those go to ``client.log`` in the output folder, not the terminal."""
    import logging

    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    for name in ("concurrent.futures", "asyncio", "grpc"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.propagate = False


def run(args: argparse.Namespace) -> int:
    from popverify.live.faults import FAULT_KINDS
    from popverify.live.run import LiveConfig, run_live, summary_json

    if not RELEASE_RE.match(args.release):
        raise UsageError(f"--release must be a RocketMQ 5.x release like 5.5.0 (got {args.release!r})")
    kinds = tuple(k for k in (args.faults or "").split(",") if k)
    unknown = sorted(set(kinds) - set(FAULT_KINDS))
    if unknown:
        raise UsageError(f"unknown fault(s) {unknown}; known: {', '.join(FAULT_KINDS)}")
    if args.mode == "push" and "timeout" in kinds:
        raise UsageError("--faults timeout is a POP client fault (acks given up on); push mode takes kill, pause, "
                         "proxy, consumer")
    if args.mode == "push" and args.scenario:
        raise UsageError(f"--scenario {args.scenario} is a POP scenario: leave out --mode push")
    config = LiveConfig(release=args.release, duration_s=_bounded("duration", args.duration, DURATION_S),
                        faults=tuple(dict.fromkeys(kinds)), clients=_bounded("clients", args.clients, CLIENTS),
                        seed=_bounded("seed", args.seed, SEED), drain_s=_bounded("drain", args.drain, DRAIN_S),
                        out=Path(args.out), scenario=args.scenario or "", mode=args.mode)
    if config.scenario and config.faults:
        raise UsageError(f"--scenario {config.scenario} runs alone: leave out --faults")
    try:
        import rocketmq  # noqa: F401
    except ModuleNotFoundError as err:
        from popverify.tools import ToolError as MissingTool
        raise MissingTool("rocketmq-python-client is not installed: run `bash scripts/setup.sh`") from err
    _client_logs_to(Path(args.out) / "client.log")
    previous = signal.signal(signal.SIGTERM, _sigterm)
    import grpc
    from rocketmq.v5.exception.client_exception import ClientException

    from popverify.tools import ToolError
    try:
        result = run_live(config, progress=lambda m: print(f"[live] {m}", file=sys.stderr, flush=True))
    except (ClientException, grpc.RpcError) as err:
        # Only where the run cannot go on without the answer (the F2 scenario's one send); the
        # workload records client errors in the history instead. Every JVM is stopped by now.
        raise ToolError(f"the RocketMQ client failed: {type(err).__name__}: {str(err)[:300]}") from err
    finally:
        signal.signal(signal.SIGTERM, previous)
    v = result.verdict
    if args.json:
        print(json.dumps(summary_json(result), indent=2, sort_keys=True))
    else:
        print(f"RocketMQ {config.release} ({config.mode}): {json.dumps(v.totals.to_json())}")
        for pid, status in v.checked.items():
            print(f"  {pid:6} {status}")
        for x in v.violations[:20]:
            print(f"  violation {x.property_id} at op {x.step}: {x.message}")
        if result.outcome:
            print(f"{'scenario ' + config.scenario if config.scenario else 'run stopped'}: {result.outcome}")
        print(f"report: {result.report_path}  history: {result.history_path}  seconds: {result.seconds}")
    if not v.totals.consistent() or not v.totals.acknowledged_sends:
        # Silence is not success: a run where no send was acknowledged checked nothing.
        print("live: no send was acknowledged (see history.jsonl and client.log) or the totals are inconsistent",
              file=sys.stderr)
        return 1
    if result.outcome and not config.scenario:
        print(f"live: {result.outcome}", file=sys.stderr)
        return 1
    return 1 if v.violations else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("live", help="run a real RocketMQ release on loopback under faults and check the history")
    parser.add_argument("--release", required=True, help="RocketMQ release from Maven Central, e.g. 5.5.0 or 5.0.0")
    parser.add_argument("--duration", type=int, default=60,
                        help=f"workload seconds, {DURATION_S[0]}..{DURATION_S[1]} (default 60)")
    parser.add_argument("--drain", type=int, default=90,
                        help=f"at most this many seconds of ack-everything drain, {DRAIN_S[0]}..{DRAIN_S[1]} (default 90)")
    parser.add_argument("--faults", default="", help="comma list of kill, pause, proxy, consumer, timeout")
    parser.add_argument("--clients", type=int, default=2,
                        help=f"consumers (POP clients or push JVMs), {CLIENTS[0]}..{CLIENTS[1]} (default 2)")
    parser.add_argument("--mode", choices=("pop", "push"), default="pop",
                        help="pop: SimpleConsumers through the proxy (default); push: DefaultMQPushConsumer JVMs "
                             "of the release (clustering, concurrently)")
    parser.add_argument("--seed", type=int, default=0, help=f"{SEED[0]}..{SEED[1]}")
    parser.add_argument("--out", default="popverify-out/live", help="folder for history, report and summary")
    parser.add_argument("--scenario", choices=("f2", "revive-kill"), default=None,
                        help="instead of the workload: f2 (changeInvisibleTime on an expired, revived handle) or "
                             "revive-kill (dropped messages, broker SIGKILL around their deadline, long watch); "
                             "spec/live.md")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)
