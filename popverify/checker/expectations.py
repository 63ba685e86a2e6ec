"""Which properties each profile is expected to satisfy (spec/expectations.json).

Statuses: ``holds`` (a violation is a failure of the model or the tool), ``holds-fault-free``
(expected to hold in runs where no fault fired; under faults a violation is a finding),
``violated`` (a known defect of that RocketMQ code, with its counterexample in spec/),
``unknown`` (not settled yet; violations are findings).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

SPEC_FILE = Path(__file__).resolve().parent.parent.parent / "spec" / "expectations.json"
STATUSES = ("holds", "holds-fault-free", "violated", "unknown")


@functools.cache
def _table() -> dict[str, dict[str, str]]:
    data = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    return {profile: {pid: entry["status"] for pid, entry in props.items()}
            for profile, props in data["profiles"].items()}


def expected(profile: str, property_id: str) -> str:
    """The expectation status of ``property_id`` on ``profile`` ("unknown" if not listed)."""
    return _table().get(profile, {}).get(property_id, "unknown")


def is_unexpected(profile: str, property_id: str, faults_fired: int) -> bool:
    """True when a violation of ``property_id`` contradicts spec/expectations.json."""
    status = expected(profile, property_id)
    return status == "holds" or (status == "holds-fault-free" and faults_fired == 0)
