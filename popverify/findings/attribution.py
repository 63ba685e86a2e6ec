"""Root-cause attribution: which known findings explain a violation.

Each known finding F1..F22 (spec/properties.md#known-findings) has a mechanism switch in the
model's configuration that removes exactly its cause. A violating run is re-run, schedule
for schedule, once per switch present in its profile and mode, with that one switch flipped;
the signature of each violated property is (property, the findings whose removal clears it),
or ``unexplained`` when no single removal clears it. Attribution never depends on how often
a finding occurs: it is decided per run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import attrs

from reference.broker.config import BrokerConfig
from reference.client.config import ClientConfig

UNEXPLAINED = "unexplained"


@attrs.frozen
class Finding:
    """A known finding and the configuration field that switches its mechanism on."""

    fid: str
    title: str
    side: str                 # "broker" (BrokerConfig) or "client" (ClientConfig)
    switch: str               # a bool field; True = the Java behaviour, False = cause removed
    modes: tuple[str, ...]    # the scenario modes whose runs can exercise it
    # What a run needs before the switch can change anything (else its re-run is skipped: it
    # would be the same run): each inner tuple names action kinds of which the schedule holds
    # at least one; ``config_flag`` a ScenarioConfig bool that must be on.
    needs: tuple[tuple[str, ...], ...] = ()
    config_flag: str | None = None
    # a broker option (ScenarioConfig.broker_options) the run must switch on
    broker_option: str | None = None
    # the switch's value that is the Java behaviour (False for a release switch whose False is
    # the defect, F15); removing the cause sets the other value
    defect: bool = True

    def can_change(self, result: Any) -> bool:
        """Whether flipping the switch can change ``result``'s run (a necessary condition)."""
        if self.config_flag is not None and not getattr(result.config, self.config_flag):
            return False
        if self.broker_option is not None and self.broker_option not in result.config.broker_options:
            return False
        kinds = {a.kind for a in result.schedule}
        return all(any(k in kinds for k in group) for group in self.needs)


# the action kinds that delete the consumed topic and create it again (delete_poll, delete_idle:
# when drawn with topic=True, topic_revive with how 0; a group deletion or a grown topic
# otherwise, whose re-run is then the same run)
_TOPIC_DELETIONS = ("delete_recreate", "delete_poll", "delete_idle", "topic_revive")
# the action kinds that restart the broker and reload what it persisted (graceful_restart: the
# merge thread's drain, then persist_restart's persists)
_RELOADS = ("restart", "persist_restart", "graceful_restart")

FINDINGS: dict[str, Finding] = {f.fid: f for f in (
    Finding("F1", "v5.0 revive skips a message put between popTime and the queue read", "broker",
            "revive_skips_last_epoch", ("pop",)),
    Finding("F2", "changeInvisibleTime after the deadline resurrects a revived message", "broker",
            "change_invisible_accepts_expired", ("pop",)),
    Finding("F3", "same-millisecond checkpoints collide on their merge key", "broker",
            "change_invisible_same_ms_key", ("pop",)),
    Finding("F4", "a starved buffer scan stores an ack before its checkpoint", "broker",
            "ack_bypasses_unstored_ck", ("pop",)),
    Finding("F5", "a never-flushed queue restarts at its max offset after retention", "client",
            "unflushed_queue_starts_at_max_offset", ("push",)),
    Finding("F6", "scanCommitOffset moves a retention-corrected offset back", "broker",
            "buffer_commit_moves_offset_back", ("pop",)),
    Finding("F7", "a deleted topic's commit-offset queue skips the re-created topic's first messages", "broker",
            "delete_topic_keeps_buffer_offsets", ("pop",), needs=(_TOPIC_DELETIONS,)),
    Finding("F8", "v5.5 revive loses a message when its retry put and rePutCK's put both fail", "broker",
            "reput_ck_put_unchecked", ("pop",), needs=(("store_put_fail",),)),
    Finding("F9", "v5.0 narrows a checkpoint's queueId to a byte: a queue id past 127 names another queue", "broker",
            "ck_queue_id_is_byte", ("pop",)),
    Finding("F10", "a broker crash after deleteTopic reloads the deleted topic's offsets into the re-created topic",
            "broker", "delete_topic_offsets_unpersisted", ("pop",), needs=(_TOPIC_DELETIONS, ("restart",))),
    Finding("F11", "commit-log position 0 reads the oldest remaining file's first message once its own file is deleted",
            "broker", "position_zero_reads_first_file", ("pop",), needs=(("expire", "expire_commit_log"),)),
    Finding("F12", "an orderly ack of a deleted topic's message commits its next offset into the re-created queue",
            "broker", "orderly_ack_commits_across_incarnations", ("pop",), needs=(_TOPIC_DELETIONS,),
            config_flag="pop_orderly"),
    Finding("F13", "ProcessQueue's msgSize drifts when a listener changes a body's length", "client",
            "pq_size_counts_current_body", ("push",)),
    Finding("F14", "an orderly POP never reads the retry topic: a message revived from a non-orderly POP is stranded",
            "broker", "orderly_pop_skips_retry", ("pop",), config_flag="pop_orderly"),
    Finding("F15", "v5.0 changeInvisibleTime accepts the queue's max offset: a CK for a message not yet stored",
            "broker", "change_invisible_max_offset_exclusive", ("pop",),
            needs=(("change_invisible", "change_invisible_request"),), defect=False),
    Finding("F16", "the buffer's garbage scan drops an idle commit-offset queue with uncommitted pops: they are popped again",
            "broker", "buffer_garbage_drops_pending_pops", ("pop",)),
    Finding("F17", "revive of a message retention removed re-sends the queue's next message in its place",
            "broker", "revive_takes_next_message", ("pop",), needs=(("expire", "expire_commit_log"),)),
    Finding("F18", "a non-orderly POP re-reads the batch an orderly POP of the same group still holds", "broker",
            "concurrent_pop_ignores_orderly_hold", ("pop",), needs=(("pop_request",),), config_flag="pop_orderly"),
    Finding("F19", "v5.5 with enableSkipLongAwaitingAck: a mock CK for an early ACK replaces its real CK, whose messages "
            "are never revived", "broker", "mock_ck_replaces_read_ck", ("pop",),
            broker_option="enableSkipLongAwaitingAck"),
    Finding("F20", "v5.0: a refused put burns a queue offset; the stored offset runs one past the consume-queue unit",
            "broker", "refused_put_burns_offset", ("pop", "push"), needs=(("produce_sized",),)),
    Finding("F21", "v5.0: the order info comes back empty after a restart; an orderly ack then commits past its "
            "batch's un-acked messages", "broker", "order_info_lost_on_reload", ("pop",),
            needs=(_RELOADS,), config_flag="pop_orderly"),
    Finding("F22", "a restart makes a consume queue's fillPreBlank units valid (min offset 0); a read from 0 skips the "
            "messages in commit-log file 0", "broker", "blank_units_valid_after_restart", ("pop", "push"),
            needs=(_RELOADS,)),
)}


@attrs.frozen(order=True)
class Signature:
    """A violated property and the known findings whose removal clears it (empty: unexplained).

    ``joint``: no single removal clears it, but removing all of ``findings`` together does
    (several known causes in one run, each sufficient on its own; a minimal such set)."""

    property_id: str
    findings: tuple[str, ...] = ()
    joint: bool = False

    @property
    def explained(self) -> bool:
        return bool(self.findings)

    @property
    def key(self) -> str:
        """``ALO-1/F1``, ``CKM-1/F3+F4`` (each clears it), ``ALO-2/F2&F3`` (only together) or
        ``ALO-1/unexplained``."""
        return f"{self.property_id}/{('&' if self.joint else '+').join(self.findings) or UNEXPLAINED}"

    @classmethod
    def parse(cls, key: str) -> "Signature":
        """Inverse of ``key``; ValueError on a malformed key."""
        pid, sep, rest = key.partition("/")
        if not pid or not sep or not rest:
            raise ValueError(f"malformed signature {key!r} (want PROPERTY/F1+F2 or PROPERTY/unexplained)")
        if rest == UNEXPLAINED:
            return cls(pid)
        joint = "&" in rest
        fids = tuple(rest.split("&" if joint else "+"))
        unknown = [f for f in fids if f not in FINDINGS]
        if unknown:
            raise ValueError(f"signature {key!r} names unknown findings {unknown}")
        return cls(pid, fids, joint)


def candidates(result: Any) -> tuple[str, ...]:
    """The findings present in the run's profile and mode whose switch can change its run
    (Finding.can_change): the ones attribution re-runs it for."""
    return tuple(f for f in present(result.profile, result.mode) if FINDINGS[f].can_change(result))


def present(profile: str, mode: str) -> tuple[str, ...]:
    """The findings whose mechanism is switched on in ``profile`` and reachable in ``mode``."""
    from reference.profile import get_profile

    prof = get_profile(profile)
    out = []
    for f in FINDINGS.values():
        config = prof.broker if f.side == "broker" else prof.client
        if mode in f.modes and getattr(config, f.switch) == f.defect:
            out.append(f.fid)
    return tuple(out)


@contextlib.contextmanager
def _each_profile_config(change: Callable[[Any, str], Any]) -> Iterator[None]:
    """Within the block every profile's BrokerConfig / ClientConfig is ``change(config, side)``
    of the real one: patches the ``for_profile`` constructors, which every driver reaches
    through ``get_profile``; restored on exit."""
    saved = BrokerConfig.__dict__["for_profile"], ClientConfig.__dict__["for_profile"]
    broker_for, client_for = BrokerConfig.for_profile, ClientConfig.for_profile

    def wrap(original: Callable[[str], Any], side: str) -> classmethod:
        return classmethod(lambda cls, name: change(original(name), side))

    BrokerConfig.for_profile = wrap(broker_for, "broker")  # type: ignore[method-assign,assignment]
    ClientConfig.for_profile = wrap(client_for, "client")  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        BrokerConfig.for_profile, ClientConfig.for_profile = saved  # type: ignore[method-assign,assignment]


@contextlib.contextmanager
def removed(fids: Iterable[str]) -> Iterator[None]:
    """Within the block every profile's configuration has the causes of ``fids`` removed
    (their switches set to the value without the defect)."""
    off = [FINDINGS[f] for f in fids]
    with _each_profile_config(lambda config, side: attrs.evolve(
            config, **{f.switch: not f.defect for f in off if f.side == side})):
        yield


@attrs.frozen
class _Consulted:
    """A switch's value that notes its finding each time the model decides on it (``bool()``)."""

    value: bool
    fid: str
    seen: set[str] = attrs.field(eq=False)

    def __bool__(self) -> bool:
        self.seen.add(self.fid)
        return self.value


@contextlib.contextmanager
def consulted() -> Iterator[set[str]]:
    """Within the block the model notes which findings' switches it read; the yielded set holds
    them. A run that never read a switch runs the same with that switch flipped (the model
    reads each switch only where it decides: reference/ keeps the switch last in each
    condition), so attribution need not re-run it (``attribute(result, consulted=...)``)."""
    seen: set[str] = set()
    with _each_profile_config(lambda config, side: attrs.evolve(
            config, **{f.switch: _Consulted(getattr(config, f.switch), f.fid, seen)
                       for f in FINDINGS.values() if f.side == side})):
        yield seen


def _still_violated(result: Any, fids: str | Sequence[str]) -> set[str]:
    from popverify.sim.scenario import run_scenario

    with removed([fids] if isinstance(fids, str) else fids):
        rerun = run_scenario(result.profile, result.seed, 0, mode=result.mode, config=result.config,
                             schedule=result.schedule, mutant=result.mutant)
    return {v.property_id for v in rerun.violations}


def attribute(result: Any, consulted: Iterable[str] | None = None) -> tuple[Signature, ...]:
    """The signature of every property ``result`` (a RunResult) violates, in property order.

    Costs one re-run per finding present in the run's profile and mode whose switch can change
    the run (``candidates``), and none for a run without violations. ``consulted``: the findings
    whose switches the run read (from ``consulted()`` around it); removing only unread ones
    gives the same run, so those re-runs are skipped and the signatures are the same.
    """
    pids = sorted({v.property_id for v in result.violations})
    if not pids:
        return ()
    read = None if consulted is None else frozenset(consulted)
    cleared: dict[str, list[str]] = {pid: [] for pid in pids}
    for fid in candidates(result):
        if read is not None and fid not in read:
            continue  # the re-run would be this run: every property still violated
        still = _still_violated(result, fid)
        for pid in pids:
            if pid not in still:
                cleared[pid].append(fid)
    return tuple(Signature(pid, tuple(cleared[pid])) if cleared[pid] else _joint(result, pid, read) for pid in pids)


def _joint(result: Any, pid: str, read: frozenset[str] | None = None) -> Signature:
    """For a violation no single removal clears: a minimal set of present findings whose
    removal together clears it (greedy, in finding order), or unexplained when even removing
    every one leaves it. Costs at most one re-run per candidate finding, plus one (none for a
    removal of switches the run never read, ``read``: it is this run)."""
    def still(fids: list[str]) -> bool:
        return (read is not None and not read.intersection(fids)) or pid in _still_violated(result, fids)

    chosen = list(candidates(result))
    if not chosen or still(chosen):
        return Signature(pid)
    for fid in list(chosen):
        rest = [f for f in chosen if f != fid]
        if rest and not still(rest):
            chosen = rest
    return Signature(pid, tuple(chosen), joint=len(chosen) > 1)


def keeps_signature(signature: Signature) -> Callable[[Any], bool]:
    """A shrink predicate: the candidate run still has ``signature`` -- it violates the
    property, every finding of the signature still clears it, and (for an unexplained one)
    no candidate finding of that run does."""
    def keep(result: Any) -> bool:
        if all(v.property_id != signature.property_id for v in result.violations):
            return False
        if signature.joint:
            return signature in attribute(result)
        checked = signature.findings if signature.explained else candidates(result)
        for fid in checked:
            clears = signature.property_id not in _still_violated(result, fid)
            if clears != signature.explained:
                return False
        return True
    return keep
