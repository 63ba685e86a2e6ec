"""The F2 live scenario: changeInvisibleTime on an expired handle whose checkpoint was revived.

The model (spec/properties.md, F2) predicts that ChangeInvisibleTimeProcessor accepts such a
handle, appends a new CK and acks the old one, so the message lives twice: a clean ack of
the new handle does not stop the revived copy from being delivered (NSR-1). Here, through the
proxy with the official Python client:

1. send one message; a consumer receives it with a 10 s invisible time (handle h1);
2. nobody receives for ``wait_s`` (> 10 s plus revive's delay), so revive puts the copy into
   ``%RETRY%{group}_{topic}``;
3. change_invisible_duration(h1, 10 s): recorded ok or fail with the proxy's answer;
4. when it succeeded, ack the new handle at once (a clean ack);
5. receive for ``watch_s``: the revived copy arriving now is the F2 resurrection, which the
   history checker reports as NSR-1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from popverify.live.cluster import TARGET_DIR, Cluster
from popverify.live.history import History, parse_handle
from popverify.live.workload import GROUP, TOPIC, _error_text
from popverify.tools import PROJECT_ROOT, ToolError, run_child

WAIT_S = 25
WATCH_S = 30
STARTUP_TRIES = 15


def _deliveries(history: History, name: str, msgs: list[Any]) -> None:
    for msg in msgs:
        handle = parse_handle(msg.receipt_handle or "")
        keys = sorted(msg.keys or ())
        history.add("info", "deliver", name, key=keys[0] if keys else None, handle=msg.receipt_handle,
                    topic=msg.topic, queue=handle.queue_id if handle else None,
                    offset=handle.offset if handle else None, value={"attempt": msg.delivery_attempt})


def _started(make: Callable[[], Any], history: History) -> Any:
    """A started client; a fresh topic's route can take a few seconds to reach the proxy
    (5.0.0 answered 'failed to fetch topic route' right after mqadmin created it)."""
    for _ in range(STARTUP_TRIES):
        client = make()
        try:
            client.startup()
            return client
        except Exception as err:  # noqa: BLE001 - the client raises a bare Exception here
            history.add("info", "start", "f2", error=_error_text(err))
            try:
                client.shutdown()
            except Exception:  # noqa: BLE001, S110 - a client that never started may not shut down
                pass
            time.sleep(2)
    raise ToolError(f"the RocketMQ client could not start within {2 * STARTUP_TRIES} s (see the history)")


def run_f2(endpoint: str, history: History, progress: Callable[[str], None], wait_s: int = WAIT_S,
           watch_s: int = WATCH_S, tls: bool = False) -> str:
    """Run the scenario, recording every operation; returns a one-line outcome."""
    from rocketmq import ClientConfiguration, Credentials, FilterExpression, Message, Producer, SimpleConsumer

    config = ClientConfiguration(endpoint, Credentials(), request_timeout=5)
    producer = _started(lambda: Producer(config, (TOPIC,), tls_enable=tls), history)
    consumer = _started(lambda: SimpleConsumer(config, GROUP, {TOPIC: FilterExpression()}, await_duration=2,
                                               tls_enable=tls), history)
    try:
        time.sleep(2)  # settings reach the proxy over telemetry first
        msg = Message()
        msg.topic, msg.body, msg.keys = TOPIC, b"f2", "k-0"
        history.add("invoke", "send", "producer", key="k-0")
        receipt = producer.send(msg)
        queue = int(str(receipt.message_queue).rsplit(".", 1)[1])
        history.add("ok", "send", "producer", key="k-0", queue=queue, offset=receipt.offset)
        held = None
        for _ in range(20):
            history.add("invoke", "receive", "consumer-0")
            try:
                got = consumer.receive(1, 10)
            except Exception as err:  # noqa: BLE001 - e.g. 40018 under load: try again
                history.add("fail", "receive", "consumer-0", error=_error_text(err))
                continue
            history.add("ok", "receive", "consumer-0", value=len(got))
            _deliveries(history, "consumer-0", got)
            if got:
                held = got[0]
                break
        if held is None:
            return "the message was never received: scenario not run"
        h1 = held.receipt_handle
        progress(f"F2: holding {h1}; waiting {wait_s} s past nothing for revive")
        time.sleep(wait_s)
        history.add("invoke", "change", "consumer-0", key="k-0", handle=h1, value=10)
        try:
            consumer.change_invisible_duration(held, 10)
        except Exception as err:  # noqa: BLE001 - the proxy's refusal is the outcome
            history.add("fail", "change", "consumer-0", key="k-0", error=_error_text(err))
            outcome = f"changeInvisibleDuration on the expired, revived handle was refused: {_error_text(err)}"
        else:
            history.add("ok", "change", "consumer-0", key="k-0", handle=held.receipt_handle, value=10)
            history.add("invoke", "ack", "consumer-0", key="k-0", handle=held.receipt_handle)
            try:
                consumer.ack(held)
            except Exception as err:  # noqa: BLE001
                history.add("fail", "ack", "consumer-0", key="k-0", error=_error_text(err))
                outcome = f"changeInvisibleDuration was accepted but the ack of the new handle failed: {_error_text(err)}"
            else:
                history.add("ok", "ack", "consumer-0", key="k-0", handle=held.receipt_handle)
                outcome = "changeInvisibleDuration on the expired, revived handle was accepted and the new handle acked"
        progress(f"F2: {outcome}; watching {watch_s} s for the revived copy")
        end = time.monotonic() + watch_s
        while time.monotonic() < end:
            history.add("invoke", "receive", "consumer-0")
            try:
                got = consumer.receive(8, 10)
            except Exception as err:  # noqa: BLE001
                history.add("fail", "receive", "consumer-0", error=_error_text(err))
                time.sleep(0.5)
                continue
            history.add("ok", "receive", "consumer-0", value=len(got))
            _deliveries(history, "consumer-0", got)
            for m in got:
                history.add("invoke", "ack", "consumer-0", key="k-0", handle=m.receipt_handle)
                try:
                    consumer.ack(m)
                except Exception as err:  # noqa: BLE001
                    history.add("fail", "ack", "consumer-0", key="k-0", error=_error_text(err))
                    continue
                history.add("ok", "ack", "consumer-0", key="k-0", handle=m.receipt_handle)
        return outcome
    finally:
        for client in (consumer, producer):
            try:
                client.shutdown()
            except Exception as err:  # noqa: BLE001 - shutting down is best effort
                history.add("info", "stop", "f2", error=_error_text(err))


F2_SOURCE = PROJECT_ROOT / "conformance" / "live" / "src" / "popverify" / "live" / "F2Remoting.java"
F2_GROUP = "PopVerifyGroupF2"
REMOTING_TIMEOUT_S = 180
REMOTING_KEY = "r-0"


def _build_f2(cluster: Cluster) -> Path:
    """Compile F2Remoting.java for the cluster's release (the header package moved in 5.1)."""
    classes = TARGET_DIR / f"live-{cluster.release}" / "f2classes"
    stamp = classes / "popverify" / "live" / "F2Remoting.class"
    if stamp.is_file() and stamp.stat().st_mtime >= F2_SOURCE.stat().st_mtime:
        return classes
    pkg = "org.apache.rocketmq.common.protocol" if cluster.release.startswith("5.0.") else \
        "org.apache.rocketmq.remoting.protocol"
    src = classes.parent / "f2src" / "popverify" / "live" / "F2Remoting.java"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(F2_SOURCE.read_text(encoding="utf-8").replace("@PKG@", pkg), encoding="utf-8")
    javac = shutil.which("javac")
    if javac is None:
        raise ToolError("javac is not installed: the F2 remoting scenario needs a JDK")
    classes.mkdir(parents=True, exist_ok=True)
    proc = run_child([javac, "-nowarn", "-d", str(classes), "-cp", cluster.classpath_text(), str(src)])
    if proc.returncode != 0:
        raise ToolError(f"javac failed on F2Remoting for RocketMQ {cluster.release}: {proc.stderr[-600:]}")
    return classes


def run_f2_remoting(cluster: Cluster, history: History, progress: Callable[[str], None], wait_s: int = WAIT_S,
                    watch_s: int = WATCH_S) -> str:
    """The same scenario over the remoting protocol, straight to the broker (group
    PopVerifyGroupF2, key r-0), through conformance/live/.../F2Remoting.java; its operations
    join the history with the Java side's clock."""
    classes = _build_f2(cluster)
    progress(f"F2 remoting: pop, wait {wait_s} s, changeInvisibleTime on the old handle, ack, watch {watch_s} s")
    cmd = cluster.java_command("admin", f"{classes}:{cluster.classpath_text()}", "popverify.live.F2Remoting",
                               [f"127.0.0.1:{cluster.ports.broker}", cluster.namesrv_addr, TOPIC, F2_GROUP,
                                str(wait_s), str(watch_s), REMOTING_KEY])
    try:
        proc = run_child(cmd, timeout=REMOTING_TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        raise ToolError(f"the F2 remoting client did not finish within {REMOTING_TIMEOUT_S} s") from err
    outcome = f"the F2 remoting client exited with {proc.returncode}: {proc.stderr[-300:]}"
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        raw = json.loads(line)
        if raw["f"] == "outcome":
            outcome = str(raw["value"])
            continue
        if raw.get("key") not in (None, REMOTING_KEY):
            # Another group's message (the proxy scenario's k-0): the checker's keys are one
            # group's messages, and every group gets every message.
            continue
        history.record(int(raw.pop("time_ms")), raw.pop("type"), raw.pop("f"), "remoting-0", **raw)
    return outcome
