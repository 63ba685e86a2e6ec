"""Fixtures shared across tests/: each real TLC model run once per test session, and one
plain lockstep harness JVM per release for the session."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from lockstep_pool import REAL_CLIENT, Pool, lending
from popverify.conformance import lockstep
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


@pytest.fixture(scope="session")
def lockstep_pool() -> Iterator[Pool]:
    """The session's plain lockstep harness JVMs (tests/lockstep_pool.py); a module-scoped
    fixture takes its JVM with ``lockstep_pool.client(release)`` and never closes it."""
    pool = Pool()
    yield pool
    pool.close()


@pytest.fixture
def shared_lockstep(lockstep_pool: Pool, request: pytest.FixtureRequest,
                    monkeypatch: pytest.MonkeyPatch) -> Iterator[Pool]:
    """For the test, LockstepClient(release) -- in popverify (which imports it where it starts a
    JVM) and in the test's module -- lends the session's JVM of that release instead of
    starting one; a harness with JVM options (JaCoCo) still gets its own. Yields the pool."""
    make = lending(lockstep_pool)
    monkeypatch.setattr(lockstep, "LockstepClient", make)
    if getattr(request.module, "LockstepClient", None) is REAL_CLIENT:
        monkeypatch.setattr(request.module, "LockstepClient", make)
    yield lockstep_pool
