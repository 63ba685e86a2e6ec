"""Java value semantics the model needs to match RocketMQ byte for byte.

Python ints are unbounded and its str compares code points; Java's int/long wrap, its
integer division truncates toward zero and String.compareTo compares UTF-16 code units.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

INT_MIN = -(1 << 31)
INT_MAX = (1 << 31) - 1
LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1


def to_int(value: int) -> int:
    """Narrow to a Java int (two's complement wrap), as a cast or int overflow does."""
    return ((value + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def to_long(value: int) -> int:
    """Narrow to a Java long (two's complement wrap)."""
    return ((value + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


def to_short(value: int) -> int:
    """Narrow to a Java short."""
    return ((value + (1 << 15)) & 0xFFFF) - (1 << 15)


def to_byte(value: int) -> int:
    """Narrow to a Java byte."""
    return ((value + (1 << 7)) & 0xFF) - (1 << 7)


def java_div(a: int, b: int) -> int:
    """Java integer division ``a / b``: truncates toward zero; b == 0 raises ArithmeticError."""
    if b == 0:
        raise ArithmeticError("/ by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def java_mod(a: int, b: int) -> int:
    """Java ``a % b``: the sign follows the dividend."""
    return a - java_div(a, b) * b


def utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of a string, as Java's char[] holds them."""
    data = text.encode("utf-16-be", "surrogatepass")
    return [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]


def string_compare(a: str, b: str) -> int:
    """Java ``a.compareTo(b)``: first differing UTF-16 unit difference, else length difference."""
    ua, ub = utf16_units(a), utf16_units(b)
    for x, y in zip(ua, ub):
        if x != y:
            return x - y
    return len(ua) - len(ub)


@functools.lru_cache(maxsize=1 << 14)  # a run sorts the same few topic/broker names thousands of times
def string_sort_key(text: str) -> tuple[int, ...]:
    """A key with which Python's sorted() orders strings as Java's Collections.sort does."""
    return tuple(utf16_units(text))


def string_hash(text: str) -> int:
    """Java ``String.hashCode()``."""
    h = 0
    for unit in utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return to_int(h)


def concurrent_hash_map_order(keys: list[str], table_size: int,
                              java_key: Callable[[str], str] | None = None) -> list[str]:
    """String keys in the order a java.util.concurrent.ConcurrentHashMap with ``table_size``
    bins (a power of two; no resize since) iterates them, given in insertion order: by bin
    ``spread(hashCode) & (n - 1)``, ``spread(h) = (h ^ (h >>> 16)) & 0x7fffffff``, and within a
    bin in insertion order (putVal appends to the bin's list; a bin turns into a tree only at 8
    keys, which is not modelled). ``java_key``: the String Java holds for a key, when it is not
    the key itself (a time in it on the broker's epoch, reference/common/clock.py)."""
    mask = table_size - 1

    def bin_of(key: str) -> int:
        h = string_hash(java_key(key) if java_key is not None else key) & 0xFFFFFFFF
        return ((h ^ (h >> 16)) & 0x7FFFFFFF) & mask
    return sorted(keys, key=bin_of)  # stable: insertion order within a bin


def hash_map_order(keys: list[str], java_key: Callable[[str], str] | None = None) -> list[str]:
    """Distinct String keys in the order a ``new java.util.HashMap<>()`` they were put into, in
    the given order, iterates them: the table starts at 16 bins and doubles whenever the size
    passes 0.75 of it (HashMap#resize keeps insertion order within a bin); a key's bin is
    ``(h ^ (h >>> 16)) & (n - 1)`` as in concurrent_hash_map_order (bins turning into trees at 8
    keys are not modelled); ``java_key`` as there."""
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2
    return concurrent_hash_map_order(keys, size, java_key)


def long_hash(value: int) -> int:
    """Java ``Long.hashCode()``: ``(int) (value ^ (value >>> 32))``."""
    v = value & 0xFFFFFFFFFFFFFFFF
    return to_int(v ^ (v >> 32))


def long_hash_map_order(keys: list[int]) -> list[int]:
    """Distinct Long keys in the order a ``new java.util.HashMap<>()`` they were put into, in the
    given order, iterates them: as hash_map_order, with Long#hashCode."""
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2

    def bin_of(key: int) -> int:
        h = long_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (size - 1)
    return sorted(keys, key=bin_of)  # stable: insertion order within a bin


class JavaRandom:
    """java.util.Random: the same 48-bit LCG, so a seed gives Java's exact sequence."""

    _MULTIPLIER = 0x5DEECE66D
    _ADDEND = 0xB
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ self._MULTIPLIER) & self._MASK
        self._initial = seed

    def reseeded(self) -> "JavaRandom":
        """A new generator with this one's original seed (its sequence from the start)."""
        return JavaRandom(self._initial)

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULTIPLIER + self._ADDEND) & self._MASK
        return to_int(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` or ``nextInt(bound)`` with Java's rejection loop."""
        if bound is None:
            return self._next(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound & (-bound) == bound:  # power of two
            return to_int((bound * self._next(31)) >> 31)
        while True:
            bits = self._next(31)
            val = bits % bound
            if bits - val + (bound - 1) < (1 << 31):
                return val

    def next_long(self) -> int:
        """``nextLong()``."""
        return to_long((self._next(32) << 32) + self._next(32))

    def next_boolean(self) -> bool:
        """``nextBoolean()``."""
        return self._next(1) != 0

    def next_double(self) -> float:
        """``nextDouble()``."""
        return ((self._next(26) << 27) + self._next(27)) * (1.0 / (1 << 53))
