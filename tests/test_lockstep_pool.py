"""The tests' shared lockstep JVMs (tests/lockstep_pool.py), without a JVM: one start per
release, a dead one replaced, a lent one left running by close, a JaCoCo harness its own."""

from __future__ import annotations

from typing import Any

from lockstep_pool import Pool, lending


class FakeClient:
    """What the pool reads of a LockstepClient."""

    def __init__(self, version: str, jvm_args: Any = (), full_jit: bool = False) -> None:
        self.version, self.jvm_args, self.full_jit = version, tuple(jvm_args), full_jit
        self.alive = True
        self.pid = id(self)

    def call(self, request: dict[str, Any]) -> tuple[str, Any]:
        return "ok", {"op": request["op"], "version": self.version}

    def close(self) -> None:
        self.alive = False

    def kill(self) -> None:
        self.alive = False


def test_one_jvm_per_release_lent_to_every_caller_and_replaced_when_dead() -> None:
    pool = Pool(FakeClient)  # type: ignore[arg-type]
    make = lending(pool, FakeClient)  # type: ignore[arg-type]
    with make("5.0.0") as first:
        assert first.call({"op": "init"}) == ("ok", {"op": "init", "version": "5.0.0"})
    with make("5.0.0") as again, make("5.5.0") as other:
        assert again.pid == first.pid and again.alive  # the with block's close left it running
        assert other.version == "5.5.0" and other.pid != first.pid
    assert pool.started == 2
    again.kill()
    assert not first.alive and make("5.0.0").pid != first.pid and pool.started == 3
    # JVM options (a JaCoCo agent) or full JIT: a JVM of its own, never the pool's
    own = make("5.0.0", ["-javaagent:jacoco.jar"])
    assert isinstance(own, FakeClient) and own.jvm_args == ("-javaagent:jacoco.jar",)
    assert isinstance(make("5.5.0", full_jit=True), FakeClient) and pool.started == 3
    pool.close()
    assert not other.alive
