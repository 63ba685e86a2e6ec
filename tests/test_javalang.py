"""Java value semantics: checked against values the JDK prints."""

from reference.common.javalang import (
    JavaRandom, java_div, java_mod, string_compare, string_hash, string_sort_key, to_int, to_long,
)
from reference.common.profile import PROFILE_NAMES
from reference.profile import get_profile

import pytest


def test_java_random_matches_jdk_sequence() -> None:
    # `new java.util.Random(42)` on OpenJDK 17: nextInt(100) x5, nextLong, nextInt(16), nextBoolean, nextDouble
    rnd = JavaRandom(42)
    assert [rnd.next_int(100) for _ in range(5)] == [30, 63, 48, 84, 70]
    assert rnd.next_long() == -1068554554583376509
    assert rnd.next_int(16) == 11
    assert rnd.next_boolean() is True
    assert rnd.next_double() == 0.09132461105841794


def test_narrowing_and_division() -> None:
    assert to_int(2**31) == -(2**31)
    assert to_long(2**63 + 5) == -(2**63) + 5
    assert java_div(-7, 2) == -3 and java_mod(-7, 2) == -1
    with pytest.raises(ArithmeticError):
        java_div(1, 0)


def test_strings_order_and_hash_like_java() -> None:
    assert "hello".__len__() == 5 and string_hash("hello") == 99162322
    assert string_compare("c10", "c2") < 0
    assert sorted(["c2", "c10", "c1"], key=string_sort_key) == ["c1", "c10", "c2"]
    # A supplementary character sorts by its surrogate units in Java, below U+FFFF.
    assert string_compare("\U0001F600", "\uFFFF") < 0


def test_profiles_known_and_unknown() -> None:
    assert {get_profile(n).name for n in PROFILE_NAMES} == {"v5.0", "v5.5"}
    with pytest.raises(ValueError, match="known profiles"):
        get_profile("v4.9")
