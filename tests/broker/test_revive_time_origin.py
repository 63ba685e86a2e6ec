"""Times at or below 0 in the revive path (the model's clock starts at 1e6 ms, Java's at epoch
time: popTime + an invisibleTime near Integer.MIN_VALUE is below 0 only in the model). Java
routes every revive-topic put through HookUtils#transformTimerMessage and starts
PopReviveService#consumeReviveMessage's endTime at 0 below every (epoch) deliver time; the
model must not read a time <= 0 as "no deliver time" or "nothing read yet"
(request-domain lockstep seeds 1083, 1088, 1168: spec/conformance.md)."""

from __future__ import annotations

import shutil

import pytest

from reference.broker.checkpoint import PopCheckPoint
from reference.broker.keys import REVIVE_GROUP
from reference.common.message import PROPERTY_TIMER_DELIVER_MS
from tests.broker.conftest import make_broker

JAVA_INT_MIN = -2 ** 31


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_ck_due_below_zero_carries_its_deliver_time_and_sets_end_time(profile: str) -> None:
    b = make_broker(profile)
    now = b.clock.now()
    ck = PopCheckPoint(start_offset=0, pop_time=now, invisible_time=JAVA_INT_MIN, num=1, queue_id=0, topic="T",
                       cid="G", broker_name=b.config.broker_name)
    assert ck.revive_time < 0
    assert b.put_ck_message(ck, 0) >= 0
    stored = b.store.first_message_from(b.revive_topic, 0, 0)
    assert stored is not None and stored.properties[PROPERTY_TIMER_DELIVER_MS] == str(ck.revive_time - 1000)
    b.clock.advance(5000)  # the timer has not run since: its read time is behind, endTime stays put
    b.revive_step(0)
    # endTime is the CK's deliver time, as Java's (epoch) endTime would be: revive time - 1 s,
    # not past the 2 s window, so the CK is neither revived nor committed in this round (the
    # model read it as 0, revived it and committed revive offset 0)
    round_ = b.revive_services[0].last_round
    assert round_ is not None and round_.end_time == ck.revive_time - 1000
    assert b.offsets.query_offset(REVIVE_GROUP, b.revive_topic, 0) == -1


needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")


@needs_jdk
@pytest.mark.slow
@pytest.mark.usefixtures("shared_lockstep")  # the session's JVM per release (tests/conftest.py)
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_request_domain_seed_1083_agrees_on_java(profile: str) -> None:
    """It diverged at the drain (model revive offset 0, Java -1) before the fix."""
    from popverify.conformance.lockstep import RELEASES, LockstepClient
    from popverify.conformance.request_domain import differential

    with LockstepClient(RELEASES[profile]) as client:
        report = differential(profile, 1, 80, 1083, client)
    assert report["verdicts"] == {"agrees": 1}, report["not_agreeing"]
