"""BrokerContext (reference/broker/context.py) is exactly what the processors use of the broker,
and the real Broker provides all of it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from reference.broker.broker import Broker
from reference.broker.context import BrokerContext
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom

BROKER_DIR = Path(__file__).resolve().parents[2] / "reference" / "broker"
PROCESSORS = ("pop_processor.py", "ack_processor.py", "change_invisible_processor.py")


def _context_methods() -> dict[str, object]:
    """The methods BrokerContext declares (Protocol adds dunders of its own: not members)."""
    return {n: v for n, v in vars(BrokerContext).items() if inspect.isfunction(v) and not n.startswith("_")}


def context_members() -> set[str]:
    """The attributes and methods BrokerContext declares."""
    return set(BrokerContext.__annotations__) | set(_context_methods())


def broker_uses(source: str) -> set[str]:
    """Every attribute read off a broker in ``source``: ``broker.x``, ``self.broker.x``,
    ``self._broker.x`` and names bound to those (``b = self.broker``, ``b, r = self.broker, ...``)."""
    tree = ast.parse(source)

    def is_broker(node: ast.AST, names: set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names
        return (isinstance(node, ast.Attribute) and node.attr in ("broker", "_broker")
                and isinstance(node.value, ast.Name) and node.value.id == "self")

    names = {"broker"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) else [(target, node.value)])
                names |= {t.id for t, v in pairs if isinstance(t, ast.Name) and is_broker(v, set())}
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and is_broker(node.value, names)}


def test_the_processors_use_only_the_context() -> None:
    used = {f: broker_uses((BROKER_DIR / f).read_text(encoding="utf-8")) for f in PROCESSORS}
    assert {f: sorted(u - context_members()) for f, u in used.items() if u - context_members()} == {}
    # and the context lists nothing they do not use (it is the narrow view, not a copy of Broker)
    assert context_members() == set().union(*used.values())


def test_a_processor_reaching_past_the_context_is_caught() -> None:
    source = ("class Op:\n    def step(self):\n        b, req = self.broker, self.request\n"
              "        return b.timer.pending() + b.store.get_min_offset_in_queue('t', 0)\n"
              "def f(broker):\n    return broker.revive_services\n")
    assert broker_uses(source) - context_members() == {"timer", "revive_services"}


def test_the_processors_do_not_import_the_broker_facade() -> None:
    for f in PROCESSORS:
        tree = ast.parse((BROKER_DIR / f).read_text(encoding="utf-8"))
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "reference.broker.broker" not in modules, f


def test_the_broker_provides_every_member() -> None:
    broker = Broker("v5.0", VirtualClock(), JavaRandom(1))
    missing = sorted(m for m in context_members() if not hasattr(broker, m))
    assert missing == []
    for name, method in _context_methods().items():
        declared = list(inspect.signature(method).parameters)[1:]  # without self
        assert list(inspect.signature(getattr(broker, name)).parameters) == declared, name
