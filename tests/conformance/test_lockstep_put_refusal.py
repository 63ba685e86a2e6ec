"""Store put failures on the real broker: the harness's ``refusePuts`` op (PutRefusal.java) and
the ``store_put_fail`` fault replayed in lockstep (spec/conformance.md "Store put failures").

Each schedule arms failures before a different put site; the model's and Java's refused sites
(``putRefusals`` in every state) and everything else agree step by step. A model that refuses
a different put diverges at that step; F8's schedule reproduces on 5.5.0 and holds on 5.0.0.
"""

from __future__ import annotations

import shutil
from typing import Any

import attrs
import pytest

from popverify.conformance import put_refusal
from popverify.conformance.confirm import run_lockstep
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.findings.finding_traces import FINDING_TRACES
from popverify.sim.pop_driver import PopDriver
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker.put_failure import StorePutFaults
from reference.broker.revive import PopReviveService

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

# LockstepClient(release) lends the session's JVM of the release (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_lockstep")


def _a(kind: str, *args: Any) -> Action:
    return Action(kind, tuple(args))


def _pop(c: int, queue: int, steps: int) -> list[Action]:
    return [_a("pop", c, queue, False), *[_a("pop_step", c) for _ in range(steps)]]


CONFIG = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, enable_pop_buffer_merge=False,
                        services_on_period=False, faults=("store_put_fail",), drain=True)
MERGE = ScenarioConfig(queues=1, consumers=1, invisible_time=30_000, enable_pop_buffer_merge=True,
                       services_on_period=False, faults=("store_put_fail",), drain=True)
_DUE = [_a("advance", 6000), _a("timer"), _a("advance", 6000), _a("timer")]

# (name, config, schedule, the sites the model refuses, per profile)
CASES = [
    ("ack", CONFIG, [_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("store_put_fail", 1), _a("ack", 0, 0),
                     _a("scan")], {"v5.0": ["ack"], "v5.5": ["ack"]}),
    ("pop ck", CONFIG, [_a("produce", 0), _a("store_put_fail", 2), *_pop(0, 0, 3), _a("scan"), _a("ack", 0, 0)],
     {"v5.0": ["buffer_ck", "buffer_ck"], "v5.5": ["buffer_ck", "buffer_ck"]}),
    # the buffer takes an ack only while its CK is unstored and puts the CK just before the
    # ACKs, so a pending failure hits the CK (spec/conformance.md "Store put failures")
    ("buffered ck and ack", MERGE, [_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("ack", 0, 0),
                                    _a("advance", 11_000), _a("store_put_fail", 1), _a("scan"), _a("scan")],
     {"v5.0": ["buffer_ck"], "v5.5": ["buffer_ck"]}),
    ("change ck", CONFIG, [_a("produce", 0), *_pop(0, 0, 3), _a("scan"), _a("store_put_fail", 1),
                           _a("change_invisible", 0, 0, 3000), _a("store_put_fail", 2),
                           _a("change_invisible", 0, 0, 3000)],
     {"v5.0": ["change_invisible_ck", "change_invisible_ck"], "v5.5": ["change_invisible_ck", "change_invisible_ck"]}),
    # processor_put_fail: the ack site alone (a changeInvisibleTime whose new CK is stored and
    # whose ackOrigin's ACK is refused: the old CK revives too), then the new CK's site; and
    # flush_timeout: the POP's CK, a changeInvisibleTime's CK and an ack's ACK written but
    # answered FLUSH_DISK_TIMEOUT, which every caller takes as a success
    ("processor sites", attrs.evolve(CONFIG, faults=("processor_put_fail", "flush_timeout")),
     [_a("produce", 0), _a("produce", 0), _a("produce", 0), _a("flush_timeout", 0, 1), *_pop(0, 0, 3), _a("scan"),
      _a("processor_put_fail", 0, 1), _a("change_invisible", 0, 0, 3000), _a("processor_put_fail", 1, 1),
      _a("change_invisible", 0, 1, 3000), _a("flush_timeout", 3, 1), _a("change_invisible", 0, 1, 3000),
      _a("flush_timeout", 2, 2), _a("ack", 0, 2), *_DUE, *[_a("revive", q) for q in range(8)]],
     {"v5.0": ["ack", "change_invisible_ck"], "v5.5": ["ack", "change_invisible_ck"]}),
    # buffer_put_fail (popCkStayBufferTime 3 s: the scan 3.5 s after the pop stores the partly
    # acked CK): the scan's CK put refused (the CK stays unstored), then its ACK put of m0's bit
    # (the bit stays unstored), then that ACK written but answered FLUSH_DISK_TIMEOUT (stored)
    ("buffer sites", attrs.evolve(MERGE, faults=("buffer_put_fail", "flush_timeout"),
                                  broker_options=("popCkStayBufferTime=3000",)),
     [_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("advance", 500), _a("ack", 0, 0),
      _a("buffer_put_fail", 0, 1), _a("advance", 3000), _a("scan"), _a("buffer_put_fail", 1, 1),
      _a("flush_timeout", 1, 1), _a("scan"), _a("scan"), _a("ack", 0, 0)],
     {"v5.0": ["buffer_ck", "buffer_ack"], "v5.5": ["buffer_ck", "buffer_ack"]}),
    ("revive retry", CONFIG, [_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("scan"), *_DUE,
                              _a("store_put_fail", 1), _a("revive", 0), _a("revive", 0), _a("advance", 6000),
                              _a("timer"), _a("revive", 0)],
     {"v5.0": ["revive_retry"], "v5.5": ["revive_retry"]}),
]


def _model_failed(profile: str, config: ScenarioConfig, schedule: list[Action]) -> list[str]:
    d = PopDriver(profile, 3, config, True, True)
    for action in schedule:
        d.apply(action)
    return list(d.broker.put_faults.failed)


def test_the_replay_helpers_map_refusals_and_the_500_revive_throw() -> None:
    assert put_refusal.arm_request(2) == {"op": "refusePuts", "count": 2}
    assert put_refusal.arm_retry_request(1) == {"op": "refuseRetryPuts", "count": 1}
    assert put_refusal.java_refusals({}) == {"pending": "<absent>", "retryPending": "<absent>", "failed": "<absent>"}
    assert put_refusal.java_refusals({"putRefusals": {"pending": 1, "retryPending": 0, "failed": ["ack"]}}) == \
        {"pending": 1, "retryPending": 0, "failed": ["ack"]}
    assert put_refusal.java_revive_threw({"error": "Exception: reviveQueueId=0,revive error ,msg is :x"})
    assert not put_refusal.java_revive_threw({"error": "IllegalStateException: no broker"})
    assert not put_refusal.java_revive_threw({"revived": []})
    d = PopDriver("v5.0", 3, CONFIG, True, True)
    d.broker.put_faults.arm(1)
    d.broker.put_faults.take("revive_retry")
    assert put_refusal.revive_threw(d.broker, 0) and not put_refusal.revive_threw(d.broker, 1)
    d5 = PopDriver("v5.5", 3, CONFIG, True, True)
    d5.broker.put_faults.arm(1)
    d5.broker.put_faults.take("revive_retry")
    assert not put_refusal.revive_threw(d5.broker, 0)  # 5.5.0 re-puts the CK instead of throwing


@pytest.mark.parametrize("name, config, schedule, sites", CASES, ids=[c[0] for c in CASES])
def test_each_case_refuses_the_sites_it_names_on_the_model(name: str, config: ScenarioConfig,
                                                          schedule: list[Action], sites: dict) -> None:
    for profile in RELEASES:
        assert _model_failed(profile, config, schedule) == sites[profile], profile


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", sorted(RELEASES))
def test_put_failures_agree_with_the_real_broker(profile: str) -> None:
    with LockstepClient(RELEASES[profile]) as client:
        for name, config, schedule, _sites in CASES:
            verdict = run_lockstep(profile, 3, config, schedule, client)
            assert verdict.status == "agrees", (name, verdict.to_json())
            assert verdict.put_failures, name  # the drain may use up what the schedule left


@needs_jdk
@pytest.mark.slow
def test_a_model_refusing_the_wrong_put_diverges_at_that_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a model whose ack put is never refused keeps its failure pending;
    Java refuses the ack's put, and the states differ at the ack."""
    original = StorePutFaults.take

    def take(self: StorePutFaults, site: str) -> bool:
        return False if site == "ack" else original(self, site)

    name, config, schedule, _ = CASES[0]
    with LockstepClient(RELEASES["v5.0"]) as client:
        monkeypatch.setattr(StorePutFaults, "take", take)
        verdict = run_lockstep("v5.0", 3, config, schedule, client)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.action == ("ack", 0, 0) and verdict.key and verdict.key.startswith(".state.putRefusals"), \
        verdict.to_json()


def _timeout_refuses(self: StorePutFaults, site: str) -> bool:
    """A model that takes a FLUSH_DISK_TIMEOUT answer for a refusal."""
    if site == self.timeout_site and self.timeout_pending > 0 and not (self.pending or self.processor_pending):
        self.timeout_pending -= 1
        self.failed.append(site)
        return True
    return _TAKE(self, site)


_TAKE = StorePutFaults.take


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("mutant, attr, first_step", [
    ("never arms a processor site", "arm_processor", ("processor_put_fail", 0, 1)),
    ("takes a flush timeout for a refusal", "take", ("pop_step", 0))])
def test_a_model_mishandling_the_processor_faults_diverges(mutant: str, attr: str, first_step: tuple,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """processor_put_fail and flush_timeout can fail: a model that ignores the arming lets the
    changeInvisibleTime's ackOrigin through, which Java refuses; one that refuses a timed-out
    put loses the POP's CK, which Java stored."""
    name, config, schedule, _ = next(c for c in CASES if c[0] == "processor sites")
    monkeypatch.setattr(StorePutFaults, attr, _timeout_refuses if attr == "take" else lambda self, site, count: None)
    with LockstepClient(RELEASES["v5.5"]) as client:
        verdict = run_lockstep("v5.5", 3, config, schedule, client)
    assert verdict.status == "diverges" and verdict.action == first_step, (mutant, verdict.to_json())


@needs_jdk
@pytest.mark.slow
def test_refuse_puts_is_bounded() -> None:
    with LockstepClient(RELEASES["v5.5"]) as client:
        client.ok({"op": "init", "version": RELEASES["v5.5"]})
        for bad in (0, 9, -1):
            status, value = client.call({"op": "refusePuts", "count": bad})
            assert status == "error" and "count must be in 1..8" in value, (bad, value)
        for bad in (0, 9):
            status, value = client.call({"op": "refuseRetryPuts", "count": bad})
            assert status == "error" and "count must be in 1..8" in value, (bad, value)
        for op, bad in (("refuseProcessorPuts", {"site": "ack", "count": 9}),
                        ("refuseProcessorPuts", {"site": "revive_retry", "count": 1}),
                        ("flushTimeouts", {"site": "ack", "count": 0}),
                        ("flushTimeouts", {"site": "revive_retry", "count": 1})):
            status, value = client.call({"op": op, **bad})
            assert status == "error" and ("count must be in 1..8" in value or "site" in value), (op, bad, value)
        assert client.ok({"op": "refuseRetryPuts", "count": 1}) == {"pending": 0, "retryPending": 1, "failed": []}
        assert client.ok({"op": "refusePuts", "count": 2}) == {"pending": 2, "retryPending": 1, "failed": []}
        # producer puts are never refused
        assert client.ok({"op": "put", "queueId": 0, "uniqKey": "u0"})["status"] == "PUT_OK"
        assert client.ok({"op": "state"})["putRefusals"] == {"pending": 2, "retryPending": 1, "failed": []}
        # a new broker starts with nothing pending
        client.ok({"op": "reset"})
        assert client.ok({"op": "state"})["putRefusals"] == {"pending": 0, "retryPending": 0, "failed": []}


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile, expected", [("v5.0", "agrees"), ("v5.5", "reproduced on rocketmq-broker 5.5.0")])
def test_f8_schedule_on_java(profile: str, expected: str) -> None:
    ft = FINDING_TRACES["F8"]
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 0, ft.config, list(ft.schedule), client)
    assert verdict.status == "agrees", verdict.to_json()
    if profile == "v5.5":
        assert verdict.finding == expected and verdict.java_violations == ("ALO-2",)
        assert verdict.put_failures == ("revive_retry", "reput_ck")
    else:
        assert verdict.model_violations == () and verdict.java_violations == ()
        assert verdict.put_failures[:2] == ("revive_retry", "revive_retry")


# -- scan_stall: one PopBufferMergeService#scan that takes ms (ScanStall.java) ------------------

STALL_CONFIG = ScenarioConfig(queues=1, consumers=1, invisible_time=20_000, enable_pop_buffer_merge=True,
                              services_on_period=False, faults=("scan_stall",), drain=True)
# a stall past popCkStayBufferTimeOut - 1000 ms stops the service (serving false: the next
# POP's CK is not buffered, the next scan stores every CK); a shorter one leaves it serving
STALLS = [_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("ack", 0, 0), _a("scan_stall", 2500),
          _a("produce", 0), *_pop(0, 0, 3), _a("scan"), _a("scan_stall", 1500), _a("scan")]


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("profile", sorted(RELEASES))
def test_scan_stalls_agree_with_the_real_broker(profile: str) -> None:
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 3, STALL_CONFIG, STALLS, client)
        assert verdict.status == "agrees", verdict.to_json()
        if profile == "v5.0":
            for bad in (0, 60_001):
                status, value = client.call({"op": "scanStall", "ms": bad})
                assert status == "error" and "ms must be in 1..60000" in value, (bad, value)


@needs_jdk
@pytest.mark.slow
def test_a_model_ignoring_the_scan_time_diverges_at_the_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference.broker.buffer_merge import PopBufferMergeService

    original = PopBufferMergeService.scan
    monkeypatch.setattr(PopBufferMergeService, "scan", lambda self, elapsed_ms=0: original(self, 0))
    with LockstepClient(RELEASES["v5.5"]) as client:
        verdict = run_lockstep("v5.5", 3, STALL_CONFIG, STALLS, client)
    assert verdict.status == "diverges", verdict.to_json()
    assert verdict.action == ("scan_stall", 2500) and verdict.key == ".response.serving", verdict.to_json()
    assert (verdict.model, verdict.java) == (True, False)


# consumer 1's POP has taken its popTime when the stall comes: the model's stalled scan runs
# before the POP's queue visit and would commit consumer 0's batch, Java's after it (the replay
# sends the settled POP first); so the coverage replay answers the POP first (confirm.runs_inside)
INFLIGHT_CONFIG = ScenarioConfig(queues=1, consumers=2, invisible_time=19_000, max_msg_nums=2, drain=False)
STALL_IN_FLIGHT = [_a("produce", 0), _a("produce", 0), *_pop(0, 0, 3), _a("produce", 0), _a("pop", 1, 0, False),
                   _a("scan_stall", 3000)]


@needs_jdk
@pytest.mark.parametrize("scans_first", [frozenset({"scan_stall"}), frozenset()], ids=["pop first", "scan first"])
def test_a_stall_during_a_pop_in_flight_answers_the_pop_first(scans_first: frozenset[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from popverify.conformance import confirm
    from popverify.conformance.confirm import LOCKSTEP_KINDS, Lockstep
    from popverify.coverage.replay import Adapted

    monkeypatch.setattr(confirm, "SCANS_BEFORE_SETTLING", scans_first)
    with LockstepClient(RELEASES["v5.5"]) as client:
        ls = Lockstep("v5.5", 7, INFLIGHT_CONFIG, client)
        verdict = ls.run(Adapted(tuple(STALL_IN_FLIGHT), ls, 2, LOCKSTEP_KINDS))
    if scans_first:
        assert verdict.status == "agrees", verdict.to_json()
    else:  # the replay without the rule: the model's early scan committed the first batch
        assert verdict.status == "diverges" and verdict.action == ("scan_stall", 3000), verdict.to_json()
        assert verdict.key == ".state.offsets.TopicTest@GID_popverify.0" and (verdict.model, verdict.java) == (2, 0)


@pytest.mark.parametrize("argv", [["--cases", "0"], ["--steps", "501"], ["--profiles", "v9"]])
def test_the_forced_put_failure_benchmark_refuses_bad_arguments_before_any_jvm(argv: list[str]) -> None:
    import subprocess
    import sys

    from popverify.tools import PROJECT_ROOT

    proc = subprocess.run([sys.executable, str(PROJECT_ROOT / "benchmarks" / "lockstep_put_failures.py"), *argv],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "error:" in proc.stderr and "Traceback" not in proc.stderr


# revive4: the store's own refusal of a revive copy. A message whose pad leaves fewer
# characters below Short.MAX_VALUE than the copy's 1ST_POP_TIME (and on 5.5.0 ORIGIN_GROUP) adds
# is stored, but its retry copy is refused (MessageExtEncoder#encode, PROPERTIES_SIZE_EXCEEDED):
# 5.0.0's round throws, 5.5.0 re-puts the CK (reviveRetry 5.0.0:115, 5.5.0:145). The last pad whose
# copy is stored, per release (5.0.0's properties string has no last separator):
SIZE = ScenarioConfig(queues=1, consumers=1, invisible_time=5000, max_msg_nums=1, enable_pop_buffer_merge=False,
                      services_on_period=False, drain=False, actions=(*CONFIG.actions, "produce_sized"))
LAST_REVIVED_PAD = {"v5.0": 32684, "v5.5": 32656}


def _sized_revive(pad: int) -> list[Action]:
    return [_a("produce_sized", 0, 16, pad), *_pop(0, 0, 3), *_DUE, _a("revive", 0), _a("revive", 1)]


def test_the_revive_copy_past_the_properties_limit_is_refused_on_the_model() -> None:
    for profile, last in LAST_REVIVED_PAD.items():
        copies = []
        for pad in (last, last + 1):
            d = PopDriver(profile, 3, SIZE, True, True)
            d.run(len(_sized_revive(pad)), _sized_revive(pad))
            assert d.broker.max_offset("TopicTest", 0) == 1  # the message itself is stored
            copies.append(len(d.broker.retry_messages("GID_popverify", "TopicTest")))
        assert copies == [1, 0], (profile, copies)
    # the message itself: 5.0.0's properties string has no last separator (one more character)
    for profile, stored in (("v5.0", 1), ("v5.5", 0)):
        d = PopDriver(profile, 3, SIZE, True, True)
        d.run(1, [_a("produce_sized", 0, 16, 32711)])
        assert len(d.broker.store.snapshot_queue("TopicTest", 0)) == stored, profile


@needs_jdk
@pytest.mark.slow
def test_the_refused_revive_copy_agrees_on_5_0_0_and_a_model_without_the_check_diverges(
        monkeypatch: pytest.MonkeyPatch) -> None:
    last = LAST_REVIVED_PAD["v5.0"]
    with LockstepClient(RELEASES["v5.0"]) as client:
        for pad in (last, last + 1):
            verdict = run_lockstep("v5.0", 3, SIZE, _sized_revive(pad), client)
            assert verdict.status == "agrees", verdict.to_json()
        monkeypatch.setattr(PopReviveService, "_copy_too_big", lambda *a: False)
        broken = run_lockstep("v5.0", 3, SIZE, _sized_revive(last + 1), client)
    assert broken.status == "diverges" and broken.key == ".response.reviveError", broken.to_json()
