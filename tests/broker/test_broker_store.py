import itertools

import pytest

from reference.broker.store import GetMessageStatus as S
from reference.broker.store import MessageStore, get_message_status, next_offset_correction
from reference.common.clock import VirtualClock
from reference.common.message import MessageExt


def store_with(n: int, cq_file_units: int = 30_000) -> MessageStore:
    """``n`` messages of T/0, one commit-log file each (the harness's layout)."""
    s = MessageStore(VirtualClock().now, cq_file_units=cq_file_units)
    for i in range(n):
        s.roll_commit_log()
        s.put_message(MessageExt("T", 0, body=b"m%d" % i, tags="a" if i % 2 == 0 else "b"))
    return s


def expire(s: MessageStore, files: int) -> None:
    """Both retention stages."""
    s.delete_commit_log_files(files)
    s.clean_consume_queues()


def test_range_statuses_and_corrections():
    s = store_with(5)
    assert s.get_message("G", "T", 0, 0, 32).status is S.FOUND
    r = s.get_message("G", "T", 0, 5, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_ONE, 5)
    r = s.get_message("G", "T", 0, 9, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_BADLY, 5)
    r = s.get_message("G", "T", 1, 3, 32)
    assert (r.status, r.next_begin_offset) == (S.NO_MESSAGE_IN_QUEUE, 0)
    expire(s, 2)
    r = s.get_message("G", "T", 0, 0, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_TOO_SMALL, 2)


def test_found_reads_up_to_max_and_sets_next_begin():
    s = store_with(5)
    r = s.get_message("G", "T", 0, 1, 3)
    assert r.status is S.FOUND and r.message_queue_offsets == [1, 2, 3] and r.next_begin_offset == 4


def test_filter_statuses():
    s = store_with(4)
    r = s.get_message("G", "T", 0, 0, 32, lambda m: m.tags == "b")
    assert r.message_queue_offsets == [1, 3]
    r = s.get_message("G", "T", 0, 0, 32, lambda m: m.tags == "zzz")
    assert (r.status, r.next_begin_offset) == (S.NO_MATCHED_MESSAGE, 4)


def test_commit_log_stage_alone_answers_message_was_removing():
    """Stage 1 (CleanCommitLogService): the units still point at deleted files."""
    s = store_with(5)
    assert s.delete_commit_log_files(2) == 2 and s.commit_log_files() == 3
    r = s.get_message("G", "T", 0, 1, 32)
    assert r.status is S.FOUND and r.message_queue_offsets == [2, 3, 4] and r.next_begin_offset == 5
    assert s.get_min_offset_in_queue("T", 0) == 0  # min not corrected yet
    s2 = store_with(3)
    assert s2.delete_commit_log_files(5) == 2  # never the newest file
    r = s2.get_message("G", "T", 0, 1, 32)
    assert (r.status, r.message_queue_offsets) == (S.FOUND, [2])
    r = s2.get_message("G", "T", 0, 1, 1)
    assert (r.status, r.message_queue_offsets) == (S.FOUND, [2])
    s3 = store_with(4)
    s3.put_message(MessageExt("T", 1, body=b"x"))  # same file as offset 3
    s3.roll_commit_log()
    s3.put_message(MessageExt("T", 1, body=b"y"))
    assert s3.delete_commit_log_files(4) == 4
    r = s3.get_message("G", "T", 0, 1, 32)
    assert (r.status, r.messages, r.next_begin_offset) == (S.MESSAGE_WAS_REMOVING, [], 4)
    assert s3.look_message_by_offset("T", 0, 2) is None


def test_consume_queue_stage_corrects_min_offsets():
    """Stage 2 (CleanConsumeQueueService → ConsumeQueue#correctMinOffset), all queues."""
    s = store_with(5)
    s.put_message(MessageExt("T", 1, body=b"q1"))  # in the file of T/0 offset 4
    assert not s.clean_consume_queues()  # the commit log's min offset has not moved: nothing runs
    s.delete_commit_log_files(2)
    assert s.clean_consume_queues()
    assert s.get_min_offset_in_queue("T", 0) == 2 and s.get_min_offset_in_queue("T", 1) == 0
    r = s.get_message("G", "T", 0, 1, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_TOO_SMALL, 2)
    assert not s.clean_consume_queues()  # lastPhysicalMinOffset: once per move


def test_a_queue_with_nothing_left_gets_min_equal_max():
    s = store_with(3)
    s.roll_commit_log()
    s.put_message(MessageExt("T", 1, body=b"z"))
    expire(s, 3)
    assert (s.get_min_offset_in_queue("T", 0), s.get_max_offset_in_queue("T", 0)) == (3, 3)
    assert s.get_message("G", "T", 0, 0, 32).status is S.OFFSET_TOO_SMALL


def test_consume_queue_files_go_only_when_their_last_unit_is_gone():
    """deleteExpiredFileByOffset: whole CQ files, never the newest; reads below: OFFSET_FOUND_NULL
    until correctMinOffset (which runs in the same call) -- so only the min offset shows."""
    s = store_with(7, cq_file_units=2)
    expire(s, 3)
    assert s.get_min_offset_in_queue("T", 0) == 3
    r = s.get_message("G", "T", 0, 3, 32)
    # one consume-queue file per read (DefaultMessageStore#getMessage, travelCqFileNumWhenGetMessage 1)
    assert r.message_queue_offsets == [3] and r.next_begin_offset == 4
    assert s.get_message("G", "T", 0, 4, 32).message_queue_offsets == [4, 5]


def test_phy_offset_zero_reads_the_first_remaining_file():
    """CommitLog#getMessage → findMappedFileByOffset(0, returnFirstOnNotFound = true): the unit of
    the store's first message reads the first message of the oldest remaining file (Java, both
    releases: msgOffsetInfo 0,2,3 with messages m2, m2, m3)."""
    s = store_with(4)
    s.delete_commit_log_files(2)
    r = s.get_message("G", "T", 0, 0, 32)
    assert r.status is S.FOUND and r.message_queue_offsets == [0, 2, 3]
    assert [m.body for m in r.messages] == [b"m2", b"m2", b"m3"]
    # the second unit (phy 1) reads as removed; the first one only is special
    r = s.get_message("G", "T", 0, 1, 32)
    assert r.message_queue_offsets == [2, 3]


def test_look_message_by_offset_zero_reads_the_first_remaining_file():
    """DefaultMessageStore#lookMessageByOffset(0) once its file is deleted: CommitLog#getMessage's
    returnFirstOnNotFound answers the first message of the oldest remaining file, whatever it
    is (the send-back of the first message after retention succeeds on Java with that message;
    push coverage replay, v5.0 seed 94). Any other deleted offset is not found."""
    s = store_with(4)
    assert s.look_message_by_commit_log_offset(0).body == b"m0"
    s.delete_commit_log_files(2)
    found = s.look_message_by_commit_log_offset(0)
    assert found is not None and (found.body, found.queue_offset, found.commit_log_offset) == (b"m2", 2, 2)
    assert s.look_message_by_commit_log_offset(1) is None
    assert s.look_message_by_commit_log_offset(3).body == b"m3"


def test_topic_delete_and_recreate_restarts_offsets():
    s = store_with(3)
    s.delete_topic("T")
    assert s.get_max_offset_in_queue("T", 0) == 0
    assert s.put_message(MessageExt("T", 0)).queue_offset == 0


def test_status_decision_partitions_inputs():
    seen = set()
    for has, lo, hi, off in itertools.product([False, True], range(3), range(4), range(-1, 5)):
        if lo > hi:
            continue
        status, nxt = get_message_status(has, lo, hi, off)
        seen.add(status)
        if not has:
            assert status is S.NO_MATCHED_LOGIC_QUEUE and nxt == 0
        elif hi == 0:
            assert status is S.NO_MESSAGE_IN_QUEUE
        elif lo <= off < hi:
            assert status is S.NO_MATCHED_MESSAGE and nxt == off
    assert len(seen) == 6


def test_next_offset_correction_on_slave():
    assert next_offset_correction(5, 9) == 9
    assert next_offset_correction(5, 9, slave=True) == 5
    assert next_offset_correction(5, 9, slave=True, offset_check_in_slave=True) == 9
    assert get_message_status(True, 2, 5, 0, slave=True) == (S.OFFSET_TOO_SMALL, 0)


def test_revive_read_takes_the_next_message_when_this_ones_data_is_gone():
    """EscapeBridge#getMessage = getMessage(offset, 1).get(0): past a removed unit."""
    s = store_with(4)
    s.delete_commit_log_files(2)
    assert s.first_message_from("T", 0, 1).body == b"m2"
    s.clean_consume_queues()
    assert s.first_message_from("T", 0, 1) is None  # below the min offset: OFFSET_TOO_SMALL


def test_restart_corrects_min_offsets_and_rearms_the_cleaner():
    """recoverTopicQueueTable corrects min offsets; the new CleanConsumeQueueService runs again."""
    s = store_with(4)
    s.delete_commit_log_files(2)
    s.recover()
    assert s.get_min_offset_in_queue("T", 0) == 2
    assert s.clean_consume_queues()  # lastPhysicalMinOffset 0 again


def test_a_held_file_is_shut_down_then_deleted_when_released_or_forced():
    """MappedFile#destroy: a held file is shut down (unreadable, still listed) and ends the
    deletion; released, the next call deletes it; still held, only a call 120 s after its
    shutdown (destroyMapedFileIntervalForcibly) does."""
    clock = VirtualClock()
    s = MessageStore(clock.now)
    for i in range(4):
        s.roll_commit_log()
        s.put_message(MessageExt("T", 0, body=b"m%d" % i))
    s.hold_file(0)
    assert s.delete_commit_log_files(3) == 0
    assert (s.commit_log_files(), s.first_commit_log_file(), s.oldest_commit_log_file()) == (4, 1, 0)
    assert s.get_message("G", "T", 0, 0, 1).queue_offsets == [1]  # m0's file is shut down: skipped
    assert s.delete_commit_log_files(3) == 0  # still held, before the forcible interval
    clock.advance(120_000)
    assert s.delete_commit_log_files(1) == 1 and s.oldest_commit_log_file() == 1  # forced
    s.hold_file(1)
    assert s.delete_commit_log_files(3) == 0 and s.first_commit_log_file() == 2
    s.release_file(1)
    assert s.delete_commit_log_files(3) == 2 and s.commit_log_files() == 1  # never the newest


def test_releasing_an_unheld_file_is_an_error():
    s = store_with(2)
    with pytest.raises(ValueError, match="released more often than held"):
        s.release_file(0)


def test_a_restart_moves_the_min_offset_onto_fill_pre_blank_units():
    """5.0.0's refused first put burns queue offset 0 (F20): the queue's first message comes at
    offset 1 and ConsumeQueue#fillPreBlank writes a blank unit (offsetPy 0, size
    Integer.MAX_VALUE) at 0; min 1. A restart's correctMinOffset scans from the file's start and
    takes the blank (offsetPy 0 is not below the commit log's min offset): min 0. A read there
    finds no bytes (MESSAGE_WAS_REMOVING) and skips the rest of the first commit-log file
    (rollNextFile): the message at 1 is passed over, the one at 2 (next file) is read.
    (tests/conformance/test_lockstep_store.py replays this on 5.0.0.)"""
    s = MessageStore(VirtualClock().now)
    s.burn_queue_offset("T", 0)
    s.put_message(MessageExt("T", 0, body=b"a"))
    s.roll_commit_log()
    s.put_message(MessageExt("T", 0, body=b"b"))
    assert (s.get_min_offset_in_queue("T", 0), s.get_message("G", "T", 0, 1, 32).queue_offsets) == (1, [1, 2])
    s.recover()
    assert s.get_min_offset_in_queue("T", 0) == 0
    r = s.get_message("G", "T", 0, 0, 32)
    assert (r.status, r.queue_offsets, r.next_begin_offset) == (S.FOUND, [2], 3)
    blanks = s.get_message("G", "T", 0, 0, 1, message_filter=lambda m: m.tags == "x")
    assert (blanks.status, blanks.next_begin_offset) == (S.NO_MATCHED_MESSAGE, 3)
    # once the first commit-log file is gone the blanks point below its min offset: min stays
    s.delete_commit_log_files(1)
    s.recover()
    assert s.get_min_offset_in_queue("T", 0) == 2


def test_a_queue_the_redispatch_rebuilt_takes_its_blanks_at_the_next_restart():
    """5.5.0's recovery re-dispatches a deleted topic's newest message (queue offset 2): its
    new consume queue begins at 2 after blanks, min 2 (built in that JVM: fillPreBlank set
    minLogicOffset, where correctMinOffset's search starts). At the next restart the queue is
    read from disk (minLogicOffset 0) and the blanks count: min 0 (v5.5 corpus seed 28)."""
    s = MessageStore(VirtualClock().now)
    for topic in ("T", "T", "U", "T"):
        s.roll_commit_log()
        s.put_message(MessageExt(topic, 0, body=b"x"))
    s.delete_topic("T")
    s.recover(redispatch=True)
    assert s.get_min_offset_in_queue("T", 0) == 2
    s.recover(redispatch=True)
    assert s.get_min_offset_in_queue("T", 0) == 0
    r = s.get_message("G", "T", 0, 0, 32)
    assert (r.status, r.queue_offsets) == (S.FOUND, [2])


def test_a_restart_finds_no_valid_unit_in_the_first_consume_queue_file_and_keeps_min_offset_0():
    """A restart loads each consume queue with minLogicOffset 0; correctMinOffset searches its
    first file only. When retention deleted every message of that file and the consume-queue
    stage has not run since, nothing there is valid and the min offset stays 0, far below the
    queue's messages (the merged corpus's seeds 12 and 44 on both releases: a queue started near
    2^31). A read below the first file then rolls one file (ConsumeQueue#rollNextFile)."""
    s = MessageStore(VirtualClock().now, cq_file_units=2)
    s.start_queue_at("T", 0, 5)  # the queue's first file holds units 4 (blank) and 5
    for _ in range(3):
        s.roll_commit_log()
        s.put_message(MessageExt("T", 0, body=b"m"))  # units 5, 6, 7, a commit-log file each
    s.roll_commit_log()
    s.put_message(MessageExt("Other", 0, body=b"x"))  # a newer file: retention keeps the newest
    assert s.delete_commit_log_files(1) == 1  # unit 5's file
    s.recover()
    assert (s.get_min_offset_in_queue("T", 0), s.get_max_offset_in_queue("T", 0)) == (0, 8)
    r = s.get_message("G", "T", 0, 0, 32)
    assert (r.status, r.next_begin_offset) == (S.OFFSET_FOUND_NULL, 2)  # the next file's start, not 4
    assert s.get_message("G", "T", 0, 6, 32).queue_offsets == [6, 7]


def test_a_restart_before_the_first_write_keeps_a_started_queues_store_on_its_first_file():
    """A queue started past offset 0 leaves the store's commit log on file 1 (file 0 went with the
    messages before it). A restart before anything is written has no ended file to reopen: the
    next message goes into file 1 and is readable (v5.0 corpus seed 140: it went into file 0,
    below the min file, and read as removed)."""
    s = MessageStore(VirtualClock().now)
    s.start_queue_at("T", 0, 7)
    s.recover()
    stored = s.put_message(MessageExt("R", 3, body=b"{}"))
    assert not s.is_removed(stored)
    assert [m.body for m in s.snapshot_queue("R", 3)] == [b"{}"]
