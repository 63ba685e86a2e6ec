"""Real TLC runs answered once per test session (used by tests/conftest.py's ``shared_tlc``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from popverify.tlc import runner


def tlc_key(cfg: Path, workers: int, spec: Path | None, timeout: float) -> str:
    """What determines a TLC run: the config's text, the spec's name and the text of every
    module beside it (TLC resolves EXTENDS/INSTANCE there), workers and the time-out."""
    spec = spec or runner.spec_of(cfg)
    digest = hashlib.sha256()
    for part in (cfg.name, cfg.read_text(encoding="utf-8"), spec.name, repr((workers, timeout))):
        digest.update(part.encode() + b"\0")
    for tla in sorted(spec.parent.glob("*.tla")):
        digest.update(tla.name.encode() + b"\0" + tla.read_bytes() + b"\0")
    return digest.hexdigest()


def memoized(run: Callable[..., runner.TlcResult], memo: dict[str, runner.TlcResult]) -> Callable[..., runner.TlcResult]:
    """``run`` (run_model) answered from ``memo`` for a run whose inputs were already checked."""
    def run_once(cfg: Path, workers: int = 2, spec: Path | None = None, timeout: float = 1800) -> runner.TlcResult:
        key = tlc_key(cfg, workers, spec, timeout)
        if key not in memo:
            memo[key] = run(cfg, workers=workers, spec=spec, timeout=timeout)
        return memo[key]
    return run_once
