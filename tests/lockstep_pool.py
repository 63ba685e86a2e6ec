"""Lockstep harness JVMs shared by the tests of one session (used by tests/conftest.py's
``shared_lockstep`` and ``lockstep_pool``): one plain harness JVM per RocketMQ release, lent to
every test that asks instead of a JVM per test. Sharing keeps what the tests check: every
replay starts with `init`, a fresh broker in the running JVM (spec/conformance.md "Lockstep
protocol"), which answers byte for byte as a JVM of its own and leaks no thread
(tests/conformance/test_lockstep_harness.py, which keeps its own JVMs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from popverify.conformance.lockstep import LockstepClient

# The class itself, bound before any test replaces the module's name with a lender.
REAL_CLIENT = LockstepClient


class Pool:
    """The session's plain harness JVMs, one per release, started on first use and again when
    one died (a test that kills its JVM does not break the next)."""

    def __init__(self, start: Callable[[str], LockstepClient] = REAL_CLIENT) -> None:
        self._start = start
        self._clients: dict[str, LockstepClient] = {}
        self.started = 0  # JVMs started so far

    def client(self, release: str) -> LockstepClient:
        """The running JVM of ``release`` (started now when there is none)."""
        client = self._clients.get(release)
        if client is None or not client.alive:
            client = self._clients[release] = self._start(release)
            self.started += 1
        return client

    def close(self) -> None:
        """End every JVM of the pool (the session's end)."""
        clients, self._clients = self._clients, {}
        for client in clients.values():
            client.close()


class Lent:
    """A pooled JVM as LockstepClient's users see it: ``close`` (a ``with`` block's end, a
    command's clean-up) leaves it running for the next test; ``kill`` ends it (the pool then
    starts another)."""

    def __init__(self, client: LockstepClient) -> None:
        self._client = client
        self.version = client.version

    @property
    def pid(self) -> int | None:
        """The JVM's process id."""
        return self._client.pid

    @property
    def alive(self) -> bool:
        """Whether the JVM still runs."""
        return self._client.alive

    def call(self, request: dict[str, Any]) -> tuple[str, Any]:
        """LockstepClient.call on the pooled JVM."""
        return self._client.call(request)

    def ok(self, request: dict[str, Any]) -> dict[str, Any]:
        """LockstepClient.ok on the pooled JVM."""
        return self._client.ok(request)

    def close(self) -> None:
        """Nothing: the pool ends its JVMs when the session ends."""

    def kill(self) -> None:
        """Kill the pooled JVM."""
        self._client.kill()

    def __enter__(self) -> "Lent":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lending(pool: Pool, real: Callable[..., LockstepClient] = REAL_CLIENT) -> Callable[..., Any]:
    """A stand-in for the LockstepClient constructor: a plain harness (no JVM options, C1 only)
    comes from ``pool``; one with JVM options (a JaCoCo agent) or full JIT is its own JVM, as
    before, since its options or its execution data belong to it alone."""
    def make(version: str, jvm_args: Sequence[str] = (), full_jit: bool = False) -> Any:
        if jvm_args or full_jit:
            return real(version, jvm_args, full_jit)
        return Lent(pool.client(version))
    return make
