"""Layers (spec/architecture.md): every "never" arrow of spec/architecture.json holds over the
real import graph, lazy imports inside functions and TYPE_CHECKING imports included."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec" / "architecture.json"


def load_spec(root: Path = ROOT) -> dict:
    """spec/architecture.json of ``root``."""
    return json.loads((root / "spec" / "architecture.json").read_text(encoding="utf-8"))


def part_of(rel: str, parts: dict[str, dict]) -> str | None:
    """The part whose folder (or file) holds ``rel`` (a POSIX path below the root); the longest
    match wins, so a file listed on its own beats the folder around it."""
    best, best_len = None, -1
    for name, part in parts.items():
        for prefix in part["is"]:
            hit = rel == prefix if prefix.endswith(".py") else rel.startswith(prefix)
            if hit and len(prefix) > best_len:
                best, best_len = name, len(prefix)
    return best


def _module_file(root: Path, dotted: str) -> str | None:
    """The file (relative POSIX path) a dotted module name denotes below ``root``, if any."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.relative_to(root).as_posix()
    return None


def imported_files(root: Path, path: Path) -> list[str]:
    """The project files ``path`` imports (every import statement in the file, wherever it
    stands); ``from pkg import sub`` counts the submodule ``pkg/sub.py`` when it exists."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            targets = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        else:
            continue
        for dotted in targets:
            found = _module_file(root, dotted)
            if found is not None:
                out.append(found)
                if isinstance(node, ast.ImportFrom):
                    break  # the most specific module named by the statement
    return out


def layer_violations(root: Path, spec: dict) -> dict[str, list[str]]:
    """``"From -> To: reason"`` -> the ``file imports file`` pairs that break that never-arrow."""
    parts = spec["parts"]
    found: dict[str, list[str]] = {}
    sources = sorted(p for part in parts.values() for prefix in part["is"]
                     for p in ([root / prefix] if prefix.endswith(".py") else (root / prefix).rglob("*.py")))
    for path in sources:
        rel = path.relative_to(root).as_posix()
        src_part = part_of(rel, parts)
        for target in imported_files(root, path):
            dst_part = part_of(target, parts)
            for rule in spec["never"]:
                if (src_part, dst_part) == (rule[0], rule[1]):
                    found.setdefault(f"{rule[0]} -> {rule[1]}: {rule[2]}", []).append(f"{rel} imports {target}")
    return found


def test_every_part_names_existing_folders() -> None:
    spec = load_spec()
    missing = [p for part in spec["parts"].values() for p in part["is"] if not (ROOT / p).exists()]
    assert missing == []
    named = {n for rule in spec["never"] + spec["arrows"] for n in rule[:2]}
    assert named <= set(spec["parts"])
    # the campaign planner is Fuzz (issue 17): the engine may not import it
    assert "popverify/fuzz/" in spec["parts"]["Fuzz"]["is"]
    assert ["Sim", "Fuzz"] in [rule[:2] for rule in spec["never"]]


def test_no_import_breaks_a_never_arrow() -> None:
    """Common imports nothing of Broker or Client, Client nothing of Broker, and the rest of
    the never-arrows (Broker/Client -> Sim, Sim -> Fuzz, Checker/Trace -> Sim, ...)."""
    assert layer_violations(ROOT, load_spec()) == {}


@pytest.mark.parametrize("bad_import, rule", [
    ("from reference.broker.store import GetMessageStatus", "Common -> Broker"),
    ("def f():\n    from reference.client import allocation", "Common -> Client"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import reference.broker.broker", "Common -> Broker"),
])
def test_a_bad_import_in_a_copy_of_the_tree_is_caught(tmp_path: Path, bad_import: str, rule: str) -> None:
    """The check can fail: a copy of reference/ and spec/architecture.json with one bad import
    added to reference/common shows exactly that import, lazy or typing-only alike."""
    shutil.copytree(ROOT / "reference", tmp_path / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "spec").mkdir()
    shutil.copy(SPEC, tmp_path / "spec" / "architecture.json")
    spec = load_spec(tmp_path)
    spec["parts"] = {k: v for k, v in spec["parts"].items() if all((tmp_path / p).exists() for p in v["is"])}
    assert layer_violations(tmp_path, spec) == {}
    (tmp_path / "reference" / "common" / "bad.py").write_text(bad_import + "\n", encoding="utf-8")
    found = layer_violations(tmp_path, spec)
    assert [k.split(":")[0] for k in found] == [rule]
    assert all(v.startswith("reference/common/bad.py imports reference/") for vs in found.values() for v in vs)


def test_client_importing_the_broker_is_caught(tmp_path: Path) -> None:
    """Client -> Broker, with a submodule named through its package (``from pkg import mod``)."""
    shutil.copytree(ROOT / "reference", tmp_path / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    spec = load_spec()
    spec["parts"] = {k: v for k, v in spec["parts"].items() if all((tmp_path / p).exists() for p in v["is"])}
    (tmp_path / "reference" / "client" / "bad.py").write_text("from reference.broker import keys\n", encoding="utf-8")
    assert layer_violations(tmp_path, spec) == {
        "Client -> Broker: client meets broker only via records in Common": [
            "reference/client/bad.py imports reference/broker/keys.py"]}
