"""The domain table of a campaign (issue 17 item 3): per dimension of the input domain, its
declared range, the range the campaign's runs reached and the boundaries they hit or missed.

Computed from the rows alone (each row keeps its configuration and schedule, which hold every
value the engine drew), so a campaign resumed on another executor, or one whose rows were
written before the table existed, gets the same table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from popverify.sim.domain import DomainReach
from popverify.sim.scenario import Action, ScenarioConfig, mode_of


def domain_rows(mode: str, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The domain table of ``rows`` (campaign rows of one mode): DomainReach.rows."""
    the_mode = mode_of(mode)
    reach = DomainReach()
    reach.declare(mode, the_mode.actions)
    for row in rows:
        config = ScenarioConfig.from_json(json.loads(row["config"]))
        schedule = (Action.from_json(a) for a in json.loads(row["schedule"]))
        reach.observe_run(mode, the_mode.actions, config, schedule)
    return reach.rows()


def domain_line(domain: list[dict[str, Any]]) -> str:
    """One line: how many dimensions reached every boundary, and which did not."""
    short = [r["dimension"] for r in domain if not r["all_reached"]]
    return (f"domain: {len(domain) - len(short)}/{len(domain)} dimensions reached every boundary"
            + (f"; not: {', '.join(short)}" if short else ""))
