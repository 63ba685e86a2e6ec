"""What each profile is expected to show (spec/expectations.json).

Per property, a status: ``holds`` (a violation is a failure of the model or the tool),
``holds-fault-free`` (expected to hold in runs where no fault fired; under faults a violation
is a finding), ``violated`` (a known defect of that RocketMQ code, with its counterexample in
spec/), ``unknown`` (not settled yet; violations are findings).

Per known finding, the properties it is expected to violate on that profile. A violation is
judged by its root-cause signature (popverify/findings/attribution.py): it is expected only
when a finding that explains it is expected on the profile for that property; an
``unexplained`` violation, or a MODEL-ERROR, is unexpected on every property.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from popverify.findings.attribution import Signature

SPEC_FILE = Path(__file__).resolve().parent.parent.parent / "spec" / "expectations.json"
STATUSES = ("holds", "holds-fault-free", "violated", "unknown")


@functools.cache
def _data() -> dict:
    return json.loads(SPEC_FILE.read_text(encoding="utf-8"))


@functools.cache
def _table() -> dict[str, dict[str, str]]:
    return {profile: {pid: entry["status"] for pid, entry in props.items()}
            for profile, props in _data()["profiles"].items()}


def expected(profile: str, property_id: str) -> str:
    """The expectation status of ``property_id`` on ``profile`` ("unknown" if not listed)."""
    return _table().get(profile, {}).get(property_id, "unknown")


def expected_findings(profile: str) -> dict[str, tuple[str, ...]]:
    """The known findings expected on ``profile``, each with the properties it may violate."""
    return {fid: tuple(entry["properties"]) for fid, entry in _data().get("findings", {}).get(profile, {}).items()}


def expected_signature(profile: str, signature: "Signature") -> bool:
    """True when some finding of ``signature`` is expected on ``profile`` for its property
    (every one, for a joint signature: all of them are needed to explain it)."""
    table = expected_findings(profile)
    combine = all if signature.joint else any
    return bool(signature.findings) and combine(signature.property_id in table.get(fid, ())
                                                for fid in signature.findings)


def is_unexpected(profile: str, property_id: str, faults_fired: int, signature: "Signature | None" = None) -> bool:
    """True when a violation of ``property_id`` contradicts spec/expectations.json.

    With its ``signature``, only an expected explained signature is expected; without one,
    the per-property status decides (tools that do not attribute).
    """
    if property_id == "MODEL-ERROR":
        return True
    if signature is not None:
        return not expected_signature(profile, signature)
    status = expected(profile, property_id)
    return status == "holds" or (status == "holds-fault-free" and faults_fired == 0)
