"""QueueLockManager: the per ``{topic}@{group}@{queueId}`` try-lock of PopMessageProcessor.

Java's tryLock never blocks; a held lock makes popMsgFromQueue skip the queue and
PopBufferMergeService#commitOffset retry on its next scan. The model holds a pop's lock
from its queue-visit step until its release step, so other steps can see it held.
"""

from __future__ import annotations


class QueueLockManager:
    """Set of held lock keys."""

    def __init__(self) -> None:
        self._held: set[str] = set()

    def try_lock(self, key: str) -> bool:
        """Take the lock if free."""
        if key in self._held:
            return False
        self._held.add(key)
        return True

    def unlock(self, key: str) -> None:
        """Release the lock."""
        self._held.discard(key)

    def is_locked(self, key: str) -> bool:
        """Whether someone holds it."""
        return key in self._held

    def held_keys(self) -> frozenset[str]:
        """The keys locked now (inspection for the quiescence check QUI-1)."""
        return frozenset(self._held)

    def clear(self) -> None:
        """Restart: no lock survives."""
        self._held.clear()
