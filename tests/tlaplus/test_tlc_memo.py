"""The session's shared TLC runs (tests/conftest.py ``shared_tlc``) answer only a run whose
inputs are the same: a changed spec, config or neighbour module runs TLC again."""

from __future__ import annotations

import shutil
from pathlib import Path

from popverify.tlc.runner import TLAPLUS, TlcResult, run_model
from tlc_memo import memoized


def test_a_run_is_reused_only_for_the_same_inputs(tmp_path: Path) -> None:
    real: list[str] = []

    def counting(cfg: Path, **kw: object) -> TlcResult:
        real.append(cfg.name)
        return run_model(cfg, **kw)  # type: ignore[arg-type]

    shared = memoized(counting, {})
    work = tmp_path / "specs"
    work.mkdir()
    for name in ("Allocate4Pop.tla", "MCAllocate4Pop_small.cfg"):
        shutil.copy(TLAPLUS / name, work / name)
    cfg = work / "MCAllocate4Pop_small.cfg"
    first = shared(cfg)
    assert first.result == "ok" and first.distinct_states == 252
    assert shared(cfg) is first and len(real) == 1  # the same inputs: the same (real) result
    # a broken spec is a new run with its own verdict, never the cached "ok"
    spec = work / "Allocate4Pop.tla"
    spec.write_text(spec.read_text().replace("ELSE IF c <= q THEN s + 1", "ELSE IF c <= q THEN s"))
    broken = shared(cfg)
    assert len(real) == 2 and broken.result == "violation" and broken.violated == "ALLOC_2"
    # so is another config, another worker count, and a changed module beside the spec
    cfg.write_text(cfg.read_text() + "\n")
    shared(cfg)
    shared(cfg, workers=1)
    (work / "Other.tla").write_text("---- MODULE Other ----\n====\n")
    shared(cfg, workers=1)
    assert len(real) == 5
