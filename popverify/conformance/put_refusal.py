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
from reference.broker.put_failure import BUFFER_SITES, FLUSH_TIMEOUT_SITES, PROCESSOR_SITES

# The text of PopReviveService#reviveRetry's exception (5.0.0 and 5.5.0).
REVIVE_ERROR = "revive error"
# revive6: 5.0.0 Message#getDeliverTimeMs's exception for a message without TIMER_DELIVER_MS
DELIVER_TIME_ERROR = "NumberFormatException"


def model_refusals(broker: Broker) -> dict[str, Any]:
    """The model's ``putRefusals`` state entry."""
    f = broker.put_faults
    return {"pending": f.pending, "retryPending": f.retry_pending, "failed": list(f.failed),
            **armed(broker)}


def java_refusals(state: dict[str, Any]) -> dict[str, Any]:
    """The harness state's ``putRefusals`` in model_refusals' form (absent: an old harness)."""
    r = state.get("putRefusals")
    if not isinstance(r, dict):
        return {"pending": "<absent>", "retryPending": "<absent>", "failed": "<absent>"}
    return {"pending": r.get("pending"), "retryPending": r.get("retryPending"), "failed": list(r.get("failed") or []),
            **armed_java(r)}


# PutRefusal#state's keys named only while they hold something (older answers keep their form)
_ARMED_KEYS = ("processorSite", "processorPending", "timeoutSite", "timeoutPending", "timedOut", "fileEnd")


def armed(broker: Broker) -> dict[str, Any]:
    """The processor site still armed (``processor_put_fail``), the flush-timeout site still
    armed (``flush_timeout``) with their counts, the sites answered FLUSH_DISK_TIMEOUT so far and
    the revive retry refusals answered with the END_OF_FILE append result; each only when it
    holds something (the harness names them only then)."""
    f = broker.put_faults
    out = {"processorSite": f.processor_site, "processorPending": f.processor_pending} if f.processor_pending else {}
    if f.timeout_pending:
        out |= {"timeoutSite": f.timeout_site, "timeoutPending": f.timeout_pending}
    out |= {"timedOut": list(f.timed_out)} if f.timed_out else {}
    return out | ({"fileEnd": f.file_end} if f.file_end else {})  # revive5: END_OF_FILE refusals


def armed_java(answer: dict[str, Any]) -> dict[str, Any]:
    """armed's form of a harness answer carrying PutRefusal#state (an error as is)."""
    if "error" in answer:
        return {"error": answer["error"]}
    return {k: answer[k] for k in _ARMED_KEYS if k in answer}


def revive_threw(broker: Broker, failed_before: int, too_big_before: int = 0, read_failed_before: int = 0) -> bool:
    """Whether the model's revive round just ended in 5.0.0's exception: a revive-retry put
    was refused since ``failed_before`` (or, revive4, the store refused a copy for its
    properties since ``too_big_before``: copies_too_big) and the profile does not re-put the CK;
    or (revive6) the round threw reading a revive-topic message without a deliver time since
    ``read_failed_before`` (rounds_failed_reading)."""
    new = broker.put_faults.failed[failed_before:]
    refused = "revive_retry" in new or copies_too_big(broker) > too_big_before
    return (refused and not broker.config.revive_retry_failure_reputs_ck) or \
        rounds_failed_reading(broker) > read_failed_before


def rounds_failed_reading(broker: Broker) -> int:
    """Revive rounds of the model that threw at a message without a deliver time (revive6,
    BrokerConfig.deliver_time_answers_zero false: 5.0.0's NumberFormatException)."""
    return sum(s.rounds_failed_reading for s in broker.revive_services)


def copies_too_big(broker: Broker) -> int:
    """Retry copies the model's revive services saw refused for their properties string."""
    return sum(s.copies_too_big for s in broker.revive_services)


def java_revive_threw(answer: dict[str, Any]) -> bool:
    """Whether the harness's ``revive`` answer is the round's exception (reviveRetry's, or
    revive6's getDeliverTimeMs on 5.0.0)."""
    error = answer.get("error")
    return isinstance(error, str) and (REVIVE_ERROR in error or DELIVER_TIME_ERROR in error)


def arm_request(count: int) -> dict[str, Any]:
    """The harness request of a ``store_put_fail`` step."""
    return {"op": "refusePuts", "count": count}


def arm_processor_request(site: int, count: int) -> dict[str, Any]:
    """The harness request of a ``processor_put_fail`` step (site: put_failure.PROCESSOR_SITES' index)."""
    return {"op": "refuseProcessorPuts", "site": PROCESSOR_SITES[site], "count": count}


def arm_buffer_request(site: int, count: int) -> dict[str, Any]:
    """The harness request of a ``buffer_put_fail`` step (site: put_failure.BUFFER_SITES' index)."""
    return {"op": "refuseProcessorPuts", "site": BUFFER_SITES[site], "count": count}


def flush_timeout_request(site: int, count: int) -> dict[str, Any]:
    """The harness request of a ``flush_timeout`` step (site: put_failure.FLUSH_TIMEOUT_SITES' index)."""
    return {"op": "flushTimeouts", "site": FLUSH_TIMEOUT_SITES[site], "count": count}


def arm_retry_request(count: int) -> dict[str, Any]:
    """The harness request of a ``revive_put_fail`` step."""
    return {"op": "refuseRetryPuts", "count": count}
