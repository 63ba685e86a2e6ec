"""Deliberately broken variants of the reference model, to show each check can fail.

A mutant is applied by name (so a Spark task or a subprocess can apply it too) and patches
one model function for the duration of a ``with applied(name):`` block. ``expected_catch``
names the properties whose checks must report it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from reference.broker import (ack_processor, buffer_merge, checkpoint, offset_manager, pull_processor, queue_lock,
                              revive, store)
from reference.broker.config import BrokerConfig
from reference.client import (consume_concurrently, offset_store, process_queue, pull_message_service,
                              rebalance_impl)


@attrs.frozen
class Mutant:
    """A named model defect: what it breaks and how to apply it."""

    name: str
    description: str
    expected_catch: tuple[str, ...]
    patches: Callable[[], list[tuple[Any, str, Any]]]  # (owner, attribute, replacement)
    mode: str = "pop"  # the scenario mode whose runs exercise the patched code
    # ScenarioConfig fields those runs need (e.g. orderly POP), as (name, value) pairs
    config: tuple[tuple[str, Any], ...] = ()


def _ack_wrong_bit() -> list[tuple[Any, str, Any]]:
    original = checkpoint.PopCheckPoint.index_of_ack

    def index_of_ack(self: checkpoint.PopCheckPoint, ack_offset: int) -> int:
        index = original(self, ack_offset)
        return (index + 1) % self.num if index >= 0 and self.num > 1 else index

    return [(checkpoint.PopCheckPoint, "index_of_ack", index_of_ack)]


def _drop_ack() -> list[tuple[Any, str, Any]]:
    def put_ack(broker: Any, ack: Any, revive_qid: int, invisible_time: Any, extra_info: Any = None) -> None:
        broker.acks_received.append(ack)  # answered SUCCESS, never merged nor stored

    return [(ack_processor, "put_ack", put_ack)]


def _revive_skips_message() -> list[tuple[Any, str, Any]]:
    def revive_retry(self: Any, point: Any, msg: Any, msg_offset: int) -> None:
        return None  # the un-acked message is never re-sent

    return [(revive.PopReviveService, "revive_retry", revive_retry)]


def _second_loss() -> list[tuple[Any, str, Any]]:
    original = revive.PopReviveService.revive_retry

    def revive_retry(self: Any, point: Any, msg: Any, msg_offset: int) -> None:
        if msg_offset % 11 == 5:
            return None  # this one un-acked message is never re-sent; the others are
        original(self, point, msg, msg_offset)

    return [(revive.PopReviveService, "revive_retry", revive_retry)]


def _commit_queue_stuck() -> list[tuple[Any, str, Any]]:
    def commit_offset(self: Any, w: Any) -> bool:
        return False  # PopBufferMergeService#commitOffset never gets its queue lock: nothing committed

    return [(buffer_merge.PopBufferMergeService, "_commit_offset", commit_offset)]


def _unlock_dropped() -> list[tuple[Any, str, Any]]:
    def unlock(self: Any, key: str) -> None:
        return None  # a queue lock, once taken, is never released

    return [(queue_lock.QueueLockManager, "unlock", unlock)]


def _revive_offset_stuck() -> list[tuple[Any, str, Any]]:
    original = offset_manager.ConsumerOffsetManager.commit_offset

    def commit_offset(self: Any, client_host: str, group: str, topic: str, queue_id: int, offset: int) -> None:
        if group != "CID_RMQ_SYS_REVIVE_GROUP":  # PopReviveService never moves its offset
            original(self, client_host, group, topic, queue_id, offset)

    return [(offset_manager.ConsumerOffsetManager, "commit_offset", commit_offset)]


def _pull_stops_when_idle() -> list[tuple[Any, str, Any]]:
    original = pull_message_service.PullMessageService.execute_pull_request_later

    def execute_pull_request_later(self: Any, request: Any, time_delay: int) -> None:
        if request.process_queue.msg_count == 0 and time_delay == 0:
            return None  # an idle queue's PullRequest is dropped: the queue is never pulled again
        original(self, request, time_delay)

    return [(pull_message_service.PullMessageService, "execute_pull_request_later", execute_pull_request_later)]


def _offset_never_updated() -> list[tuple[Any, str, Any]]:
    def update_offset(self: Any, mq: Any, offset: int, increase_only: bool) -> None:
        return None  # RemoteBrokerOffsetStore#updateOffset drops the consumed offset

    return [(offset_store.RemoteBrokerOffsetStore, "update_offset", update_offset)]


def _early_revive() -> list[tuple[Any, str, Any]]:
    return [(checkpoint.PopCheckPoint, "revive_time", property(lambda self: self.pop_time))]


def _commit_skips_offset() -> list[tuple[Any, str, Any]]:
    original = offset_manager.ConsumerOffsetManager.commit_offset

    def commit_offset(self: Any, client_host: str, group: str, topic: str, queue_id: int, offset: int) -> None:
        bump = 0 if topic.startswith("rmq_sys_") or topic.startswith("%RETRY%") else 1
        original(self, client_host, group, topic, queue_id, offset + bump)

    return [(offset_manager.ConsumerOffsetManager, "commit_offset", commit_offset)]


def _order_check_block_off() -> list[tuple[Any, str, Any]]:
    # The mechanism switch itself (reference/broker/config.py#order_check_block) on every profile.
    for_profile = BrokerConfig.for_profile
    return [(BrokerConfig, "for_profile",
             classmethod(lambda cls, name: attrs.evolve(for_profile(name), order_check_block=False)))]


def _push_commit_max() -> list[tuple[Any, str, Any]]:
    original = process_queue.ProcessQueue.remove_message

    def remove_message(self: Any, msgs: Any) -> int:
        result = original(self, msgs)
        return self.queue_offset_max + 1 if result >= 0 else result  # ignores what is still held

    return [(process_queue.ProcessQueue, "remove_message", remove_message)]


def _pq_count_leak() -> list[tuple[Any, str, Any]]:
    original = process_queue.ProcessQueue.remove_message

    def remove_message(self: Any, msgs: Any) -> int:
        count = self.msg_count
        result = original(self, msgs)
        self.msg_count = count  # msgCount no longer decremented
        return result

    return [(process_queue.ProcessQueue, "remove_message", remove_message)]


def _pq_size_leak() -> list[tuple[Any, str, Any]]:
    original = process_queue.ProcessQueue.remove_message

    def remove_message(self: Any, msgs: Any) -> int:
        size = self.msg_size
        result = original(self, msgs)
        self.msg_size = size  # msgSize no longer decremented
        return result

    return [(process_queue.ProcessQueue, "remove_message", remove_message)]


def _revive_twice() -> list[tuple[Any, str, Any]]:
    original = revive.PopReviveService.revive_retry

    def revive_retry(self: Any, point: Any, msg: Any, msg_offset: int) -> None:
        original(self, point, msg, msg_offset)
        original(self, point, msg, msg_offset)  # two copies in the retry topic for one abandoned delivery

    return [(revive.PopReviveService, "revive_retry", revive_retry)]


def _revive_keeps_reconsume_times() -> list[tuple[Any, str, Any]]:
    original = revive.PopReviveService.revive_retry

    def revive_retry(self: Any, point: Any, msg: Any, msg_offset: int) -> None:
        # reviveRetry without "reconsumeTimes + 1": the copy carries its source's count.
        original(self, point, attrs.evolve(msg, reconsume_times=msg.reconsume_times - 1), msg_offset)

    return [(revive.PopReviveService, "revive_retry", revive_retry)]


def _pull_notify_dropped() -> list[tuple[Any, str, Any]]:
    def notify_message_arriving(self: Any, topic: str, queue_id: int) -> None:
        return None  # held pulls are answered only by checkHoldRequest

    return [(pull_processor.PullRequestHoldService, "notify_message_arriving", notify_message_arriving)]


def _consume_request_twice() -> list[tuple[Any, str, Any]]:
    original = consume_concurrently.ConsumeMessageConcurrentlyService.submit_consume_request

    def submit_consume_request(self: Any, msgs: Any, pq: Any, mq: Any, dispatch_to_consume: bool) -> None:
        original(self, msgs, pq, mq, dispatch_to_consume)
        original(self, list(msgs), pq, mq, dispatch_to_consume)  # every batch handed to the listener twice

    return [(consume_concurrently.ConsumeMessageConcurrentlyService, "submit_consume_request",
             submit_consume_request)]


def _batch_one_too_many() -> list[tuple[Any, str, Any]]:
    original = store.MessageStore.get_message

    def get_message(self: Any, group: str, topic: str, queue_id: int, offset: int, max_msg_nums: int,
                    *args: Any, **kwargs: Any) -> Any:
        # isTheBatchFull one message late, for consumers only (revive reads stay as they are)
        bump = 0 if topic.startswith("rmq_sys_") else 1
        return original(self, group, topic, queue_id, offset, max_msg_nums + bump, *args, **kwargs)

    return [(store.MessageStore, "get_message", get_message)]


def _orderly_lock_skipped() -> list[tuple[Any, str, Any]]:
    def lock(self: Any, mq: Any) -> bool:
        pq = self.process_queue_table.get(mq)
        if pq is not None:
            pq.locked = True
            pq.last_lock_timestamp = self._now()
        return True  # RebalanceImpl#lock believes it holds the queue without asking the broker

    return [(rebalance_impl.RebalancePushImpl, "lock", lock)]


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    Mutant("ack-wrong-bit", "an ack marks the bit of the next message of its checkpoint",
           ("CKM-1", "NSR-1"), _ack_wrong_bit),
    Mutant("drop-ack", "the broker answers an ack with SUCCESS but neither merges nor stores it",
           ("CKM-1", "NSR-1"), _drop_ack),
    Mutant("revive-skips-message", "revive never re-sends un-acked messages to the retry topic",
           ("ALO-2",), _revive_skips_message),
    # A second way to lose a message on v5.0, beside F1: its runs must get their own
    # "unexplained" signature (tests/findings/test_attribution.py).
    Mutant("second-loss", "revive skips the un-acked message at every queue offset = 5 (mod 11)",
           ("ALO-2", "ALO-1"), _second_loss),
    Mutant("commit-queue-stuck", "PopBufferMergeService#commitOffset never gets its queue lock (nothing committed)",
           ("PRG-1", "QUI-1"), _commit_queue_stuck),
    Mutant("unlock-dropped", "QueueLockManager#unLock does nothing: a taken queue lock is held forever",
           ("QUI-1",), _unlock_dropped),
    Mutant("revive-offset-stuck", "PopReviveService never commits its revive offset",
           ("PRG-2",), _revive_offset_stuck),
    Mutant("pull-stops-when-idle", "PullMessageService drops the PullRequest of a queue with nothing held",
           ("PSH-1",), _pull_stops_when_idle, "push"),
    Mutant("offset-never-updated", "RemoteBrokerOffsetStore#updateOffset drops the consumed offset",
           ("PRG-3",), _offset_never_updated, "push"),
    Mutant("revive-twice", "reviveRetry puts two copies of an un-acked message into the retry topic",
           ("RED-1",), _revive_twice),
    Mutant("revive-keeps-reconsume-times", "reviveRetry copies reconsumeTimes without adding one",
           ("RED-2",), _revive_keeps_reconsume_times),
    Mutant("pull-notify-dropped", "notifyMessageArriving does not answer held pulls (only their time-out does)",
           ("PSH-2",), _pull_notify_dropped, "push"),
    Mutant("consume-request-twice", "ConsumeMessageConcurrentlyService submits every batch twice",
           ("DUP-1",), _consume_request_twice, "push"),
    Mutant("orderly-lock-skipped", "RebalanceImpl#lock reports the queue locked without LOCK_BATCH_MQ",
           ("ORD-1",), _orderly_lock_skipped, "push"),
    Mutant("batch-one-too-many", "DefaultMessageStore#getMessage returns one message more than maxMsgNums",
           ("BAT-1",), _batch_one_too_many),
    Mutant("early-revive", "a checkpoint's revive time ignores the invisible time",
           ("INV-1",), _early_revive),
    Mutant("commit-skips-offset", "the consumer offset is committed one past the popped batch",
           ("OFF-1", "ALO-1"), _commit_skips_offset),
    Mutant("order-check-block-off", "PopMessageProcessor#popMsgFromQueue never calls checkBlock: an orderly POP "
           "serves a queue whose previous batch is in flight (switch order_check_block)",
           ("POP-ORD-1",), _order_check_block_off, config=(("pop_orderly", True),)),
    Mutant("push-commit-max", "ProcessQueue#removeMessage returns queueOffsetMax + 1 even while messages are held",
           ("OFF-3", "ALO-3"), _push_commit_max, "push"),
    Mutant("pq-count-leak", "ProcessQueue#removeMessage forgets to decrement msgCount",
           ("PQ-1",), _pq_count_leak, "push"),
    Mutant("pq-size-leak", "ProcessQueue#removeMessage forgets to decrement msgSize",
           ("PQ-2",), _pq_size_leak, "push"),
)}


def unknown(name: str) -> str:
    """The one-line error for a mutant name that is not in MUTANTS. An AST mutant id of
    ``popverify mutate`` (FILE:LINE:COL:OPERATOR) gets told where it lives: a mutant is a
    broken model variant either way (spec/fuzzing.md), but only named ones can be applied by name."""
    hint = (" (an AST mutant of `popverify mutate`, which exists only in its temporary copy of the model)"
            if name.count(":") == 3 else "")
    return f"unknown mutant {name!r}{hint}; named mutants: {', '.join(MUTANTS)}"


@contextlib.contextmanager
def applied(name: str | None) -> Iterator[None]:
    """Apply mutant ``name`` for the block (no-op for None); ValueError for an unknown name."""
    if name is None:
        yield
        return
    mutant = MUTANTS.get(name)
    if mutant is None:
        raise ValueError(unknown(name))
    patches = mutant.patches()
    saved = [(owner, attr, owner.__dict__[attr] if attr in getattr(owner, "__dict__", {}) else getattr(owner, attr))
             for owner, attr, _ in patches]
    try:
        for owner, attr, replacement in patches:
            setattr(owner, attr, replacement)
        yield
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)
