"""A small harness for z3 proofs: a theorem is proved when its negation is unsatisfiable.

Each Proof builds its claim from an *encoding* of our Python rule; ``mutate=True`` builds
the same claim from a deliberately wrong encoding, which z3 must refute (tests assert it),
so every proof can be seen to fail. ``cross_check`` evaluates the encoding on random
concrete inputs against the Python reference function.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class ProofResult:
    """Outcome of one proof: proved, refuted (with z3's counterexample) or unknown."""

    name: str
    result: str
    seconds: float
    counterexample: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "result": self.result, "seconds": round(self.seconds, 3)}
        if self.counterexample is not None:
            out["counterexample"] = self.counterexample
        return out


# z3 resource budget of one check: the costliest proof (alloc-avg-partition) takes about 61
# million (z3 4.x, `s.statistics()` "rlimit count"); 16 times that leaves room for z3 versions.
RLIMIT = 1_000_000_000
# Wall-clock guard only (a z3 hang); a proof that reaches it is "unknown" and fails loudly.
HANG_GUARD_MS = 600_000


@attrs.frozen
class Proof:
    """A named theorem: ``build(mutate)`` returns (z3 variables, hypotheses, claim)."""

    name: str
    statement: str
    bound: str
    build: Callable[[bool], tuple[list, list, Any]]
    cross_check: Callable[[int], int] | None = None  # runs N random comparisons, returns how many
    properties: tuple[str, ...] = ()  # the property IDs of spec/ this theorem establishes or supports

    def run(self, mutate: bool = False, rlimit: int = RLIMIT, timeout_ms: int = HANG_GUARD_MS) -> ProofResult:
        """Ask z3 for a model of hypotheses ∧ ¬claim; none means the claim is proved.

        The budget is z3's resource limit (``rlimit``, counted in z3's own steps), not time:
        the same proof gives the same answer on a loaded machine (a 30 s time-out made
        alloc-avg-partition ``unknown`` at load 12). ``timeout_ms`` only guards against a hang."""
        import z3

        start = time.perf_counter()
        variables, hypotheses, claim = self.build(mutate)
        solver = z3.Solver()
        solver.set("rlimit", rlimit)
        solver.set("timeout", timeout_ms)
        solver.add(*hypotheses)
        solver.add(z3.Not(claim))
        outcome = solver.check()
        seconds = time.perf_counter() - start
        if outcome == z3.unsat:
            return ProofResult(self.name, "proved", seconds)
        if outcome == z3.sat:
            model = solver.model()
            cex = {str(v): _value(model.eval(v, model_completion=True)) for v in variables}
            return ProofResult(self.name, "refuted", seconds, cex)
        return ProofResult(self.name, "unknown", seconds)


def _value(term: Any) -> Any:
    import z3

    if z3.is_bv_value(term):
        return term.as_signed_long()
    if z3.is_int_value(term):
        return term.as_long()
    if z3.is_true(term) or z3.is_false(term):
        return z3.is_true(term)
    return str(term)
