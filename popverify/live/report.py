"""The markdown report of a live session: totals, property matrix beside the model's
expectations, a timeline with the fault windows, and the operations around each violation."""

from __future__ import annotations

import json
from pathlib import Path

from popverify.checker.expectations import expected
from popverify.live.check import LiveVerdict
from popverify.live.faults import Fault
from popverify.live.history import Op

CONTEXT = 6        # operations shown either side of a violation
BUCKET_MS = 5000   # timeline resolution


def _timeline(ops: list[Op]) -> list[str]:
    """One row per 5 s: sends, deliveries, acks, and the faults active in that window."""
    if not ops:
        return ["(empty history)"]
    rows: dict[int, dict[str, int]] = {}
    marks: dict[int, list[str]] = {}
    for op in ops:
        b = op.rel_ms // BUCKET_MS
        row = rows.setdefault(b, {"send": 0, "deliver": 0, "ack": 0, "fail": 0})
        if op.type == "ok" and op.f in ("send", "ack"):
            row[op.f] += 1
        elif op.f == "consume" and isinstance(op.value, dict):
            # push: a message handed to the listener; CONSUME_SUCCESS is the push consumer's "ack"
            row["deliver"] += 1
            row["ack"] += op.value.get("status") == "CONSUME_SUCCESS"
        elif op.f == "deliver":
            row["deliver"] += 1
        elif op.type in ("fail", "timeout"):
            row["fail"] += 1
        if op.f == "fault" and isinstance(op.value, dict):
            marks.setdefault(b, []).append(f"{op.value.get('kind')}:{op.value.get('phase')}")
        if op.f == "phase":
            marks.setdefault(b, []).append(f"[{op.value}]")
    out = ["| t (s) | sends ok | deliveries | acks ok | fail/timeout | faults |", "|---|---|---|---|---|---|"]
    active: set[str] = set()
    for b in range(0, max(rows) + 1):
        row = rows.get(b, {"send": 0, "deliver": 0, "ack": 0, "fail": 0})
        here = marks.get(b, [])
        during = set(active)   # a fault active at any moment of this window
        for m in here:
            kind, _, phase = m.partition(":")
            if phase == "begin":
                active.add(kind)
                during.add(kind)
            elif phase == "end":
                active.discard(kind)
        shown = " ".join(here) + (f" (active: {','.join(sorted(during))})" if during else "")
        out.append(f"| {b * BUCKET_MS // 1000} | {row['send']} | {row['deliver']} | {row['ack']} | {row['fail']} "
                   f"| {shown} |")
    return out


def write_report(out: Path, release: str, profile: str, ops: list[Op], verdict: LiveVerdict, faults: list[Fault],
                 seconds: dict[str, float], drained: bool, mode: str = "pop") -> Path:
    """Write ``out/report.md`` and return its path."""
    t = verdict.totals
    lines = [f"# popverify live: RocketMQ {release}, {mode} consumers", "",
             f"Model profile compared: `{profile}`. Drain reached every acknowledged send acked: {drained}. "
             f"Seconds: {json.dumps(seconds, sort_keys=True)}", "", "## Totals", "", "| total | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in t.to_json().items()]
    lines += ["", f"Totals consistent: {t.consistent()}", "", "## Properties", "",
              "| property | live | model expectation |", "|---|---|---|"]
    lines += [f"| {pid} | {status} | {expected(profile, pid)} |" for pid, status in verdict.checked.items()]
    lines += ["", f"Violations excused by a fault the property assumes away: {verdict.excused}", "",
              "## Fault schedule", ""]
    lines += [f"- {f.at_s} s: {f.kind}" + (f" for {f.length_s} s" if f.length_s else "")
              + (f" (consumer {f.target})" if f.kind == "consumer" else "") for f in faults] or ["- none"]
    lines += ["", "## Timeline", "", *_timeline(ops), "", "## Violations", ""]
    if not verdict.violations:
        lines.append("none")
    by_index = {op.index: i for i, op in enumerate(ops)}
    for v in verdict.violations[:50]:
        lines += [f"### {v.property_id} at operation {v.step}", "", v.message, "", "```"]
        key = None
        pos = by_index.get(v.step)
        if pos is not None:
            key = ops[pos].key
            for op in ops[max(0, pos - CONTEXT): pos + CONTEXT + 1]:
                lines.append(json.dumps(op.to_json(), sort_keys=True))
        lines.append("```")
        if key is not None:
            lines += ["", f"Every operation on {key}:", "", "```"]
            lines += [json.dumps(op.to_json(), sort_keys=True) for op in ops if op.key == key]
            lines.append("```")
        lines.append("")
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
