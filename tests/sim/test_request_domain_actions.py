"""The opt-in request-domain actions (popverify/sim/request_domain.py): reached, deterministic,
and invisible to configurations that do not list them."""

from __future__ import annotations

import pytest

from popverify.sim.domain import DomainReach
from popverify.sim.request_domain import CHANGE_KINDS, HANDLE_KINDS
from popverify.sim.scenario import POP_ACTIONS, Action, ScenarioConfig, run_scenario

OPT = ("pop_request", "ack_request", "change_invisible_request")


def _config(queues: int = 2, every: bool = True) -> ScenarioConfig:
    base = tuple(POP_ACTIONS) if every else ("produce", "pop", "pop_step", "ack", "advance", "revive")
    return ScenarioConfig(actions=base + OPT, queues=queues)


def test_opt_in_kinds_are_not_default_kinds() -> None:
    assert not set(OPT) & set(POP_ACTIONS)
    assert not set(OPT) & set(ScenarioConfig().actions)


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_request_domain_runs_are_deterministic_and_reach_the_refusals(profile: str) -> None:
    seen: set[str] = set()
    for seed in range(12):
        a = run_scenario(profile, seed, 120, config=_config(1 + seed % 3, every=False))
        b = run_scenario(profile, seed, 120, config=_config(1 + seed % 3, every=False))
        assert a.summary_json() == b.summary_json() and a.schedule == b.schedule
        assert not any(v.property_id == "MODEL-ERROR" for v in a.violations)
        seen |= {k for k in a.coverage if k.startswith(("ack_request:", "change_invisible_request:", "pop:"))}
    refused_pop = "pop:INVALID_PARAMETER:0" if profile == "v5.5" else "pop:SYSTEM_ERROR:0"
    assert refused_pop in seen
    assert len({k for k in seen if k.startswith("ack_request:")}) >= 6, seen
    assert len({k for k in seen if k.startswith("change_invisible_request:")}) >= 4, seen
    assert any(k.endswith(":MESSAGE_ILLEGAL") for k in seen) and any(k.endswith(":NO_MESSAGE") for k in seen)


def test_refused_requests_leave_the_message_held_and_acked_later() -> None:
    """A POP, then every refused ack kind on the held message, then the real ack: no violation."""
    schedule = [Action("produce", (0,)), Action("pop", (0, 0, False))] + [Action("pop_step", (0,))] * 4
    schedule += [Action("ack_request", (0, 0, HANDLE_KINDS.index(k))) for k in HANDLE_KINDS
                 if k not in ("duplicate", "offset_at_max", "other_group")]
    schedule += [Action("change_invisible_request", (0, 0, CHANGE_KINDS.index(k), 0)) for k in CHANGE_KINDS
                 if k != "offset_at_max"]
    schedule += [Action("ack", (0, 0))]
    for profile in ("v5.0", "v5.5"):
        r = run_scenario(profile, 3, 0, config=_config(1), schedule=schedule)
        assert not r.violations, r.violations
        assert r.counts["acked"] == 1 and r.counts["skipped"] <= 3  # pop_steps after the answer
        assert {"ack_request:garbled:SYSTEM_ERROR", "ack_request:queue_past_end:MESSAGE_ILLEGAL",
                "change_invisible_request:truncated:SYSTEM_ERROR"} <= r.coverage


def test_schedule_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="handle_kind"):
        run_scenario("v5.0", 1, 0, config=_config(), schedule=[Action("ack_request", (0, 0, len(HANDLE_KINDS)))])
    with pytest.raises(ValueError, match="max_msg_nums"):
        run_scenario("v5.0", 1, 0, config=_config(), schedule=[Action("pop_request", (0, 0, 2 ** 31, 1000))])


def test_domain_reach_records_the_request_dimensions() -> None:
    reach = DomainReach()
    for seed in range(6):
        run_scenario("v5.5", seed, 100, config=_config(every=False), domain=reach)
    rows = {r["dimension"]: r for r in reach.rows()}
    for dim in ("pop.pop_request.max_msg_nums", "pop.pop_request.queue_id", "pop.pop_request.invisible_time",
                "pop.ack_request.handle_kind", "pop.change_invisible_request.invisible_time"):
        assert rows[dim]["values"] > 0, dim


def test_pop_request_draw_reaches_every_edge() -> None:
    """The draw itself hits the limits (no bias needed): every maxMsgNums / invisibleTime edge,
    and every queueId edge (-1, past the end, Integer.MAX_VALUE, -2)."""
    from types import SimpleNamespace

    from popverify.sim.request_domain import INVISIBLE_EDGES, MAX_MSG_EDGES, _pop_request_draw
    from reference.common.javalang import JavaRandom

    world = SimpleNamespace(config=SimpleNamespace(queues=2, consumers=2))
    rng = JavaRandom(1)
    draws = [_pop_request_draw(rng, world) for _ in range(400)]
    assert set(MAX_MSG_EDGES) <= {d[2] for d in draws}
    assert set(INVISIBLE_EDGES) <= {d[3] for d in draws}
    assert {-2, -1, 0, 1, 2, 2 ** 31 - 1} == {d[1] for d in draws}
