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


def test_harness_spelled_keys_order_the_scan_by_the_shifted_pop_time_and_restore_the_model() -> None:
    import reference.broker.buffer_merge as bm
    from popverify.conformance.lockstep import TIME_OFFSET
    from reference.common.javalang import concurrent_hash_map_order
    from reference.common.pop import PopRequest
    from tests.broker.conftest import make_broker

    b = make_broker("v5.0", seed=2, queues=4, enable_pop_buffer_merge=True, broker_name="broker-a")
    for q in range(4):
        b.put_message("T", q, b"m")
    assert b.pop(PopRequest("T", "G", queue_id=-1, max_msg_nums=32, invisible_time=60_000)).result.messages
    keys = list(b.buffer_merge.buffer)
    pt = b.buffer_merge.buffer[keys[0]].ck.pop_time
    shifted = {k.replace(f"{pt}broker-a", f"{pt + TIME_OFFSET}broker-a"): k for k in keys}
    want = [shifted[k] for k in concurrent_hash_map_order(list(shifted), 32768)]
    seen: list[list[str]] = []
    original_order, original_scan = bm.concurrent_hash_map_order, bm.PopBufferMergeService.scan
    with bench.harness_spelled_buffer_keys():
        patched = bm.concurrent_hash_map_order
        bm.concurrent_hash_map_order = lambda ks, n: seen.append(patched(ks, n)) or seen[-1]  # type: ignore
        b.buffer_merge.serving = False
        b.buffer_merge_scan()
        bm.concurrent_hash_map_order = patched
    assert seen == [want] and want != concurrent_hash_map_order(keys, 32768)
    assert bm.concurrent_hash_map_order is original_order and bm.PopBufferMergeService.scan is original_scan
