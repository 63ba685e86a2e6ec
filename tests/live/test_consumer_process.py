"""ConsumerProcess (popverify/live/consumer_process.py), the part the POP consumer processes and the
push consumer JVMs share, driven through the real PopConsumerProcess and PushConsumer with a
small Python child that speaks their stdout/stdin protocol (no RocketMQ needed)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from popverify.live.history import History
from popverify.live.pop_process import PopConsumerProcess
from popverify.live.push import PushConsumer
from popverify.live.workload import Behaviour

# The child: prints its first records (argv[1], one JSON object per line), a log line and a
# line cut short, starts a grandchild in its process group, then answers commands: ``ping``
# prints argv[2], ``report`` prints {"f": "reported"}, ``stop`` exits unless argv[3] says to
# ignore it.
CHILD = r"""
import json, subprocess, sys
first, ping, ignore_stop = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == "ignore"
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open("grandchild.pid", "w").write(str(grandchild.pid))
for record in first:
    print(json.dumps(record), flush=True)
print("INFO a client log line", flush=True)
print('{"time_ms": 12', flush=True)
for line in sys.stdin:
    text = line.strip()
    if text == "ping":
        print(json.dumps(ping), flush=True)
    elif text == "report":
        print(json.dumps({"f": "reported", "time_ms": 0, "type": "info"}), flush=True)
    elif text == "stop" and not ignore_stop:
        grandchild.kill()
        sys.exit(0)
"""

POP_RECORD = {"index": 0, "rel_ms": 5, "time_ms": 1_000, "type": "ok", "f": "receive", "process": "consumer-0.0",
              "key": "k-1", "queue": 2, "offset": 7}
PUSH_RECORD = {"time_ms": 2_000, "type": "ok", "f": "consume", "key": "k-2", "topic": "T", "queue": 1, "offset": 3,
               "status": "CONSUME_SUCCESS"}


def _spawn(consumer: PopConsumerProcess | PushConsumer, tmp_path: Path, first: list[dict], ping: dict,
           ignore_stop: bool = False) -> None:
    consumer._spawn([sys.executable, "-c", CHILD, json.dumps(first), json.dumps(ping),
                     "ignore" if ignore_stop else "obey"], tmp_path / "child.err", tmp_path)


def _wait_for(predicate, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _pop(tmp_path: Path, history: History) -> PopConsumerProcess:
    return PopConsumerProcess("consumer-0.0", "127.0.0.1:1", history, 1, Behaviour(), tmp_path)


def test_pop_records_reach_the_history_and_crash_kills_the_group(tmp_path: Path) -> None:
    history = History()
    consumer = _pop(tmp_path, history)
    _spawn(consumer, tmp_path, [POP_RECORD], dict(POP_RECORD, key="k-9"))
    pid = consumer.pid()
    assert pid is not None and consumer.alive()
    assert _wait_for(lambda: (tmp_path / "grandchild.pid").is_file() and len(history.snapshot()) >= 2)
    assert consumer.command("ping")
    assert _wait_for(lambda: len(history.snapshot()) >= 3)
    start, first, pinged = history.snapshot()[:3]
    assert (start.f, start.value) == ("start", {"pid": pid})
    # the child's own clock and fields; the log line and the cut line are skipped
    assert (first.f, first.time_ms, first.key, first.queue, first.offset) == ("receive", 1_000, "k-1", 2, 7)
    assert pinged.key == "k-9" and len(history.snapshot()) == 3
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    consumer.crash()
    assert not consumer.alive() and consumer.pid() is None
    assert _wait_for(lambda: _gone(grandchild))  # the whole process group, not just the child
    assert history.snapshot()[-1].f == "crash" and history.snapshot()[-1].value == {"signal": "SIGKILL"}
    assert consumer.command("ping") is False  # nothing to tell a dead child
    consumer.join(1)  # stopping a crashed consumer is a no-op


def test_pop_join_stops_the_child_gracefully(tmp_path: Path) -> None:
    consumer = _pop(tmp_path, History())
    _spawn(consumer, tmp_path, [], POP_RECORD)
    consumer.join(20)
    assert consumer.proc is not None and consumer.proc.returncode == 0  # exited itself, not SIGKILLed
    assert consumer.stopping.is_set() and consumer.reader is not None and not consumer.reader.is_alive()


@pytest.mark.parametrize("kind", ["pop", "push"])
def test_a_child_ignoring_stop_is_killed_after_the_timeout(tmp_path: Path, kind: str) -> None:
    history = History()
    consumer = _pop(tmp_path, history) if kind == "pop" else PushConsumer("push-0", None, history, tmp_path, 1)  # type: ignore[arg-type]
    _spawn(consumer, tmp_path, [], {}, ignore_stop=True)
    began = time.monotonic()
    consumer.join(0.5) if isinstance(consumer, PopConsumerProcess) else consumer.stop(0.5)
    assert time.monotonic() - began >= 0.5
    assert consumer.proc is not None and consumer.proc.returncode == -9 and consumer.pid() is None
    assert _wait_for(lambda: _gone(int((tmp_path / "grandchild.pid").read_text())))


def test_push_records_report_and_crash(tmp_path: Path) -> None:
    history = History()
    consumer = PushConsumer("push-0", None, history, tmp_path, 1)  # type: ignore[arg-type]
    _spawn(consumer, tmp_path, [PUSH_RECORD], PUSH_RECORD)
    assert _wait_for(lambda: len(history.snapshot()) >= 2)
    op = history.snapshot()[1]
    assert (op.f, op.process, op.time_ms, op.key, op.topic, op.queue, op.offset) == \
        ("consume", "push-0", 2_000, "k-2", "T", 1, 3)
    assert op.value == {"status": "CONSUME_SUCCESS"}  # the rest of the record is the value
    assert consumer.report() is True and len(history.snapshot()) == 2  # "reported" is no history record
    consumer.crash()
    assert consumer.crashed and not consumer.alive() and history.snapshot()[-1].f == "crash"
    assert consumer.report() is False
