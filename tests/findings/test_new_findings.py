"""Findings F10-F18 (registered by the triage of verify's and the domain draw's unexplained
signatures) and the two model fixes found on the way: each finding's minimal schedule violates
its property on both profiles with its own signature, its switch off clears it, and the Java
side agrees (lockstep for the broker findings, the conformance harness's ProcessQueue for F13)."""

from __future__ import annotations

import shutil

import attrs
import pytest

from popverify.findings.attribution import Signature, attribute, removed
from popverify.findings.finding_traces import FINDING_TRACES, SEED
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the Java harnesses need a JDK and Maven")
PROFILES = ("v5.0", "v5.5")


def _run(fid: str, profile: str):  # type: ignore[no-untyped-def]
    ft = FINDING_TRACES[fid]
    return run_scenario(profile, SEED, 0, mode=ft.mode, config=ft.config, schedule=ft.schedule)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("fid, signatures", [
    ("F10", {"ALO-1/F10"}),
    ("F11", {"CKM-1/F11", "INV-1/F11", "NSR-1/F11", "RED-1/F11"}),
    ("F12", {"ALO-1/F12"}),
    ("F13", {"PQ-2/F13"}),
    ("F14", {"ALO-2/F14"}),
    # the domain draw's v5.0 seed 20: scanGarbage drops the idle commit-offset queue 5 minutes
    # after a POP with invisibleTime Integer.MAX_VALUE; the drain pops the message again
    ("F16", {"INV-1/F16", "RED-1/F16"}),
    # m1's file deleted before its CK is revived: the revive re-sends m2 in its place
    ("F17", {"INV-1/F17", "RED-1/F17"}),
    # verify's v5.0 seed 21: an orderly POP holds the message, a raw non-orderly POP reads it again
    ("F18", {"INV-1/F18", "RED-1/F18"}),
])
def test_each_new_finding_has_its_own_signature_and_its_switch_clears_it(fid: str, signatures: set[str],
                                                                          profile: str) -> None:
    result = _run(fid, profile)
    assert {s.key for s in attribute(result)} == signatures
    with removed([fid]):
        assert _run(fid, profile).violations == ()


def test_f15_is_50s_alone() -> None:
    """5.0.0's changeInvisibleTime admits offset == maxOffset: CKM-1/NSR-1/RED-1 on v5.0, whose
    release switch is F15's (False is the defect); v5.5 refuses the request and holds."""
    result = _run("F15", "v5.0")
    assert {s.key for s in attribute(result)} == {"CKM-1/F15", "NSR-1/F15", "RED-1/F15"}
    with removed(["F15"]):
        assert _run("F15", "v5.0").violations == ()
    assert _run("F15", "v5.5").violations == ()


def test_f19_is_55s_with_its_broker_option() -> None:
    """5.5.0 with enableSkipLongAwaitingAck: the mock CK of an early ACK replaces its real CK and
    the second message is never revived (ALO-2; F2's accepted changeInvisibleTime of an expired
    handle is what puts the ACK first, so either switch clears it); the option off, or v5.0
    (no such option), revive both."""
    assert {s.key for s in attribute(_run("F19", "v5.5"))} == {"ALO-2/F2+F19"}
    with removed(["F19"]):
        assert "ALO-2" not in {v.property_id for v in _run("F19", "v5.5").violations}
    t = FINDING_TRACES["F19"]
    off = run_scenario("v5.5", SEED, 0, config=attrs.evolve(t.config, broker_options=()), schedule=t.schedule)
    assert "ALO-2" not in {v.property_id for v in off.violations}
    assert "ALO-2" not in {v.property_id for v in _run("F19", "v5.0").violations}


# the v5.0 POP swarm's seed 119, shrunk (orderly, queue 0 starting at 2^31): a refused body,
# a produce stored one past its unit, a restart (the table falls back to the CQ's max), a
# produce stored with the same offset: one POP returns both, both acks name the first unit
F20_POP_CONFIG = ScenarioConfig(queues=1, consumers=1, pop_orderly=True, start_offset=2 ** 31, faults=("restart",),
                                actions=("produce", "pop", "pop_step", "ack", "advance", "produce_sized"))
F20_POP = (Action("produce_sized", (0, 4_194_305, 10_521)), Action("produce", (0,)), Action("restart", ()),
           Action("produce", (0,)))


def test_f20_is_50s_alone_in_push_and_pop() -> None:
    """5.0.0 burns a queue offset on a refused put: the push client commits one past the next
    message, which the other consumer skips (ALO-3, OFF-3); after a restart two messages share a
    stored offset and an orderly POP's batch is never fully acked (PRG-2). v5.5 holds both."""
    assert {s.key for s in attribute(_run("F20", "v5.0"))} == {"ALO-3/F20", "OFF-3/F20"}
    with removed(["F20"]):
        assert _run("F20", "v5.0").violations == ()
    assert _run("F20", "v5.5").violations == ()
    pop = run_scenario("v5.0", SEED, 0, config=F20_POP_CONFIG, schedule=F20_POP)
    assert {s.key for s in attribute(pop)} == {"PRG-2/F20"}
    assert run_scenario("v5.5", SEED, 0, config=F20_POP_CONFIG, schedule=F20_POP).violations == ()


def test_f21_is_50s_alone() -> None:
    """5.0.0 reloads every OrderInfo empty: after two restarts an orderly ack commits past its
    batch's un-acked first message (OFF-1, ALO-2); decode restoring it, or v5.5, hold."""
    assert {s.key for s in attribute(_run("F21", "v5.0"))} == {"ALO-2/F21", "OFF-1/F21"}
    with removed(["F21"]):
        assert _run("F21", "v5.0").violations == ()
    assert _run("F21", "v5.5").violations == ()


def test_f22_is_explained_by_f20_and_f22_each() -> None:
    """5.0.0's refused first put leaves the queue's file with a blank unit 0; after a restart the
    min offset is 0 and the drain's POP from 0 skips the message at unit 1 (ALO-1). Either cause
    removed clears it (F20: no burnt offset, no blank; F22: the loaded queue keeps min 1)."""
    # (the drain's POP commits past that message: OFF-1 too)
    assert {s.key for s in attribute(_run("F22", "v5.0"))} == {"ALO-1/F20+F22", "OFF-1/F20+F22"}
    with removed(["F22"]):
        assert _run("F22", "v5.0").violations == ()
    assert _run("F22", "v5.5").violations == ()


def test_verify_v55_seed_10_is_f10_alone() -> None:
    """verify's campaign run of seed 10 (250 steps) before the input domain was drawn by default
    (its swarm configuration without draw_domain): ALO-1 was unexplained; F10 explains all of it
    (not 5.5.0's recovery re-dispatch: v5.0 shows the same minimal schedule)."""
    from reference.common.javalang import JavaRandom

    config = ScenarioConfig.draw(JavaRandom(10 ^ 0x5F3759DF), mode="pop")  # rows.swarm_config's first part
    assert {"restart", "delete_recreate"} <= set(config.faults)
    result = run_scenario("v5.5", 10, 250, config=config)
    assert [s.key for s in attribute(result)] == ["ALO-1/F10"]


@pytest.mark.parametrize("profile", PROFILES)
def test_f12_tells_incarnations_apart_within_one_millisecond(profile: str) -> None:
    """F12's counterfactual records which incarnation an orderly POP read, not times: with the
    POP, two re-creations and the puts all in one millisecond (the shape of the domain draw's
    v5.5 seed 16), the ack of the second incarnation's message is still F12."""
    config = attrs.evolve(FINDING_TRACES["F12"].config, consumers=2)
    schedule = [Action.from_json(a) for a in (["pop", 0, -1, False], ["pop", 1, -1, False], ["delete_recreate"],
                                              ["produce", 0], ["pop_step", 1], ["delete_recreate"], ["produce", 0])]
    result = run_scenario(profile, 16, 0, mode="pop", config=config, schedule=schedule)
    assert [s.key for s in attribute(result)] == ["ALO-1/F12"]


def test_f12_follows_a_handle_that_5_0_changeinvisibletime_reissued() -> None:
    """5.0.0's changeInvisibleTime has no orderly branch: it re-issues an orderly handle with a
    new popTime, and its ack is the orderly ack all the same. F12's counterfactual follows the
    new handle: the pop helper's v5.0 seed 42 (ALO-1 "unexplained", reproduced on 5.0.0) is F12."""
    config = attrs.evolve(FINDING_TRACES["F12"].config, consumers=1)
    schedule = [Action.from_json(a) for a in (["produce", 0], ["pop", 0, -1, False], ["advance", 882],
                                              ["delete_recreate"], ["produce", 0], ["change_invisible", 0, 0, 5000])]
    result = run_scenario("v5.0", 42, 0, mode="pop", config=config, schedule=schedule)
    assert result.counts["changed_invisible"] == 1
    assert [s.key for s in attribute(result)] == ["ALO-1/F12"]


def test_acks_name_the_handles_offset_as_java_clients_do() -> None:
    """F11's POP answers m2 for offsets 0 and 1; both handles say offset 0 (processPopResponse's
    indexOf) and the acks name it (DefaultMQPushConsumerImpl#ackAsync: getQueueOffset of the
    handle), so the CK's offset 1 is the one revived -- the model used to ack the stored offset 1
    and revive offset 0."""
    result = _run("F11", "v5.0")
    revived = [v for v in result.violations if v.property_id == "CKM-1"]
    assert revived and "offset 1" in revived[0].message


@pytest.mark.parametrize("profile", PROFILES)
def test_clean_expired_msg_send_back_is_not_an_off3_violation(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Push seed 20 of the domain draw (consume_begin, no consume_end): a listener runs for an
    hour, cleanExpiredMsg sends its message back and removes it, the next message is consumed
    and the offset passes it. The retry copy carries it: no OFF-3 (the checker used to miss
    cleanExpiredMsg's send-backs), and the message is still delivered (ALO-3 holds)."""
    config = ScenarioConfig(queues=3, consumers=2, max_msg_nums=4, consume_fail_percent=2,
                            actions=("produce", "start", "shutdown", "rebalance", "pull", "deliver", "hold", "consume",
                                     "persist", "consumer_timer", "advance", "produce_sized", "consume_begin"),
                            faults=())
    schedule = [Action.from_json(a) for a in (["produce", 0], ["produce_sized", 0, 48465, 0], ["advance", 1509],
                                              ["pull", 0], ["deliver", 0, 0], ["consume_begin", 0],
                                              ["advance", 3_600_000], ["consumer_timer", 0], ["consume", 0, False])]
    assert run_scenario(profile, 20, 0, mode="push", config=config, schedule=schedule).violations == ()
    # the checker told nothing of cleanExpiredMsg's send-back: OFF-3, as before the fix
    from popverify.checker.push import PushChecker
    monkeypatch.setattr(PushChecker, "on_sent_back", lambda self, topic, queue_id, offsets: None)
    again = run_scenario(profile, 20, 0, mode="push", config=config, schedule=schedule)
    assert [v.property_id for v in again.violations] == ["OFF-3"]


# -- on RocketMQ's own classes ------------------------------------------------------------------

@needs_jdk
@pytest.mark.slow
def test_f13_process_queue_drift_on_both_client_jars() -> None:
    """The real ProcessQueue (rocketmq-client 5.0.0 and 5.5.0, conformance harness `pq` op):
    put two 5-byte messages, remove the first with its body now 1 byte, then the second. msgSize
    is 9 while one 5-byte message is held; 4 for good on 5.0.0, reset to 0 on 5.5.0 -- the
    model's figures."""
    from popverify.conformance.harness import Harness
    from reference.client.config import ClientConfig
    from reference.client.process_queue import ProcessQueue, PulledMessage

    ops = [{"k": "put", "msgs": [[0, 5, None], [1, 5, None]]}, {"k": "remove", "msgs": [[0, 1, None]]},
           {"k": "remove", "msgs": [[1, 5, None]]}]
    expected = {"5.0.0": [(2, 10), (1, 9), (0, 4)], "5.5.0": [(2, 10), (1, 9), (0, 0)]}
    for version, profile in (("5.0.0", "v5.0"), ("5.5.0", "v5.5")):
        with Harness(version) as h:
            status, java = h.call({"op": "pq", "ops": ops})
        assert status == "ok" and [(o["count"], o["size"]) for o in java] == expected[version]
        pq = ProcessQueue(lambda: 0, ClientConfig.for_profile(profile).pq_reset_size_when_empty)
        model = []
        for op in ops:
            msgs = [PulledMessage(o, b"\0" * size, {}) for o, size, _ in op["msgs"]]
            (pq.put_message if op["k"] == "put" else pq.remove_message)(msgs)
            model.append((pq.msg_count, pq.msg_size))
        assert model == expected[version]


@needs_jdk
@pytest.mark.slow
@pytest.mark.usefixtures("shared_lockstep")  # the session's JVM per release (tests/conftest.py)
def test_f11_agrees_in_lockstep_with_the_handle_offset_acks() -> None:
    """F11 on both releases' brokers (the others' verdicts are checked in: spec/findings/
    verdicts.json, test_confirmation.py): step by step agreement includes the revived CK offset,
    which the acks' handle offsets decide, and Java's own history violates NSR-1."""
    from popverify.findings.confirmation import Confirmer
    from popverify.findings.finding_traces import trace_path
    from popverify.sim.scenario import run_spec
    from popverify.trace.itf import read_trace

    with Confirmer(None) as confirmer:
        for release in ("5.0.0", "5.5.0"):
            c = confirmer.confirm(run_spec(read_trace(trace_path("F11", release))), "NSR-1")
            assert c.status == "reproduced", (release, c.text)
