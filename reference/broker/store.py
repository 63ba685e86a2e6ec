"""MessageStore: topics, consume queues, min/max offsets, retention and getMessage.

One consume queue per (topic, queueId) holds stored messages by logical offset; every write
also lands in the commit log, which is a sequence of files. Retention runs in the stages
DefaultMessageStore runs it, each its own step (spec/broker.md "Retention"):

- ``delete_commit_log_files(k)``: CleanCommitLogService → CommitLog#deleteExpiredFile →
  MappedFileQueue#deleteExpiredFileByTime: the ``k`` oldest commit-log files go, across all
  topics and queues, never the newest file. Consume-queue units still point at them: reads
  see MESSAGE_WAS_REMOVING (DefaultMessageStore#getMessage, ``selectResult == null``).
- ``clean_consume_queues()``: CleanConsumeQueueService#deleteExpiredFiles: once the commit
  log's min offset passed the last one it saw, every consume queue runs
  ConsumeQueue#deleteExpiredFile (deleteExpiredFileByOffset, then correctMinOffset): min
  offsets move up to the first unit whose data is still there (reads below:
  OFFSET_TOO_SMALL).

Files: the lockstep harness ends the current commit-log file before each producer put
(``roll_commit_log``), so a file holds one produced message and what the broker writes until
the next one; the model keeps the same layout (spec/conformance.md).
"""

from __future__ import annotations

import enum
from typing import Callable, Iterable

import attrs

from reference.common.message import MessageExt


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
    # 5.5.0: a pending server-side reset taken by a pull (PullMessageProcessor#processRequest:544)
    OFFSET_RESET = "OFFSET_RESET"


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
    # getMessageQueueOffset: the consume-queue offsets of the units read (addMessage takes the
    # unit's offset, not the one in the bytes read: they differ in the phy-offset-0 oddity).
    queue_offsets: list[int] = attrs.field(factory=list)

    @property
    def message_queue_offsets(self) -> list[int]:
        """getMessageQueueOffset: queue offsets of the messages read, in order."""
        return list(self.queue_offsets)

    @property
    def buffer_total_size(self) -> int:
        """getBufferTotalSize: the stored sizes of the messages read."""
        return sum(m.stored_size for m in self.messages)


@attrs.define(slots=True)
class ConsumeQueue:
    """One logical queue: units by offset; retention moves ``base`` and ``min_offset``."""

    # units[i] is the message at offset base + i (its commit-log data may be gone).
    units: list[MessageExt] = attrs.field(factory=list)
    base: int = 0  # offset of units[0]: units below were deleted with their CQ file
    min_offset: int = 0  # getMinOffsetInQueue (minLogicOffset)
    # Offsets head..base-1 are ConsumeQueue#fillPreBlank units (commit-log position 0, size
    # Integer.MAX_VALUE, tags code 0) in the queue's first file: written when its first unit
    # was at a cqOffset past that file's start. head == base: none.
    head: int = 0

    @classmethod
    def starting_at(cls, offset: int, file_units: int) -> ConsumeQueue:
        """A queue whose first unit is at ``offset`` (ConsumeQueue#putMessagePositionInfo's
        first-create branch, or #initializeWithOffset on 5.5.0): its file, created at the
        file boundary below, is blank up to it and minLogicOffset = offset."""
        return cls(base=offset, min_offset=offset, head=offset // file_units * file_units)

    @property
    def max_offset(self) -> int:
        """getMaxOffsetInQueue: one past the last unit."""
        return self.base + len(self.units)


# A message filter: None = accept all; else a predicate on the stored message (tags).
MessageFilter = Callable[[MessageExt], bool] | None


# ConsumeQueue units per file in the lockstep harness (Setup: mappedFileSizeConsumeQueue
# 30000 * 20 bytes; Java's default is 300000 units).
CQ_FILE_UNITS = 30_000
# MessageStoreConfig#destroyMapedFileIntervalForcibly (1000 * 120, both releases): how long a
# shut-down commit-log file a reader still holds survives retention's destroy calls.
DESTROY_MAPPED_FILE_INTERVAL_FORCIBLY_MS = 120_000
# MessageStoreConfig#maxTransferBytesOnMessageInMemory / maxTransferCountOnMessageInMemory (both
# releases): what one getMessage hands out of messages still in memory. A message is "in memory"
# while the commit log grew less than accessMessageInMemoryMaxRatio (40 %) of the machine's RAM
# past it (estimateInMemByCommitOffset / checkInDiskByCommitOffset): always so for the model's
# runs (the lockstep harness sets the ratio to 100 so that no machine differs).
MAX_TRANSFER_BYTES_IN_MEMORY = 256 * 1024
MAX_TRANSFER_COUNT_IN_MEMORY = 32


# What a ConsumeQueue#fillPreBlank unit shows a message filter: no tags (tags code 0).
_BLANK_UNIT = MessageExt(topic="", queue_id=-1)


class MessageStore:
    """DefaultMessageStore reduced to what consumption reads and writes.

    ``put_listener`` is called after each put (ReputMessageService → notifyMessageArriving).
    """

    def __init__(self, clock_now: Callable[[], int], slave: bool = False, offset_check_in_slave: bool = False,
                 max_pull_msg_size: int = 128 * 1024 * 1024, cq_file_units: int = CQ_FILE_UNITS,
                 position_zero_reads_first_file: bool = True, blank_units_valid_after_restart: bool = True) -> None:
        self._now = clock_now
        # F11's mechanism (BrokerConfig.position_zero_reads_first_file): False reads position 0
        # as any other position once its file is gone (nothing there)
        self._position_zero_quirk = position_zero_reads_first_file
        # F22's mechanism (BrokerConfig.blank_units_valid_after_restart): _load_min_offset
        self._blank_units_valid = blank_units_valid_after_restart
        self._queues: dict[tuple[str, int], ConsumeQueue] = {}
        self._slave = slave
        self._offset_check_in_slave = offset_check_in_slave
        self._max_pull_msg_size = max_pull_msg_size
        self._cq_file_units = cq_file_units
        self.put_listeners: list[Callable[[MessageExt], None]] = []
        self._commit_log: dict[int, MessageExt] = {}
        self._next_physical_offset = 0
        # The commit log's files: _file_of[commit_log_offset] is the file a message is in;
        # files _min_file.._cur_file exist (_cur_file only once written: a file is created by
        # its first write). _phy0 is the store's first write (commit-log position 0) when it
        # is a message of a consume queue (see _read).
        self._file_of: dict[int, int] = {}
        self._cur_file = 0
        self._cur_used = False
        # _min_file is the oldest *available* file (reads, CommitLog#getMinOffset); files
        # _listed_min.._min_file-1 were shut down by a refused destroy but are still listed
        # (MappedFileQueue's first files): a reader held them (see delete_commit_log_files).
        self._min_file = 0
        self._listed_min = 0
        self._holds: dict[int, int] = {}  # file -> readers holding it (ReferenceResource#hold)
        self._shut_down_at: dict[int, int] = {}  # file -> firstShutdownTimestamp
        self._last_physical_min_file = 0  # CleanConsumeQueueService#lastPhysicalMinOffset
        self._phy0: MessageExt | None = None
        self._wrote = False
        # Commit-log write order over consume-queue messages and timer-topic copies (a
        # physical position in Java): _seq_of[commit_log_offset], the newest timer copy's,
        # and each file's first write (what a restart's re-dispatch compares).
        self._write_seq = 0
        self._seq_of: dict[int, int] = {}
        self._last_timer_copy_seq = -1
        self._first_seq_of_file: dict[int, int] = {}
        # ConsumeQueueStore's queue-offset table (QueueOffsetAssigner#topicQueueTable), kept
        # only for a queue whose counter left its consume queue's max offset: a put the
        # encoder refused after assignQueueOffset (5.0.0, ``burn_queue_offset``). Absent = the
        # consume queue's max offset (recoverTopicQueueTable's value).
        self._offset_table: dict[tuple[str, int], int] = {}
        # commit-log offset -> the consume-queue index of the unit pointing at it (the unit's
        # position; the message's own queue_offset differs once an offset was burnt)
        self._cq_index: dict[int, int] = {}

    # -- writes ---------------------------------------------------------------------------
    def now(self) -> int:
        """The store's clock (System.currentTimeMillis() as the store and its hooks read it)."""
        return self._now()

    def burn_queue_offset(self, topic: str, queue_id: int) -> None:
        """A put the encoder refuses after its queue offset was assigned (5.0.0
        CommitLog#asyncPutMessage:846-851: DefaultMessageStore#assignOffset →
        QueueOffsetAssigner#assignQueueOffset moves the table, then MessageExtEncoder#encode
        returns MESSAGE_ILLEGAL / PROPERTIES_SIZE_EXCEEDED and nothing gives the offset back):
        the queue's next message is stored with the following offset. Nothing is written."""
        key = (topic, queue_id)
        self._offset_table[key] = self._next_queue_offset(key) + 1

    def _next_queue_offset(self, key: tuple[str, int]) -> int:
        cq = self._queues.get(key)
        return self._offset_table.get(key, cq.max_offset if cq is not None else 0)

    def put_message(self, msg: MessageExt) -> MessageExt:
        """Append ``msg`` to its queue (created on first put, as the CQ is); returns the stored
        record, whose queue_offset is the offset table's (the consume-queue index unless an
        offset was burnt: ``burn_queue_offset``)."""
        key = (msg.topic, msg.queue_id)
        msg.queue_offset = self._next_queue_offset(key)
        if key in self._offset_table:
            self._offset_table[key] = msg.queue_offset + 1
        cq = self._queues.get(key)
        if cq is None:
            # ConsumeQueue#putMessagePositionInfo on a queue without a file: a first unit at
            # cqOffset != 0 fills the blanks before it (fillPreBlank, minLogicOffset = cqOffset)
            cq = self._queues[key] = ConsumeQueue.starting_at(msg.queue_offset, self._cq_file_units)
        msg.store_timestamp = self._now()
        msg.commit_log_offset = self._next_physical_offset
        self._next_physical_offset += 1
        self._commit_log[msg.commit_log_offset] = msg
        self._file_of[msg.commit_log_offset] = self._write()
        self._seq_of[msg.commit_log_offset] = self._write_seq - 1
        if not self._wrote:
            self._phy0 = msg if self._position_zero_quirk else None
            self._wrote = True
        self._append_unit(cq, msg)
        for listener in self.put_listeners:
            listener(msg)
        return msg

    def _append_unit(self, cq: ConsumeQueue, msg: MessageExt) -> None:
        """ConsumeQueue#putMessagePositionInfo (5.0.0:695-747): the unit goes at the queue's
        end whatever the message's queue offset (a larger one is only logged, "[BUG]logic
        queue order maybe wrong")."""
        self._cq_index[msg.commit_log_offset] = cq.max_offset
        cq.units.append(msg)

    def _write(self) -> int:
        """A write to the commit log's current file (creating it); returns the file."""
        self._cur_used = True
        self._first_seq_of_file.setdefault(self._cur_file, self._write_seq)
        self._write_seq += 1
        return self._cur_file

    def write_timer_copy(self) -> int:
        """The timer-topic copy of a parked message (HookUtils#transformTimerMessage puts it in
        the commit log before the timer parks it); returns its commit-log file."""
        self._wrote = True
        file = self._write()
        self._last_timer_copy_seq = self._write_seq - 1
        return file

    def roll_commit_log(self) -> bool:
        """End the current commit-log file (the harness's END_OF_FILE record, RetentionOps
        rollCommitLog): the next write opens a new file. False when it is empty."""
        if not self._cur_used:
            return False
        self._cur_file += 1
        self._cur_used = False
        return True

    def commit_log_files(self) -> int:
        """How many commit-log files exist (MappedFileQueue#getMappedFiles().size()), shut-down
        ones still listed included."""
        return max(0, self._last_file() - self._listed_min + 1)

    def _last_file(self) -> int:
        return self._cur_file if self._cur_used else self._cur_file - 1

    def first_commit_log_file(self) -> int:
        """Index of the oldest commit-log file still readable (CommitLog#getMinOffset: the
        next file's start when the first is shut down)."""
        return self._min_file

    def oldest_commit_log_file(self) -> int:
        """Index of the oldest commit-log file still listed (readable or shut down)."""
        return self._listed_min

    def hold_file(self, file: int) -> None:
        """A reader keeps the bytes it selected from ``file`` until it releases them
        (MappedFile#selectMappedBuffer's hold(); an in-flight POP's read results)."""
        self._holds[file] = self._holds.get(file, 0) + 1

    def release_file(self, file: int) -> None:
        """SelectMappedBufferResult#release of a hold_file."""
        n = self._holds.get(file, 0) - 1
        if n < 0:
            raise ValueError(f"commit-log file {file} released more often than held")
        if n:
            self._holds[file] = n
        else:
            del self._holds[file]

    def last_cleaned_file(self) -> int:
        """The first commit-log file as the consume-queue stage last saw it
        (CleanConsumeQueueService#lastPhysicalMinOffset)."""
        return self._last_physical_min_file

    def file_of(self, msg: MessageExt) -> int:
        """The commit-log file holding ``msg``."""
        return self._file_of[msg.commit_log_offset]

    def is_removed(self, msg: MessageExt) -> bool:
        """Whether the commit-log file holding ``msg`` was deleted."""
        return self._file_of[msg.commit_log_offset] < self._min_file

    def file_removed(self, file: int) -> bool:
        """Whether commit-log file ``file`` was deleted."""
        return file < self._min_file

    def messages_in_files(self, lo: int, hi: int) -> list[MessageExt]:
        """The messages of consume queues stored in commit-log files lo..hi-1, in write order."""
        return [m for p, m in self._commit_log.items() if lo <= self._file_of[p] < hi]

    def unit_at(self, topic: str, queue_id: int, offset: int) -> MessageExt | None:
        """The message a consume-queue unit points at, whether or not its data is still there."""
        cq = self._queues.get((topic, queue_id))
        if cq is None or not cq.base <= offset < cq.max_offset:
            return None
        return cq.units[offset - cq.base]

    def queue_offset_at(self, topic: str, queue_id: int, index: int) -> int:
        """The queue offset the message at consume-queue index ``index`` carries; at or past the
        queue's end, the one its next put takes. Equal to ``index`` unless an offset was
        burnt (``burn_queue_offset``)."""
        key = (topic, queue_id)
        cq = self._queues.get(key)
        if cq is not None and index < cq.base:
            return index  # its unit went with its consume-queue file: taken as not shifted
        unit = self.unit_at(topic, queue_id, index)
        if unit is not None:
            return unit.queue_offset
        return self._next_queue_offset(key) + max(0, index - self.get_max_offset_in_queue(topic, queue_id))

    def first_readable_offset(self, topic: str, queue_id: int) -> int:
        """The first offset at or above the min offset whose commit-log data is still there
        (the max offset when none is)."""
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return 0
        i = max(cq.min_offset, cq.base)
        while i < cq.max_offset and self.is_removed(cq.units[i - cq.base]):
            i += 1
        return i

    def files_up_to(self, topic: str, queue_id: int, offset: int) -> int:
        """How many of the oldest commit-log files hold everything up to the message at
        ``offset`` of a queue (0 when its file is already gone)."""
        unit = self.unit_at(topic, queue_id, offset)
        if unit is None:
            raise ValueError(f"no unit at {topic}/{queue_id} offset {offset}")
        return max(0, self.file_of(unit) - self._listed_min + 1)

    def delete_commit_log_files(self, count: int) -> int:
        """MappedFileQueue#deleteExpiredFileByTime with cleanImmediately and deleteFileBatchMax
        ``count``: the oldest files go, never the newest (``mfsLength = mfs.length - 1``).
        Returns how many were deleted.

        Each goes by MappedFile#destroy(intervalForcibly), which first shuts the file down
        (ReferenceResource#shutdown: unavailable, firstShutdownTimestamp = now) and deletes it
        only once no reader holds it (isCleanupOver); a refused destroy ends the loop
        (``else break``). A held file so stays listed but unreadable (hold() fails: reads see
        MESSAGE_WAS_REMOVING; getMinOffset skips it) until a later call finds it released, or
        until intervalForcibly (destroyMapedFileIntervalForcibly, 120 s) after its shutdown,
        when shutdown forces the reference count down and the file goes while still held.
        Same code in 5.0.0 and 5.5.0 (MappedFileQueue#deleteExpiredFileByTime, ReferenceResource)."""
        deleted = 0
        while deleted < count and self._listed_min < self._last_file():
            f = self._listed_min
            if f in self._holds:
                shut_before = f in self._shut_down_at
                first = self._shut_down_at.setdefault(f, self._now())
                self._min_file = max(self._min_file, f + 1)
                if not shut_before or self._now() - first < DESTROY_MAPPED_FILE_INTERVAL_FORCIBLY_MS:
                    break
            self._shut_down_at.pop(f, None)
            self._listed_min = f + 1
            self._min_file = max(self._min_file, f + 1)
            deleted += 1
        return deleted

    def clean_consume_queues(self) -> bool:
        """CleanConsumeQueueService#deleteExpiredFiles: when the commit log's min offset passed
        lastPhysicalMinOffset, every consume queue (all topics) runs
        ConsumeQueue#deleteExpiredFile: CQ files whose last unit points below it go
        (deleteExpiredFileByOffset, never the newest), then correctMinOffset. False when the
        min offset has not moved (nothing runs)."""
        if self._min_file <= self._last_physical_min_file:
            return False
        self._last_physical_min_file = self._min_file
        for cq in self._queues.values():
            self._delete_expired_cq_files(cq)
            self._correct_min_offset(cq)
        return True

    def recover(self, redispatch: bool = False) -> None:
        """A restart on the same files: DefaultMessageStore#recoverTopicQueueTable →
        ConsumeQueueStore#recoverOffsetTable corrects every consume queue's min offset to the
        commit log's min offset (the consume-queue stage without its file deletion); the new
        CleanConsumeQueueService starts with lastPhysicalMinOffset 0.

        ``redispatch`` (5.5.0): CommitLog#recoverNormally first dispatches the recovered
        messages past every consume queue's last position again (``_redispatch``)."""
        # A shut-down file that was never destroyed is still on disk: MappedFileQueue#load maps
        # it again (only MappedFile#destroy deletes the file), so it is readable again.
        self._min_file = self._listed_min
        self._reopen_ended_last_file()
        self._holds.clear()
        self._shut_down_at.clear()
        self._offset_table.clear()  # recoverOffsetTable: every queue's counter = its CQ max offset
        loaded = set(self._queues)  # a queue the redispatch creates keeps its minLogicOffset
        if redispatch:
            self._redispatch()
        for key, cq in self._queues.items():
            if key in loaded:
                self._load_min_offset(cq)
            else:
                self._correct_min_offset(cq)
        self._last_physical_min_file = 0

    def _reopen_ended_last_file(self) -> None:
        """CommitLog#recoverNormally / #recoverAbnormally (5.0.0 and 5.5.0): an END_OF_FILE
        record in the last file with no file after it ends the scan there ("Current branch can
        not happen"), and truncateDirtyFiles cuts the file at that record, so the next message
        goes into it. Only the harness's roll before a refused put leaves such a file. A store
        whose queues start past offset 0 (``start_queue_at``) and has written nothing has no such
        file: its first file, never created, is the oldest listed one and the files before it are
        gone (v5.0 corpus seed 140 of 26 November 2026: a restart moved the next write into file
        0, below the min file, so the put's message read as removed; Java stores and reads it)."""
        if not self._cur_used and self._cur_file > self._listed_min:
            self._cur_file -= 1
            self._cur_used = True

    def _redispatch(self) -> None:
        """5.5.0 CommitLog#recoverNormally(dispatchFromPhyOffset): dispatchFromPhyOffset is the
        largest physical offset of any consume queue (timer topic included); recovery starts
        at the newest file whose first message is at or below it (isMappedFileMatchedRecover),
        at most commitLogRecoverMaxNum (10) files back, and dispatches every message past it.
        Only a message whose consume queue is gone is past it: a deleted topic's."""
        cq_max = max([self._last_timer_copy_seq] + [self._seq_of[cq.units[-1].commit_log_offset]
                                                    for cq in self._queues.values() if cq.units])
        first = self._cur_file if self._cur_used else self._cur_file - 1
        start, recover_max = first, 10
        while start > self._min_file:
            recover_max -= 1
            if self._first_seq_of_file.get(start, cq_max + 1) <= cq_max or recover_max <= 0:
                break
            start -= 1
        for offset, msg in sorted(self._commit_log.items()):
            if self._seq_of[offset] > cq_max and self._file_of[offset] >= start:
                self._dispatch_again(msg)

    def _dispatch_again(self, msg: MessageExt) -> None:
        """ConsumeQueue#putMessagePositionInfo (5.5.0:799-859) with the message's own queue
        offset: a new consume queue begins there (its first file pre-filled: min = that
        offset); an existing one skips an offset it has passed ("Build consume queue
        repeatedly") and appends anything else at its end (logged "[BUG]logic queue order
        maybe wrong"; an offset of 0 is not checked at all)."""
        cq = self._queues.get((msg.topic, msg.queue_id))
        if cq is None:
            cq = self._queues[(msg.topic, msg.queue_id)] = ConsumeQueue.starting_at(msg.queue_offset,
                                                                                   self._cq_file_units)
        elif msg.queue_offset != 0 and msg.queue_offset < cq.max_offset:
            return
        self._append_unit(cq, msg)

    def _next_cq_file_start(self, offset: int) -> int:
        """The first unit of the consume-queue file after the one holding ``offset``."""
        return (offset // self._cq_file_units + 1) * self._cq_file_units

    def _delete_expired_cq_files(self, cq: ConsumeQueue) -> None:
        u = self._cq_file_units
        while True:
            file_start = cq.base // u * u
            file_end = file_start + u  # one past the file's last unit
            if file_end >= cq.max_offset or file_end <= cq.base:
                return  # the newest file (or a partly written one) is kept
            if not self.is_removed(cq.units[file_end - 1 - cq.base]):
                return
            del cq.units[: file_end - cq.base]
            cq.base = cq.head = file_end

    def _load_min_offset(self, cq: ConsumeQueue) -> None:
        """ConsumeQueueStore#recoverOffsetTable → ConsumeQueue#correctMinOffset(commit log's min
        offset) on a queue loaded from its files, whose minLogicOffset starts at 0 (both
        releases; DefaultMessageStore#recover runs it after the commit log's redispatch).

        Blank units (fillPreBlank: commit-log position 0) count as valid when the commit log
        still starts at 0, so a queue whose first unit was past its first file's start gets
        min offset 0 at the first restart, below its first message ("TODO: when min commitLog
        offset is 0 and restart store, min offset of cq may be set to 0 incorrectly",
        5.5.0 ConsumeQueue#initializeWithOffset): finding F22 (spec/findings/F22.md)."""
        if not cq.units or self.is_removed(cq.units[-1]):
            self._correct_min_offset(cq)  # empty, or no valid entry at all: min = max
            return
        if self._blank_units_valid and cq.head < cq.base and self._min_file == 0:
            # the queue's first file is its file 0: start = 0, "intact", and the first unit
            # (a blank at position 0) is >= 0: the correction is aborted with min 0
            cq.min_offset = cq.head if cq.head == 0 else self._blank_binary_search(cq)
            return
        # The search covers the queue's first file only (selectMappedBuffer of the first mapped
        # file): its first valid unit; with none there -- every message of that file deleted
        # by retention and the consume-queue stage not run since -- minLogicOffset stays 0
        # (both releases), far below the queue's messages.
        first_end = min(cq.head + self._cq_file_units, cq.max_offset)
        cq.min_offset = next((i for i in range(max(cq.head, cq.base), first_end)
                              if not self.is_removed(cq.units[i - cq.base])), 0)

    def _blank_binary_search(self, cq: ConsumeQueue) -> int:
        """correctMinOffset's binary search over a first file (from ``head``) that is not the
        queue's file 0 (start < 0: not "intact"), for a commit log starting at 0: a probe at a
        blank (position 0, equal to the min) ends it there; a probe at a message (past 0) moves
        ``high``; without an equal probe, the first unit examined (``low`` = 0, a blank) is
        >= 0. (Only a queue started past 30,000 units has such a file; the model starts those
        with commit-log file 0 gone, start_queue_at, so this is for completeness.)"""
        low, high = 0, min(self._cq_file_units, cq.max_offset - cq.head) - 1
        while high - low > 1:
            mid = (low + high) // 2
            if cq.head + mid < cq.base:
                return cq.head + mid
            high = mid
        return cq.head

    def _correct_min_offset(self, cq: ConsumeQueue) -> None:
        """ConsumeQueue#correctMinOffset (5.0.0 and 5.5.0 alike)."""
        if cq.min_offset >= cq.max_offset:
            return  # "contains no valid entries"
        if self.is_removed(cq.units[-1]):
            cq.min_offset = cq.max_offset  # every unit points below: min = max ("a future slot")
            return
        i = max(cq.min_offset, cq.base)
        while self.is_removed(cq.units[i - cq.base]):
            i += 1
        cq.min_offset = max(cq.min_offset, i)

    def start_queue_at(self, topic: str, queue_id: int, offset: int) -> None:
        """The queue begins at ``offset``: its first ``offset`` messages were stored and then
        removed with their commit-log and consume-queue files (retention), so min and max
        offset are both ``offset`` (ConsumeQueue#getMinOffsetInQueue / getMaxOffsetInQueue of
        a queue whose first file starts there), and stay so across a restart. ValueError on a
        queue that holds messages."""
        cq = self._queues.get((topic, queue_id))
        if (cq is not None and cq.units) or offset < 0:
            raise ValueError(f"queue {topic}:{queue_id} cannot start at {offset}: it holds messages or the offset is negative")
        self._queues[(topic, queue_id)] = ConsumeQueue.starting_at(offset, self._cq_file_units)
        if offset and not self._wrote:
            # the same history for the commit log: the files that held those messages are gone
            # (the oldest kept file is the first this store writes), and the consume-queue
            # cleaner has not run since (lastPhysicalMinOffset 0); no message sits at position 0
            self._cur_file = self._min_file = self._listed_min = 1
            self._wrote = True

    def delete_topic(self, topic: str) -> None:
        """DefaultMessageStore#deleteTopics: drop every consume queue of ``topic`` (the commit
        log keeps its messages until retention reaches them).

        A topic created again starts its queues at offset 0 (new consume-queue files).
        """
        for key in [k for k in self._queues if k[0] == topic]:
            del self._queues[key]
        for key in [k for k in self._offset_table if k[0] == topic]:
            del self._offset_table[key]  # cleanUnusedTopic → removeTopicQueueTable

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
        """The stored message at a queue offset, or None (below the min offset, out of range,
        its commit-log data gone, no queue)."""
        cq = self._queues.get((topic, queue_id))
        if cq is None or offset < max(cq.base, cq.min_offset) or offset >= cq.max_offset:
            return None
        msg = cq.units[offset - cq.base]
        return None if self.is_removed(msg) else msg

    def first_message_from(self, topic: str, queue_id: int, offset: int, exact: bool = False) -> MessageExt | None:
        """EscapeBridge#getMessage: getMessage(offset, maxMsgNums = 1) and its first message (the
        stored record, not a copy), or None when the read finds none. ``exact`` (F17's cause
        removed): None unless that message is the unit at ``offset`` itself."""
        r = self.get_message("", topic, queue_id, offset, 1)
        if not r.messages or (exact and r.queue_offsets[0] != offset):
            return None
        unit = self.unit_at(topic, queue_id, r.queue_offsets[0])
        assert unit is not None, "a unit just read"
        return self._read(unit)

    def look_message_by_commit_log_offset(self, commit_log_offset: int) -> MessageExt | None:
        """DefaultMessageStore#lookMessageByOffset(commitLogOffset): a copy, None when unknown,
        its commit-log file deleted, or no longer in its consume queue (deleted topic).
        Position 0 once its file is deleted reads the first file still there, as ``_read``
        does: CommitLog#getMessage(0, 4) gives that file's first message's size and
        getMessage(0, size) the message, whatever it is (found by the push coverage replay,
        a send-back of the first message after retention: SUCCESS on Java)."""
        msg = self._commit_log.get(commit_log_offset)
        if msg is not None and msg is self._phy0 and self.is_removed(msg):
            first = self._first_kept()
            return None if first is None else first.copy()
        if msg is None or self.is_removed(msg):
            return None
        cq = self._queues.get((msg.topic, msg.queue_id))
        index = self._cq_index.get(commit_log_offset, -1)
        if cq is None or not cq.base <= index < cq.max_offset or cq.units[index - cq.base] is not msg:
            return None
        return msg.copy()

    def queue_keys(self) -> list[tuple[str, int]]:
        """Every (topic, queueId) with a consume queue, in Java string order then queue id."""
        from reference.common.javalang import string_sort_key

        return sorted(self._queues, key=lambda k: (string_sort_key(k[0]), k[1]))

    def _read(self, msg: MessageExt) -> MessageExt | None:
        """CommitLog#getMessage(offsetPy, sizePy) for a unit pointing at ``msg``: None when its
        file is gone -- except at commit-log position 0: findMappedFileByOffset(offset,
        returnFirstOnNotFound = offset == 0) then answers the first file still there, and the
        read returns the bytes at its start, i.e. that file's first message (a produced message
        in the harness's layout, of the same size when it is of the same topic, body and
        tags). The model follows Java there; a unit at position 0 whose size would differ
        (not modelled: Java decodes whatever bytes are there) reads as removed."""
        if not self.is_removed(msg):
            return msg
        if msg is not self._phy0:
            return None
        first = self._first_kept()
        if first is None or first.topic != msg.topic or first.tags != msg.tags or len(first.body) != len(msg.body):
            return None
        return first

    def _first_kept(self) -> MessageExt | None:
        """The first message of the first commit-log file still there, None without one:
        what CommitLog#getMessage reads at position 0 once its file is gone
        (findMappedFileByOffset(offset, returnFirstOnNotFound = offset == 0))."""
        if self.commit_log_files() == 0 or self._listed_min < self._min_file:
            return None  # the first listed file is shut down: its hold() fails
        return next((m for m in self._commit_log.values() if self._file_of[m.commit_log_offset] == self._min_file),
                    None)

    def get_message(self, group: str, topic: str, queue_id: int, offset: int, max_msg_nums: int,
                    message_filter: MessageFilter = None, max_total_msg_size: int | None = None,
                    commit_log_filter: MessageFilter = None) -> GetMessageResult:
        """DefaultMessageStore#getMessage: status, messages and nextBeginOffset. ``message_filter``
        is MessageFilter#isMatchedByConsumeQueue (before the commit log is read),
        ``commit_log_filter`` #isMatchedByCommitLog (on the message read: an SQL92 pull's)."""
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
        if next_begin < cq.head:
            # iterateFrom found no CQ file for this offset: ConsumeQueue#rollNextFile, the next
            # file's start (one file per read, whatever lies between)
            result.status = GetMessageStatus.OFFSET_FOUND_NULL
            roll = self._next_cq_file_start(next_begin)
            result.next_begin_offset = next_offset_correction(next_begin, roll, self._slave, self._offset_check_in_slave)
            return result
        total = 0
        skip_below_file = -1  # nextPhyFileStartOffset: units in the file of the last miss are skipped
        # One consume-queue file per read: DefaultMessageStore#getMessage runs its loop for
        # travelCqFileNumWhenGetMessage (1) files (5.0.0 and 5.5.0 alike), over
        # ConsumeQueue#iterateFrom → getIndexBuffer, the rest of the file holding the offset.
        read_end = min(max_offset, self._next_cq_file_start(next_begin))
        while next_begin < read_end:
            if next_begin - offset > max_filter_count:
                break
            if next_begin < cq.base:
                # a fillPreBlank unit (only reachable once a restart made the min offset 0:
                # _load_min_offset): CommitLog#getMessage(0, Integer.MAX_VALUE) selects past
                # the file's read position and returns null, as for a removed message, and
                # rollNextFile(0) skips every later unit that points into commit-log file 0
                next_begin += 1
                if skip_below_file > 0:
                    continue  # position 0 lies below any nextPhyFileStartOffset
                # blanks lie below the queue's first message, so nothing was read yet
                if message_filter is not None and not message_filter(_BLANK_UNIT):
                    result.status = GetMessageStatus.NO_MATCHED_MESSAGE
                    continue
                result.status = GetMessageStatus.MESSAGE_WAS_REMOVING
                skip_below_file = 1
                continue
            unit = cq.units[next_begin - cq.base]
            # isTheBatchFull (count and size limits once something was read; sizePy of the unit)
            size_py = unit.stored_size
            if total > 0 and (len(result.messages) + 1 > max_msg_nums or total + size_py > max_pull_size
                              or total + size_py > MAX_TRANSFER_BYTES_IN_MEMORY
                              or len(result.messages) > MAX_TRANSFER_COUNT_IN_MEMORY - 1):
                break
            if total >= max_pull_size and total > 0:
                break
            next_begin += 1
            if self._file_of[unit.commit_log_offset] < skip_below_file:
                continue
            # isMatchedByConsumeQueue (tags code in the unit) before the commit log is read
            if message_filter is not None and not message_filter(unit):
                if not result.messages:
                    result.status = GetMessageStatus.NO_MATCHED_MESSAGE
                continue
            msg = self._read(unit)
            if msg is None:
                if not result.messages:
                    result.status = GetMessageStatus.MESSAGE_WAS_REMOVING
                skip_below_file = self._file_of[unit.commit_log_offset] + 1  # CommitLog#rollNextFile
                continue
            # isMatchedByCommitLog on the bytes read (5.0.0:809-817, 5.5.0:999-1008)
            if commit_log_filter is not None and not commit_log_filter(msg):
                if not result.messages:
                    result.status = GetMessageStatus.NO_MATCHED_MESSAGE
                continue
            result.messages.append(msg.copy())
            result.queue_offsets.append(next_begin - 1)  # the unit's index (CqUnit#getQueueOffset)
            total += size_py
            result.status = GetMessageStatus.FOUND
            if len(result.messages) >= max_msg_nums:
                # Java checks this at the top of the next iteration; breaking here changes
                # nothing observable but saves the loop.
                break
        result.next_begin_offset = next_begin
        return result

    def snapshot_queue(self, topic: str, queue_id: int) -> Iterable[MessageExt]:
        """Read-only view of the live messages of a queue (for inspection)."""
        return [m for _, m in self.live_units(topic, queue_id)]

    def live_units(self, topic: str, queue_id: int) -> list[tuple[int, MessageExt]]:
        """The live messages of a queue from its min offset with their consume-queue indexes
        (what a committed offset counts; a message's queue_offset may be larger, 5.0.0's burnt
        offsets)."""
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return []
        start = max(cq.min_offset, cq.base)
        return [(start + i, m) for i, m in enumerate(cq.units[start - cq.base:]) if not self.is_removed(m)]
