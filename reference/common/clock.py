"""Virtual time: the only clock the model reads. The driver advances it; nothing else does."""

from __future__ import annotations


class VirtualClock:
    """Milliseconds since an arbitrary epoch, as System.currentTimeMillis() would give them.

    Clock jumps (a fault the driver can inject) are forward-only ``advance`` calls of a
    large amount; the model never sees the clock move backwards.
    """

    def __init__(self, start_ms: int = 1_000_000) -> None:
        self._now = start_ms

    def now(self) -> int:
        """Current virtual time in milliseconds."""
        return self._now

    def advance(self, delta_ms: int) -> int:
        """Move time forward by ``delta_ms`` (>= 0); returns the new time."""
        if delta_ms < 0:
            raise ValueError("virtual time never moves backwards")
        self._now += delta_ms
        return self._now
