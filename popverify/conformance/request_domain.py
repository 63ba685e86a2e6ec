"""The lockstep replay of the request-domain actions (popverify/sim/request_domain.py).

``pop_request`` goes through the POP path of popverify/conformance/confirm.py (its raw
queueId / maxMsgNums / invisibleTime are the request's); ``ack_request`` and
``change_invisible_request`` are planned here: the Java side's consumer holds the same message
with its own receipt handle (popTime on Java's clock), altered exactly as the model altered
the model's (handle kind), the other fields as the model sent them.

Two things the harness answers differently from the remoting layer, normalised here:
- a processor that throws (a handle that does not parse, 5.5.0's ``new GetMessageResult(-1)``)
  reaches the harness as ``{"error": "<exception>"}``; NettyRemotingAbstract#processRequestCommand
  answers such a request SYSTEM_ERROR, and so does this module (harness validation errors --
  "must be in", "missing field" -- stay errors, i.e. a divergence);
- a POP answered by such an exception has no response header: compared as the zeros the
  model's PopResult carries (a client reads no header of an error response).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from popverify.sim.request_domain import CHANGE_KINDS, HANDLE_KINDS, STRAY_KINDS, stale
from reference.common import response_code as rc

if TYPE_CHECKING:
    from popverify.conformance.confirm import JavaHeld, Lockstep
    from popverify.sim.scenario import Action

KINDS = frozenset({"pop_request", "ack_request", "change_invisible_request", "orderly_stray"})
# Harness refusals of a request it could not send (spec/conformance.md "Lockstep protocol").
_HARNESS_ERRORS = ("must be in", "missing field", "unknown op")


def code_of(answer: dict[str, Any]) -> Any:
    """The response code of a harness answer; a processor exception is SYSTEM_ERROR."""
    if "error" in answer:
        error = str(answer["error"])
        return error if any(e in error for e in _HARNESS_ERRORS) else rc.SYSTEM_ERROR
    return answer.get("code")


def batch_ack_code(answer: dict[str, Any]) -> Any:
    """The response code of a harness BATCH_ACK_MESSAGE answer: 5.0.0 registers no processor for
    the code, and the remoting layer answers REQUEST_CODE_NOT_SUPPORTED
    (NettyRemotingAbstract#processRequestCommand) where the harness refuses the op."""
    if "UnsupportedOperation" in str(answer.get("error", "")):
        return rc.REQUEST_CODE_NOT_SUPPORTED
    return code_of(answer)


def java_pop_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """A POP answer with a processor exception turned into the SYSTEM_ERROR response."""
    code = code_of(answer)
    if "error" not in answer or not isinstance(code, int):
        return answer
    # the client reads no header of an error response; the model's PopResult has zeros
    return {"code": code, "parked": False, "messages": [], "popTime": 0, "invisibleTime": 0, "reviveQid": 0,
            "restNum": 0}


def model_pop_observation(obs: dict[str, Any]) -> dict[str, Any]:
    """The model's POP observation as compared. A refused POP's header is the response header
    class's primitive defaults on Java (popTime, invisibleTime, reviveQid, restNum 0), as in the
    model's PopResult: nothing to normalise (kept as the one place to do it)."""
    return obs


def java_fields(kind: str, held: "JavaHeld", model_event: dict[str, Any]) -> dict[str, Any]:
    """The fields of the Java request: the model's group / topic / queueId / offset, and the
    Java consumer's own handle altered as ``kind`` alters it (popverify/sim/request_domain.py)."""
    handle = held.extra_info
    if kind == "garbled":
        handle = "x" + handle.replace(" ", "")
    elif kind == "truncated":
        handle = " ".join(handle.split(" ")[:3])
    elif kind == "stale_change":
        handle = stale(handle)
    return {"topic": model_event["topic"], "group": model_event["group"], "queueId": model_event["queue"],
            "offset": model_event["offset"], "extraInfo": handle}


def plan(ls: "Lockstep", i: int, action: "Action", pre: dict[str, Any]) -> tuple[
        dict[str, Any], list[dict[str, Any]], Callable[[list[dict[str, Any]]], dict[str, Any]]]:
    """(model observation, Java requests, answers -> Java observation) of an ack_request, a
    change_invisible_request or an orderly_stray the model applied."""
    d, args = ls.driver, action.args
    c = pre["c"]
    event = next(e for e in d.events if e["type"] == "request")
    if action.kind == "orderly_stray":  # order4: the held message's own handle, the model's other fields
        fields = java_fields(STRAY_KINDS[args[2] % len(STRAY_KINDS)], ls.java_held[c][args[1] % pre["held"]], event)
        req = {"op": "ack", **fields} if event["op"] == "ack" else \
            {"op": "changeInvisibleTime", **fields, "invisibleTime": event["invisible_time"]}
        return {"code": event["code"]}, [req], lambda a: {"code": code_of(a[0])}
    if action.kind == "ack_request":
        kind = HANDLE_KINDS[args[2] % len(HANDLE_KINDS)]
        at = args[1] % pre["held"]
        held = ls.java_held[c].pop(at) if kind == "duplicate" else ls.java_held[c][at]
        requests = [{"op": "ack", **java_fields(kind, held, event)}]
        model_codes = [event["code"]]
        if kind == "duplicate":  # the real ack first (an Acked event), then the same request again
            requests.insert(0, ls._ack_request(held))
            model_codes.insert(0, next(e for e in d.events if e["type"] == "ack")["code"])

        def after_ack(a: list[dict[str, Any]]) -> dict[str, Any]:
            codes = [code_of(x) for x in a]
            if kind == "duplicate":
                ls._after_ack(i, held, {"code": codes[0]})
            return {"codes": codes}
        return {"codes": model_codes}, requests, after_ack
    kind = CHANGE_KINDS[args[2] % len(CHANGE_KINDS)]
    if pre["held"]:
        fields = java_fields(kind, ls.java_held[c][args[1] % pre["held"]], event)
    else:  # a consumer holding nothing (UNHELD_CHANGE_KINDS): the model's fields as sent
        fields = {"topic": event["topic"], "group": event["group"], "queueId": event["queue"],
                  "offset": event["offset"], "extraInfo": event["handle"]}
    req = {"op": "changeInvisibleTime", **fields, "invisibleTime": args[3]}
    return {"code": event["code"]}, [req], lambda a: {"code": code_of(a[0])}


def differential(profile: str, runs: int, steps: int, seed: int, client: Any) -> dict[str, Any]:
    """``runs`` drawn schedules (fault-free swarm configurations of ``seed``, each with the three
    request-domain kinds added) replayed in lockstep on ``client``'s release: verdict counts,
    the divergences and out-of-scope verdicts (one line each), and how many requests of each
    kind the schedules sent. Bounds: runs 1..10000, steps 1..500."""
    import attrs

    from popverify.conformance.confirm import drawn_schedule_lockstep, divergence_class
    from popverify.sim.scenario import ScenarioConfig
    from reference.common.javalang import JavaRandom

    if not 1 <= runs <= 10_000 or not 1 <= steps <= 500:
        raise ValueError("runs must be in 1..10000 and steps in 1..500")
    rng = JavaRandom(seed)
    counts: dict[str, int] = {}
    sent = dict.fromkeys(sorted(KINDS), 0)
    lines: list[str] = []
    for run in range(runs):
        # no faults: restart inside a POP, delete_recreate and expire are out of the harness's scope
        config = ScenarioConfig.draw(rng, faults=())
        config = attrs.evolve(config, actions=config.actions + tuple(sorted(KINDS)))
        verdict, schedule = drawn_schedule_lockstep(profile, seed * 100_003 + run, config, steps, client)
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
        for a in schedule:
            if a.kind in sent:
                sent[a.kind] += 1
        if verdict.status != "agrees":
            lines.append(f"run {run}: {divergence_class(verdict)}: {verdict.headline()}")
    return {"profile": profile, "runs": runs, "steps": steps, "seed": seed, "verdicts": counts, "sent": sent,
            "not_agreeing": lines}
