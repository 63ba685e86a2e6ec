"""The seeded fault schedule of a live run (loopback only, bounded in count and time).

Kinds:
- ``kill``: SIGKILL the broker's process group, then start it again on the same store.
- ``pause``: SIGSTOP the broker for 2-6 s, then SIGCONT.
- ``proxy``: SIGTERM the proxy and start it again.
- ``consumer``: SIGKILL of one consumer's process (POP: its Python process; push: its JVM), which
  abandons every message it holds; a new consumer process replaces it.
- ``timeout``: for 5-10 s, consumers give up waiting for 30 % of their acks (indeterminate; POP only).
"""

from __future__ import annotations

import random

import attrs

FAULT_KINDS = ("kill", "pause", "proxy", "consumer", "timeout")
MAX_FAULTS = 8
MIN_GAP_S = 12.0   # a broker restart takes ~7 s on this machine; keep faults from overlapping


@attrs.frozen
class Fault:
    """One scheduled fault: ``at_s`` seconds after the workload started, lasting ``length_s``
    (pause and timeout windows; 0 for the instantaneous kinds)."""

    at_s: float
    kind: str
    length_s: float = 0.0
    target: int = 0   # consumer index for ``consumer``

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


def schedule(kinds: tuple[str, ...], duration_s: int, clients: int, seed: int) -> list[Fault]:
    """Faults of ``kinds`` between 15 % and 75 % of the workload, at least MIN_GAP_S apart,
    at most MAX_FAULTS; the same arguments give the same schedule."""
    if not kinds:
        return []
    rng = random.Random(seed)
    lo, hi = 0.15 * duration_s, 0.75 * duration_s
    slots = max(1, min(MAX_FAULTS, int((hi - lo) // MIN_GAP_S) + 1))
    count = min(slots, max(len(kinds), duration_s // 30))
    order = [kinds[i % len(kinds)] for i in range(count)]
    rng.shuffle(order)
    step = (hi - lo) / count
    faults = []
    for i, kind in enumerate(order):
        at = round(lo + i * step + rng.uniform(0, max(0.0, step - MIN_GAP_S)), 1)
        length = round(rng.uniform(2, 6), 1) if kind == "pause" else (
            round(rng.uniform(5, 10), 1) if kind == "timeout" else 0.0)
        faults.append(Fault(at, kind, length, rng.randrange(clients) if kind == "consumer" else 0))
    return faults
