"""The targeted technique of ``popverify mutate``: fixed configurations for what swarm runs
rarely judge (popverify/verify/targeted.py)."""

from __future__ import annotations

from popverify.verify import mutation
from popverify.verify.targeted import SCENARIOS, run_all


def test_targeted_scenarios_are_valid_and_cover_both_modes() -> None:
    for scenario in SCENARIOS:
        scenario.config.validate()
        assert scenario.why and scenario.seeds >= 1
    assert {s.mode for s in SCENARIOS} == {"pop", "push"}
    assert any(s.config.consume_orderly for s in SCENARIOS)
    assert any(s.mode == "pop" and s.config.queues == 1 and s.config.consumers > 1 for s in SCENARIOS)


def test_run_all_is_deterministic_and_clean_but_for_v50_losses() -> None:
    first = run_all(("v5.5",))
    assert first == run_all(("v5.5",))
    assert len(first) == sum(s.seeds for s in SCENARIOS)
    assert not any(first.values()), first  # develop: no known finding fires on these configurations


def test_targeted_kills_the_orderly_skip_lock_that_swarm_runs_miss() -> None:
    site = next(s for s in mutation.sites(("skip-lock",), ("client/rebalance_impl.py",)))
    result = mutation.run(("skip-lock",), ("client/rebalance_impl.py",), 1, 1, 100,
                          techniques=("targeted",))
    entry = result["mutants"][0]
    assert entry["mutant"] == site.name and entry["killed"], entry
    assert "targeted:ORD-1" in entry["by"]


def test_unit_technique_judges_code_no_campaign_loads() -> None:
    """client/pop_consumer.py is loaded by no scenario technique ("n/a"); the model's unit tests,
    run on the mutated tree, kill its off-by-one mutants."""
    result = mutation.run(("off-by-one",), ("client/pop_consumer.py",), 1, 1, 50, techniques=("unit", "simulation"))
    entry = result["mutants"][0]
    assert entry["techniques"]["simulation"] == {"result": "n/a"}
    assert entry["techniques"]["unit"]["result"] == "killed" and entry["by"] == ["unit:pytest=1"], entry


def test_sites_option_rejudges_only_the_named_mutants() -> None:
    from popverify.cli import main

    found = mutation.sites(("off-by-one",), ("broker/revive.py",))
    pick = found[-1].name
    result = mutation.run(("off-by-one",), ("broker/revive.py",), 100, 1, 50, techniques=("simulation",),
                          only=(pick,))
    assert [m["mutant"] for m in result["mutants"]] == [pick]
    assert main(["mutate", "--files", "broker/revive.py", "--sites", "broker/revive.py:1:0:off-by-one"]) == 2
