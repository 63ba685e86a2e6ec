"""Targeted scenarios: fixed configurations aimed at what random swarm runs rarely reach.

Mutation testing showed which model code the swarm campaigns of ``popverify mutate`` leave
unjudged (spec/mutation.md): the POP queue lock needs several POPs in flight on one queue;
the orderly push path (broker rebalance locks, ProcessQueue locks) needs an orderly
listener, which a swarm draws in one run of four; send-back and DLQ paths need listeners that
fail; offset arithmetic needs batches of one, short invisible times and retention at the
queue's ends. Each scenario here is one such configuration, run on both profiles and a few
seeds by the ``targeted`` technique (popverify/verify/mutation.py) with the same history
checkers as every other run: a mutant is killed when a property fires that did not on the
unmutated model. Nothing here draws swarm configurations (that is campaign planning's job);
these are hand-chosen, documented points of the configuration space.
"""

from __future__ import annotations

import attrs

from popverify.sim.scenario import ScenarioConfig
from reference.common.profile import PROFILE_NAMES

# POP actions that keep several requests on one queue in flight and move time and services.
_INTERLEAVED_POP = ("produce", "pop", "pop_step", "ack", "batch_ack", "change_invisible", "advance", "scan",
                    "timer", "revive", "flush", "consumer_crash")


@attrs.frozen
class Targeted:
    """One targeted configuration, run for ``seeds`` seeds of ``steps`` steps per profile."""

    name: str
    mode: str
    config: ScenarioConfig
    steps: int = 300
    seeds: int = 2
    why: str = ""


SCENARIOS: tuple[Targeted, ...] = (
    Targeted("one-queue-interleaved-pops", "pop",
             ScenarioConfig(queues=1, consumers=3, invisible_time=2000, max_msg_nums=2,
                            enable_pop_buffer_merge=False, actions=_INTERLEAVED_POP),
             why="three consumers interleave POPs queue-step by queue-step on one queue: the queue lock "
                 "(QueueLockManager#tryLock in popMsgFromQueue) is all that keeps them from reading the "
                 "same offsets (INV-1)"),
    Targeted("one-queue-interleaved-pops-merge", "pop",
             ScenarioConfig(queues=1, consumers=3, invisible_time=2000, max_msg_nums=2,
                            enable_pop_buffer_merge=True, actions=_INTERLEAVED_POP),
             why="the same with the merge buffer: commitOffset takes the same lock as the POP"),
    Targeted("boundary-batches", "pop",
             ScenarioConfig(queues=2, consumers=2, invisible_time=1000, max_msg_nums=1,
                            enable_pop_buffer_merge=True, faults=("expire", "restart")),
             why="batches of one, the shortest invisible time and retention at the queue's start: "
                 "off-by-one in offsets, revive times and min/max offsets"),
    Targeted("orderly-push", "push",
             attrs.evolve(ScenarioConfig.default_for("push"), queues=2, consumers=3, consume_orderly=True,
                          consume_fail_percent=30),
             seeds=3, why="orderly listeners: LOCK_BATCH_MQ, RebalanceLockManager and ProcessQueue locks (ORD-1)"),
    Targeted("orderly-push-crash", "push",
             attrs.evolve(ScenarioConfig.default_for("push"), queues=2, consumers=2, consume_orderly=True,
                          faults=("consumer_crash",)),
             why="orderly with crashed lock holders: lock expiry and take-over"),
    Targeted("push-retention", "push",
             attrs.evolve(ScenarioConfig.default_for("push"), queues=2, consumers=2, faults=("expire", "consumer_crash")),
             why="retention under push consumers: OFFSET_ILLEGAL, the 10 s offset fix-up and its persist, "
                 "queues without a committed offset (F5)"),
    Targeted("failing-listeners", "push",
             attrs.evolve(ScenarioConfig.default_for("push"), queues=2, consumers=2, consume_fail_percent=90),
             why="most consumptions fail: consumerSendMsgBack, the retry topic's delay levels and reconsume "
                 "counting"),
)


def run_all(profiles: tuple[str, ...] = PROFILE_NAMES) -> dict[str, list[str]]:
    """Every targeted scenario on every profile and seed: key ``name/profile/seed`` → the
    sorted property ids violated (or ``crash:Type`` when the run itself raised)."""
    from popverify.sim.scenario import run_scenario

    out: dict[str, list[str]] = {}
    for scenario in SCENARIOS:
        for profile in profiles:
            for seed in range(scenario.seeds):
                key = f"{scenario.name}/{profile}/{seed}"
                result = run_scenario(profile, seed, scenario.steps, mode=scenario.mode, config=scenario.config)
                out[key] = sorted({v.property_id for v in result.violations})
    return out
