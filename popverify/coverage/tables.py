"""Coverage results as text: the markdown table (terminal, coverage.md, the generated block
of spec/coverage.md) and the merged per-profile JSON kept under spec/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from popverify.coverage.targets import RELEASES
from popverify.errors import UsageError

START, END = "<!-- coverage:start -->", "<!-- coverage:end -->"


def _cell(counter: dict[str, Any] | None) -> str:
    if counter is None:
        return "absent"
    if counter["percent"] is None:
        return "– (0/0)"
    return f"{counter['percent']:.1f} % ({counter['covered']}/{counter['total']})"


def _ordered(profiles: dict[str, Any]) -> list[str]:
    """Profile names in the order of RELEASES (v5.0 before v5.5), unknown ones after."""
    return sorted(profiles, key=lambda p: (list(RELEASES).index(p) if p in RELEASES else len(RELEASES), p))


def _in_scope_cell(row: dict[str, Any] | None) -> str:
    """A row's in-scope branches; figures recorded before the in-scope counters read "–"."""
    if row is None or not row.get("present", row.get("line") is not None):
        return "absent"
    if "in_scope" not in row:
        return "–"
    return _cell(row["in_scope"]["branch"])


def markdown(profiles: dict[str, dict[str, Any]]) -> str:
    """One row per target class, per profile (release): line and branch coverage, and branch
    coverage in scope (without the lines popverify/coverage/scope.py declares out of scope)."""
    names = _ordered(profiles)
    header = "| class | side | " + " | ".join(
        f"{p} ({profiles[p]['release']}) lines | {p} branches | {p} branches in scope" for p in names) + " |"
    lines = [header, "| " + " | ".join(["---"] * (2 + 3 * len(names))) + " |"]
    labels = [(c["label"], c["side"]) for c in profiles[names[0]]["classes"]] if names else []
    for label, side in labels:
        cells = []
        for p in names:
            row = next((c for c in profiles[p]["classes"] if c["label"] == label), None)
            cells += [_cell(row and row["line"]), _cell(row and row["branch"]), _in_scope_cell(row)]
        lines.append(f"| {label} | {side} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def unreached_markdown(profiles: dict[str, dict[str, Any]], side: str = "broker") -> str:
    """Per ``side`` class and profile, the methods none of whose lines ran (a list, one line
    per class and profile); empty when nothing was recorded."""
    lines = []
    for name in _ordered(profiles):
        for row in profiles[name].get("classes", []):
            methods = row.get("unreached_methods")
            if row["side"] == side and methods:
                lines.append(f"- {row['label']} ({name}, {profiles[name]['release']}): " + ", ".join(methods))
    return "\n".join(lines) + "\n" if lines else ""


def uncovered_markdown(profile: dict[str, Any], command: str) -> str:
    """What is left to cover in one profile's release (``uncovered-<release>.md``): per target
    class, its in-scope branches and the in-scope lines with a branch outcome never taken, as
    ``line (missed/total)`` grouped by method in source order, and the methods never entered."""
    release = profile["release"]
    out = [f"# Branches left to cover: rocketmq {release} (profile {profile['profile']})", "",
           f"Written by `{command}`. Per target: its branches in scope (without the lines "
           "popverify/coverage/scope.py declares for the release), then each in-scope source line of the "
           f"release's `-sources.jar` with a branch outcome JaCoCo never saw taken, as `line (missed/total)`, "
           "by method. Where replays stopped is in coverage.json (`stops`, `stop_seeds`).", ""]
    for row in profile.get("classes", []):
        if not row.get("present", row.get("line") is not None):
            out += [f"## {row['label']} ({row['side']}): absent from {release}", ""]
            continue
        branch = (row.get("in_scope") or {}).get("branch") or row["branch"]
        missed = row.get("missed_branches", [])
        out.append(f"## {row['label']} ({row['side']}): in scope {_cell(branch)}, "
                   f"{sum(m['missed'] for m in missed)} outcomes missed on {len(missed)} lines")
        out.append("")
        if row["line"]["covered"] == 0:
            out += ["Never run.", ""]
            continue
        by_method: dict[str, list[str]] = {}
        for m in missed:
            by_method.setdefault(m["method"], []).append(f"{m['line']} ({m['missed']}/{m['total']})")
        out += [f"- {name}: " + ", ".join(where) for name, where in by_method.items()]
        if row.get("unreached_methods"):
            out.append("- methods never entered: " + ", ".join(row["unreached_methods"]))
        out.append("")
    return "\n".join(out)


def sources_line(profile: dict[str, Any]) -> str:
    """What was replayed for a profile, in one line."""
    parts = []
    for name, source in sorted(profile["sources"].items()):
        if "error" in source:
            parts.append(f"{name}: ERROR {source['error']}")
        elif name == "conformance":
            parts.append(f"conformance: {len(source['checks'])} checks, {source['cases']} cases")
        elif name == "push":
            verdicts = ", ".join(f"{n} {s}" for s, n in source["verdicts"].items())
            parts.append(f"push: {source['schedules']} schedules incl. {source['traces']} traces ({verdicts}), "
                         f"{source['actions']} corpus actions, {source['actions_run']} run on both sides (none adapted), "
                         f"{sum(source['requests_compared'].values())} requests compared")
        else:
            verdicts = ", ".join(f"{n} {s}" for s, n in source["verdicts"].items())
            if "dropped" in source:  # what the harness cannot run, by kind (confirm.LOCKSTEP_KINDS)
                dropped = "dropped, no harness counterpart: " + (
                    ", ".join(f"{kind} ×{n}" for kind, n in source["dropped"].items()) or "none")
            else:  # figures recorded before 25 November 2026 counted the dropped faults only
                dropped = f"{source['faults_dropped']} faults dropped"
            parts.append(f"{name}: {source['schedules']} schedules incl. {source['traces']} traces ({verdicts}), "
                         f"{source['actions']} corpus actions, {source['actions_run']} run on both sides "
                         f"(incl. {source['pop_steps_inserted']} pop_steps inserted; {dropped}"
                         + (f"; {source['drains_cut']} drains cut after {source['stale_drain_rounds']} rounds of redeliveries"
                            if "drains_cut" in source else "") + ")")
    return f"{profile['profile']} (rocketmq {profile['release']}): " + "; ".join(parts)


def stops_text(source: dict[str, Any]) -> str:
    """A replay's stops by class, each with its count and, where recorded, the seeds of its
    schedules (to replay one by one)."""
    seeds = source.get("stop_seeds", {})
    def listed(why: str) -> str:
        return f" (seed{'s' if len(seeds[why]) > 1 else ''} {', '.join(map(str, seeds[why]))})" if why in seeds else ""
    return "; ".join(f"{why} ×{n}{listed(why)}" for why, n in source["stops"].items())


def _stable(profile: dict[str, Any]) -> dict[str, Any]:
    """A profile's result without wall-clock figures (what the spec keeps: same run, same file)
    and without the per-line lists of missed branches (``uncovered-<release>.md`` of the run's
    --out has them)."""
    classes = [{k: v for k, v in row.items() if k != "missed_branches"} for row in profile.get("classes", [])]
    return {**{k: v for k, v in profile.items() if k != "seconds"}, "classes": classes}


def update_spec(spec_md: Path, spec_json: Path, result: dict[str, Any], command: str) -> None:
    """Merge ``result``'s profiles into ``spec_json`` (other profiles stay) and regenerate the
    table between the coverage markers of ``spec_md``."""
    text = spec_md.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise UsageError(f"{spec_md} has no {START} ... {END} block")
    merged: dict[str, Any] = {"profiles": {}}
    if spec_json.is_file():
        merged = json.loads(spec_json.read_text(encoding="utf-8"))
    merged["jacoco"] = result["jacoco"]
    # figures recorded under an old profile name (develop) are the canonical profile's
    from reference.common.profile import PROFILE_ALIASES
    for alias, canonical in PROFILE_ALIASES.items():
        if alias in merged["profiles"]:
            old = merged["profiles"].pop(alias)
            merged["profiles"].setdefault(canonical, {**old, "profile": canonical})
    for name, profile in result["profiles"].items():
        merged["profiles"][name] = {**_stable(profile), "command": command}
    spec_json.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    runs = "\n".join(f"- {sources_line(merged['profiles'][name])}; `{merged['profiles'][name]['command']}`"
                     for name in _ordered(merged["profiles"]))
    stops = "\n".join(f"- {name}{'' if harness == 'lockstep' else ' (push)'}: " + stops_text(source)
                      for name in _ordered(merged["profiles"]) for harness in ("lockstep", "push")
                      for source in [merged["profiles"][name]["sources"].get(harness, {})] if source.get("stops"))
    body = f"JaCoCo {merged['jacoco']}. What ran:\n\n{runs}\n\n{markdown(merged['profiles'])}"
    if stops:
        body += f"\nWhere lockstep replays stopped (first divergence or out-of-scope step):\n\n{stops}\n"
    unreached = unreached_markdown(merged["profiles"])
    if unreached:
        body += f"\nBroker methods never entered (`name:firstLine` in the release's source):\n\n{unreached}"
    spec_md.write_text(head + START + "\n" + body + END + tail, encoding="utf-8")
