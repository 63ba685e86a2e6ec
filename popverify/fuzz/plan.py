"""The campaign plan: which jobs each round runs.

Round 0 (and any round without a corpus, and every round of a blind campaign) runs blind
seeds, each under its own swarm configuration (popverify.fuzz.rows.swarm_config). Later
rounds of a guided campaign spend half their budget on offspring of corpus runs: runs that
replay a prefix of a corpus run's schedule (or an edit of it), under the parent's
configuration or one changed dimension of it, with their own seed. spec/fuzzing.md "Guided
rounds".

The plan is a function of the rows already done and the round number alone, never of the
executor: the plain loop and Spark run the same jobs.
"""

from __future__ import annotations

import hashlib
import json

import attrs

from popverify.fuzz.rows import Job, swarm_config
from popverify.sim.scenario import ScenarioConfig, mode_of
from reference.common.javalang import JavaRandom

OFFSPRING_SEED_BASE = 1 << 40  # seeds of offspring runs: never collide with blind seeds
OFFSPRING_SEEDS_PER_ROUND = 1_000_000  # offspring seed = base + round * this + k


def swarm_digest(mode: str, seeds: int = 16) -> str:
    """A short digest of the swarm configurations of the first ``seeds`` seeds (part of a
    campaign's resume key: another way of drawing configurations is another campaign)."""
    drawn = [swarm_config(seed, mode).to_json() for seed in range(seeds)]
    return hashlib.sha1(json.dumps(drawn, sort_keys=True).encode()).hexdigest()[:16]


def round_jobs(round_no: int, per_round: int, runs: int, done: dict[int, dict]) -> list[Job]:
    """Round 0 (and any round without a corpus): blind seeds. Later rounds: half offspring of
    corpus runs (runs that reached coverage no earlier run had), half blind seeds."""
    blind = [s for s in range(runs) if s not in done][:per_round]
    if round_no == 0:
        return [Job(s) for s in blind]
    corpus = corpus_of(done)
    if not corpus:
        return [Job(s) for s in blind]
    rng = JavaRandom(round_no * 7919 + len(done))
    n_offspring = per_round // 2
    jobs = [Job(s) for s in blind[:per_round - n_offspring]]
    frequency = frequency_of(done)
    weights = [sum(1.0 / frequency[p] for p in row["coverage"]) for row in corpus]
    total = sum(weights)
    for k in range(n_offspring):
        # Parents are picked in proportion to how rare their coverage points are (AFL's
        # "favoured" entries): rare points sit at the frontier worth extending.
        pick = rng.next_double() * total
        index = 0
        while index < len(weights) - 1 and pick >= weights[index]:
            pick -= weights[index]
            index += 1
        parent = corpus[index]
        seed = OFFSPRING_SEED_BASE + round_no * OFFSPRING_SEEDS_PER_ROUND + k
        if seed in done:
            continue
        schedule = json.loads(parent["schedule"])
        if schedule and rng.next_int(4) != 0:
            # Go to the frontier, then explore: replay the parent up to the step that first
            # reached its rarest point and let the offspring's own seed draw the rest.
            prefix = schedule[:frontier_step(parent, frequency, rng) + 1]
        else:
            # spliced-in actions come from the parent's own schedule (valid kinds and arguments)
            fresh = [schedule[rng.next_int(len(schedule))] for _ in range(3)] if schedule else []
            prefix = edit_schedule(schedule, rng, fresh)
        origin = parent["seed"] if parent["parent"] < 0 else parent["parent"]
        config = ScenarioConfig.from_json(json.loads(parent["config"]))
        if rng.next_boolean():  # half the offspring also change one swarm dimension
            config = vary_config(config, rng, parent["mode"])
        jobs.append(Job(seed, origin, json.dumps(prefix), json.dumps(config.to_json(), sort_keys=True)))
    return jobs


def frequency_of(done: dict[int, dict]) -> dict[str, int]:
    """Per coverage point, how many runs reached it."""
    frequency: dict[str, int] = {}
    for row in done.values():
        for point in row["coverage"]:
            frequency[point] = frequency.get(point, 0) + 1
    return frequency


def frontier_step(row: dict, frequency: dict[str, int], rng: JavaRandom) -> int:
    """The step at which ``row`` first reached one of its rarest coverage points (a random one
    among ties); rows without step data give their whole schedule."""
    steps = row.get("coverage_steps") or []
    if len(steps) != len(row["coverage"]):
        return row["steps"]
    rarest = min(frequency[p] for p in row["coverage"])
    candidates = [s for p, s in zip(row["coverage"], steps) if frequency[p] == rarest]
    return candidates[rng.next_int(len(candidates))]


def corpus_of(done: dict[int, dict]) -> list[dict]:
    """Runs that each added coverage no run before them (in seed order) had."""
    seen: set[str] = set()
    corpus = []
    for seed in sorted(done):
        new = set(done[seed]["coverage"]) - seen
        if new:
            corpus.append(done[seed])
            seen |= new
    return corpus


def edit_schedule(schedule: list[list], rng: JavaRandom, extra: list[list]) -> list[list]:
    """One schedule edit: drop a slice, duplicate a slice, splice in actions, or swap two
    (a shortened schedule is continued by freshly drawn actions up to the run's steps)."""
    s = list(schedule)
    if len(s) < 2:
        return s + extra
    kind = rng.next_int(4)
    i, j = sorted((rng.next_int(len(s)), rng.next_int(len(s))))
    if kind == 0:
        return s[:i] + s[j + 1:] if j + 1 - i < len(s) else s[1:]
    if kind == 1:
        return s[:j] + s[i:j] + s[j:]
    if kind == 2:
        return s[:i] + extra + s[i:]
    s[i], s[j] = s[j], s[i]
    return s


def vary_config(config: ScenarioConfig, rng: JavaRandom, mode: str) -> ScenarioConfig:
    """Swarm-aware variation: one dimension of a parent's configuration changes -- one optional
    action kind or one fault toggled, or one size or switch re-drawn within its range.

    The kinds to toggle are the mode's own declarations (popverify/sim/actions.py): every action
    kind a swarm may leave out, opt-in kinds included, and every fault, late and opt-in ones
    included, grouped as the swarm draws them (Mode.groups: push's consume_begin and consume_end
    toggle together). A toggle adds the group's missing kinds at the end or removes the whole
    group, so the parent's other kinds keep their order."""
    push = mode == "push"
    dims = ["action", "fault", "queues", "consumers"]
    dims += ["consume_orderly", "consume_fail_percent"] if push else \
        ["invisible_time", "max_msg_nums", "enable_pop_buffer_merge", "services_on_period"]
    dim = dims[rng.next_int(len(dims))]
    if dim in ("action", "fault"):
        the_mode = mode_of(mode)
        field = "actions" if dim == "action" else "faults"
        pool = the_mode.groups(a.name for a in the_mode.actions if a.fault == (dim == "fault") and not a.always)
        group = pool[rng.next_int(len(pool))]
        current = getattr(config, field)
        toggled = tuple(k for k in current if k not in group) if set(group) <= set(current) else \
            current + tuple(k for k in group if k not in current)
        return attrs.evolve(config, **{field: toggled})
    fresh = ScenarioConfig.draw(rng, mode=mode)
    return attrs.evolve(config, **{dim: getattr(fresh, dim)})
