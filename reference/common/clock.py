"""Virtual time: the only clock the model reads. The driver advances it; nothing else does."""

from __future__ import annotations

# The model's clock starts here (milliseconds).
START_MS = 1_000_000
# What the broker's System.currentTimeMillis() reads when the model's clock reads t: t +
# EPOCH_OFFSET_MS (START_MS is 2023-11-14T22:13:20Z). Only the absolute value's digits ever
# matter: RocketMQ hashes keys that hold popTime (PopCheckPointWrapper#getMergeKey, the client's
# BatchAck map) into hash-table bins, so which of two CKs a scan writes first depends on them.
# The lockstep harness runs its virtual clock at this epoch (popverify/conformance/lockstep.py).
EPOCH_OFFSET_MS = 1_700_000_000_000 - START_MS
# The model time that stands for the epoch itself: a time field a response leaves 0 (an unset
# primitive long) that a client still uses as a time (ChangeInvisibleTimeProcessor's orderly
# early return, whose zero popTime the client's new handle carries).
EPOCH_ZERO_MS = -EPOCH_OFFSET_MS


def wall_clock_ms(model_ms: int) -> int:
    """The broker's epoch milliseconds for a model time (only where the digits matter)."""
    return model_ms + EPOCH_OFFSET_MS


class VirtualClock:
    """Milliseconds since an arbitrary epoch, as System.currentTimeMillis() would give them.

    Clock jumps (a fault the driver can inject) are forward-only ``advance`` calls of a
    large amount; the model never sees the clock move backwards.
    """

    def __init__(self, start_ms: int = START_MS) -> None:
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
