"""The POP replay of an admin's group deletion and offset reset (popverify/conformance/confirm.py).

Maps the model's ``delete_group``, ``delete_group_persist``, ``reset_offset``,
``topic_shrink_persist``, ``delete_other``, ``delete_poll`` and ``delete_idle`` (popverify/sim/admin.py) to the
lockstep harness's AdminGroupOps requests (OrderInfoOps' ``persistOrderInfo``, RetentionOps'
``deleteTopic`` / ``createTopic``, and the polling loop's requests for ``delete_poll``),
compares the broker's answers, and gives the Java-side checker the same notice the model's
checker got (the step's event): what the admin skipped or re-reads on purpose is not a violation
on either side.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from popverify.checker.pop import PopChecker
from popverify.conformance.lockstep import to_model_time
from popverify.sim.admin import other_deletion
from popverify.trace.schedule import Action
from reference.broker.buffer_merge import GARBAGE_SCAN_PERIOD_MS
from reference.common import response_code as rc

KINDS = frozenset({"delete_group", "reset_offset", "delete_group_persist", "topic_shrink_persist", "delete_other"})

Plan = tuple[dict[str, Any], list[dict[str, Any]], Callable[[list[dict[str, Any]]], dict[str, Any]]]


def _code(answers: list[dict[str, Any]]) -> dict[str, Any]:
    error = next((a["error"] for a in answers if "error" in a), None)
    return {"error": error} if error is not None else {"code": answers[0]["code"]}


def plan(driver: Any, java_checker: PopChecker, action: Action) -> Plan:
    """(model observation, Java requests, answers -> Java observation) of an applied step."""
    if action.kind == "delete_other":
        # nothing of the consumed topic or group changes: no notice to the checker
        _, what, target = other_deletion(action.args[0])
        request = {"op": "deleteTopic", "topic": target} if what == "topic" else \
            {"op": "deleteGroup", "group": target, "cleanOffset": True}
        return {"code": rc.SUCCESS}, [request], _code
    if action.kind in ("delete_group", "delete_group_persist"):
        clean = bool(action.args[0])
        java_checker.on_delete_group(clean, driver.clock.now())
        # delete_group_persist: the order info's scheduled persist next (Broker#persist_order_info)
        persist = [{"op": "persistOrderInfo"}] if action.kind == "delete_group_persist" else []
        return {"code": rc.SUCCESS}, [{"op": "deleteGroup", "cleanOffset": clean}, *persist], _code
    if action.kind == "topic_shrink_persist":
        # order3: the topic updated to fewer queues, the order info persisted, the count restored
        ev = next(e for e in driver.events if e["type"] == "topic_shrink")
        java_checker.on_order_info_dropped(ev["to"], driver.clock.now())
        topic = driver.world.topic
        return {"code": rc.SUCCESS}, [{"op": "createTopic", "topic": topic, "queues": ev["to"]},
                                      {"op": "persistOrderInfo"},
                                      {"op": "createTopic", "topic": topic, "queues": driver.config.queues}], _code
    ev = next(e for e in driver.events if e["type"] == "reset_offset")
    if ev["code"] == rc.SUCCESS:
        java_checker.on_reset_offset(ev["queue"], ev["offset"], ev["before"])
    request = {"op": "resetOffset", "queueId": ev["queue"], "offset": ev["offset"],
               "serverSide": driver.broker.config.server_side_reset_offset}
    return {"code": ev["code"]}, [request], _code


def _deletion(java_checker: PopChecker, of_topic: bool, topic: str, queues: int,
              deleted_at: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A deletion's requests and those after it: the topic's (then its re-creation) or the
    group's with its offsets (at ``deleted_at``); the Java side's checker is told what the
    model's is (admin._topic_deleted: delete_recreate's fault and the deletion)."""
    if of_topic:
        java_checker.on_fault("delete_recreate")
        java_checker.on_delete_topic()
        return [{"op": "deleteTopic", "topic": topic}], [{"op": "createTopic", "topic": topic, "queues": queues}]
    java_checker.on_delete_group(True, deleted_at)
    return [{"op": "deleteGroup", "cleanOffset": True}], []


def _deletion_answer(answers: list[dict[str, Any]], created: bool,
                     between: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Java's observation of a deletion step: the first error, else the deletion's code, what
    ``between`` reads of the answers in between, and the re-creation's code (``created``)."""
    error = next((a["error"] for a in answers if "error" in a), None)
    if error is not None:
        return {"error": error}
    tail = {"create": answers[-1]["code"]} if created else {}
    return {"code": answers[0]["code"], **between(), **tail}


def delete_poll_plan(driver: Any, java_checker: PopChecker, action: Action, topic: str, queues: int,
                     polling: Plan) -> Plan:
    """delete_poll: the group's (or the topic's) deletion, then ``polling`` (the long-polling
    step's plan: the polling loop's pass, whose clean-up sees the deletion), then the topic's
    re-creation."""
    first, last = _deletion(java_checker, action.args[0], topic, queues, driver.clock.now())
    model, between, woken = polling
    created = {"create": rc.SUCCESS} if last else {}

    def java(answers: list[dict[str, Any]]) -> dict[str, Any]:
        return _deletion_answer(answers, bool(last), lambda: woken(answers[1:1 + len(between)]))
    return {"code": rc.SUCCESS, **model, **created}, first + between + last, java


def delete_idle_plan(driver: Any, java_checker: PopChecker, action: Action, topic: str, queues: int,
                     idle: list[dict[str, Any]]) -> Plan:
    """delete_idle (buffer3): the group's deletion with its offsets (or the topic's), then
    ``idle`` (the advance's requests and one merge-loop pass, whose scanGarbage is due), then the
    topic's re-creation; the answers: the deletion's code, the time after the idle, the
    creation's code."""
    first, last = _deletion(java_checker, action.args[0], topic, queues,
                            driver.clock.now() - GARBAGE_SCAN_PERIOD_MS)
    created = {"create": rc.SUCCESS} if last else {}

    def java(answers: list[dict[str, Any]]) -> dict[str, Any]:
        return _deletion_answer(answers, bool(last), lambda: {"now": to_model_time(answers[1]["now"])})
    return {"code": rc.SUCCESS, "now": driver.clock.now(), **created}, first + idle + last, java


def topic_revive_plan(driver: Any, java_checker: PopChecker, action: Action, topic: str, queues: int,
                      advance: list[dict[str, Any]], revive: Plan) -> Plan:
    """topic_revive (revive5): the topic deleted (``how`` 0), given a queue more (1) or the group
    deleted with its offsets (2), then ``advance`` (the time passing with its queue-lock
    clean-up), the timer, ``revive`` (the revive step's plan over the drawn queue) and the
    restoring createTopic (createGroup)."""
    how = action.args[0]
    if how == 1:
        first = [{"op": "createTopic", "topic": topic, "queues": queues + 1}]
        restore = [{"op": "createTopic", "topic": topic, "queues": queues}]
    else:
        first, restore = _deletion(java_checker, how == 0, topic, queues, driver.clock.now())
        restore = restore or [{"op": "createGroup"}]  # a deleted group comes back too
    model, between, revived = revive
    requests = [*first, *advance, {"op": "timer"}, *between, *restore]

    def java(answers: list[dict[str, Any]]) -> dict[str, Any]:
        # the revive's answer first: a 5.0.0 throw is its observation, not an error of the step
        at = 2 + len(advance)
        obs = revived(answers[at:at + len(between)])
        error = next((a["error"] for n, a in enumerate(answers) if "error" in a and not at <= n < at + len(between)),
                     None)
        if error is not None:
            return {"error": error}
        return {"code": answers[0]["code"], "create": answers[-1]["code"], **obs}
    return {"code": rc.SUCCESS, "create": rc.SUCCESS, **model}, requests, java
