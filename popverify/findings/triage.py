"""Triage of a fuzz or verify output folder: signatures with counts, first seen, shortest
trace, its verdict on Java (popverify/findings/confirmation.py), an explanation, and "new"
marks against the previous campaign in the same folder.

A folder is a fuzz campaign (``summary.json`` with ``violations``) or a verify run
(``summary.json`` with ``techniques.fuzz.campaigns``). Every campaign that finishes appends
its signatures to ``signature-history.json`` in its folder (``record``); the previous
campaign is the newest history entry that is not the current summary.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import attrs

from popverify.findings.attribution import FINDINGS, Signature
from popverify.findings.confirmation import confirmation_text

HISTORY = "signature-history.json"

# One paragraph per known finding (spec/properties.md#known-findings, spec/findings/).
EXPLANATIONS: dict[str, str] = {
    "F1": "v5.0's PopReviveService#reviveMsgFromCk skips a message whose storeTimestamp is after the CK's popTime "
          "('skip ck from last epoch'); a message put between PopMessageProcessor#processRequest taking popTime "
          "and popMsgFromQueue reading the queue is popped under such a CK, and if that delivery is never acked it is "
          "never revived while the consumer offset has passed it. v5.5 removed the check.",
    "F2": "ChangeInvisibleTimeProcessor#processRequest accepts a handle whose invisible time has passed: the CK it "
          "acks may already have been revived, so the message lives twice (the revived copy in the retry topic and "
          "the new CK); a clean ack of the new handle does not stop the copy (spec/findings/F2.md).",
    "F3": "The merge key topic+group+queueId+startOffset+popTime of a CK and an AckMsg is built without separators "
          "and without anything unique to the CK: a changeInvisibleTime in the same millisecond as the pop of the "
          "same offset builds a CK with an existing key, so acks and revive matching mix the two up.",
    "F4": "PopBufferMergeService#addAk refuses an ack that comes late in its CK's life although the CK is still "
          "unstored in the buffer; the ACK message can reach the revive queue before the CK (a starved scan), "
          "PopReviveService#consumeReviveMessage finds no CK for it and drops it, and the acked CK is revived.",
    "F5": "RebalancePushImpl#computePullFromWhere (CONSUME_FROM_LAST_OFFSET) starts a queue whose offset query finds "
          "nothing at its max offset; once retention moved the queue's min offset, the broker answers "
          "QUERY_NOT_FOUND for a group that merely never flushed its offset, and every message stored since is "
          "skipped.",
    "F6": "With enablePopBufferMerge, PopMessageProcessor#popMsgFromQueue corrects an OFFSET_TOO_SMALL offset by "
          "committing the queue's min offset, while older nextBeginOffsets wait in the buffer's commit queue; "
          "PopBufferMergeService#scanCommitOffset commits them later and the committed offset moves back "
          "(spec/findings/F6.md).",
    "F7": "AdminBrokerProcessor#deleteTopic never touches PopBufferMergeService: the commit-offset queue of the "
          "deleted topic's queues keeps the old nextBeginOffset, PopMessageProcessor#getPopOffset of the re-created "
          "queue starts there and the messages stored before it are never delivered (spec/properties.md F7).",
    "F8": "5.5.0's PopReviveService#reviveRetry returns false on a refused retry-topic put; reviveMsgFromCk then calls "
          "rePutCK, whose messageStore.putMessage result is ignored, and commits the revive offset past the CK: when "
          "both puts are refused the un-acked message is held by nothing (spec/findings/F8.md).",
    "F9": "5.0.0's PopCheckPoint.queueId is a byte (PopMessageProcessor#appendCheckPoint: ck.setQueueId((byte) "
          "queueId)): the CK of queue 128 or above names another queue id (200 -> -56, 256 -> 0). Its merge key never "
          "matches the AckMsg's int queueId, so acks do not finish it, and PopBufferMergeService commits its "
          "nextBeginOffset to the other queue, so the queue's own offset never moves and its messages are popped "
          "again after a clean ack (spec/findings/F9.md).",
    "F10": "AdminBrokerProcessor's topic deletion calls ConsumerOffsetManager#cleanOffsetByTopic, which removes the "
           "topic's committed offsets in memory only; the offsets file keeps them until the next scheduled persist "
           "(flushConsumerOffsetInterval, 5 s). A broker that crashes in between reloads them: the re-created "
           "topic's queues start at the old offsets and its first messages are skipped (spec/findings/F10.md).",
    "F11": "CommitLog#getMessage reads commit-log position 0 with findMappedFileByOffset(offset, returnFirstOnNotFound "
           "= offset == 0): once retention deleted the first file and before the consume-queue stage moved the "
           "queue's min offset, the store's first message's unit reads the oldest remaining file's first message. "
           "A POP delivers that message twice, the client's handles both name the first offset (processPopResponse's "
           "indexOf), and the CK's other offset is revived after a clean ack of both (spec/findings/F11.md).",
    "F12": "AckMessageProcessor's orderly branch commits what ConsumerOrderInfoManager#commitAndNext answers once the "
           "ack offset is not below the committed one; after deleteTopic the committed offset is gone (-1) and the "
           "order info either is still the old topic's or answers offset + 1 when absent, so the ack of a handle "
           "popped before the deletion commits into the re-created queue and its first messages are skipped "
           "(spec/findings/F12.md).",
    "F13": "rocketmq-client's ProcessQueue#removeMessage (and #commit) subtracts the body length of the message as "
           "the listener left it, while putMessage counted the length it arrived with (the listener gets the very "
           "object the ProcessQueue holds): a listener that changes a body's length makes msgSize drift, for good at "
           "5.0.0, until the queue empties at 5.5.0; pullMessage's size flow control reads it (spec/findings/F13.md).",
    "F14": "PopMessageProcessor reads the retry topic only for a non-orderly POP (`!requestHeader.isOrder()`, both "
           "releases): a message revived from the CK of a non-orderly POP goes to %RETRY%group_topic, which the "
           "group's orderly POPs never read, so it is never delivered again (spec/findings/F14.md).",
    "F15": "5.0.0's ChangeInvisibleTimeProcessor refuses only offset > maxOffset: a changeInvisibleTime naming the "
           "queue's max offset (no message there yet) writes a CK for it; the message stored there next is popped "
           "and acked under its own CK, and the forged CK revives it after that clean ack (spec/findings/F15.md). "
           "5.5.0 refuses offset >= maxOffset.",
    "F16": "PopBufferMergeService#scanGarbage drops a topic@group@queue commit-offset queue whose last CK was popped "
           "more than 5 minutes ago, even while it holds pops whose nextBeginOffset is not committed (a long "
           "invisible time, no ack); getPopOffset then starts below them and the still-invisible messages are "
           "popped again (spec/findings/F16.md).",
    "F17": "PopReviveService#reviveMsgFromCk reads the CK's message with EscapeBridge#getMessage = getMessage(offset, "
           "1).get(0) and never checks its queue offset: once retention removed that message's data (before the "
           "consume-queue stage), the queue's next live message is revived in its place and delivered twice "
           "(spec/findings/F17.md).",
    "F18": "Only an orderly POP asks the order info whether a queue's batch is still held (PopMessageProcessor "
           "#popMsgFromQueue `isOrder && checkBlock`), and an orderly POP commits the batch's start offset and writes "
           "no CK: a non-orderly POP of the same group (a group switched from concurrent to orderly, or a client of "
           "the other kind) reads the held batch again before its invisible time ends (spec/findings/F18.md).",
    "F19": "With enableSkipLongAwaitingAck (5.5.0, off by default) a revive round turns an ACK read before its CK "
           "into a mock CK and then `map.putAll(mockPointMap)` replaces the real CK read later in the round: the CK's "
           "un-acked messages are never revived (spec/findings/F19.md).",
    "F20": "On 5.0.0 a put the store refuses (properties over 32 KB, a body over 4 MB) still takes a queue offset: "
           "the queue's next messages carry a stored offset one past their consume-queue unit, so a push consumer "
           "commits one past the next message, which the queue's next owner skips (ALO-3, OFF-3), and after a "
           "restart two messages share one stored offset (a POP's acks both name the first: PRG-2; a push "
           "ProcessQueue holds one: PQ-2) (spec/findings/F20.md).",
    "F21": "On 5.0.0 the consumer order info does not survive a restart (encode's keys are not what decode reads): "
           "the first ack of an orderly batch in flight is refused, and after the next persist drops the empty "
           "entry an ack of any message of the batch commits past the others, which are never redelivered "
           "(OFF-1, ALO-2) (spec/findings/F21.md).",
    "F22": "A consume queue whose first file begins with blank units (its first message was past the file's start: "
           "5.0.0's refused first put, 5.5.0's re-dispatch of a deleted topic) gets min offset 0 at a restart; a "
           "read from 0 takes the blank unit for a removed message and skips every message in commit-log file 0 "
           "within the read, and the POP moves the offset past them (ALO-1) (spec/findings/F22.md).",
}
UNEXPLAINED_TEXT = ("No known finding's mechanism switch clears this violation on its own: a cause not yet named "
                    "(or several findings that each suffice). Replay the shortest trace, explain it against the Java "
                    "source, and add the finding: its mechanism switch, its minimal trace and its spec entry.")
MODEL_ERROR_TEXT = ("The reference model raised an exception: a defect of the model, or Java behaviour (an exception "
                    "the Java code would throw too) that the model must state; the message names the innermost "
                    "reference/ frame and the trace keeps the traceback.")


@attrs.frozen
class Row:
    """One signature of a campaign as triage shows it."""

    campaign: str
    signature: str
    runs: int
    unexpected: bool
    first_round: int | None
    time_to_first_s: float | None
    minimal_steps: int
    trace: str
    message: str
    new: bool
    explanation: str
    confirmation: str = "not confirmed (the campaign predates confirmation on Java)"
    model_question: bool = False

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def explanation(key: str) -> str:
    """The paragraph for a signature key."""
    sig = Signature.parse(key)
    if sig.property_id == "MODEL-ERROR":
        return MODEL_ERROR_TEXT
    if not sig.explained:
        return UNEXPLAINED_TEXT
    return " ".join(f"{fid} ({FINDINGS[fid].title}): {EXPLANATIONS[fid]}" for fid in sig.findings)


def load(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """The findings of every campaign in ``folder`` by campaign name; ValueError when the
    folder holds no readable fuzz or verify summary."""
    path = folder / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise ValueError(f"{folder} has no summary.json (not a fuzz or verify output folder)") from err
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read {path}: {err}") from err
    if isinstance(summary, dict) and isinstance(summary.get("violations"), list):
        return {f"{summary.get('mode')}/{summary.get('profile')}": summary["violations"]}
    if isinstance(summary, dict) and isinstance(summary.get("techniques"), dict):
        # a verify summary; without a fuzz technique (skipped, or unavailable) it has no campaign
        campaigns = summary["techniques"].get("fuzz", {}).get("campaigns", {})
        return {key: camp.get("findings", []) for key, camp in sorted(campaigns.items()) if "error" not in camp}
    raise ValueError(f"{path} is neither a fuzz summary nor a verify summary")


def _fingerprint(folder: Path) -> str:
    return hashlib.sha1((folder / "summary.json").read_bytes()).hexdigest()


def record(folder: Path) -> None:
    """Append the folder's current signatures to its history (a campaign calls this when its
    summary.json is written); recording the same summary twice adds nothing."""
    history = _history(folder)
    fingerprint = _fingerprint(folder)
    if history and history[-1]["fingerprint"] == fingerprint:
        return
    current = {c: sorted(f.get("signature", f["property"]) for f in fs) for c, fs in load(folder).items()}
    history.append({"fingerprint": fingerprint, "signatures": current})
    (folder / HISTORY).write_text(json.dumps(history, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _history(folder: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads((folder / HISTORY).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read {folder / HISTORY}: {err}") from err
    if not isinstance(data, list):
        raise ValueError(f"{folder / HISTORY} is not a list")
    return data


def triage(folder: Path) -> tuple[list[Row], bool]:
    """The rows of every signature in ``folder`` (unexplained and unexpected first within each
    campaign) and whether a previous campaign was there to compare with."""
    campaigns = load(folder)
    fingerprint = _fingerprint(folder)
    previous = next((h for h in reversed(_history(folder)) if h["fingerprint"] != fingerprint), None)
    rows = []
    for name, found in campaigns.items():
        before = set(previous["signatures"].get(name, [])) if previous else set()
        for f in found:
            key = f.get("signature") or f"{f['property']}/unexplained"
            rows.append(Row(name, key, f["runs"], bool(f["unexpected"]), f.get("first_round"), f.get("time_to_first_s"),
                            f["minimal_steps"], f["trace"], f["message"], previous is not None and key not in before,
                            explanation(key), confirmation_text(f),
                            bool((f.get("confirmation") or {}).get("model_question"))))
    rows.sort(key=lambda r: (r.campaign, "unexplained" not in r.signature, not r.unexpected, r.signature))
    return rows, previous is not None
