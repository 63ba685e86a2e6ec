"""Store put failures in the lockstep replay (spec/conformance.md "Store put failures").

The ``store_put_fail`` fault arms the model's StorePutFaults (reference/broker/put_failure.py)
and, on Java, the harness's ``refusePuts`` op (PutRefusal.java): the next N puts of the
consumption path answer CREATE_MAPPED_FILE_FAILED. Both sides report ``{pending, failed}``
(the sites refused so far, in order) with every state, so a put refused on one side and not
on the other, or at another site, diverges at the step it happens.

A refused revive retry on 5.0.0 makes PopReviveService#reviveRetry throw; the harness's
``revive`` op answers that as an error (the round's revived list is lost with it), so both
sides' observation of such a round is ``{"reviveError": true}``; the retry topic and revive
offsets are still compared in the state (after a ``settle``: the throw skipped the store's
dispatch).
"""

from __future__ import annotations

from typing import Any

from reference.broker.broker import Broker

# The text of PopReviveService#reviveRetry's exception (5.0.0 and 5.5.0).
REVIVE_ERROR = "revive error"


def model_refusals(broker: Broker) -> dict[str, Any]:
    """The model's ``putRefusals`` state entry."""
    f = broker.put_faults
    return {"pending": f.pending, "retryPending": f.retry_pending, "failed": list(f.failed)}


def java_refusals(state: dict[str, Any]) -> dict[str, Any]:
    """The harness state's ``putRefusals`` in model_refusals' form (absent: an old harness)."""
    r = state.get("putRefusals")
    if not isinstance(r, dict):
        return {"pending": "<absent>", "retryPending": "<absent>", "failed": "<absent>"}
    return {"pending": r.get("pending"), "retryPending": r.get("retryPending"), "failed": list(r.get("failed") or [])}


def revive_threw(broker: Broker, failed_before: int) -> bool:
    """Whether the model's revive round just ended in 5.0.0's exception: a revive-retry put
    was refused since ``failed_before`` and the profile does not re-put the CK."""
    new = broker.put_faults.failed[failed_before:]
    return "revive_retry" in new and not broker.config.revive_retry_failure_reputs_ck


def java_revive_threw(answer: dict[str, Any]) -> bool:
    """Whether the harness's ``revive`` answer is reviveRetry's exception."""
    return isinstance(answer.get("error"), str) and REVIVE_ERROR in answer["error"]


def arm_request(count: int) -> dict[str, Any]:
    """The harness request of a ``store_put_fail`` step."""
    return {"op": "refusePuts", "count": count}


def arm_retry_request(count: int) -> dict[str, Any]:
    """The harness request of a ``revive_put_fail`` step."""
    return {"op": "refuseRetryPuts", "count": count}
