"""summary.json and a self-contained report.html (inline CSS, no network assets)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from popverify.checker.expectations import expected
from popverify.checker.properties import PROPERTIES

PROFILES = ("v5.0", "develop")
CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #bbb;padding:.3em .6em;font-size:.9em;vertical-align:top}th{background:#eee}
.proved,.clean,.passed,.model-checked{background:#d9f2d9}.violated{background:#f8d7d7}.expected{background:#fbe9c9}
.unavailable,.error{background:#e6e6e6}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:.8em}"""


def matrix(summary: dict[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    """{property: {f"{technique}/{profile}": cell}} with cells like "proved", "clean", "violated"."""
    cells: dict[str, dict[str, dict[str, str]]] = {pid: {} for pid in PROPERTIES}
    proofs = summary["techniques"].get("z3", {})
    for proof in proofs.get("proofs", []):
        for pid in proof.get("properties", []):
            prev = cells[pid].get("z3", {}).get("state")
            state = "proved" if proof["result"] == "proved" and prev in (None, "proved") else "error"
            cells[pid]["z3"] = {"state": state, "text": state}
    for profile in PROFILES:
        camp = summary["techniques"].get("simulation", {}).get(profile)
        if camp is None:
            continue
        found = {f["property"]: f for f in camp["findings"]}
        for pid in PROPERTIES:
            if pid.startswith("ALLOC"):
                continue
            key = f"simulation/{profile}"
            if pid in found:
                f = found[pid]
                state = "violated" if f["unexpected"] else "expected"
                cells[pid][key] = {"state": state, "text": f"{state}: {f['runs']} run(s), minimal {f['minimal_steps']} steps",
                                   "trace": f["trace"]}
            else:
                cells[pid][key] = {"state": "clean", "text": f"clean in {camp['runs']} runs"}
    for model in summary["techniques"].get("tlc", {}).get("models", []):
        if model["result"] == "expected-violation":
            continue
        for pid in model.get("properties", []):
            state = "model-checked" if model["result"] == "ok" else "violated"
            cells[pid]["tlc"] = {"state": state, "text": f"{state}: {model['model']}, {model['distinct_states']} states"}
    stateful = summary["techniques"].get("stateful")
    if stateful is not None:
        for pid in ("ALO-1", "ALO-2", "NSR-1", "INV-1", "OFF-1", "OFF-2", "CKM-1"):
            state = "passed" if stateful["result"] == "passed" else "error"
            cells[pid]["stateful"] = {"state": state, "text": state}
    return cells


def write(summary: dict[str, Any], out: Path) -> None:
    """Write summary.json and report.html under ``out``."""
    summary["matrix"] = matrix(summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / "report.html").write_text(render(summary), encoding="utf-8")


def render(summary: dict[str, Any]) -> str:
    """The HTML report."""
    esc = html.escape
    columns = ["tlc", "z3", "simulation/v5.0", "simulation/develop", "stateful"]
    rows = []
    for pid, prop in PROPERTIES.items():
        tds = []
        for col in columns:
            cell = summary["matrix"][pid].get(col)
            if cell is None:
                tds.append('<td class="unavailable">—</td>')
                continue
            text = esc(cell["text"])
            if "trace" in cell:
                text += f'<br><a href="{esc(Path(cell["trace"]).name)}">minimal trace</a>'
            tds.append(f'<td class="{esc(cell["state"])}">{text}</td>')
        expect = " / ".join(f"{p}: {expected(p, pid)}" for p in PROFILES)
        rows.append(f"<tr><th>{esc(pid)}</th><td>{esc(prop.title)}</td><td>{esc(expect)}</td>{''.join(tds)}</tr>")
    findings = []
    for profile in PROFILES:
        camp = summary["techniques"].get("simulation", {}).get(profile)
        for f in (camp or {}).get("findings", []):
            timeline = esc("\n".join(f["timeline"]))
            findings.append(f"<h3>{esc(profile)} — {esc(f['property'])} ({'UNEXPECTED' if f['unexpected'] else 'expected finding'})</h3>"
                            f"<p>{esc(f['message'])}<br>seed {f['seed']}, shrunk from {f['original_steps']} to "
                            f"{f['minimal_steps']} steps; replay: <code>popverify replay {esc(Path(f['trace']).name)}</code></p>"
                            f"<pre>{timeline}</pre>")
    techniques = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v.get('result', v.get('status', ''))))}</td>"
                         f"<td>{esc(str(v.get('seconds', '')))}</td></tr>"
                         for k, v in summary["techniques"].items() if isinstance(v, dict) and "result" in v)
    unavailable = "".join(f"<tr><th>{esc(k)}</th><td class=\"unavailable\">unavailable: {esc(str(v))}</td><td></td></tr>"
                          for k, v in sorted(summary["techniques"].get("unavailable", {}).items()))
    mutation = summary.get("mutation")
    if mutation:
        sim = mutation["techniques"]["simulation"]
        mutation_html = (f"<p id=\"mutation\">simulation checker: {sim['killed']}/{sim['total']} mutants killed, score "
                         f"{sim['score']} (operators {esc(', '.join(mutation['operators']))}; "
                         f"{mutation['seeds']} seeds × {mutation['steps']} steps per profile)</p>"
                         + "<table>" + "".join(f"<tr><td>{'killed' if m['killed'] else 'SURVIVED'}</td><td>{esc(m['mutant'])}</td>"
                                               f"<td>{esc(' '.join(m['by']))}</td></tr>" for m in mutation["mutants"]) + "</table>")
    else:
        mutation_html = "<p>no mutation run under this folder: <code>popverify mutate --out DIR</code></p>"
    env = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v.get('version', v.get('error', '')))}</td></tr>"
                  for k, v in summary["environment"].items())
    figures = "".join(f"<tr><th>{esc(p)}</th><td>{c['runs']}</td><td>{c['steps']}</td><td>{c['seconds']}</td>"
                      f"<td>{c['coverage']}</td></tr>"
                      for p, c in summary["techniques"].get("simulation", {}).items() if isinstance(c, dict) and "runs" in c)
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>popverify report</title>
<style>{CSS}</style></head><body><h1>popverify verify</h1>
<p>Outcome: <strong id="outcome">{esc(summary['outcome'])}</strong></p>
<h2>Property × technique</h2><table id="matrix"><tr><th>ID</th><th>property</th><th>expected</th>
{''.join(f'<th>{esc(c)}</th>' for c in columns)}</tr>{''.join(rows)}</table>
<h2>Techniques</h2><table>{techniques}{unavailable}</table>
<h2>Mutation score</h2>{mutation_html}
<h2>Simulation figures</h2><table><tr><th>profile</th><th>runs</th><th>steps</th><th>seconds</th><th>coverage points</th></tr>{figures}</table>
<h2>Findings (minimal counterexamples)</h2>{''.join(findings) or '<p>none</p>'}
<h2>Environment</h2><table>{env}</table></body></html>
"""
