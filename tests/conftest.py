"""Fixtures shared across tests/ (one idea: run each real TLC model once per test session)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from popverify.tlc import runner, trace_validation
from tlc_memo import memoized


@pytest.fixture(scope="session")
def _tlc_memo() -> dict[str, runner.TlcResult]:
    return {}


@pytest.fixture
def shared_tlc(_tlc_memo: dict[str, runner.TlcResult],
               monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., runner.TlcResult]]:
    """Real TLC, each distinct run (same config, same spec files) once per session: the small
    models that both tests/tlaplus and `verify` check, and the reference traces that both
    tests/tlaplus/test_trace_validation.py and `verify` validate, run TLC once. A test using
    this fixture alone runs every model itself. Yields the shared run_model, which also
    replaces runner.run_model and trace_validation.run_model for the test."""
    shared = memoized(runner.run_model, _tlc_memo)
    monkeypatch.setattr(runner, "run_model", shared)
    monkeypatch.setattr(trace_validation, "run_model", shared)
    yield shared
