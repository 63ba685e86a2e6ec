"""ConsumerFilterManager and the SQL92 expressions a heartbeat or a pull carries
(broker/filter/ConsumerFilterManager.java, filter/FilterFactory's SqlFilter, both releases alike).

A HEART_BEAT's subscriptions reach ConsumerFilterManager#register(group, subList) through the
REGISTER event (DefaultConsumerIdsChangeListener#handle: ConsumerManager#registerConsumer calls
it after every heartbeat); only a non-tag subscription whose expression compiles is kept, one
per topic and group, with the client's subVersion. PullMessageProcessor#processRequest reads it
for a pull without its own subscription (FILTER_DATA_NOT_EXIST / FILTER_DATA_NOT_LATEST).

The model compiles a small subset of SQL92: ``<property> = '<string>'`` (String#equals),
``<property> <op> <integer>``, and the same with
its right operand missing, which SqlFilter#compile refuses (a parse error). Any other
expression is outside the subset: ValueError (the model never guesses what Java would do).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import attrs

TAG = "TAG"
# a comparison of a property with an integer literal; group 3 absent: the operand is missing
_COMPARISON = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|<>|>|<|=)\s*(-?[0-9]+)?\s*$")
# store helper: a property equal to a string literal (``TAGS = 'TagA'``, the sub_sql pull's)
_STRING_EQUALS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*'([^']*)'\s*$")
SqlPredicate = Callable[[Mapping[str, str]], bool]


def is_tag_type(expression_type: str | None) -> bool:
    """ExpressionType#isTagType: TAG, empty or absent."""
    return expression_type in (None, "", TAG)


def compile_sql92(expression: str) -> SqlPredicate | None:
    """SqlFilter#compile of ``expression``: its predicate on a message's properties, or None
    where Java's parser throws. A property the message lacks makes the comparison UNKNOWN
    (null), which ExpressionMessageFilter#isMatchedByCommitLog reads as no match; a present one
    is outside the subset (Java compares its String value by rules the model does not have)."""
    eq = _STRING_EQUALS.match(expression)
    if eq is not None:
        # EqualExpression of two Strings: String#equals; a property the message lacks is null
        # (UNKNOWN, no match)
        name, literal = eq.groups()
        return lambda properties: properties.get(name) == literal
    m = _COMPARISON.match(expression)
    if m is None:
        raise ValueError(f"SQL92 expression {expression!r} is outside the model's subset")
    name, literal = m.group(1), m.group(3)
    if literal is None:
        return None  # "a >": ParseException, ConsumerFilterManager#build answers null

    def matches(properties: Mapping[str, str]) -> bool:
        if name not in properties:
            return False
        raise ValueError(f"property {name!r} present: comparing its String value is outside the model's subset")
    return matches


@attrs.define
class FilterData:
    """ConsumerFilterData: the expression, its type and the client's subVersion."""

    expression: str
    expression_type: str
    client_version: int


class ConsumerFilterManager:
    """filterDataByTopic: topic -> group -> FilterData."""

    def __init__(self) -> None:
        self._table: dict[str, dict[str, FilterData]] = {}

    def register(self, topic: str, group: str, expression: str, expression_type: str, version: int) -> None:
        """register(topic, group, expression, type, clientVersion) (5.5.0:137-158 with
        FilterDataMapByTopic#register:355-438): a tag or empty expression is not kept; a new
        one is kept when it compiles; an older or equal version changes nothing (the dead
        flag it may clear is never read by a pull); a newer one replaces a changed expression
        (dropped when the new one does not compile) or only takes the version."""
        if is_tag_type(expression_type) or not expression:
            return
        groups = self._table.setdefault(topic, {})
        old = groups.get(group)
        compiled = compile_sql92(expression)
        if old is None:
            if compiled is not None:
                groups[group] = FilterData(expression, expression_type, version)
            return
        if version <= old.client_version:
            return
        if old.expression != expression or old.expression_type != expression_type:
            if compiled is None:
                del groups[group]  # "new expression compile error, remove old"
            else:
                groups[group] = FilterData(expression, expression_type, version)
            return
        old.client_version = version

    def get(self, topic: str, group: str) -> FilterData | None:
        """get(topic, group): the group's filter data of the topic, dead or alive."""
        return self._table.get(topic, {}).get(group)
