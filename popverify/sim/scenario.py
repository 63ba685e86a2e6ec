"""The scenario API every technique runs: one seeded, deterministic run of the model.

``run_scenario`` is the contract used by ``simulate``, ``replay``, ``shrink``, the stateful
machines, the Spark campaigns and mutation testing. A run is fully determined by
(profile, mode, seed, steps, config, schedule, mutant); with ``schedule`` given the driver
follows it first and then draws actions until ``steps`` (replay and delta debugging pass
``steps <= len(schedule)``; coverage-guided rounds pass a mutated corpus prefix and let the
run continue from where it got).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from popverify.checker.violation import Violation
from popverify.sim.actions import FAULT_WEIGHT, ActionSpec
from popverify.sim.domain import MAX_QUEUES, MAX_START_OFFSET, DomainReach, boundary_draw, config_dimensions
from popverify.sim.engine import Coverage, Engine, Mode, RunResult
from popverify.sim.pop_driver import POP_MODE
from popverify.sim.push_driver import PUSH_MODE
from popverify.trace.schedule import Action
from reference.broker.config import (AUTO_GROUP_OPTION, BROKER_OPTIONS, BUFFER_THRESHOLD_OPTIONS, INIT_OFFSET_OPTION,
                                     OFFSETS_PUSH_OPTIONS, POLLING_OPTIONS, PUSH_OPTIONS, REVIVE_LOOP_OPTIONS)
from reference.broker.store import CQ_FILE_UNITS
from reference.common.javalang import JavaRandom

__all__ = ["Action", "Violation", "RunResult", "Coverage", "ScenarioConfig", "run_scenario", "MODES", "mode_of",
           "POP_ACTIONS", "FAULTS", "FAULT_WEIGHT", "POP_ALWAYS", "PUSH_ACTIONS", "PUSH_FAULTS", "PUSH_ALWAYS"]

# The modes a run can be in (a mode is a set of actions and a world: popverify/sim/engine.py).
MODES: dict[str, Mode] = {"pop": POP_MODE, "push": PUSH_MODE}

# Catalogues derived from the action declarations (popverify/sim/pop_driver.py,
# push_driver.py): action kinds with their default weights, fault kinds, and the kinds every
# swarm configuration keeps. Faults are separate so swarm testing can switch them on and off.
POP_ACTIONS: dict[str, int] = POP_MODE.weights()
# Faults added by issue 16, kept apart so that every user of FAULTS (verify's campaign and
# mutation runs, their expectations) runs as before: store_put_fail (the store refuses puts,
# reference/broker/put_failure.py) and scan_stall (a slow PopBufferMergeService scan: the
# buffer stops serving). The swarm draw decides them after every other field, so earlier
# seeds keep their configurations; `--faults` and explicit configurations take them too.
LATE_FAULTS: tuple[str, ...] = ("store_put_fail", "scan_stall")
ALL_POP_FAULTS: tuple[str, ...] = POP_MODE.kinds(fault=True)
# Opt-in faults (retention's stages one at a time, popverify/sim/retention.py): only the
# swarm's late draw lists them (ScenarioConfig.draw_domain), after every other field.
OPT_IN_FAULTS: tuple[str, ...] = POP_MODE.opt_in(fault=True) + PUSH_MODE.opt_in(fault=True)
FAULTS: tuple[str, ...] = tuple(f for f in ALL_POP_FAULTS if f not in LATE_FAULTS and f not in OPT_IN_FAULTS)
POP_ALWAYS: frozenset[str] = POP_MODE.always()
# Push mode: producers, push consumers joining and leaving, their pull / consume / persist
# steps, and the faults of the push path (spec/push.md). Names shared with POP mean the same.
PUSH_ACTIONS: dict[str, int] = PUSH_MODE.weights()
PUSH_FAULTS: tuple[str, ...] = PUSH_MODE.kinds(fault=True)
PUSH_ALWAYS: frozenset[str] = PUSH_MODE.always()


# store helper: how far before its consume-queue file's end a moved start offset lies (1..3 units):
# a read from there stops at the file's end (ConsumeQueue#iterateFrom reads one file,
# travelCqFileNumWhenGetMessage 1), so a filtered read that found nothing there ends with
# nextBeginOffset short of the queue's max (DefaultMessageStore#getMessage 5.0.0:746, 5.5.0:930)
CQ_FILE_END_UNITS = 3


def near_cq_file_end(start: int, units: int) -> int:
    """``units`` (1..CQ_FILE_END_UNITS) before the end of the harness's consume-queue file
    (CQ_FILE_UNITS units) holding ``start``, or of the one before it past MAX_START_OFFSET."""
    end = (start // CQ_FILE_UNITS + 1) * CQ_FILE_UNITS
    if end - units > MAX_START_OFFSET:
        end -= CQ_FILE_UNITS
    return end - units


@attrs.frozen
class ScenarioConfig:
    """What a run may do (swarm testing draws one per run, within documented ranges).

    Ranges drawn by ``draw``: queues 1..4, consumers 1..3, invisible time 1..60 s (step
    1 s), max messages per pop 1..8, buffer merge on or off, each action kind kept with
    probability 0.8 (produce/pop/pop_step/ack/advance always kept), each fault kept with
    probability 0.3 unless ``faults`` is given explicitly, services on their periods with
    probability 0.75; without explicit ``faults``, orderly POP with probability 0.25.
    """

    queues: int = 2
    consumers: int = 2
    invisible_time: int = 10_000
    max_msg_nums: int = 4
    enable_pop_buffer_merge: bool = False
    actions: tuple[str, ...] = tuple(POP_ACTIONS)
    faults: tuple[str, ...] = ()
    drain: bool = True
    # The buffer scan and the timer keep their periods while time passes (see
    # PopWorld.pass_time); False lets the scheduler starve them.
    services_on_period: bool = True
    # Push mode: orderly listener instead of concurrent, and how often the listener fails
    # (RECONSUME_LATER / SUSPEND_CURRENT_QUEUE_A_MOMENT), in percent.
    consume_orderly: bool = False
    consume_fail_percent: int = 20
    # Boundary bias (issue 17 item 3), in percent: each value argument of a drawn action
    # (popverify/sim/actions.py, Arg.value) is replaced, with this probability, by one of its
    # domain's boundaries (popverify/sim/domain.py). 0 draws exactly as before.
    domain_bias: int = 0
    # The input domain's configuration dimensions (popverify/sim/domain.py, CONFIG_DIMENSIONS):
    # the offset every queue of the consumed topic starts at (0 .. MAX_START_OFFSET, a long).
    # The queue count is ``queues`` above (1 .. MAX_QUEUES).
    start_offset: int = 0
    # Orderly POP (issue 16): the POP consumers pop with order=true and ack what they hold in
    # offset order (popverify/sim/pop_driver.py); drawn by the swarm after every other field.
    pop_orderly: bool = False
    # The long-polling limits of the broker (BrokerConfig popPollingSize: parked requests per
    # polling key beyond which a POP answers POLLING_FULL; maxPopPollingSize: in all). The
    # defaults are the releases' (1024, 100000), which no run of at most 64 consumers reaches;
    # the swarm's late draw makes them small in some configurations (draw_domain).
    pop_polling_size: int = 1024
    max_pop_polling_size: int = 100_000
    # Broker options (issue 16): the non-default BrokerConfig booleans this run switches on, by
    # Java name (reference/broker/config.py BROKER_OPTIONS; a release without one ignores it);
    # POP only, drawn by the swarm last (draw_domain).
    broker_options: tuple[str, ...] = ()
    # revive4 (issue 16): the producers tag their messages (`produce` sends TAGS=PRODUCE_TAG, as
    # most real producers do; the harness's put sets them). Only the revive's copy reads them
    # (PopReviveService#reviveRetry 5.0.0:94-98, 5.5.0:115-119: the tags, or an empty property
    # map); the POPs subscribe "*". Drawn by the swarm last of all (POP, draw_domain).
    produce_tags: bool = False

    @property
    def merge_long_stay(self) -> bool:
        """The buffer merge on with its default stay time (no short popCkStayBufferTime): a CK
        stays buffered 10 s, longer than most runs, so the run seldom stores a partly acked CK's
        ACKs (buffer3's delete_idle is listed by these configurations: ScenarioConfig.draw_domain)."""
        return self.enable_pop_buffer_merge and SHORT_STAY_OPTION not in self.broker_options

    def to_json(self) -> dict[str, Any]:
        """JSON form (lists for tuples). Fields added after the engine refactor are written
        only when off their default, so earlier configurations and traces keep their bytes."""
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items()}
        for name in _LATER_FIELDS:
            if getattr(self, name) == attrs.fields_dict(ScenarioConfig)[name].default:
                del out[name]
        return out

    @classmethod
    def from_json(cls, data: Any) -> "ScenarioConfig":
        """Inverse of to_json; ValueError naming a bad field."""
        if not isinstance(data, dict):
            raise ValueError("config must be an object")
        known = {f.name for f in attrs.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config fields: {sorted(unknown)}")
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        config = cls(**fields)
        config.validate()
        return config

    def validate(self) -> None:
        """ValueError if a value is out of its range."""
        if not 1 <= self.queues <= MAX_QUEUES or not 1 <= self.consumers <= 64:
            raise ValueError(f"queues must be in 1..{MAX_QUEUES} and consumers in 1..64")
        if not 0 <= self.start_offset <= MAX_START_OFFSET:
            raise ValueError(f"start_offset must be in 0..{MAX_START_OFFSET}")
        if self.invisible_time <= 0 or not 1 <= self.max_msg_nums <= 32:
            raise ValueError("invisible_time must be > 0 and max_msg_nums in 1..32")
        if not 0 <= self.consume_fail_percent <= 100:
            raise ValueError("consume_fail_percent must be in 0..100")
        if not 0 <= self.domain_bias <= 100:
            raise ValueError("domain_bias must be in 0..100")
        if not 0 <= self.pop_polling_size <= 1024 or not 0 <= self.max_pop_polling_size <= 100_000:
            raise ValueError("pop_polling_size must be in 0..1024 and max_pop_polling_size in 0..100000")
        bad = [a for a in self.actions if a not in POP_ACTIONS and a not in PUSH_ACTIONS and a not in OPT_IN]
        bad += [f for f in self.faults if f not in ALL_POP_FAULTS and f not in PUSH_FAULTS]
        if bad:
            raise ValueError(f"unknown action or fault kinds: {bad}")
        unknown = [o for o in self.broker_options if o not in BROKER_OPTIONS]
        if unknown or len(set(self.broker_options)) != len(self.broker_options):
            raise ValueError(f"broker_options must be distinct names of {', '.join(BROKER_OPTIONS)}, "
                             f"got {list(self.broker_options)}")

    @classmethod
    def draw(cls, rng: JavaRandom, faults: Sequence[str] | None = None, mode: str = "pop") -> "ScenarioConfig":
        """A swarm configuration drawn from ``rng`` within the documented ranges."""
        if mode == "push":
            return cls.draw_push(rng, faults)
        actions = tuple(a for a in POP_ACTIONS if a in POP_ALWAYS or rng.next_int(10) < 8)
        chosen = tuple(faults) if faults is not None else \
            tuple(f for f in FAULTS if rng.next_int(10) < 3)
        queues, consumers = 1 + rng.next_int(4), 1 + rng.next_int(3)
        invisible_time, max_msg_nums = 1000 * (1 + rng.next_int(60)), 1 + rng.next_int(8)
        merge, on_period = rng.next_boolean(), rng.next_int(4) != 0
        orderly = False
        if faults is None:
            chosen += tuple(f for f in LATE_FAULTS if rng.next_int(10) < 3)
            # after the late faults: a swarm seed keeps every field it had before (1 in 4 orderly)
            orderly = rng.next_int(POP_ORDERLY_ONE_IN) == 0
        return cls(queues=queues, consumers=consumers, invisible_time=invisible_time, max_msg_nums=max_msg_nums,
                   enable_pop_buffer_merge=merge, actions=actions, faults=chosen, services_on_period=on_period,
                   pop_orderly=orderly)

    @classmethod
    def draw_push(cls, rng: JavaRandom, faults: Sequence[str] | None = None) -> "ScenarioConfig":
        """A push-mode swarm configuration: queues 1..4, consumers 1..3, each optional action
        kept with probability 0.8, each fault with 0.3, orderly with 0.25, listener failure
        0..40 %."""
        actions = tuple(a for a in PUSH_ACTIONS if a in PUSH_ALWAYS or rng.next_int(10) < 8)
        chosen = tuple(faults) if faults is not None else tuple(f for f in PUSH_FAULTS if rng.next_int(10) < 3)
        return cls(queues=1 + rng.next_int(4), consumers=1 + rng.next_int(3), actions=actions, faults=chosen,
                   consume_orderly=rng.next_int(4) == 0, consume_fail_percent=rng.next_int(41))

    def draw_domain(self, rng: JavaRandom, mode: str = "pop") -> "ScenarioConfig":
        """The input-domain fields of a swarm configuration, drawn from ``rng`` after every other
        field (popverify/fuzz/rows.py#swarm_config), so the fields drawn before keep their values:

        - queues: kept (1..4) with probability 31/32, else re-drawn across the mode's range (POP
          1..1024, push 1..64) with
          boundary bias (domain.py#boundary_draw);
        - start_offset: 0 with probability 1/2, else drawn across 0..MAX_START_OFFSET with bias;
        - each opt-in action of the mode (produce_sized, ...) kept with probability 1/2, kinds
          drawn together (Mode.groups: push's consume_begin and consume_end) on one coin;
        - each opt-in fault of the mode (retention's stages) kept with probability 0.3, as
          every other fault; then each ``late`` opt-in action (an admin's requests) with
          probability 1/2;
        - domain_bias: CAMPAIGN_DOMAIN_BIAS % (each drawn value argument replaced by a boundary);
        - POP mode, one configuration in SMALL_POLLING_ONE_IN: long-polling limits a run can
          reach, pop_polling_size 0..1 and max_pop_polling_size 0..2 (POLLING_FULL).
        - POP: each broker option (reference/broker/config.py BROKER_OPTIONS) on with probability
          1/2, drawn after every field above so each keeps its value;
        - then each ``late`` opt-in fault of the mode (ActionSpec#late_coin): persist_restart always
          in an orderly configuration, else with probability 1/2; processor_put_fail and
          flush_timeout with probability 0.3.
        - each ``after_options`` opt-in action (POP: pop_shape, batch_ack_request, consumer_close,
          delete_group_persist, topic_shrink_persist, delete_poll, orderly_stray) with probability 1/2; one with a
          ``late_if`` field exactly when that field is on (delete_group_persist, topic_shrink_persist,
          orderly_stray: in the orderly configurations), no coin drawn;
        - push: each of PUSH_OPTIONS (options only push requests reach, which the POP mode does
          not draw) on with probability 1/2;
        - POP: each buffer threshold option (BUFFER_THRESHOLD_DRAW); then each late opt-in
          fault declared ``after_options`` (buffer_put_fail, graceful_restart: listed with the
          buffer merge on, else buffer_put_fail with probability 0.3);
        - POP: each revive loop option (REVIVE_LOOP_OPTIONS: reviveMaxSlow=1) with probability
          1/2; then produce_tags with probability 1/2;
        - each opt-in action declared both ``late`` and ``after_options`` (push: produce_tagged)
          with probability 1/2; then a non-zero start_offset, with probability 1/2, moved to 1..3
          units before the end of its consume-queue file (near_cq_file_end);
        - push: each of OFFSETS_PUSH_OPTIONS by its own coin (OFFSETS_PUSH_DRAW);
        - POP: one of POLLING_OPTIONS with probability POLLING_OPTION_PERCENT %, then
          INIT_OFFSET_OPTION with probability 1/2; then (buffer3) a merge-off configuration
          turns the merge on, one in MERGE_LATE_ONE_IN, with the merge-on late draws; then the
          LISTED_LAST kinds (delete_idle) by their late_if on the configuration drawn, no coin;
        - last of all, each opt-in kind declared ``drawn_last`` (POP: topic_revive, then
          revive_topic_put) with probability 1/2; then POP: AUTO_GROUP_OPTION with probability
          1/2, in a configuration listing none of GROUP_DELETIONS.
        """
        dims = config_dimensions(mode)
        # 1/32: a v5.0 run with a queue id past 127 redelivers forever in the drain (byte
        # PopCheckPoint.queueId; tests/sim/test_domain.py) and costs 15-30 s here
        queues = boundary_draw(rng, dims["queues"]) if rng.next_int(WIDE_QUEUES_ONE_IN) == 0 else self.queues
        start = boundary_draw(rng, dims["start_offset"]) if rng.next_boolean() else 0
        the_mode = MODES[mode]
        # (LISTED_LAST: listed last of all, below; drawn_last: by their coins after them)
        kinds = [k for k in the_mode.opt_in() if k not in LISTED_LAST and not the_mode.spec(k).drawn_last]
        # (store helper: a kind both ``late`` and ``after_options`` is drawn last of all, below)
        final = [k for k in kinds if the_mode.spec(k).after_options and the_mode.spec(k).late]
        last = [k for k in kinds if the_mode.spec(k).after_options and k not in final]
        early = the_mode.groups(k for k in kinds if not the_mode.spec(k).late and k not in last)
        opt = tuple(a for group in early if rng.next_boolean() for a in group)
        opt_faults = tuple(f for f in the_mode.opt_in(fault=True) if not the_mode.spec(f).late and rng.next_int(10) < 3)
        late = the_mode.groups(k for k in kinds if the_mode.spec(k).late and k not in last and k not in final)
        opt += tuple(a for group in late if rng.next_boolean() for a in group)
        polling: dict[str, int] = {}
        if mode == "pop" and rng.next_int(SMALL_POLLING_ONE_IN) == 0:  # drawn last: the fields above keep their values
            # 0 in all: every POP that would park answers POLLING_FULL (parks rarely overlap)
            polling = {"pop_polling_size": rng.next_int(2), "max_pop_polling_size": rng.next_int(3)}
        options = tuple(o for o in BROKER_OPTIONS if o not in PUSH_OPTIONS and o not in BUFFER_THRESHOLD_OPTIONS
                        and o not in REVIVE_LOOP_OPTIONS and o not in OFFSETS_PUSH_OPTIONS and o not in POLLING_OPTIONS
                        and o not in (INIT_OFFSET_OPTION, AUTO_GROUP_OPTION) and rng.next_boolean()) \
            if mode == "pop" else ()
        # the late opt-in faults (persist_restart, processor_put_fail, flush_timeout), after every
        # field above, each by its own coin (ActionSpec#late_coin)
        late_faults = [f for f in the_mode.opt_in(fault=True) if the_mode.spec(f).late]
        opt_faults += tuple(f for f in late_faults
                            if not the_mode.spec(f).after_options and the_mode.spec(f).late_coin(self, rng))
        # (order2: a kind with a late_if field draws no coin: listed exactly when that field is on)
        opt += tuple(a for group in the_mode.groups(last)
                     if self._late_listing(the_mode.spec(group[0]), rng) for a in group)
        if mode == "push":  # pull helper: the push mode's options, last of all (PUSH_OPTIONS)
            options = tuple(o for o in PUSH_OPTIONS if rng.next_boolean())
        # buffer helper (issue 16): the buffer's thresholds, last of all (every field above keeps
        # its value), each by its own coin (BUFFER_THRESHOLD_DRAW)
        if mode == "pop":
            options += _buffer_thresholds(rng, lambda merge_only: self.enable_pop_buffer_merge or not merge_only)
        # then the late faults drawn after them (buffer_put_fail), each by its own coin
        opt_faults += tuple(f for f in late_faults
                            if the_mode.spec(f).after_options and the_mode.spec(f).late_coin(self, rng))
        # revive4 (issue 16): the revive loop's back-off ceiling (REVIVE_LOOP_OPTIONS), last of all,
        # each on with probability 1/2
        if mode == "pop":
            options += tuple(o for o in REVIVE_LOOP_OPTIONS if rng.next_boolean())
        # and tagged produces with probability 1/2 (POP)
        tags = mode == "pop" and rng.next_boolean()
        # store helper (DefaultMessageStore#getMessage), last of all: each opt-in kind declared
        # late and after_options on its own coin (push: produce_tagged), then a drawn start
        # offset moved, one in two, to 1..3 units before the end of its consume-queue file
        opt += tuple(a for group in the_mode.groups(final) if rng.next_boolean() for a in group)
        if start and rng.next_boolean():
            start = near_cq_file_end(start, 1 + rng.next_int(CQ_FILE_END_UNITS))
        # offsets helper (issue 16): more push options, each by its own coin, after every draw above
        if mode == "push":
            options += tuple(o for o, percent in OFFSETS_PUSH_DRAW.items() if rng.next_int(100) < percent)
        # polling3: at most one of POLLING_OPTIONS (they set one field), last of all
        if mode == "pop" and rng.next_int(100) < POLLING_OPTION_PERCENT:
            options += (POLLING_OPTIONS[rng.next_int(len(POLLING_OPTIONS))],)
        if mode == "pop" and rng.next_boolean():  # then initPopOffsetByCheckMsgInMem off, 1/2
            options += (INIT_OFFSET_OPTION,)
        # buffer3 (issue 16): a POP configuration with the merge off turns it on, one in
        # MERGE_LATE_ONE_IN; it then gets what the draws above give a merge-on configuration
        # (the merge-only buffer thresholds by their coins; the late faults whose late_if is the
        # merge: buffer_put_fail unless its coin listed it, graceful_restart; delete_idle below)
        merge = self.enable_pop_buffer_merge
        if mode == "pop" and not merge and rng.next_int(MERGE_LATE_ONE_IN) == 0:
            merge = True
            options += _buffer_thresholds(rng, lambda merge_only: merge_only)
            opt_faults += tuple(f for f in late_faults if the_mode.spec(f).after_options and f not in opt_faults
                                and the_mode.spec(f).late_if == "enable_pop_buffer_merge")
        drawn = attrs.evolve(self, queues=queues, start_offset=start, actions=self.actions + opt,
                             faults=self.faults + opt_faults, domain_bias=CAMPAIGN_DOMAIN_BIAS,
                             broker_options=options, produce_tags=tags, enable_pop_buffer_merge=merge, **polling)
        # then the LISTED_LAST kinds, by their late_if on the configuration drawn (no coin)
        listed = tuple(k for k in LISTED_LAST if k in the_mode.opt_in() and getattr(drawn, the_mode.spec(k).late_if))
        # revive5: the kinds declared drawn_last, each by its own coin; then
        # autoCreateSubscriptionGroup off, 1/2, where no other action deletes the consumed group
        # (it would stay gone: GROUP_DELETIONS)
        last_drawn = tuple(k for k in the_mode.opt_in() if the_mode.spec(k).drawn_last and rng.next_boolean())
        actions = drawn.actions + listed + last_drawn
        if mode == "pop" and rng.next_boolean() and not set(actions) & GROUP_DELETIONS:
            options += (AUTO_GROUP_OPTION,)
        return attrs.evolve(drawn, actions=actions, broker_options=options)

    def _late_listing(self, spec: ActionSpec, rng: JavaRandom) -> bool:
        """Whether the late draw lists ``spec`` (an ``after_options`` kind): its ``late_if`` field
        when it names one (no coin drawn), else a coin."""
        return bool(getattr(self, spec.late_if)) if spec.late_if else rng.next_boolean()

    @classmethod
    def default_for(cls, mode: str) -> "ScenarioConfig":
        """The default configuration of a mode (push: the push action kinds)."""
        if mode == "push":
            return cls(actions=tuple(PUSH_ACTIONS))
        return cls()



_LATER_FIELDS = ("domain_bias", "start_offset", "pop_orderly", "pop_polling_size", "max_pop_polling_size",
                 "broker_options", "produce_tags")
# One POP configuration in this many draws small long-polling limits (ScenarioConfig.draw_domain).
SMALL_POLLING_ONE_IN = 4
# One swarm configuration in this many pops orderly (ScenarioConfig.draw).
POP_ORDERLY_ONE_IN = 4
# The boundary bias of a fuzz campaign's swarm configurations (ScenarioConfig.draw_domain): a
# campaign field, not an engine default (spec/fuzzing.md "The input domain").
CAMPAIGN_DOMAIN_BIAS = 10
# buffer helper: each buffer threshold option (reference/broker/config.py BUFFER_THRESHOLD_OPTIONS)
# is on with this probability in percent, and only with the buffer merge on where True: the short
# stay time in 3 of 4 configurations with the merge on (with it off no CK is buffered; with it on,
# seeds 0..119 of both profiles, 100 steps, store a partly acked CK's ACKs in 22 of 240 runs,
# against 15 drawing it 1/2 and 11 with the default 10 s), each size limit in 1 of 4 (each
# refuses CKs the buffer would take).
BUFFER_THRESHOLD_DRAW: dict[str, tuple[int, bool]] = dict(zip(BUFFER_THRESHOLD_OPTIONS,
                                                              ((75, True), (25, False), (25, False)), strict=True))


def _buffer_thresholds(rng: JavaRandom, drawn: Callable[[bool], bool]) -> tuple[str, ...]:
    """The BUFFER_THRESHOLD_DRAW options on by their coins, each coin drawn when ``drawn`` holds
    for its merge-only flag (in BUFFER_THRESHOLD_DRAW's order)."""
    return tuple(o for o, (percent, merge_only) in BUFFER_THRESHOLD_DRAW.items()
                 if drawn(merge_only) and rng.next_int(100) < percent)


# buffer3 (issue 16): one merge-off POP configuration in this many turns the merge on, last of
# all (ScenarioConfig.draw_domain): with the swarm's 1/2 coin, 3 configurations in 4 merge.
MERGE_LATE_ONE_IN = 2
# buffer3: the after_options kinds listed last of all, with no coin, by their late_if read on the
# configuration drawn (a property of the fields drawn before: delete_idle's merge_long_stay)
LISTED_LAST: tuple[str, ...] = ("delete_idle",)
# The buffer's short stay time (BUFFER_THRESHOLD_OPTIONS' first; ScenarioConfig.merge_long_stay)
SHORT_STAY_OPTION = next(iter(BUFFER_THRESHOLD_OPTIONS))
# offsets helper: the percent of push configurations that switch each of OFFSETS_PUSH_OPTIONS on.
# Broadcast offsets off in 1 of 4 only: every pull of a run reaches the switch's test (the
# consumers' own too), while the broadcast branches it skips need the pull_request kinds of a
# run with it on (coverage replays 20 push runs, 9 or so of them with pull_request).
# offsets2: useServerSideResetOffset off in 1 of 2 (every pull and client commit reads it).
OFFSETS_PUSH_DRAW: dict[str, int] = dict(zip(OFFSETS_PUSH_OPTIONS, (50, 25, 50), strict=True))

# polling3: the percentage of POP configurations that set popLongPollingForceNotifyInterval
# (one of POLLING_OPTIONS, ScenarioConfig.draw_domain)
POLLING_OPTION_PERCENT = 50
# revive5: the kinds that delete the consumed group and leave its re-creation to the consumers'
# next POP (auto-create): a configuration listing one never draws AUTO_GROUP_OPTION
GROUP_DELETIONS = frozenset({"delete_group", "delete_group_persist", "delete_poll", "delete_idle"})
# One configuration in this many re-draws its queue count across the mode's whole range.
WIDE_QUEUES_ONE_IN = 32
# Opt-in action kinds of either mode (popverify/sim/actions.py, ActionSpec.opt_in).
OPT_IN: frozenset[str] = frozenset(POP_MODE.opt_in()) | frozenset(PUSH_MODE.opt_in())


def mode_of(name: str) -> Mode:
    """The mode called ``name``; ValueError naming the known ones."""
    if name not in MODES:
        raise ValueError(f"unknown mode {name!r}; known modes: {', '.join(MODES)}")
    return MODES[name]


def run_scenario(profile: str, seed: int, steps: int, *, mode: str = "pop",
                 config: ScenarioConfig | None = None, schedule: Sequence[Action] | None = None,
                 check: bool = True, mutant: str | None = None, record_trace: bool = False,
                 domain: DomainReach | None = None) -> RunResult:
    """Run one scenario; same arguments, same result (byte for byte in its JSON forms).

    ``domain``, when given, accumulates the range and boundaries each action argument reached
    (popverify/sim/domain.py; pass the same one to every run of a campaign).

    ValueError for an unknown profile, mode or mutant, a bad config (or one setting a field
    the mode does not use), or a schedule entry whose arguments do not fit its declaration.
    """
    the_mode = mode_of(mode)
    if steps < 0:
        raise ValueError("steps must be >= 0")
    if config is None:
        config = ScenarioConfig.default_for(mode)
    config.validate()
    ignored = [name for name in the_mode.ignores
               if getattr(config, name) != attrs.fields_dict(ScenarioConfig)[name].default]
    if ignored:
        raise ValueError(f"mode {mode!r} does not use config field(s) {', '.join(ignored)}; leave them at their "
                         "defaults")
    from popverify.mutants import applied
    with applied(mutant):
        engine = Engine(the_mode, profile, seed, config, check, record_trace, domain)
        engine.run(steps, schedule)
        return engine.result(mutant)


def config_from_trace(raw: dict[str, Any]) -> ScenarioConfig:
    """A trace's configuration; every field must have its default's type (``true`` is not a
    queue count) and the invisible time a bound. TraceError says what is wrong."""
    from popverify.trace.itf import JAVA_INT, MAX_INVISIBLE_TIME_MS, TraceError, short

    for field in attrs.fields(ScenarioConfig):
        if field.name not in raw:
            continue
        value, default = raw[field.name], field.default
        if isinstance(default, bool):
            ok = type(value) is bool
        elif isinstance(default, int):
            # start_offset is a long (0..MAX_START_OFFSET, checked by validate); the rest are ints
            bound = MAX_START_OFFSET + 1 if field.name == "start_offset" else JAVA_INT
            ok = type(value) is int and -bound <= value < bound
        elif isinstance(default, tuple):
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:
            ok = True
        if not ok:
            raise TraceError(f"trace config field {field.name} has a value of the wrong type or size: {short(value)}")
    if type(raw.get("invisible_time", 0)) is int and raw.get("invisible_time", 0) > MAX_INVISIBLE_TIME_MS:
        raise TraceError(f"trace config invisible_time is above {MAX_INVISIBLE_TIME_MS} ms")
    try:
        return ScenarioConfig.from_json(raw)
    except (TypeError, ValueError) as err:
        raise TraceError(f"trace config is malformed: {err}") from err


def run_spec(doc: dict[str, Any]) -> dict[str, Any]:
    """The arguments to re-execute a trace read by popverify/trace/itf.py#read_trace: profile,
    mode, seed, config (a ScenarioConfig), schedule, mutant. TraceError for anything a run
    could not start from or would not finish in bounded time."""
    from popverify.trace.itf import trace_spec

    spec = trace_spec(doc, tuple(MODES))
    return spec | {"config": config_from_trace(spec["config"])}
