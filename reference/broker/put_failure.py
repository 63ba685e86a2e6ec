"""Store put failures as a fault: the next N puts of the consumption path are refused by the store.

A put that fails answers a PutMessageStatus other than PUT_OK, FLUSH_DISK_TIMEOUT,
FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE (CREATE_MAPPED_FILE_FAILED, OS_PAGE_CACHE_BUSY,
SERVICE_NOT_AVAILABLE, ...): nothing reaches the commit log, the timer or a consume queue, and
the caller sees the failure. The four processors' checks are the same in 5.0.0 and 5.5.0
(``status != PUT_OK && != FLUSH_DISK_TIMEOUT && != FLUSH_SLAVE_TIMEOUT && != SLAVE_NOT_AVAILABLE``;
PopReviveService#reviveRetry checks ``appendMessageResult.status != PUT_OK``), so one failing
status stands for all of them. What each caller does with the failure is modelled where it
puts (spec/broker.md, "Store put failures"):

- ``buffer_ck``: PopBufferMergeService#putCkToStore (the POP CK, from addCkJustOffset or scan):
  the wrapper stays unstored (reviveQueueOffset -1) and the next scan puts it again;
  scanCommitOffset does not pass it until it is stored.
- ``buffer_ack``: PopBufferMergeService#putAckToStore: the bit is not marked in toStoreBits;
  the next scan puts the ACK again.
- ``ack``: AckMessageProcessor's ACK (or BatchAckMsg) message: logged, the answer is still
  SUCCESS; the ack is lost and the message is revived.
- ``change_invisible_ck``: ChangeInvisibleTimeProcessor's new CK: SYSTEM_ERROR, the old handle
  is not acked. Its ackOrigin's ACK message is an ``ack`` put: logged, the answer is SUCCESS.
- ``revive_retry``: PopReviveService#reviveRetry's retry-topic put: 5.0.0 throws and the round
  ends without committing the revive offset; 5.5.0 re-puts a one-message CK (rePutCK, whose
  own put -- ``reput_ck`` -- is not checked).

Besides, ``arm_retry`` refuses the next N revive retry puts whenever they come (the
``revive_put_fail`` fault): a revive re-sends only after a CK's invisible time has passed
un-acked, which a put failure armed at a random step almost never meets. A store that cannot
create its next commit-log file refuses in one of two places (CommitLog#asyncPutMessage,
5.5.0:1074-1076 and 1084-1092; 5.0.0 alike): before the append when the last file is full
(CREATE_MAPPED_FILE_FAILED, no append result) or after an append that met the file's end
(CREATE_MAPPED_FILE_FAILED with the END_OF_FILE append result). Every caller takes both as a
refusal; reviveRetry tests them apart (``appendMessageResult == null || status != PUT_OK``,
5.0.0:115, 5.5.0:145-146). The revive's refusals alternate (revive5): the first of an arming
has no append result, the second the END_OF_FILE one (``file_end`` counts those).

Likewise ``arm_processor`` refuses the next N puts of one processor site, ``ack`` (AckMessageProcessor's
ACK and ChangeInvisibleTimeProcessor#ackOrigin's) or ``change_invisible_ck``, whenever they come
(the ``processor_put_fail`` fault): a refusal armed at a random step is mostly taken by a POP's
CK, and a changeInvisibleTime whose ackOrigin alone fails needs the ACK site by itself. It
refuses the buffer's own puts, ``buffer_ck`` or ``buffer_ack``, the same way (the
``buffer_put_fail`` fault): the scan's ACK put of a stored CK's acked bit comes seconds after the
pop, when a refusal armed at a random step has long been taken.

``arm_flush_timeout`` does not refuse: the next N puts at one site are written, dispatched and
answered FLUSH_DISK_TIMEOUT, what a SYNC_FLUSH store (flushDiskType, not the default) answers
when the flush outlasts syncFlushTimeout (CommitLog#handleDiskFlush). Every caller's check
passes it as a success (the four statuses above; reviveRetry reads the append result, PUT_OK),
so the model's state does not change; the sites are recorded (``timed_out``) for the lockstep
replay, which answers the same puts so on Java (the ``flush_timeout`` fault).

Which puts fail is data the driver sets (``arm``, ``arm_retry``, ``arm_processor``); the model
draws nothing here.
"""

from __future__ import annotations

import attrs

# The sites a failure can hit, for inspection and tests.
PUT_SITES: tuple[str, ...] = ("buffer_ck", "buffer_ack", "ack", "change_invisible_ck", "revive_retry", "reput_ck")
# The sites arm_processor may name (the processors' own puts).
PROCESSOR_SITES: tuple[str, ...] = ("ack", "change_invisible_ck")
# The buffer's own puts, which arm_processor may name too (the ``buffer_put_fail`` fault).
BUFFER_SITES: tuple[str, ...] = ("buffer_ck", "buffer_ack")
# The sites arm_flush_timeout may name (the puts whose callers test FLUSH_DISK_TIMEOUT).
FLUSH_TIMEOUT_SITES: tuple[str, ...] = ("buffer_ck", "buffer_ack", "ack", "change_invisible_ck")
# Bound of one arming (popverify's fault draws 1..2).
MAX_PENDING_FAILURES = 8


def _count(count: int, what: str) -> int:
    """``count`` when it is a number of pending puts an arm call takes (1..MAX_PENDING_FAILURES)."""
    if not 1 <= count <= MAX_PENDING_FAILURES:
        raise ValueError(f"{what} count must be in 1..{MAX_PENDING_FAILURES}, got {count}")
    return count


@attrs.define
class StorePutFaults:
    """How many of the next consumption-path puts the store refuses, and which sites failed."""

    pending: int = 0
    failed: list[str] = attrs.Factory(list)
    retry_pending: int = 0  # revive retry puts still to refuse (arm_retry)
    processor_site: str = ""  # the site arm_processor named
    processor_pending: int = 0  # its puts still to refuse
    timeout_site: str = ""  # the site arm_flush_timeout named
    timeout_pending: int = 0  # its puts still to answer FLUSH_DISK_TIMEOUT
    timed_out: list[str] = attrs.Factory(list)  # the sites answered so
    retry_taken: int = 0  # arm_retry's refusals since its arming (revive5)
    file_end: int = 0  # revive retry refusals answered with the END_OF_FILE append result (revive5)

    def arm(self, count: int) -> None:
        """The next ``count`` puts (1..MAX_PENDING_FAILURES) fail; replaces what was pending."""
        self.pending = _count(count, "put failure")

    def arm_retry(self, count: int) -> None:
        """The next ``count`` (1..MAX_PENDING_FAILURES) revive retry puts fail, whenever they
        come; replaces what was armed so."""
        self.retry_pending = _count(count, "put failure")
        self.retry_taken = 0

    def arm_processor(self, site: str, count: int) -> None:
        """The next ``count`` (1..MAX_PENDING_FAILURES) puts at ``site`` (PROCESSOR_SITES or
        BUFFER_SITES) fail, whenever they come; replaces what was armed so."""
        if site not in PROCESSOR_SITES + BUFFER_SITES:
            raise ValueError(f"processor put site must be one of {', '.join(PROCESSOR_SITES + BUFFER_SITES)}, "
                             f"got {site!r}")
        self.processor_site, self.processor_pending = site, _count(count, "put failure")

    def arm_flush_timeout(self, site: str, count: int) -> None:
        """The next ``count`` (1..MAX_PENDING_FAILURES) puts at ``site`` (FLUSH_TIMEOUT_SITES) that
        are not refused answer FLUSH_DISK_TIMEOUT, whenever they come; replaces what was armed so."""
        if site not in FLUSH_TIMEOUT_SITES:
            raise ValueError(f"flush timeout site must be one of {', '.join(FLUSH_TIMEOUT_SITES)}, got {site!r}")
        self.timeout_site, self.timeout_pending = site, _count(count, "flush timeout")

    def take(self, site: str) -> bool:
        """Whether the put at ``site`` fails (one pending failure is used up if so: a revive
        retry put takes one of ``arm_retry``'s first, a processor's put one of ``arm_processor``'s)."""
        if site not in PUT_SITES:
            raise ValueError(f"unknown put site {site!r}")
        if site == "revive_retry" and self.retry_pending > 0:
            self.retry_pending -= 1
            self.retry_taken += 1
            self.file_end += self.retry_taken % 2 == 0  # the second of an arming met the file's end
            self.failed.append(site)
            return True
        if site == self.processor_site and self.processor_pending > 0:
            self.processor_pending -= 1
            self.failed.append(site)
            return True
        if self.pending > 0:
            self.pending -= 1
            self.failed.append(site)
            return True
        if site == self.timeout_site and self.timeout_pending > 0:
            # written: only the answer's status differs, which every caller passes as a success
            self.timeout_pending -= 1
            self.timed_out.append(site)
        return False
