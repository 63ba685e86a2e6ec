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


class _Mutator(ast.NodeTransformer):
    """Finds (``target`` None) or applies (``target`` set) mutations of one operator."""

    def __init__(self, operator: str, target: tuple[int, int] | None) -> None:
        self.operator = operator
        self.target = target
        self.sites: list[tuple[int, int]] = []

    def _hit(self, node: ast.expr) -> bool:
        where = (node.lineno, node.col_offset)
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


OPERATORS = ("flip-compare", "off-by-one")


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


# Runs inside a subprocess whose sys.path puts the mutated reference/ copy first.
_SIMULATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from popverify.sim.scenario import FAULTS, ScenarioConfig, run_scenario
from reference.common.javalang import JavaRandom
seeds, steps = int(sys.argv[2]), int(sys.argv[3])
out = {}
for profile in ("v5.0", "develop"):
    for seed in range(seeds):
        try:
            # The swarm draw of the verify campaign: features (buffer merge, ...) and faults vary.
            config = ScenarioConfig.draw(JavaRandom(seed), faults=FAULTS if seed % 2 else ())
            r = run_scenario(profile, seed, steps, config=config)
            out[f"{profile}/{seed}"] = sorted({v.property_id for v in r.violations})
        except Exception as err:
            out[f"{profile}/{seed}"] = ["crash:" + type(err).__name__]
print(json.dumps(out, sort_keys=True))
"""


def _simulate(root: Path, seeds: int, steps: int, timeout: float = 600) -> dict[str, list[str]]:
    try:
        proc = subprocess.run([sys.executable, "-c", _SIMULATE, str(root), str(seeds), str(steps)],
                              capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:  # a mutant that loops forever is caught by any run bound
        return {"timeout": ["timeout"]}
    if proc.returncode != 0:  # the mutant broke import itself: a crash is a kill
        return {"import": ["crash:" + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]]}
    return json.loads(proc.stdout)


@contextlib.contextmanager
def _mutant_tree(site: Site) -> Iterator[Path]:
    """A temporary directory holding a copy of reference/ with ``site`` applied."""
    with tempfile.TemporaryDirectory(prefix="popverify-mutant-") as tmp:
        root = Path(tmp)
        shutil.copytree(REFERENCE, root / "reference", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "reference" / site.file).write_text(mutated_source(site))
        yield root


def run(operators: tuple[str, ...], files: tuple[str, ...], max_mutants: int, seeds: int, steps: int,
        progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Mutation score of the simulation checker over the first ``max_mutants`` sites.

    Techniques other than simulation are reported unavailable: they are not wired to a
    mutated model copy yet.
    """
    unknown = set(operators) - set(OPERATORS)
    if unknown:
        raise ValueError(f"unknown operator(s) {sorted(unknown)}; known: {', '.join(OPERATORS)}")
    chosen = sites(operators, files)[:max_mutants]
    if not chosen:
        raise ValueError(f"operators {', '.join(operators)} find no site in {', '.join(sorted(files))}")
    start = time.perf_counter()
    baseline = _simulate(REFERENCE.parent, seeds, steps)
    if "import" in baseline or "timeout" in baseline:  # nothing to compare mutants against
        raise ValueError(f"the unmutated model does not run: {baseline}")
    # A mutant taking far longer than the real model is hanging (e.g. a loop guard flipped).
    limit = max(20.0, 20 * (time.perf_counter() - start))
    mutants = []
    for i, site in enumerate(chosen):
        start = time.perf_counter()
        with _mutant_tree(site) as root:
            verdict = _simulate(root, seeds, steps, limit)
        differing = sorted(k for k in verdict if verdict[k] != baseline.get(k))
        now = {p for k in differing for p in verdict[k]}
        before = {p for k in differing for p in baseline.get(k, [])}
        # New violations name the property that caught it; a vanished expected violation is
        # a kill too (the model no longer shows a defect the Java code has).
        killed_by = sorted(now - before) + [f"lost:{p}" for p in sorted(before - now)]
        mutants.append({"mutant": site.name, "killed": bool(differing), "by": killed_by or (["verdict-change"] if differing else []),
                        "seconds": round(time.perf_counter() - start, 2)})
        progress(f"mutant {i + 1}/{len(chosen)} {site.name}: {'killed' if differing else 'survived'}")
    killed = sum(m["killed"] for m in mutants)
    return {"operators": list(operators), "files": sorted(files), "seeds": seeds, "steps": steps,
            "techniques": {"simulation": {"killed": killed, "total": len(mutants),
                                          "score": round(killed / len(mutants), 3)},
                           "stateful": "unavailable", "z3": "unavailable", "conformance": "unavailable"},
            "mutants": mutants}
