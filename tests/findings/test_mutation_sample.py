"""`popverify mutate --per-operator N`: a deterministic, evenly spaced sample per operator."""

from __future__ import annotations

import pytest

from popverify.verify.mutation import OPERATORS, sample_per_operator, sites

FILES = ("broker/buffer_merge.py", "broker/revive.py", "broker/pop_processor.py", "broker/queue_lock.py")


def test_sample_keeps_every_operator_and_at_most_n_sites_of_each() -> None:
    found = sites(OPERATORS, FILES)
    picked = sample_per_operator(found, 3)
    for op in OPERATORS:
        theirs = [s for s in found if s.operator == op]
        mine = [s for s in picked if s.operator == op]
        assert len(mine) == min(3, len(theirs)) and set(mine) <= set(theirs)
    assert picked == sorted(picked, key=lambda s: (s.file, s.line, s.col, s.operator))
    assert sample_per_operator(found, 3) == picked  # deterministic
    with pytest.raises(ValueError):
        sample_per_operator(found, 0)
