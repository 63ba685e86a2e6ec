"""The POP replay of retention and topic deletion (popverify/conformance/confirm.py).

Maps the model's ``expire``, ``expire_commit_log``, ``clean_consume_queue`` and
``delete_recreate`` to the lockstep harness's RetentionOps requests (spec/conformance.md
"Retention and topic deletion"), and feeds the Java-side checker the same excusals the model's
checker received (the model's events of the step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from popverify.checker.pop import PopChecker
from popverify.sim.retention import expire_files
from popverify.trace.schedule import Action
from reference.common import response_code as rc

KINDS = frozenset({"expire", "expire_commit_log", "clean_consume_queue", "delete_recreate"})

Plan = tuple[dict[str, Any], list[dict[str, Any]], Callable[[list[dict[str, Any]]], dict[str, Any]]]


def pre(driver: Any, action: Action) -> dict[str, Any]:
    """What the step will ask Java, read from the model before it applies the step."""
    store = driver.broker.store
    out: dict[str, Any] = {"oldest_file": store.oldest_commit_log_file(), "cleaned": store.last_cleaned_file()}
    if action.kind == "expire":
        out["files"] = expire_files(driver.world, action.args[0], action.args[1])
    elif action.kind == "expire_commit_log":
        out["files"] = action.args[0]
    return out


def _excuse(java_checker: PopChecker, events: list[dict[str, Any]]) -> None:
    for ev in events:
        if ev["type"] == "expire":
            java_checker.on_expire(ev["queue"], ev["below"])
        elif ev["type"] == "retention_lost":
            java_checker.on_retention_lost(ev["uniqs"])


def _error(a: dict[str, Any]) -> dict[str, Any] | None:
    return {"error": a["error"]} if "error" in a else None


def plan(driver: Any, java_checker: PopChecker, action: Action, before: dict[str, Any], topic: str,
         queues: int) -> Plan:
    """(model observation, Java requests, answers -> Java observation) of an applied step."""
    kind, store = action.kind, driver.broker.store
    java_checker.on_fault(kind)
    if kind == "delete_recreate":
        java_checker.on_delete_topic()
        model_obs = {"delete": rc.SUCCESS, "create": rc.SUCCESS}
        # an orderly configuration's persist between them (PopWorld#delete_recreate)
        persist = [{"op": "persistOrderInfo"}] if driver.config.pop_orderly else []
        requests = [{"op": "deleteTopic", "topic": topic}, *persist,
                    {"op": "createTopic", "topic": topic, "queues": queues}]
        return (model_obs, requests, lambda a: next((e for e in map(_error, a) if e), None)
                or {"delete": a[0]["code"], "create": a[-1]["code"]})
    _excuse(java_checker, driver.events)
    deleted = store.oldest_commit_log_file() - before["oldest_file"]  # destroyed, not only shut down
    requests: list[dict[str, Any]] = []
    model_obs: dict[str, Any] = {}
    if kind in ("expire", "expire_commit_log") and before["files"]:
        requests.append({"op": "deleteCommitLogFiles", "files": before["files"]})
        model_obs["deleted"] = deleted
    if kind in ("expire", "clean_consume_queue"):
        requests.append({"op": "cleanConsumeQueues"})
        model_obs["ran"] = store.last_cleaned_file() != before["cleaned"]

    def finish(answers: list[dict[str, Any]]) -> dict[str, Any]:
        obs: dict[str, Any] = {}
        for req, a in zip(requests, answers):
            if "error" in a:
                return {"error": a["error"]}
            if req["op"] == "deleteCommitLogFiles":
                obs["deleted"] = a["deleted"]
            else:
                obs["ran"] = a["ran"]
        return obs
    return model_obs, requests, finish
