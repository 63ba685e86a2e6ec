"""popverify confirm / conformance --stateful: lockstep replay on RocketMQ's real broker classes.

The JVM tests are slow (a harness JVM per release, built once and cached under
conformance/target/); the bad-input tests start no JVM.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import attrs
import pytest

from popverify.cli import main
from popverify.conformance.confirm import _first_difference, run_lockstep
from popverify.conformance.lockstep import RELEASES, TIME_OFFSET, LockstepClient, to_java_time, to_model_time
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from popverify.trace.itf import write_trace

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

# LockstepClient(release) lends the session's JVM of the release (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_lockstep")

CONFIG = ScenarioConfig(queues=2, consumers=2, invisible_time=8000, max_msg_nums=4, drain=True)


def _pop(c: int, queue: int, steps: int) -> list[Action]:
    return [Action("pop", (c, queue, False)), *[Action("pop_step", (c,)) for _ in range(steps)]]


# Produce, POP both queues (popTime, two queue visits, the retry topic's), ack, change the
# invisible time of another, a second consumer's POP of one queue and its ack, the services;
# the drain acks the rest in time and revive consumes every CK/ACK pair. Times stay on whole
# seconds and nothing is revived: the model's known divergences (timer slot, the retry
# topic's initial offset; spec/conformance.md) are not exercised here.
SCHEDULE = [Action("produce", (0,)), Action("produce", (1,)), Action("produce", (0,)), *_pop(0, -1, 4),
            Action("ack", (0, 0)), Action("advance", (1000,)), Action("change_invisible", (0, 0, 5000)),
            Action("advance", (1000,)), Action("produce", (1,)), *_pop(1, 1, 3), Action("ack", (1, 0)),
            Action("scan",), Action("timer",), Action("revive", (0,)), Action("flush",), Action("advance", (1000,)),
            Action("consumer_crash", (1,))]
# No POP: what the v5.5 model and 5.5.0 share before the first POP (getInitOffset differs).
NO_POP = [Action("produce", (0,)), Action("produce", (1,)), Action("advance", (1000,)), Action("scan",),
          Action("timer",), *[Action("revive", (q,)) for q in range(8)], Action("flush",)]


def _trace(tmp_path: Path, profile: str, schedule: list[Action], config: ScenarioConfig = CONFIG,
           mutant: str | None = None, name: str = "t.json") -> Path:
    result = run_scenario(profile, 7, len(schedule), config=config, schedule=schedule, record_trace=True,
                          mutant=mutant)
    assert result.trace is not None
    path = tmp_path / name
    write_trace(path, result.trace)
    return path


def test_time_mapping_is_one_shift_both_ways() -> None:
    assert to_java_time(1_000_000) == 1_700_000_000_000
    assert to_model_time(to_java_time(123_456)) == 123_456
    assert TIME_OFFSET > 0 and RELEASES == {"v5.0": "5.0.0", "v5.5": "5.5.0"}


def test_first_difference_names_the_path_and_both_values() -> None:
    assert _first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert _first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == (".a[1].b", 2, 3)
    assert _first_difference({"a": [1]}, {"a": [1, 2]}) == (".a.length", [1], [1, 2])
    assert _first_difference({"a": 1}, {"b": 1}) == (".a", 1, "<absent>")


def test_bad_traces_exit_2_before_any_jvm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"#meta": {"popverify": ')
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"#meta": {"source": "apalache"}, "vars": [], "states": []}))
    push = tmp_path / "push.json"  # a push trace whose schedule does not fit its actions' arguments
    result = run_scenario("v5.5", 1, 10, mode="push", record_trace=True)
    assert result.trace is not None
    result.trace["#meta"]["popverify"]["schedule"] = [["pull", "x"]]
    write_trace(push, result.trace)
    good = _trace(tmp_path, "v5.5", SCHEDULE[:3])
    for bad, words in ((corrupt, "not valid JSON"), (foreign, "not one written by popverify"),
                       (push, "must be an int"), (tmp_path / "missing.json", "cannot read")):
        assert main(["confirm", str(good), str(bad)]) == 2
        assert words in capsys.readouterr().err
    assert main(["confirm", "--version", "4.9.4", str(good)]) == 2
    assert "unknown version" in capsys.readouterr().err


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize(("profile", "schedule", "drain"), [("v5.0", SCHEDULE, True), ("v5.5", NO_POP, False)])
def test_a_short_schedule_agrees_on_the_real_broker(tmp_path: Path, profile: str, schedule: list[Action], drain: bool,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace(tmp_path, profile, schedule, attrs.evolve(CONFIG, drain=drain))
    code = main(["confirm", str(path), "--json"])
    first = capsys.readouterr().out
    verdict = json.loads(first)[0]
    assert code == 0 and verdict["status"] == "agrees", verdict
    assert verdict["release"] == RELEASES[profile]
    # every applied step compared, and each drain round's requests
    assert verdict["steps"] >= (len(schedule) + 1 if drain else len(schedule))
    # same trace, same bytes
    assert main(["confirm", str(path), "--json"]) == 0
    assert capsys.readouterr().out == first


@needs_jdk
@pytest.mark.slow
def test_develop_agrees_with_550_on_the_first_pop_initial_offset(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A gap lockstep found and the model closed (spec/conformance.md, switch pop_init_offset_55):
    5.5.0's PopMessageProcessor#getInitOffset commits the initial offset whatever the init mode;
    the v5.5 model did so only for MAX and diverged at step 4 on the committed offsets."""
    config = ScenarioConfig(queues=1, consumers=1, invisible_time=30_000, drain=False)
    schedule = [Action("produce", (0,)), Action("advance", (1000,)), *_pop(0, 0, 3)]
    path = _trace(tmp_path, "v5.5", schedule, config)
    assert main(["confirm", str(path)]) == 0
    out = capsys.readouterr().out
    assert "agrees" in out, out


@needs_jdk
@pytest.mark.slow
def test_a_broken_model_diverges_at_the_step_that_breaks() -> None:
    """The commit-skips-offset mutant commits one past the popped batch: the committed offset
    differs from Java's at the scan whose scanCommitOffset commits it, not before."""
    config = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, enable_pop_buffer_merge=False, drain=False)
    schedule = [Action("produce", (0,)), Action("produce", (0,)), *_pop(0, 0, 3), Action("ack", (0, 0)),
                Action("scan",)]
    with LockstepClient("5.0.0") as client:
        clean = run_lockstep("v5.0", 3, config, schedule, client)
        broken = run_lockstep("v5.0", 3, config, schedule, client, mutant="commit-skips-offset")
    assert clean.status == "agrees", clean.to_json()
    assert broken.status == "diverges", broken.to_json()
    assert broken.step == len(schedule) - 1 and broken.action == ("scan",), broken.to_json()
    assert broken.key == ".state.offsets.TopicTest@GID_popverify.0" and (broken.model, broken.java) == (3, 2)


@needs_jdk
@pytest.mark.slow
def test_out_of_scope_is_named_never_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # (retention, topic deletion, store put failures, scan stalls and long-polling parks are
    # replayed since RetentionOps / PutRefusal / ScanStall / LongPollOps; a step run while a
    # woken POP's re-run is in flight is not: Java re-runs it in one go)
    config = ScenarioConfig(queues=1, consumers=1, drain=False)
    woken = [Action("pop", (0, 0, True)), *[Action("pop_step", (0,)) for _ in range(3)], Action("produce", (0,))]
    path = _trace(tmp_path, "v5.5", [*woken, Action("produce", (0,))], config)
    assert main(["confirm", str(path)]) == 1
    out = capsys.readouterr().out
    assert "out of scope: step " in out and "woken long-polling POP" in out and "agrees" not in out
    # an advance past the request's time bound instead: the model runs the re-run to its end
    # first, and so does Java's one-go re-run
    path = _trace(tmp_path, "v5.5", [*woken, Action("advance", (10,))], config, name="settled.json")
    assert main(["confirm", str(path)]) == 0
    assert "agrees" in capsys.readouterr().out


@needs_jdk
@pytest.mark.slow
def test_stateful_differential_runs_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conformance", "--stateful", "--cases", "3", "--steps", "25", "--versions", "5.0.0", "--json"])
    report = json.loads(capsys.readouterr().out)["stateful"][0]
    assert report["cases"] == 3 and report["agree"] + report["diverge"] + report["out_of_scope"] == 3
    assert report["steps"] > 0
    assert code == (1 if report["diverge"] else 0)


@needs_jdk
@pytest.mark.slow
def test_the_harness_jvm_dies_with_its_parent_even_on_sigkill() -> None:
    """A parent killed outright (no atexit) still takes its JVM along (PR_SET_PDEATHSIG, and
    the harness exits on stdin EOF)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = ("from popverify.conformance.lockstep import LockstepClient\n"
            "c = LockstepClient('5.0.0')\n"
            "print(c.pid, flush=True)\n"
            "import time; time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    jvm = int(parent.stdout.readline())
    os.kill(jvm, 0)  # running
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(jvm, 0)
        except ProcessLookupError:
            return
        # a zombie until reaped by init counts as gone
        with open(f"/proc/{jvm}/stat") as stat:
            if stat.read().split(")")[-1].split()[0] == "Z":
                return
        time.sleep(0.2)
    os.kill(jvm, signal.SIGKILL)
    raise AssertionError("the harness JVM outlived its killed parent")


@needs_jdk
@pytest.mark.slow
def test_f1_minimal_trace_reproduces_on_500(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """F1 (spec/properties.md), shrunk from `simulate --profile v5.0 --seed 1 --steps 2000
    --buffer-merge off`: a message put after popTime and before the queue read is lost once
    its consumer crashes; the put runs inside the Java POP (its interleave)."""
    config = ScenarioConfig(queues=2, consumers=2, invisible_time=10_000, enable_pop_buffer_merge=False)
    # the put lands 3 ms after popTime, inside the model's time bound of one request
    schedule = [Action("pop", (1, 1, False)), Action("advance", (3,)), Action("produce", (1,)),
                Action("pop_step", (1,)), Action("pop_step", (1,)), Action("consumer_crash", (1,))]
    path = _trace(tmp_path, "v5.0", schedule, config)
    assert main(["confirm", str(path), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)[0]
    assert verdict["status"] == "agrees" and {"ALO-1", "ALO-2"} & set(verdict["java_violations"]), verdict
    assert verdict["finding"] == "reproduced on rocketmq-broker 5.0.0"


# The revive window (spec/conformance.md "revive window after a quiet queue"): a revive round
# with the timer 4 s behind the clock, one 1.5 s after a CK entered the timer, and one after
# both have caught up. The model revived at the first of these before the fix; Java only at
# the last. Then a restart and a POP of both queues: the new PopMessageProcessor's random.
WINDOW = [Action("produce", (0,)), *_pop(0, 0, 3), Action("advance", (5000,)), Action("timer",),
          Action("revive", (0,)), Action("advance", (4000,)), Action("revive", (0,)),
          Action("produce", (1,)), *_pop(0, 1, 3), Action("advance", (1500,)), Action("timer",),
          Action("revive", (0,)), Action("advance", (600,)), Action("timer",), Action("revive", (0,)),
          Action("flush",), Action("restart",), Action("produce", (0,)), Action("produce", (1,)),
          *_pop(0, -1, 4)]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_the_revive_window_follows_the_timer_as_java_does(profile: str) -> None:
    config = ScenarioConfig(queues=2, consumers=1, invisible_time=5000, enable_pop_buffer_merge=False,
                            services_on_period=False, faults=("restart",), drain=False)
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 5, config, WINDOW, client)
    # every revive round's retry-topic writes and the revive offsets are compared per step
    assert verdict.status == "agrees", verdict.to_json()
    assert verdict.steps == sum(1 for a in WINDOW if a.kind != "pop_step")  # a POP compares once


# Orderly POP (issue 16): a batch acked in part, a changeInvisibleTime of its next message, a
# second consumer's POP of the queue inside and after the invisible time, and the redelivery.
ORDERLY = ScenarioConfig(queues=1, consumers=2, invisible_time=3000, max_msg_nums=2, drain=False, pop_orderly=True)
ORDERLY_SCHEDULE = [Action("produce", (0,)), Action("produce", (0,)), Action("produce", (0,)), *_pop(0, 0, 3),
                    Action("ack", (0, 0)), Action("change_invisible", (0, 0, 1000)), Action("advance", (2000,)),
                    *_pop(1, 0, 3), Action("advance", (2000,)), *_pop(1, 0, 3), Action("ack", (1, 0)),
                    Action("ack", (1, 0)), Action("flush",)]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_an_orderly_schedule_agrees_on_the_real_broker(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness sends order=true: the block (5.0.0 ignores the changed invisible time, 5.5.0
    follows it), the orderly acks and the orderCountInfo agree; 5.5.0's redelivered offset is
    counted under the key `qo{queueId}%{offset}` (ExtraInfoUtil#getQueueOffsetKeyValueKey)."""
    from popverify.conformance import confirm

    counts: list[str] = []
    java_pop = confirm._java_pop

    def spy(answer: dict) -> dict:
        counts.append(answer.get("orderCountInfo") or "")
        return java_pop(answer)
    monkeypatch.setattr(confirm, "_java_pop", spy)
    model = run_scenario(profile, 5, 0, config=ORDERLY, schedule=ORDERLY_SCHEDULE)
    assert model.counts["redelivered"] >= 1 and not model.violations
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 5, ORDERLY, ORDERLY_SCHEDULE, client)
    assert verdict.status == "agrees", verdict.to_json()
    assert counts[0] == "0 0 0"  # the first batch: queue-level count 0, nothing popped before
    if profile == "v5.5":
        assert any("qo0%1 1" in c for c in counts), counts
    else:
        assert not any("qo" in c for c in counts) and "0 0 1" in counts, counts


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize(("profile", "after", "handles"), [("v5.0", 1000, False), ("v5.0", 10_000, True),
                                                            ("v5.5", 1000, True)])
def test_orderly_pops_after_a_restart_agree_on_the_real_broker(profile: str, after: int, handles: bool) -> None:
    """The order info persisted by the 10 s task (harness op persistOrderInfo) and reloaded at
    a restart. 5.0.0's reloaded entries are empty: an orderly pop of the queue answers its
    messages without offset info (no handle; an ack of it is SYSTEM_ERROR) until the next
    persist, whose autoClean drops entries of timestamp 0; 5.5.0 reloads its entries intact."""
    config = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, max_msg_nums=2, drain=False,
                            pop_orderly=True, faults=("restart",))
    schedule = [Action("produce", (0,)), Action("produce", (0,)), *_pop(0, 0, 3), Action("advance", (10_000,)),
                Action("flush",), Action("restart",), Action("advance", (after,)), Action("flush",), *_pop(0, 0, 3),
                Action("ack", (0, 0)), Action("ack", (0, 0))]
    model = run_scenario(profile, 1, 0, config=config, schedule=schedule)
    assert model.counts["popped"] == 4 and model.counts["acked"] == (2 if handles else 0), model.counts
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 1, config, schedule, client)
    assert verdict.status == "agrees", verdict.to_json()


# Actions inside an in-flight POP (the harness's interleave), at the points where the model runs
# them: after a queue visit whose batch is full (its restNum reads the max offset after the
# produces), a buffer scan while an empty queue's visit still holds its lock (its mock CK waits),
# and an advance past the request's time bound, which makes the model answer the POP before the
# time passes (so Java gets the POP before the advance). spec/conformance.md "Interleaving".
INTERLEAVED = [Action("produce", (0,)), Action("produce", (1,)), Action("pop", (0, -1, False)),
               Action("pop_step", (0,)), Action("produce", (0,)), Action("produce", (1,)),
               Action("pop_step", (0,)), Action("scan",), Action("advance", (10,)), Action("ack", (0, 0)),
               Action("pop", (0, 1, False)), Action("pop_step", (0,)), Action("scan",), Action("pop_step", (0,)),
               Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,)),
               Action("pop", (0, 1, False)), Action("pop_step", (0,)), Action("scan",), Action("pop_step", (0,)),
               Action("advance", (1000,)), Action("scan",), Action("flush",)]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_steps_inside_a_pop_run_at_the_same_points_on_java(profile: str) -> None:
    config = ScenarioConfig(queues=2, consumers=1, invisible_time=20_000, max_msg_nums=1,
                            enable_pop_buffer_merge=True, services_on_period=False, drain=False)
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 3, config, INTERLEAVED, client)
    assert verdict.status == "agrees", verdict.to_json()
    assert verdict.steps == sum(1 for a in INTERLEAVED if a.kind != "pop_step")


@needs_jdk
@pytest.mark.slow
def test_a_pop_an_advance_settles_is_replayed_as_the_model_ran_it() -> None:
    """A verify campaign's shrunk F1 counterexample: the advance of 703 ms lets the model answer
    the in-flight POP before the time passes (requests are time-atomic up to 5 ms); the replay
    sends the POP to Java there, with the put inside it, and the loss reproduces."""
    config = ScenarioConfig(queues=1, consumers=2, invisible_time=33_000, max_msg_nums=7, enable_pop_buffer_merge=True)
    schedule = [Action("pop", (1, -1, False)), Action("advance", (2,)), Action("produce", (0,)),
                Action("advance", (703,)), Action("batch_ack", (1,))]
    with LockstepClient(RELEASES["v5.0"]) as client:
        verdict = run_lockstep("v5.0", 4, config, schedule, client)
    assert verdict.status == "agrees", verdict.to_json()
    assert verdict.model_violations and set(verdict.model_violations) <= set(verdict.java_violations)
