"""summary.json and a self-contained report.html (inline CSS, no network assets).

The matrix has one row per property ID and one column per technique cell; techniques that
depend on the profile have a v5.0 and a v5.5 column side by side.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from popverify.checker.expectations import expected
from popverify.checker.properties import PROPERTIES
from popverify.coverage.tables import stops_text
from reference.common.profile import PROFILE_NAMES

PROFILES = PROFILE_NAMES
MODES = ("pop", "push")
CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #bbb;padding:.3em .6em;font-size:.9em;vertical-align:top}th{background:#eee}
.proved,.clean,.passed,.model-checked,.agrees,.valid{background:#d9f2d9}.violated,.error,.failed,.unreached{background:#f8d7d7}
.expected{background:#fbe9c9}.unavailable{background:#e6e6e6}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:.8em}"""
# Which property IDs each conformance check bears on (popverify/conformance).
CONFORMANCE_PROPERTIES: dict[str, tuple[str, ...]] = {
    "allocat": ("ALLOC-1", "ALLOC-2", "ALLOC-3", "ALLOC-4"),
    "process_queue": ("PQ-1", "PQ-2"),
    "checkpoint": ("CKM-1",), "ack": ("CKM-1",), "extra_info": ("CKM-1",),
}


def columns() -> list[str]:
    """Matrix columns, profile-dependent techniques with v5.0 and v5.5 side by side."""
    cols = [f"tlc/{profile}" for profile in PROFILES] + ["z3"]
    cols += [f"fuzz {mode}/{profile}" for mode in MODES for profile in PROFILES]
    cols += ["stateful"] + [f"conformance/{profile}" for profile in PROFILES]
    return cols


def _conformance_properties(name: str) -> tuple[str, ...]:
    lowered = name.lower()
    return tuple(dict.fromkeys(p for key, pids in CONFORMANCE_PROPERTIES.items() if key in lowered for p in pids))


def matrix(summary: dict[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    """{property: {column: cell}} with cells {"state", "text"[, "trace"]}."""
    cells: dict[str, dict[str, dict[str, str]]] = {pid: {} for pid in PROPERTIES}
    tech = summary["techniques"]
    for proof in tech.get("z3", {}).get("proofs", []):
        for pid in proof.get("properties", []):
            prev = cells[pid].get("z3", {}).get("state")
            state = "proved" if proof["result"] == "proved" and prev in (None, "proved") else "failed"
            cells[pid]["z3"] = {"state": state, "text": state}
    for model in tech.get("tlc", {}).get("models", []):
        profiles = [model["profile"]] if model.get("profile") in PROFILES else list(PROFILES)
        for profile in profiles:
            column = f"tlc/{profile}"
            if model["result"] == "expected-violation":
                pid = (model.get("violated") or "").replace("_", "-")
                if pid in cells and model.get("profile"):
                    java = f"; on Java: {model['confirmation']}" if model.get("confirmation") else ""
                    cells[pid][column] = {"state": "expected",
                                          "text": f"expected counterexample: {model['model']} (negative check){java}"}
                continue
            for pid in model.get("properties", []):
                if pid not in cells:
                    continue
                prev = cells[pid].get(column)
                state = "model-checked" if model["result"] == "ok" else "violated"
                if prev is not None and prev["state"] != "model-checked":
                    continue
                cells[pid][column] = {"state": state,
                                      "text": f"{state}: {model['model']}, {_states(model)}"}
    for key, camp in tech.get("fuzz", {}).get("campaigns", {}).items():
        column = f"fuzz {key}"
        if "error" in camp:
            continue
        # one cell per property: its first finding (unexplained / unexpected signatures lead)
        found = {f["property"]: f for f in reversed(camp["findings"])}
        mode_properties = _mode_properties(camp["mode"])
        for pid in mode_properties:
            if pid in found:
                f = found[pid]
                state = "violated" if f["unexpected"] else "expected"
                c = f.get("confirmation") or {}
                if c.get("model_question"):
                    state = "violated"  # a counterexample Java does not reproduce: a model question
                java = f"; on Java: {c['text']}" if c.get("text") else ""
                cells[pid][column] = {"state": state, "trace": f["trace"],
                                      "text": f"{'violated' if f['unexpected'] else 'expected finding'}: "
                                              f"{f['runs']} run(s), minimal {f['minimal_steps']} steps{java}"}
            else:
                cells[pid][column] = {"state": "clean", "text": f"fuzzed clean in {camp['runs']} runs"}
    stateful = tech.get("stateful")
    if stateful is not None:
        for module, machine in stateful.get("machines", {}).items():
            for pid in machine["properties"]:
                if pid in cells:
                    state = "passed" if machine["failed"] == 0 else "failed"
                    cells[pid]["stateful"] = {"state": state, "text": f"{state}: {module}"}
    for check in tech.get("conformance", {}).get("checks", []):
        profile = "v5.0" if str(check.get("version", "")).startswith("5.0") else "v5.5"
        column = f"conformance/{profile}"
        for pid in _conformance_properties(check["name"]):
            unexplained = check["disagreements"] - check.get("explained", 0)
            prev = cells[pid].get(column)
            if prev is not None and prev["state"] == "failed":
                continue
            state = "agrees" if unexplained == 0 else "failed"
            text = f"{state}: {check['name']} {check['cases']} cases"
            if prev is not None:
                text = prev["text"] + "; " + text
            cells[pid][column] = {"state": state, "text": text}
    live_cells(summary, cells)
    return cells


def _mode_properties(mode: str) -> list[str]:
    push = {"ALO-3", "OFF-3", "PQ-1", "PQ-2"}
    scenario_free = {"OFF-4"}  # the offset-file property is checked by machine 5 only
    return [pid for pid in PROPERTIES if not pid.startswith("ALLOC") and pid not in scenario_free
            and ((pid in push) == (mode == "push"))]


def _technique_status(name: str, entry: dict[str, Any]) -> str | None:
    """Why one technique's entry is not a pass (errored, failed or empty), or None when it
    checked something and that held."""
    result = entry.get("result")
    if name == "conformance" and result != "error":
        return _conformance_status(entry)
    if result in ("failed", "error"):
        return f"{name} {result}" + (f" ({entry['error']})" if entry.get("error") else "")
    # what each technique checked; an empty list means nothing was checked
    checked = {"tlc": "models", "trace": "traces", "z3": "proofs", "stateful": "machines", "live": "runs"}.get(name)
    if checked is not None and not entry.get(checked):
        return f"{name} checked nothing (no {checked})"
    return None


def _conformance_status(entry: dict[str, Any]) -> str | None:
    """The conformance technique: empty checks or an empty lockstep differential fail it, and
    every cause of a failure is named (a disagreeing check never hides a lockstep divergence)."""
    checks = entry.get("checks")
    if not checks:
        return "conformance checked nothing (no checks)"
    if not any(c.get("cases") for c in checks):
        return "conformance checked no cases"
    lockstep = entry.get("lockstep") or []
    if not lockstep or not all(r.get("cases") for r in lockstep):
        return "conformance: the lockstep differential replayed no schedule"
    why = ["conformance failed"] if any(c["disagreements"] - c.get("explained", 0) for c in checks) else []
    diverged = [f"{r['release']} {r['diverge']} of {r['cases']} schedules diverge "
                f"({', '.join(sorted(r['classes']))})" for r in lockstep if r["diverge"]]
    if diverged:
        why.append("conformance lockstep: " + "; ".join(diverged))
    if not why and entry.get("result") == "failed":
        why.append("conformance failed")
    return "; ".join(why) or None


def failures(summary: dict[str, Any]) -> list[str]:
    """What makes the run fail: a technique that errored, failed, checked nothing or did not
    run (skipped or unavailable; the confirmation on Java counts as one), a fuzz campaign that
    errored or ran no runs, a violation of a property spec/expectations.json expects to hold,
    or a minimal counterexample whose replay on Java diverges (in a class not explained) or
    does not reproduce the violation. Findings are results, not failures."""
    failed = []
    tech = summary["techniques"]
    for name, entry in tech.items():
        if name == "fuzz" or not isinstance(entry, dict):
            continue
        status = _technique_status(name, entry)
        if status is not None:
            failed.append(status)
    fuzz = tech.get("fuzz")
    if fuzz is not None:
        if fuzz.get("result") == "error":
            failed.append(f"fuzz error ({fuzz.get('error', '')})")
        elif not fuzz.get("campaigns"):
            failed.append("fuzz ran no campaign")
        for key, camp in sorted(fuzz.get("campaigns", {}).items()):
            if "error" in camp:
                failed.append(f"fuzz {key} error ({camp['error']})")
            elif not camp.get("runs"):
                failed.append(f"fuzz {key} ran no runs")
            elif any(f["unexpected"] for f in camp.get("findings", [])):
                failed.append(f"fuzz {key}")
            for f in camp.get("findings", []):
                c = f.get("confirmation") or {}
                if c.get("model_question"):  # issue 15: a violation Java does not reproduce is a model defect
                    failed.append(f"fuzz {key} {f.get('signature', f['property'])}: MODEL QUESTION, {c['text']}")
    for name, why in sorted(summary.get("unavailable", {}).items()):
        if name == "mutation":  # an optional extra of the report, not a technique
            continue
        failed.append(f"{name} did not run ({why})")
    # the coverage of the report's folder (popverify coverage --out): a source that errored
    # measured nothing, and its classes would read 0 % as if measured
    for profile, measured in sorted((summary.get("coverage") or {}).get("profiles", {}).items()):
        for source, ran in sorted(measured.get("sources", {}).items()):
            if "error" in ran:
                failed.append(f"coverage {profile} {source} error ({ran['error']})")
    return failed


def write(summary: dict[str, Any], out: Path) -> None:
    """Write summary.json and report.html under ``out``."""
    summary["matrix"] = matrix(summary)
    attach_coverage(summary, out)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / "report.html").write_text(render(summary, out), encoding="utf-8")


def _link(path: str, out: Path) -> str:
    try:
        return os.path.relpath(Path(path).resolve(), out.resolve())
    except ValueError:
        return path


def _mutation_html(mutation: dict[str, Any] | None) -> str:
    esc = html.escape
    if not mutation:
        return "<p>no mutation run under this folder: <code>popverify mutate --out DIR</code></p>"
    rows = []
    for name, t in mutation["techniques"].items():
        if "unavailable" in t:
            rows.append(f"<tr><th>{esc(name)}</th><td colspan=3 class=\"unavailable\">{esc(t['unavailable'])}</td></tr>")
        else:
            rows.append(f"<tr><th>{esc(name)}</th><td>{t['killed']}/{t['total']}</td><td>{t['score']}</td>"
                        f"<td>{t.get('mean_seconds', '')}</td></tr>")
    mutants = "".join(f"<tr><td>{'killed' if m['killed'] else 'SURVIVED'}</td><td>{esc(m['mutant'])}</td>"
                      f"<td>{esc(' '.join(m['by']))}</td></tr>" for m in mutation["mutants"])
    return (f"<p id=\"mutation\">operators {esc(', '.join(mutation['operators']))}; {mutation['seeds']} seeds × "
            f"{mutation['steps']} steps per profile. Score per technique (n/a mutants excluded):</p>"
            f"<table><tr><th>technique</th><th>killed</th><th>score</th><th>s / mutant</th></tr>{''.join(rows)}</table>"
            f"<table>{mutants}</table>")


def _confirmation_html(finding: dict[str, Any]) -> str:
    """The counterexample's verdict on Java (popverify/findings/confirmation.py), one line."""
    c = finding.get("confirmation")
    if not c:
        return ""
    mark = "MODEL QUESTION: " if c.get("model_question") else ""
    cls = "failed" if c.get("model_question") else "agrees" if c.get("status") in ("reproduced", "holds") else "unavailable"
    return f'<br>on Java: <span class="{cls}">{html.escape(mark + c["text"])}</span>'


def _domain_html(tech: dict[str, Any]) -> str:
    """Each fuzz campaign's domain table (popverify/fuzz/report.py#domain_table_html)."""
    from popverify.fuzz.domain import domain_line
    from popverify.fuzz.report import domain_table_html
    parts = []
    for key, camp in sorted(tech.get("fuzz", {}).get("campaigns", {}).items()):
        if "domain" in camp:
            parts.append(f"<h3>{html.escape(key)}</h3><p>{html.escape(domain_line(camp['domain']))}</p>"
                         + domain_table_html(camp["domain"], f"domain-{key.replace('/', '-')}"))
    return "".join(parts) or "<p>no fuzz campaign</p>"


def _confirmation_summary(summary: dict[str, Any]) -> str:
    """Counts of the verdicts on Java over every campaign."""
    counts: dict[str, int] = {}
    replays = hits = 0
    for camp in summary["techniques"].get("fuzz", {}).get("campaigns", {}).values():
        conf = camp.get("confirmation") or {}
        for status, n in conf.get("statuses", {}).items():
            counts[status] = counts.get(status, 0) + n
        replays += conf.get("replays", 0)
        hits += conf.get("cache_hits", 0)
    if not counts:
        return ""
    parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return (f"<p id=\"confirmation\">Minimal counterexamples replayed on RocketMQ's broker classes (lockstep "
            f"harness, spec/findings/README.md): {html.escape(parts)}; {replays} replays, {hits} from the cache.</p>")


def _lockstep_html(lockstep: list[dict[str, Any]] | None) -> str:
    """The lockstep differential of the conformance technique: per release, the random
    interleaved schedules replayed on the model and on the release's broker classes."""
    if not lockstep:
        return ""
    esc = html.escape
    rows = []
    for r in lockstep:
        classes = "; ".join(f"{n['count']} × {c}" for c, n in sorted(r["classes"].items())) or "–"
        oos = "; ".join(f"{n} × {why}" for why, n in sorted(r["out_of_scope_reasons"].items())) or "–"
        state = "failed" if r["diverge"] else "agrees"
        rows.append(f"<tr><th>{esc(r['profile'])} (rocketmq {esc(r['release'])})</th><td>{r['cases']}</td>"
                    f"<td class=\"{state}\">{r['agree']}</td><td class=\"{state}\">{r['diverge']}</td>"
                    f"<td>{r['out_of_scope']}</td><td>{r['steps']}</td><td>{esc(classes)}</td><td>{esc(oos)}</td>"
                    f"<td>{r.get('seconds', '')}</td></tr>")
    return ("<h2>Lockstep differential</h2><p>Random POP swarm schedules, other actions inside in-flight "
            "POPs, replayed step by step on the model and on the release's own broker classes (every "
            "response and the broker state compared after each step; spec/conformance.md).</p>"
            "<table><tr><th>profile</th><th>schedules</th><th>agree</th><th>diverge</th><th>out of scope</th>"
            "<th>steps compared</th><th>divergence classes</th><th>out-of-scope reasons</th><th>seconds</th></tr>"
            + "".join(rows) + "</table>")


def render(summary: dict[str, Any], out: Path) -> str:
    """The HTML report."""
    esc = html.escape
    cols = columns() + live_columns(summary)
    rows = []
    for pid, prop in PROPERTIES.items():
        tds = []
        for col in cols:
            cell = summary["matrix"][pid].get(col)
            if cell is None:
                tds.append('<td class="unavailable">—</td>')
                continue
            text = esc(cell["text"])
            if "trace" in cell:
                text += f'<br><a href="{esc(_link(cell["trace"], out))}">minimal counterexample</a>'
            tds.append(f'<td class="{esc(cell["state"])}">{text}</td>')
        expect = " / ".join(f"{p}: {expected(p, pid)}" for p in PROFILES)
        rows.append(f"<tr><th>{esc(pid)}</th><td>{esc(prop.title)}</td><td>{esc(expect)}</td>{''.join(tds)}</tr>")
    tech = summary["techniques"]
    findings = []
    figures = []
    for key, camp in sorted(tech.get("fuzz", {}).get("campaigns", {}).items()):
        if "error" in camp:
            figures.append(f"<tr><th>{esc(key)}</th><td colspan=5 class=\"unavailable\">{esc(camp['error'])}</td></tr>")
            continue
        figures.append(f"<tr><th>{esc(key)}</th><td>{esc(camp.get('engine', ''))}</td><td>{camp['runs']}</td>"
                       f"<td>{camp['steps']}</td><td>{camp['seconds']}</td><td>{camp['coverage']}</td></tr>")
        for f in camp["findings"]:
            trace = _link(f["trace"], out)
            findings.append(
                f"<h3>{esc(key)} — {esc(f.get('signature', f['property']))} "
                f"({'UNEXPECTED' if f['unexpected'] else 'expected finding'})</h3>"
                f"<p>{esc(f['message'])}<br>seed {f['seed']}, shrunk from {f['original_steps']} to {f['minimal_steps']} "
                f"steps; <a href=\"{esc(trace)}\">ITF trace</a>; replay: <code>popverify replay {esc(trace)}</code>"
                f"{_confirmation_html(f)}</p>"
                f"<pre>{esc(chr(10).join(f['timeline']))}</pre>")
    for model in tech.get("tlc", {}).get("models", []):
        figures.append(f"<tr><th>TLC {esc(model['model'])}</th><td>{esc(model['result'])}</td>"
                       f"<td colspan=2>{_states(model)}</td>"
                       f"<td>{model.get('seconds')}</td><td></td></tr>")
    validated = "".join(
        f"<tr><th>{esc(t['trace'])}</th><td>{esc(t['profile'])}</td><td class=\"{'valid' if t['valid'] else 'failed'}\">"
        f"{'valid' if t['valid'] else 'NOT a behaviour'}</td><td>"
        + esc("; ".join(f"queue {q['queue']}: {q['replayed']}/{q['entries']} spec steps"
                        + (f" -- {q['failed_at']}" if q["failed_at"] else "") for q in t["queues"]))
        + "</td></tr>" for t in tech.get("trace", {}).get("traces", []))
    techniques = "".join(f"<tr><th>{esc(k)}</th><td class=\"{esc(str(v.get('result', '')))}\">"
                         f"{esc(str(v.get('result', v.get('engine', ''))))}</td><td>{esc(str(v.get('seconds', '')))}</td></tr>"
                         for k, v in tech.items() if isinstance(v, dict))
    unavailable = "".join(f"<tr><th>{esc(k)}</th><td class=\"unavailable\">unavailable: {esc(str(v))}</td><td></td></tr>"
                          for k, v in sorted(summary.get("unavailable", {}).items()))
    env = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v.get('version', v.get('error', ''))))}</td></tr>"
                  for k, v in summary["environment"].items() if isinstance(v, dict))
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>popverify report</title>
<style>{CSS}</style></head><body><h1>popverify verify</h1>
<p>Outcome: <strong id="outcome">{esc(summary['outcome'])}</strong></p>
<h2>Property × technique</h2><table id="matrix"><tr><th>ID</th><th>property</th><th>expected</th>
{''.join(f'<th>{esc(c)}</th>' for c in cols)}</tr>{''.join(rows)}</table>
<h2>Techniques</h2><table>{techniques}{unavailable}</table>
{_lockstep_html(tech.get("conformance", {}).get("lockstep"))}
{live_html(summary)}
<h2>Trace validation</h2><p>Runs of the Python model replayed by TLC as behaviours of
PushConsumerOffsets (spec/trace-validation.md).</p>
<table><tr><th>trace</th><th>profile</th><th>verdict</th><th>log</th></tr>{validated}</table>
<h2>Mutation score</h2>{_mutation_html(summary.get("mutation"))}
<h2>Coverage of RocketMQ's classes</h2>{coverage_html(summary.get("coverage"))}
<h2>Figures</h2><table><tr><th>campaign / model</th><th>engine / result</th><th>runs</th><th>steps</th><th>seconds</th>
<th>coverage points</th></tr>{''.join(figures)}</table>
<h2>Input domain of the fuzz campaigns</h2>{_domain_html(tech)}
<h2>Findings (minimal counterexamples)</h2>{_confirmation_summary(summary)}{''.join(findings) or '<p>none</p>'}
<h2>Environment</h2><table>{env}</table></body></html>
"""


# -- coverage of the Java classes (popverify coverage; spec/coverage.md) ------------------------

_BAR_COLOURS = ("#4a7fb5", "#d08c2e", "#5a9e5a", "#9b59b6")


def attach_coverage(summary: dict[str, Any], out: Path) -> None:
    """Put ``out/coverage.json`` (written by ``popverify coverage --out`` into the report's
    folder) into the summary as ``coverage``, unless the summary already has one; an
    unreadable file is reported as unavailable, not crashed on."""
    path = out / "coverage.json"
    if "coverage" in summary or not path.is_file():
        return
    try:
        summary["coverage"] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        summary.setdefault("unavailable", {})["coverage"] = f"unreadable {path.name}: {err}"


def _coverage_bars(profiles: list[tuple[str, dict[str, Any]]], labels: list[str]) -> str:
    """Inline SVG: one horizontal bar of branch coverage per class and profile."""
    esc = html.escape
    label_w, bar_w, bar_h, gap = 330, 300, 9, 6
    group_h = bar_h * len(profiles) + gap
    height = 30 + group_h * len(labels)
    parts = [f'<svg id="coverage-chart" xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 90}" '
             f'height="{height}" role="img" aria-label="branch coverage per class">']
    for i, (name, profile) in enumerate(profiles):
        colour = _BAR_COLOURS[i % len(_BAR_COLOURS)]
        parts.append(f'<rect x="{label_w + 150 * i}" y="4" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{label_w + 150 * i + 14}" y="13" font-size="11">{esc(name)} '
                     f'({esc(profile["release"])}) branches</text>')
    for r, label in enumerate(labels):
        y0 = 24 + r * group_h
        parts.append(f'<text x="{label_w - 6}" y="{y0 + group_h / 2}" font-size="11" text-anchor="end">{esc(label)}</text>')
        for i, (_, profile) in enumerate(profiles):
            row = next((c for c in profile.get("classes", []) if c["label"] == label), None)
            y = y0 + i * bar_h
            parts.append(f'<rect x="{label_w}" y="{y}" width="{bar_w}" height="{bar_h - 1}" fill="#eee"/>')
            branch = row["branch"] if row else None
            if branch is None or branch["percent"] is None:
                text = "absent" if branch is None else "no branches"
                parts.append(f'<text x="{label_w + 4}" y="{y + bar_h - 1}" font-size="9" fill="#777">{text}</text>')
                continue
            width = bar_w * branch["percent"] / 100.0
            parts.append(f'<rect x="{label_w}" y="{y}" width="{width:.1f}" height="{bar_h - 1}" '
                         f'fill="{_BAR_COLOURS[i % len(_BAR_COLOURS)]}"><title>{esc(label)}: {branch["percent"]} % '
                         f'({branch["covered"]}/{branch["total"]})</title></rect>'
                         f'<text x="{label_w + width + 4:.1f}" y="{y + bar_h - 1}" font-size="9">{branch["percent"]} %</text>')
    parts.append("</svg>")
    return "".join(parts)


def coverage_html(coverage: dict[str, Any] | None) -> str:
    """The report's coverage section: what ran, a table of line and branch coverage per Java
    class and profile, and a bar chart of branch coverage (inline SVG, no network assets)."""
    esc = html.escape
    if not coverage:
        return ("<p>no coverage measured under this folder: <code>popverify coverage --out DIR</code> "
                "with DIR this report's folder</p>")
    profiles = sorted(coverage.get("profiles", {}).items(),
                      key=lambda item: (PROFILES.index(item[0]) if item[0] in PROFILES else len(PROFILES), item[0]))
    if not profiles:
        return '<p class="failed">coverage.json holds no profile</p>'

    def cell(counter: dict[str, Any] | None) -> str:
        if counter is None:
            return '<td class="unavailable">absent</td>'
        if counter["percent"] is None:
            return "<td>–</td>"
        return f"<td>{counter['percent']} % ({counter['covered']}/{counter['total']})</td>"

    ran = []
    for name, profile in profiles:
        for source_name, source in sorted(profile.get("sources", {}).items()):
            if "error" in source:
                ran.append(f'<li class="failed">{esc(name)} {esc(source_name)}: {esc(source["error"])}</li>')
            elif source_name == "conformance":
                ran.append(f"<li>{esc(name)} (rocketmq {esc(profile['release'])}) conformance: "
                           f"{len(source['checks'])} checks, {source['cases']} cases</li>")
            else:
                verdicts = ", ".join(f"{n} {esc(s)}" for s, n in source.get("verdicts", {}).items())
                stops = f"; stopped: {esc(stops_text(source))}" if source.get("stops") else ""
                ran.append(f"<li>{esc(name)} (rocketmq {esc(profile['release'])}) {esc(source_name)}: {source['schedules']} "
                           f"schedules incl. {source.get('traces', 0)} traces ({verdicts}), {source['actions']} corpus "
                           f"actions, {source['actions_run']} run on both sides{stops}</li>")
    labels = [c["label"] for c in profiles[0][1].get("classes", [])]
    head = "".join(f"<th>{esc(n)} ({esc(p['release'])}) lines</th><th>{esc(n)} branches</th>"
                   f"<th>{esc(n)} branches in scope</th>" for n, p in profiles)
    body = []
    for label in labels:
        tds = []
        for _, profile in profiles:
            row = next((c for c in profile.get("classes", []) if c["label"] == label), None)
            # in scope: without the lines popverify/coverage/scope.py declares out of scope
            kept = row and (row.get("in_scope") or {}).get("branch")
            tds.append(cell(row and row["line"]) + cell(row and row["branch"])
                       + (cell(kept) if kept or not row or row["line"] is None else "<td>–</td>"))
        side = next(c["side"] for c in profiles[0][1]["classes"] if c["label"] == label)
        body.append(f"<tr><th>{esc(label)}</th><td>{esc(side)}</td>{''.join(tds)}</tr>")
    return (f"<p>JaCoCo {esc(str(coverage.get('jacoco')))} on the harness JVMs (spec/coverage.md).</p>"
            f"<ul>{''.join(ran)}</ul><table id=\"coverage\"><tr><th>class</th><th>side</th>{head}</tr>{''.join(body)}"
            f"</table>{_coverage_bars(profiles, labels)}")


def _states(model: dict) -> str:
    """A TLC model's size; TLC reports none when it stops in the initial states."""
    if model.get("distinct_states") is None:
        return "stopped in the initial states"
    return f"{model['distinct_states']} distinct states, depth {model.get('depth')}"


# -- live runs (popverify verify --live; popverify/live/suite.py, spec/live.md) -----------------

def live_columns(summary: dict[str, Any]) -> list[str]:
    """One matrix column per live run (``live/<profile>``), only when verify ran --live."""
    return [f"live/{r['profile']}" for r in summary["techniques"].get("live", {}).get("runs", [])]


def live_cells(summary: dict[str, Any], cells: dict[str, dict[str, dict[str, str]]]) -> None:
    """The live runs' property statuses beside the model's columns: holds -> passed, violated ->
    violated (or expected, when spec/expectations.json lists it violated for the profile),
    "checked until an excluding fault" -> passed with that note, not observable -> no cell."""
    for run in summary["techniques"].get("live", {}).get("runs", []):
        column = f"live/{run['profile']}"
        expected_pids = {v["property"] for v in run.get("violations", []) if v.get("expected")}
        for pid, status in run.get("properties", {}).items():
            if pid not in cells or status.startswith("not checked"):
                continue
            if status == "violated":
                state = "expected" if pid in expected_pids else "violated"
                count = sum(1 for v in run["violations"] if v["property"] == pid)
                text = f"{'expected finding' if state == 'expected' else 'violated'}: {count} on RocketMQ {run['release']}"
            else:
                state = "passed"
                text = f"{status} on RocketMQ {run['release']} ({run['mode']}, faults {','.join(run['faults']) or 'none'})"
            cells[pid][column] = {"state": state, "text": f"{text}; report {run['report']}"}


def live_html(summary: dict[str, Any]) -> str:
    """A table of the live runs' totals (empty when verify did not run --live)."""
    runs = summary["techniques"].get("live", {}).get("runs", [])
    if not runs:
        return ""
    esc = html.escape
    keys = list(runs[0]["totals"])
    head = "".join(f"<th>{esc(k)}</th>" for k in ["release", "faults", *keys, "violations", "seconds"])
    rows = []
    for r in runs:
        viol = "; ".join(f"{v['property']} (op {v['op']}{', expected' if v['expected'] else ''})"
                         for v in r["violations"]) or "none"
        rows.append(f"<tr><th>{esc(r['release'])} ({esc(r['profile'])})</th><td>{esc(','.join(r['faults']))}</td>"
                    + "".join(f"<td>{r['totals'].get(k, '')}</td>" for k in keys)
                    + f"<td>{esc(viol)}</td><td>{r['seconds'].get('total', '')}</td></tr>")
    return (f"<h2>Live runs</h2><p>Real RocketMQ on loopback, clients' history checked by the model's checker "
            f"(spec/live.md).</p><table><tr>{head}</tr>{''.join(rows)}</table>")
