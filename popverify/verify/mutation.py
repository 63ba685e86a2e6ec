"""AST-level mutation testing of the reference model.

Each mutant is one syntactic change (operator at one site) to one file of ``reference/``,
written into a temporary copy of the package; the tree itself is never modified. A technique
"kills" a mutant when its verdict on the mutant differs from its verdict on the unmutated
model (new property violations, or a crash of the model).
"""

from __future__ import annotations

import ast
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

REFERENCE = Path(__file__).resolve().parents[2] / "reference"

# Comparisons flipped to their negation: the classic boundary/guard mutation.
_FLIP: dict[type, type] = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
                           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}


@attrs.frozen
class Site:
    """One place an operator applies: file relative to reference/, line, column, operator."""

    file: str
    line: int
    col: int
    operator: str

    @property
    def name(self) -> str:
        """Stable mutant id, e.g. ``broker/checkpoint.py:57:12:flip-compare``."""
        return f"{self.file}:{self.line}:{self.col}:{self.operator}"


def _is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1 and type(node.value) is int


def _call_name(node: ast.AST) -> str | None:
    """``f`` of ``f(...)`` or ``x.f(...)``."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


# drop-call: statements whose loss drops an ack, a commit or a checkpoint on the floor.
DROPPABLE_CALLS = frozenset({"commit_offset", "update_offset", "add_ack", "put_ack_message", "put_ck_message",
                             "put_revive_message", "remove_message", "persist", "persist_all"})
# swap-bit: the bitmap index argument of these calls is swapped with its neighbour (i ^ 1).
BITMAP_CALLS = frozenset({"set_bit", "get_bit"})
# skip-lock: a lock attempt that always succeeds (mutual exclusion gone).
LOCK_CALLS = frozenset({"try_lock", "lock", "try_lock_batch"})


class _Mutator(ast.NodeTransformer):
    """Finds (``target`` None) or applies (``target`` set) mutations of one operator."""

    def __init__(self, operator: str, target: tuple[int, int] | None) -> None:
        self.operator = operator
        self.target = target
        self.sites: list[tuple[int, int]] = []

    def _hit(self, node: ast.AST) -> bool:
        where = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
        if self.target is None:
            self.sites.append(where)
            return False
        return where == self.target

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if self.operator == "flip-compare" and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            if self._hit(node):
                node.ops = [_FLIP[type(node.ops[0])]()]
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        # off-by-one: `x + 1` / `x - 1` lose their 1 (offsets, counts, next-offset arithmetic).
        if self.operator == "off-by-one" and isinstance(node.op, (ast.Add, ast.Sub)) and _is_one(node.right):
            if self._hit(node):
                return node.left
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        self.generic_visit(node)
        if self.operator == "drop-call" and _call_name(node.value) in DROPPABLE_CALLS:
            if self._hit(node):
                return ast.copy_location(ast.Pass(), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = _call_name(node)
        if self.operator == "swap-bit" and name in BITMAP_CALLS and len(node.args) >= 2:
            if self._hit(node):
                node.args[1] = ast.BinOp(left=node.args[1], op=ast.BitXor(), right=ast.Constant(1))
        if self.operator == "skip-lock" and name in LOCK_CALLS and not isinstance(node.func, ast.Name):
            if self._hit(node):
                return ast.copy_location(ast.Constant(True), node)
        return node


OPERATORS = ("flip-compare", "off-by-one", "drop-call", "swap-bit", "skip-lock")


def sites(operators: tuple[str, ...], files: tuple[str, ...]) -> list[Site]:
    """Every mutation site of ``operators`` in ``files`` (paths relative to reference/), in
    file, line, column order."""
    found: list[Site] = []
    for rel in sorted(files):
        tree = ast.parse((REFERENCE / rel).read_text())
        for operator in operators:
            mutator = _Mutator(operator, None)
            mutator.visit(tree)
            found += [Site(rel, line, col, operator) for line, col in mutator.sites]
    return sorted(found, key=lambda s: (s.file, s.line, s.col, s.operator))


def mutated_source(site: Site) -> str:
    """The source of ``site.file`` with exactly that mutation applied."""
    tree = ast.parse((REFERENCE / site.file).read_text())
    mutator = _Mutator(site.operator, (site.line, site.col))
    tree = ast.fix_missing_locations(mutator.visit(tree))
    return ast.unparse(tree)


# Each technique runs in a subprocess whose sys.path puts the mutated reference/ copy first and
# prints {"verdict": ..., "modules": [...]}: its verdict, and the reference modules it loaded
# (a mutant in a file a technique never loads cannot be killed by it: "n/a").
_PRELUDE = """
import json, sys
sys.path.insert(0, sys.argv[1])
def _finish(verdict):
    mods = sorted(m for m in sys.modules if m.startswith("reference."))
    print(json.dumps({"verdict": verdict, "modules": mods}, sort_keys=True))
"""

_SIMULATE = _PRELUDE + """
from popverify.fuzz.rows import swarm_config
from popverify.sim.scenario import run_scenario
from reference.common.profile import PROFILE_NAMES
mode, seeds, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
out = {}
for profile in PROFILE_NAMES:
    for seed in range(seeds):
        try:
            # The runs of a campaign's first round (popverify/fuzz/plan.py): seed s under its
            # swarm configuration, features and faults varying by seed.
            r = run_scenario(profile, seed, steps, mode=mode, config=swarm_config(seed, mode))
            out[f"{profile}/{seed}"] = sorted({v.property_id for v in r.violations})
        except Exception as err:
            out[f"{profile}/{seed}"] = ["crash:" + type(err).__name__]
_finish(out)
"""

# Hand-chosen configurations aimed at the code swarm runs rarely judge (popverify/verify/targeted.py).
_TARGETED = _PRELUDE + """
from popverify.verify.targeted import run_all
try:
    out = run_all()
except Exception as err:  # the verdict of a run that raised is the exception's type
    out = {"crash": type(err).__name__}
_finish(out)
"""

_Z3 = _PRELUDE + """
from proofs.catalog import ALL
out = {}
for name, proof in ALL.items():
    if proof.cross_check is None:
        continue
    try:
        proof.cross_check(200)
        out[name] = "agrees"
    except Exception as err:  # an AssertionError names the disagreeing input
        out[name] = "disagrees:" + type(err).__name__
_finish(out)
"""

_STATEFUL = _PRELUDE + """
import pytest
sys.path.insert(0, sys.argv[1])
# The machines on the small "mutation" profile; the tests that run a hand-written broken
# variant on purpose ("catches") say nothing about this mutant and are left out.
code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--hypothesis-profile=mutation", "-k", "not catches",
                    sys.argv[2]])
_finish({"pytest": int(code)})
"""

# The model's unit tests (tests/broker, tests/client: behaviour pinned to the Java source line
# by line) and the attribution tests (tests/findings/test_attribution.py, not the slow campaign:
# they judge the mechanism-switch code only attribution's re-runs execute). Every reference module is imported from the mutated tree first, so pytest's own
# sys.path changes cannot bring the unmutated copy back.
_UNIT = _PRELUDE + """
import importlib, pkgutil
import reference
for info in pkgutil.walk_packages(reference.__path__, "reference."):
    importlib.import_module(info.name)
import pytest
code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "-m", "not slow", *sys.argv[2:]])
_finish({"pytest": int(code)})
"""

_CONFORMANCE = _PRELUDE + """
from popverify.conformance import run_checks
out = {}
for check in run_checks(cases=int(sys.argv[2]), seed=0):
    out[f"{check.name}/{check.version}"] = check.disagreements - check.explained
_finish(out)
"""

_TRACE = _PRELUDE + """
import tempfile
from pathlib import Path
from popverify.tlc.trace_validation import REFERENCE_SEEDS, reference_trace, validate_trace
out = {}
with tempfile.TemporaryDirectory() as tmp:
    for profile, seeds in sorted(REFERENCE_SEEDS.items()):
        for seed in seeds[:int(sys.argv[2])]:
            try:
                result = validate_trace(reference_trace(profile, seed, Path(tmp)))
                out[f"{profile}/{seed}"] = "valid" if result.valid else "invalid"
            except Exception as err:
                out[f"{profile}/{seed}"] = "crash:" + type(err).__name__
_finish(out)
"""


@attrs.frozen
class Technique:
    """How one technique judges a model tree: a script and its arguments."""

    name: str
    script: str
    args: Callable[[int, int], list[str]]   # (seeds, steps) → script arguments


TECHNIQUES: dict[str, Technique] = {t.name: t for t in (
    Technique("simulation", _SIMULATE, lambda seeds, steps: ["pop", str(seeds), str(steps)]),
    Technique("push", _SIMULATE, lambda seeds, steps: ["push", str(seeds), str(steps)]),
    Technique("z3", _Z3, lambda seeds, steps: []),
    Technique("targeted", _TARGETED, lambda seeds, steps: []),
    Technique("unit", _UNIT, lambda seeds, steps: [str(Path(__file__).resolve().parents[2] / "tests" / d)
                                                   for d in ("broker", "client", "findings/test_attribution.py")]),
    Technique("stateful", _STATEFUL, lambda seeds, steps: [str(Path(__file__).resolve().parents[2] / "stateful_tests")]),
    Technique("conformance", _CONFORMANCE, lambda seeds, steps: [str(50 * seeds)]),
    # TLC replays the reference push runs (spec/trace-validation.md); a mutant is killed when
    # its runs stop being behaviours of PushConsumerOffsets.
    Technique("trace", _TRACE, lambda seeds, steps: [str(seeds)]),
)}
DEFAULT_TECHNIQUES = ("simulation", "push", "z3", "targeted")


def judge(technique: Technique, root: Path, seeds: int, steps: int, timeout: float = 600) -> dict[str, Any]:
    """Run ``technique`` on the model tree under ``root``: {"verdict", "modules"}; a crash on
    import or a time-out is itself a verdict (a kill when the baseline ran)."""
    cmd = [sys.executable, "-c", technique.script, str(root), *technique.args(seeds, steps)]
    try:
        from popverify.tools import run_child
        proc = run_child(cmd, timeout=timeout, cwd=REFERENCE.parent)  # ends with popverify (SIGINT/SIGTERM)
    except subprocess.TimeoutExpired:  # a mutant that loops forever is caught by any run bound
        return {"verdict": "timeout", "modules": []}
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    try:
        return json.loads(last)
    except ValueError:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1][:160]
        return {"verdict": f"crash: {tail}", "modules": []}


def _simulate(root: Path, seeds: int, steps: int, timeout: float = 600) -> dict[str, list[str]]:
    """The POP simulation verdict of a model tree (kept for tests and quick checks)."""
    return judge(TECHNIQUES["simulation"], root, seeds, steps, timeout)["verdict"]


@contextlib.contextmanager
def _mutant_tree(site: Site) -> Iterator[Path]:
    """A temporary directory holding a copy of reference/ with ``site`` applied."""
    with tempfile.TemporaryDirectory(prefix="popverify-mutant-") as tmp:
        root = Path(tmp)
        shutil.copytree(REFERENCE, root / "reference", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "reference" / site.file).write_text(mutated_source(site))
        yield root


def _module_of(file: str) -> str:
    return "reference." + file.removesuffix(".py").replace("/", ".")


def _kill_reason(verdict: Any, baseline: Any) -> list[str]:
    """Why a verdict differs from the baseline: new violations by property, vanished ones
    (``lost:``, the model no longer shows a defect the Java code has), or a changed outcome."""
    if verdict == baseline:
        return []
    if not (isinstance(verdict, dict) and isinstance(baseline, dict)):
        return [str(verdict)[:80]]
    reasons: set[str] = set()
    for key in sorted(set(verdict) | set(baseline)):
        now, before = verdict.get(key), baseline.get(key)
        if now == before:
            continue
        if isinstance(now, list) and isinstance(before, list):
            reasons |= {str(p) for p in set(now) - set(before)} | {f"lost:{p}" for p in set(before) - set(now)}
        else:
            reasons.add(f"{key}={now}")
    return sorted(reasons) or ["verdict-change"]


def sample_per_operator(found: list[Site], per_operator: int) -> list[Site]:
    """At most ``per_operator`` sites of each operator, evenly spaced over its sites in file
    order (deterministic), back in file order."""
    if per_operator < 1:
        raise ValueError("per_operator must be >= 1")
    picked: list[Site] = []
    for operator in OPERATORS:
        mine = [s for s in found if s.operator == operator]
        if len(mine) <= per_operator:
            picked += mine
        else:
            picked += [mine[i * len(mine) // per_operator] for i in range(per_operator)]
    return sorted(picked, key=lambda s: (s.file, s.line, s.col, s.operator))


def run(operators: tuple[str, ...], files: tuple[str, ...], max_mutants: int, seeds: int, steps: int,
        progress: Callable[[str], None] = lambda _: None,
        techniques: tuple[str, ...] = DEFAULT_TECHNIQUES, per_operator: int | None = None,
        only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Mutation score per technique over the first ``max_mutants`` sites (with
    ``per_operator``, first a sample of at most that many sites of each operator, evenly
    spaced in file order, so a slow run still sees every operator).

    A technique kills a mutant when its verdict on the mutant differs from its verdict on the
    unmutated model; it is "n/a" for a mutant in a file it never loads.
    """
    unknown = set(operators) - set(OPERATORS)
    if unknown:
        raise ValueError(f"unknown operator(s) {sorted(unknown)}; known: {', '.join(OPERATORS)}")
    unknown = set(techniques) - set(TECHNIQUES)
    if unknown:
        raise ValueError(f"unknown technique(s) {sorted(unknown)}; known: {', '.join(TECHNIQUES)}")
    chosen = sites(operators, files)
    if only is not None:  # re-judge named mutants (e.g. the survivors of an earlier run)
        unknown = set(only) - {s.name for s in chosen}
        if unknown:
            raise ValueError(f"no such mutation site(s) among the operators and files: {', '.join(sorted(unknown))}")
        chosen = [s for s in chosen if s.name in set(only)]
    if per_operator is not None:
        chosen = sample_per_operator(chosen, per_operator)
    chosen = chosen[:max_mutants]
    if not chosen:
        raise ValueError(f"operators {', '.join(operators)} find no site in {', '.join(sorted(files))}")
    baselines: dict[str, dict[str, Any]] = {}
    limits: dict[str, float] = {}
    unavailable: dict[str, str] = {}
    for name in techniques:
        start = time.perf_counter()
        base = judge(TECHNIQUES[name], REFERENCE.parent, seeds, steps)
        if not base["modules"]:  # nothing to compare mutants against
            unavailable[name] = f"does not run on the unmutated model: {base['verdict']}"
            continue
        baselines[name] = base
        # A mutant taking far longer than the real model is hanging (e.g. a loop guard flipped).
        limits[name] = max(30.0, 20 * (time.perf_counter() - start))
        progress(f"baseline {name}: {time.perf_counter() - start:.1f}s, {len(base['modules'])} reference modules")
    mutants = []
    for i, site in enumerate(chosen):
        entry: dict[str, Any] = {"mutant": site.name, "techniques": {}}
        with _mutant_tree(site) as root:
            for name, base in baselines.items():
                if _module_of(site.file) not in base["modules"]:
                    entry["techniques"][name] = {"result": "n/a"}
                    continue
                start = time.perf_counter()
                verdict = judge(TECHNIQUES[name], root, seeds, steps, limits[name])
                reasons = _kill_reason(verdict["verdict"], base["verdict"])
                entry["techniques"][name] = {"result": "killed" if reasons else "survived", "by": reasons,
                                             "seconds": round(time.perf_counter() - start, 2)}
        entry["killed"] = any(t["result"] == "killed" for t in entry["techniques"].values())
        entry["by"] = sorted({f"{n}:{r}" for n, t in entry["techniques"].items() for r in t.get("by", [])})
        mutants.append(entry)
        progress(f"mutant {i + 1}/{len(chosen)} {site.name}: {'killed' if entry['killed'] else 'survived'}")
    summary: dict[str, Any] = {}
    for name in baselines:
        judged = [m["techniques"][name] for m in mutants if m["techniques"][name]["result"] != "n/a"]
        killed = sum(t["result"] == "killed" for t in judged)
        seconds = [t["seconds"] for t in judged]
        summary[name] = {"killed": killed, "total": len(judged), "score": round(killed / len(judged), 3) if judged else None,
                         "mean_seconds": round(sum(seconds) / len(seconds), 2) if seconds else None}
    for name, why in unavailable.items():
        summary[name] = {"unavailable": why}
    killed = sum(m["killed"] for m in mutants)
    summary["any"] = {"killed": killed, "total": len(mutants), "score": round(killed / len(mutants), 3)}
    return {"operators": list(operators), "files": sorted(files), "seeds": seeds, "steps": steps,
            "per_operator": per_operator,
            "by_operator": {op: {"killed": sum(m["killed"] for m in mutants if m["mutant"].endswith(":" + op)),
                                 "total": sum(m["mutant"].endswith(":" + op) for m in mutants)} for op in operators},
            "techniques": summary, "mutants": mutants}
