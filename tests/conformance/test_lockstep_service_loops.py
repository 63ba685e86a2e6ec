"""The service threads' loops on the lockstep harness (ServiceLoops.java, spec/conformance.md
"Service thread loops"): `scan` and `revive` run one pass of PopBufferMergeService#run and
PopReviveService#run, and the merge thread's scanGarbage comes when its pass count is due,
read as virtual time as the model reads it."""

from __future__ import annotations

import shutil

import pytest

from popverify.conformance.confirm import run_lockstep
from popverify.conformance.lockstep import RELEASES, LockstepClient
from popverify.sim.scenario import Action, ScenarioConfig
from reference.broker import buffer_merge

needs_jdk = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                               reason="the lockstep harness needs a JDK and Maven")

# LockstepClient(release) lends the session's JVM of the release (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_lockstep")

CONFIG = ScenarioConfig(queues=1, consumers=1, invisible_time=8000, max_msg_nums=1, enable_pop_buffer_merge=True,
                        services_on_period=False, drain=False, faults=("store_put_fail",))
POP = [Action("pop", (0, 0, False)), Action("pop_step", (0,)), Action("pop_step", (0,))]
# m0 popped (its CK buffered, its pop in the commit-offset queue); the scan 301 s later cannot
# store the CK (a refused put), so the queue stays blocked and unused for over 5 minutes: that
# scan's scanGarbage drops it, and the next POP reads m0 again from the committed offset. A
# harness whose scanGarbage waits for 6000 counted passes (one per `scan` request, not per
# 5 ms) keeps the queue and answers m1.
STALE = [Action("produce", (0,)), Action("produce", (0,)), *POP, Action("store_put_fail", (1,)),
         Action("advance", (301_000,)), Action("scan",), *POP]

# buffer2: a graceful restart (Broker#graceful_restart, MergeShutdown.java). m0..m2 popped in one
# CK, m1 acked into the buffer (the merge keeps the bit); the merge thread's tail at the shutdown
# stores the CK and m1's ACK and commits the queue's offset past the pop, which the persist
# writes: the POP after the start gets m3, not m0 again. A model that loses the buffer, as at a
# crash, answers m0 (the offset was never committed).
GRACEFUL_CONFIG = ScenarioConfig(queues=1, consumers=1, invisible_time=30_000, max_msg_nums=3,
                                 enable_pop_buffer_merge=True, services_on_period=False, drain=False,
                                 faults=("graceful_restart",))
GRACEFUL = [*(Action("produce", (0,)) for _ in range(4)), Action("pop", (0, 0, False)), Action("pop_step", (0,)),
            Action("pop_step", (0,)), Action("ack", (0, 1)), Action("advance", (500,)),
            Action("graceful_restart",), Action("advance", (500,)), *POP]


# (config, schedule, the broken model, the step it is caught at, the key's start)
MERGE_CASES = {
    # a model whose garbage scan never comes keeps the queue: caught at the second POP (m1, not m0)
    "stale queue": (CONFIG, STALE, lambda mp: mp.setattr(buffer_merge, "GARBAGE_SCAN_PERIOD_MS", 10**9),
                    len(STALE) - 1, ".response."),
    # a model whose graceful restart loses the buffer: the offset is not committed (0, not 3)
    "graceful restart": (GRACEFUL_CONFIG, GRACEFUL,
                         lambda mp: mp.setattr(buffer_merge.PopBufferMergeService, "shutdown_drain", lambda self: True),
                         GRACEFUL.index(Action("graceful_restart",)), ".state.offsets."),
}


@needs_jdk
@pytest.mark.slow
@pytest.mark.parametrize("case", list(MERGE_CASES))
@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_the_merge_threads_work_agrees_with_java_and_a_broken_model_is_caught(profile: str, case: str,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale commit-offset queue dropped by scanGarbage; a graceful restart's drain (run()'s tail)."""
    config, schedule, breaks, step, key = MERGE_CASES[case]
    with LockstepClient(RELEASES[profile]) as client:
        verdict = run_lockstep(profile, 3, config, schedule, client)
        assert verdict.status == "agrees", verdict.to_json()
        breaks(monkeypatch)
        broken = run_lockstep(profile, 3, config, schedule, client)
    assert broken.status == "diverges" and broken.step == step, broken.to_json()
    assert (broken.key or "").startswith(key), broken.to_json()
