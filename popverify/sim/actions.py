"""Actions as data (issue 17 item 1): each action kind is declared once.

A declaration (``ActionSpec``) says everything the engine needs to know of a kind: its name,
its weight in the weighted choice, whether it is a fault (swarm testing switches faults on
and off; the checker's property assumptions exclude some), whether every swarm
configuration keeps it, its arguments (name, type, the bounds a schedule entry must respect)
and how they are drawn from the run's generator, and how it is applied to the world. A mode
(popverify/sim/pop_driver.py, push_driver.py) is a tuple of declarations plus a world.

Arguments of a schedule entry are checked against the declaration before the model is
called: a foreign schedule with the wrong arity, a bool where an int is declared (or the
reverse), an int outside a Java int, or a time outside 0..MAX_TIME_ARG_MS is rejected with a
one-line ValueError. Values inside the bounds that do not apply in the world's state (an
index past what a consumer holds, a stall of 0 ms) are not errors: the action is a no-op.

The draws consume the generator in exactly the order the drivers drew before the engine
existed, so the same seed gives the same run (tests/sim/test_engine_digests.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs

from popverify.sim.events import MessageStored
from reference.common import response_code as rc
from reference.common.message import MAX_MESSAGE_SIZE, MAX_PROPERTIES_LENGTH
from reference.common.javalang import JavaRandom

JAVA_INT_MIN = -2 ** 31
JAVA_INT_MAX = 2 ** 31 - 1
# One advance or clock jump in a schedule: at most one hour of virtual time (every
# millisecond of an advance passes in service slices; the trace reader has the same bound).
MAX_TIME_ARG_MS = 3_600_000
FAULT_WEIGHT = 1
# The body every producer stores (MessageStored); the push checker's PQ-2 sums body sizes.
BODY = b"x" * 16
# produce_sized: body and property sizes up to one past the broker's limits (reference/broker
# /broker.py#put_message: MAX_MESSAGE_SIZE and MAX_PROPERTIES_LENGTH), so both sides are drawn.
MAX_BODY_ARG = MAX_MESSAGE_SIZE + 1
MAX_PROPERTY_ARG = MAX_PROPERTIES_LENGTH + 1
PADDING_PROPERTY = "popverify_pad"
# The tag `produce` sets with ScenarioConfig.produce_tags (revive4).
PRODUCE_TAG = "TagA"


@functools.lru_cache(maxsize=64)
def body_of(size: int) -> bytes:
    """A body of ``size`` bytes (cached: a run of 4 MiB bodies shares them)."""
    return b"x" * size


@attrs.frozen
class Arg:
    """One argument of an action: name, type (int or bool) and, for ints, inclusive bounds.

    ``value`` says the argument is a value the model receives (a time, an invisibleTime, a
    flag), whose domain popverify/sim/domain.py measures; an index the world takes modulo
    what it has (a consumer, a held message, a queue) is a choice, not a value.
    """

    name: str
    type: type = int
    lo: int = JAVA_INT_MIN
    hi: int = JAVA_INT_MAX
    value: bool = True

    def check(self, kind: str, value: Any) -> None:
        """ValueError with a one-line reason when ``value`` does not fit."""
        if self.type is bool:
            if not isinstance(value, bool):
                raise ValueError(f"schedule entry {kind!r}: argument {self.name} must be a bool, got {value!r}")
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"schedule entry {kind!r}: argument {self.name} must be an int, got {value!r}")
        if not self.lo <= value <= self.hi:
            raise ValueError(f"schedule entry {kind!r}: argument {self.name} = {value} is outside "
                             f"{self.lo}..{self.hi}")


def index(name: str) -> Arg:
    """A consumer or element index (taken modulo what the world has)."""
    return Arg(name, value=False)


def flag(name: str) -> Arg:
    """A bool argument."""
    return Arg(name, bool)


def millis(name: str) -> Arg:
    """A span of virtual time in ms, 0..MAX_TIME_ARG_MS."""
    return Arg(name, int, 0, MAX_TIME_ARG_MS)


Draw = Callable[[JavaRandom, Any], tuple]
# How an action is applied: the name of a world method, or a function of (world, *args).
Apply = str | Callable[..., bool]


@attrs.frozen
class ActionSpec:
    """One action kind: how it is chosen, drawn, checked and applied.

    ``apply`` names the world's method (or is a function of the world) that performs it with
    the arguments and returns False when it does not apply in the world's state (the step is
    counted as skipped); ``draw(rng, world)`` returns the arguments.
    """

    name: str
    weight: int
    apply: Apply
    args: tuple[Arg, ...] = ()
    draw: Draw | None = None
    fault: bool = False
    always: bool = False
    # An opt-in kind (issue 17 item 3's domain actions, retention's stages): not among a mode's
    # default kinds (Mode.weights) nor its drawn faults, so explicit configurations (the pinned
    # digests) keep their runs; a configuration that lists it runs it, and the swarm's late draw
    # (ScenarioConfig.draw_domain) lists it in campaigns.
    opt_in: bool = False
    # An opt-in kind that swarm draws decide together with the earlier kind named here (one coin
    # for both, both or neither: Mode.groups): consume_end with consume_begin, whose batch it ends.
    drawn_with: str = ""
    # An opt-in kind whose swarm coin comes after the opt-in faults' (it came after them: the
    # configurations drawn before keep their faults; ScenarioConfig.draw_domain)
    late: bool = False
    # A late opt-in fault's swarm coin: on with probability late_percent %, always when the
    # configuration's bool field late_if is on (persist_restart in an orderly configuration); an
    # after_options kind with a late_if is listed exactly when that field is on, no coin drawn
    # (delete_group_persist: ScenarioConfig._late_listing)
    late_percent: int = 50
    late_if: str = ""

    def late_coin(self, config: Any, rng: JavaRandom) -> bool:
        """Whether the swarm's late draw lists this late opt-in fault for ``config``."""
        return bool(self.late_if and getattr(config, self.late_if)) or rng.next_int(100) < self.late_percent
    # An opt-in kind whose swarm coin comes after every other field, broker options included
    # (it came after them: every configuration drawn before keeps all its fields)
    after_options: bool = False
    # An opt-in kind whose swarm coin (1/2) comes last of all, after every field above and the
    # last options (revive5, revive6: ScenarioConfig.draw_domain), in declaration order: every
    # configuration drawn before keeps all its fields, and no other kind's coin moves
    drawn_last: bool = False

    def draw_args(self, rng: JavaRandom, world: Any) -> tuple:
        """The arguments, drawn from ``rng`` (none for an action without arguments)."""
        return () if self.draw is None else self.draw(rng, world)

    def bind(self, world: Any) -> Callable[..., bool]:
        """The callable that applies this action to ``world``."""
        if isinstance(self.apply, str):
            return getattr(world, self.apply)
        return functools.partial(self.apply, world)

    def check(self, args: tuple) -> None:
        """ValueError when ``args`` do not fit the declaration (before the model is called)."""
        if len(args) != len(self.args):
            raise ValueError(f"schedule entry {self.name!r} takes {len(self.args)} argument(s), "
                             f"got {len(args)}: {list(args)!r}")
        for arg, value in zip(self.args, args):
            arg.check(self.name, value)


def opt_in(name: str, weight: int, apply: Apply, args: tuple[Arg, ...] = (), draw: Draw | None = None,
           drawn_with: str = "", late: bool = False, after_options: bool = False,
           drawn_last: bool = False) -> ActionSpec:
    """An opt-in action: run only when the configuration lists it (``drawn_with``: listed or
    left out together with that earlier opt-in kind; ``late``: its swarm coin after the opt-in
    faults'; ``after_options``: after every other field's; ``drawn_last``: after all of them)."""
    return ActionSpec(name, weight, apply, args, draw, opt_in=True, drawn_with=drawn_with, late=late,
                      after_options=after_options, drawn_last=drawn_last)


def fault(name: str, apply: Apply, args: tuple[Arg, ...] = (), draw: Draw | None = None,
          opt_in: bool = False, late: bool = False, late_percent: int = 50, after_options: bool = False) -> ActionSpec:
    """A fault: weight FAULT_WEIGHT, off unless the configuration lists it (``opt_in``: drawn
    only by the swarm's late draw, ScenarioConfig.draw_domain; ``late``: its coin, on with
    probability ``late_percent`` %, after every other field's, the broker options' too;
    ``after_options`` with ``late``: after the buffer threshold options', last of all)."""
    return ActionSpec(name, FAULT_WEIGHT, apply, args, draw, fault=True, opt_in=opt_in, late=late,
                      late_percent=late_percent, after_options=after_options)


# -- shared by both modes (the world has ``broker``, ``config``, ``topic`` and ``publish``) --------
def _produce(world: Any, queue_id: int, tags: str | None = None) -> bool:
    qid = queue_id % world.config.queues
    # The lockstep harness's commit-log layout: a new file before each produced message
    # (popverify/sim/retention.py, spec/conformance.md "Retention and topic deletion").
    world.broker.roll_commit_log()
    if tags is None and world.config.produce_tags:
        tags = PRODUCE_TAG  # revive4: ScenarioConfig.produce_tags
    # (no tags argument for an untagged message: the calls the lockstep replays see stay as they were)
    result = world.broker.put_message(world.topic, qid, body=BODY, **({"tags": tags} if tags else {}))
    if result.code != rc.SUCCESS:
        return False
    world.publish(MessageStored(qid, result.queue_offset, result.uniq_key))
    return True


def _produce_sized(world: Any, queue_id: int, body_size: int, property_size: int) -> bool:
    """A producer sends a message of ``body_size`` body bytes with a user property of
    ``property_size`` characters; the broker may refuse it (Broker#put_message's size checks:
    MESSAGE_ILLEGAL): the step still ran (the lockstep replay sends the same put and compares
    the refusal)."""
    qid = queue_id % world.config.queues
    props = {PADDING_PROPERTY: "p" * property_size} if property_size else None
    world.broker.roll_commit_log()  # the harness's layout, as _produce
    result = world.broker.put_message(world.topic, qid, body=body_of(body_size), properties=props)
    world.coverage.add(f"produce_sized:{rc.NAMES.get(result.code, result.code)}")
    if result.code == rc.SUCCESS:
        world.publish(MessageStored(qid, result.queue_offset, result.uniq_key))
    return True


def size_draw(rng: JavaRandom, hi: int) -> int:
    """A size in 0..hi, log-uniform by bit length (small and huge sizes alike)."""
    bits = rng.next_int(hi.bit_length() + 1)
    if bits == 0:
        return 0
    return min(hi, (1 << (bits - 1)) + rng.next_int(1 << (bits - 1)))


def _produce_sized_draw(rng: JavaRandom, world: Any) -> tuple:
    return (rng.next_int(world.config.queues), size_draw(rng, MAX_BODY_ARG), size_draw(rng, MAX_PROPERTY_ARG))


PRODUCE = ActionSpec("produce", 12, _produce, (index("queue_id"),),
                     lambda rng, w: (rng.next_int(w.config.queues),), always=True)
# Bodies and properties of any size the API takes, up to one past the broker's limits
# (maxMessageSize, 4 MiB, MessageStoreConfig; properties Short.MAX_VALUE, MessageExtEncoder#encode).
PRODUCE_SIZED = opt_in("produce_sized", 4, _produce_sized,
                       (index("queue_id"), Arg("body_size", int, 0, MAX_BODY_ARG),
                        Arg("property_size", int, 0, MAX_PROPERTY_ARG)), _produce_sized_draw)


def clock_jump_draw(rng: JavaRandom, world: Any) -> tuple:
    """A clock jump of 30..120 s."""
    return (30_000 + rng.next_int(90_000),)


def consumer_draw(rng: JavaRandom, world: Any) -> tuple:
    """One consumer index."""
    return (rng.next_int(world.config.consumers),)
