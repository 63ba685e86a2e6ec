"""MessageStore: topics, consume queues, min/max offsets, retention and getMessage.

One consume queue per (topic, queueId) holds stored messages by logical offset. Retention is
modelled in the two stages DefaultMessageStore goes through, because each stage yields a
distinct getMessage status:
- ``expire_commit_log``: commit-log data removed, consume-queue units still there
  (reads of those offsets see MESSAGE_WAS_REMOVING);
- ``delete_expired_cq_files``: consume-queue units removed but minOffset not yet corrected
  (iterateFrom returns null: OFFSET_FOUND_NULL);
- ``correct_min_offset``: minOffset moves up (reads below it: OFFSET_TOO_SMALL).
``expire_queue`` does all three at once.
"""

from __future__ import annotations

import enum
from typing import Callable, Iterable

import attrs

from reference.broker.message import MessageExt


class GetMessageStatus(enum.Enum):
    """store/GetMessageStatus."""

    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


def next_offset_correction(old_offset: int, new_offset: int, slave: bool = False, offset_check_in_slave: bool = False) -> int:
    """DefaultMessageStore#nextOffsetCorrection: a master (or a checking slave) corrects."""
    if not slave or offset_check_in_slave:
        return new_offset
    return old_offset


def get_message_status(has_queue: bool, min_offset: int, max_offset: int, offset: int,
                       slave: bool = False, offset_check_in_slave: bool = False) -> tuple[GetMessageStatus, int]:
    """The range decision of DefaultMessageStore#getMessage before reading any unit.

    Returns (status, nextBeginOffset). For an offset inside ``[min, max)`` the status is
    NO_MATCHED_MESSAGE and nextBeginOffset the request offset: that is the value Java sets
    before its read loop, which then decides FOUND / NO_MATCHED_MESSAGE /
    MESSAGE_WAS_REMOVING / OFFSET_FOUND_NULL. The branches are tested in Java's order, so
    they partition the input space.
    """
    corr = lambda old, new: next_offset_correction(old, new, slave, offset_check_in_slave)  # noqa: E731
    if not has_queue:
        return GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, corr(offset, 0)
    if max_offset == 0:
        return GetMessageStatus.NO_MESSAGE_IN_QUEUE, corr(offset, 0)
    if offset < min_offset:
        return GetMessageStatus.OFFSET_TOO_SMALL, corr(offset, min_offset)
    if offset == max_offset:
        return GetMessageStatus.OFFSET_OVERFLOW_ONE, corr(offset, offset)
    if offset > max_offset:
        return GetMessageStatus.OFFSET_OVERFLOW_BADLY, corr(offset, max_offset)
    return GetMessageStatus.NO_MATCHED_MESSAGE, offset


@attrs.define(slots=True)
class GetMessageResult:
    """store/GetMessageResult: the messages read and where the next read starts."""

    status: GetMessageStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    messages: list[MessageExt] = attrs.field(factory=list)

    @property
    def message_queue_offsets(self) -> list[int]:
        """getMessageQueueOffset: queue offsets of the messages read, in order."""
        return [m.queue_offset for m in self.messages]

    @property
    def buffer_total_size(self) -> int:
        """getBufferTotalSize (body bytes in the model)."""
        return sum(m.size for m in self.messages)


@attrs.define(slots=True)
class ConsumeQueue:
    """One logical queue: units by offset, with the retention stages tracked separately."""

    # units[i] is the message at offset base + i; None once its commit-log data is gone.
    units: list[MessageExt | None] = attrs.field(factory=list)
    base: int = 0  # offset of units[0]: units below were deleted with their CQ file
    min_offset: int = 0  # getMinOffsetInQueue (minLogicOffset)

    @property
    def max_offset(self) -> int:
        """getMaxOffsetInQueue: one past the last unit."""
        return self.base + len(self.units)


# A message filter: None = accept all; else a predicate on the stored message (tags).
MessageFilter = Callable[[MessageExt], bool] | None


class MessageStore:
    """DefaultMessageStore reduced to what consumption reads and writes.

    ``put_listener`` is called after each put (ReputMessageService → notifyMessageArriving).
    """

    def __init__(self, clock_now: Callable[[], int], slave: bool = False, offset_check_in_slave: bool = False,
                 max_pull_msg_size: int = 128 * 1024 * 1024) -> None:
        self._now = clock_now
        self._queues: dict[tuple[str, int], ConsumeQueue] = {}
        self._slave = slave
        self._offset_check_in_slave = offset_check_in_slave
        self._max_pull_msg_size = max_pull_msg_size
        self.put_listeners: list[Callable[[MessageExt], None]] = []
        self._commit_log: dict[int, MessageExt] = {}
        self._next_physical_offset = 0

    # -- writes ---------------------------------------------------------------------------
    def now(self) -> int:
        """The store's clock (System.currentTimeMillis() as the store and its hooks read it)."""
        return self._now()

    def put_message(self, msg: MessageExt) -> MessageExt:
        """Append ``msg`` to its queue (created on first put, as the CQ is); returns the stored record."""
        cq = self._queues.get((msg.topic, msg.queue_id))
        if cq is None:
            cq = ConsumeQueue()
            self._queues[(msg.topic, msg.queue_id)] = cq
        msg.queue_offset = cq.max_offset
        msg.store_timestamp = self._now()
        msg.commit_log_offset = self._next_physical_offset
        self._next_physical_offset += 1
        self._commit_log[msg.commit_log_offset] = msg
        cq.units.append(msg)
        for listener in self.put_listeners:
            listener(msg)
        return msg

    def start_queue_at(self, topic: str, queue_id: int, offset: int) -> None:
        """The queue begins at ``offset``: its first ``offset`` messages were stored and then
        removed with their commit-log and consume-queue files (retention), so min and max
        offset are both ``offset`` (ConsumeQueue#getMinOffsetInQueue / getMaxOffsetInQueue of
        a queue whose first file starts there). ValueError on a queue that holds messages."""
        cq = self._queues.setdefault((topic, queue_id), ConsumeQueue())
        if cq.units or offset < 0:
            raise ValueError(f"queue {topic}:{queue_id} cannot start at {offset}: it holds messages or the offset is negative")
        cq.base = cq.min_offset = offset

    def delete_topic(self, topic: str) -> None:
        """DefaultMessageStore#deleteTopics: drop every consume queue of ``topic``.

        A topic created again starts its queues at offset 0 (new consume-queue files).
        """
        for key in [k for k in self._queues if k[0] == topic]:
            del self._queues[key]

    def expire_commit_log(self, topic: str, queue_id: int, below: int) -> None:
        """Commit-log files holding offsets < ``below`` deleted; CQ units left pointing at nothing."""
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return
        for i in range(0, min(below - cq.base, len(cq.units))):
            cq.units[i] = None

    def delete_expired_cq_files(self, topic: str, queue_id: int, below: int) -> None:
        """Consume-queue files below ``below`` deleted (minOffset not yet corrected)."""
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return
        below = min(below, cq.max_offset)
        if below > cq.base:
            del cq.units[: below - cq.base]
            cq.base = below

    def correct_min_offset(self, topic: str, queue_id: int, below: int) -> None:
        """ConsumeQueue#correctMinOffset: minOffset moves up to ``below`` (never down, never past max)."""
        cq = self._queues.get((topic, queue_id))
        if cq is not None:
            cq.min_offset = max(cq.min_offset, min(below, cq.max_offset))

    def expire_queue(self, topic: str, queue_id: int, below: int) -> None:
        """Retention expiry of every offset < ``below``: all three stages at once."""
        self.expire_commit_log(topic, queue_id, below)
        self.delete_expired_cq_files(topic, queue_id, below)
        self.correct_min_offset(topic, queue_id, below)

    # -- reads ----------------------------------------------------------------------------
    def has_queue(self, topic: str, queue_id: int) -> bool:
        """Whether a consume queue has been written (a read of a missing one sees it empty)."""
        return (topic, queue_id) in self._queues

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """getMinOffsetInQueue (0 for a queue never written)."""
        cq = self._queues.get((topic, queue_id))
        return cq.min_offset if cq is not None else 0

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """getMaxOffsetInQueue (0 for a queue never written)."""
        cq = self._queues.get((topic, queue_id))
        return cq.max_offset if cq is not None else 0

    def look_message_by_offset(self, topic: str, queue_id: int, offset: int) -> MessageExt | None:
        """The stored message at a queue offset, or None (removed, out of range, no queue)."""
        cq = self._queues.get((topic, queue_id))
        if cq is None or offset < cq.base or offset >= cq.max_offset:
            return None
        return cq.units[offset - cq.base]

    def look_message_by_commit_log_offset(self, commit_log_offset: int) -> MessageExt | None:
        """DefaultMessageStore#lookMessageByOffset(commitLogOffset): a copy, None when unknown
        or no longer in its consume queue (expired or deleted)."""
        msg = self._commit_log.get(commit_log_offset)
        if msg is None:
            return None
        cq = self._queues.get((msg.topic, msg.queue_id))
        if cq is None or not cq.min_offset <= msg.queue_offset < cq.max_offset or \
                cq.units[msg.queue_offset - cq.base] is not msg:
            return None
        return msg.copy()

    def queue_keys(self) -> list[tuple[str, int]]:
        """Every (topic, queueId) with a consume queue, in Java string order then queue id."""
        from reference.common.javalang import string_sort_key

        return sorted(self._queues, key=lambda k: (string_sort_key(k[0]), k[1]))

    def get_message(self, group: str, topic: str, queue_id: int, offset: int, max_msg_nums: int,
                    message_filter: MessageFilter = None, max_total_msg_size: int | None = None) -> GetMessageResult:
        """DefaultMessageStore#getMessage: status, messages and nextBeginOffset."""
        cq = self._queues.get((topic, queue_id))
        min_offset = cq.min_offset if cq is not None else 0
        max_offset = cq.max_offset if cq is not None else 0
        # findConsumeQueue creates a missing queue (findOrCreateConsumeQueue), so the store
        # never reports NO_MATCHED_LOGIC_QUEUE; the pure rule keeps the branch for the proofs.
        status, next_begin = get_message_status(True, min_offset, max_offset, offset,
                                                self._slave, self._offset_check_in_slave)
        result = GetMessageResult(status, next_begin, min_offset, max_offset)
        if status is not GetMessageStatus.NO_MATCHED_MESSAGE or cq is None:
            return result
        max_pull_size = max(max_total_msg_size if max_total_msg_size is not None else self._max_pull_msg_size, 100)
        max_pull_size = min(max_pull_size, self._max_pull_msg_size)
        max_filter_count = max(16000, max_msg_nums * 20)  # ConsumeQueue.CQ_STORE_UNIT_SIZE = 20
        if next_begin < cq.base:
            # iterateFrom found no CQ file for this offset: roll to the next file's start.
            result.status = GetMessageStatus.OFFSET_FOUND_NULL
            result.next_begin_offset = next_offset_correction(next_begin, cq.base, self._slave, self._offset_check_in_slave)
            return result
        total = 0
        while next_begin < max_offset:
            msg = cq.units[next_begin - cq.base]
            if next_begin - offset > max_filter_count:
                break
            # isTheBatchFull (count and size limits once something was read)
            if total > 0 and (len(result.messages) + 1 > max_msg_nums or total + (msg.size if msg else 0) > max_pull_size):
                break
            if total >= max_pull_size and total > 0:
                break
            next_begin += 1
            if msg is None:
                if not result.messages:
                    result.status = GetMessageStatus.MESSAGE_WAS_REMOVING
                continue
            if message_filter is not None and not message_filter(msg):
                if not result.messages:
                    result.status = GetMessageStatus.NO_MATCHED_MESSAGE
                continue
            result.messages.append(msg.copy())
            total += max(msg.size, 1)  # an empty body still counts as read for isTheBatchFull
            result.status = GetMessageStatus.FOUND
            if len(result.messages) >= max_msg_nums:
                # Java checks this at the top of the next iteration; breaking here changes
                # nothing observable but saves the loop.
                break
        result.next_begin_offset = next_begin
        return result

    def snapshot_queue(self, topic: str, queue_id: int) -> Iterable[MessageExt]:
        """Read-only view of the live messages of a queue (for inspection)."""
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return []
        return [m for m in cq.units[max(0, cq.min_offset - cq.base):] if m is not None]
