"""benchmarks/lockstep_differential.py without a JVM: argument bounds and the chunk merge."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from popverify.conformance.confirm import StatefulReport

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "lockstep_differential.py"
_spec = importlib.util.spec_from_file_location("lockstep_differential", _PATH)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("argv", [["--cases", "0"], ["--cases", "100001"], ["--steps", "501"], ["--chunk", "0"],
                                  ["--profiles", "v4.9"], ["--profiles", ","], ["--cases", "x"]])
def test_bad_arguments_exit_2_before_any_jvm(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2


def test_chunks_add_up_and_each_class_keeps_its_first_example() -> None:
    total = StatefulReport("v5.0", "5.0.0")
    a = StatefulReport("v5.0", "5.0.0", cases=2, agree=1, diverge=1, steps=10, seconds=2.0, model_seconds=0.5,
                       classes={"revive .x": {"count": 1, "example": {"case": 0}}},
                       out_of_scope_reasons={})
    b = StatefulReport("v5.0", "5.0.0", cases=3, agree=1, diverge=1, out_of_scope=1, steps=20, seconds=3.0,
                       model_seconds=0.5, classes={"revive .x": {"count": 1, "example": {"case": 4}}},
                       out_of_scope_reasons={"pop: parked": 1})
    bench.merge(total, a)
    bench.merge(total, b)
    assert (total.cases, total.agree, total.diverge, total.out_of_scope, total.steps) == (5, 2, 2, 1, 30)
    assert total.classes == {"revive .x": {"count": 2, "example": {"case": 0}}}
    f = bench.figures(total, {"init_ms": 1.0})
    assert f["schedules_per_s_lockstep"] == 1.0 and f["schedules_per_s_model"] == 5.0
    assert f["classes"] == {"revive .x": 2} and f["out_of_scope_reasons"] == {"pop: parked": 1}
