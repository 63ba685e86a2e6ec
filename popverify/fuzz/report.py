"""summary.json and report.html of a campaign (inline SVG plot, no network assets)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from popverify.trace.itf import read_trace, timeline


def _svg(series: dict[str, list[dict[str, Any]]], x_key: str, x_label: str, plot_id: str) -> str:
    """Coverage curves (one polyline per series) as an inline SVG."""
    if not any(series.values()):
        return "<p>no rounds ran</p>"
    w, h = 480, 200
    colours = ("#1f77b4", "#d62728")
    max_x = max(p[x_key] for points in series.values() for p in points) or 1.0
    max_c = max(p["coverage"] for points in series.values() for p in points) or 1
    lines, legend = [], []
    for i, (name, points) in enumerate(series.items()):
        pts = [(0.0, 0)] + [(p[x_key], p["coverage"]) for p in points]
        coords = " ".join(f"{40 + x / max_x * (w - 60):.1f},{h - 30 - c / max_c * (h - 50):.1f}" for x, c in pts)
        lines.append(f'<polyline fill="none" stroke="{colours[i % 2]}" stroke-width="2" points="{coords}"/>')
        legend.append(f'<text x="{50}" y="{20 + 14 * i}" font-size="11" fill="{colours[i % 2]}">'
                      f'{html.escape(name)}: {points[-1]["coverage"] if points else 0}</text>')
    return (f'<svg id="{plot_id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
            f'<line x1="40" y1="{h-30}" x2="{w-20}" y2="{h-30}" stroke="#444"/>'
            f'<line x1="40" y1="20" x2="40" y2="{h-30}" stroke="#444"/>{"".join(lines)}{"".join(legend)}'
            f'<text x="{w/2}" y="{h-8}" font-size="11" text-anchor="middle">{x_label} (max {max_x:g})</text>'
            f'<text x="12" y="{h/2}" font-size="11" transform="rotate(-90 12 {h/2})">coverage (max {max_c})</text>'
            f'</svg>')


def _comparison(summary: dict[str, Any]) -> str:
    """Guided rounds against the blind control of the same budget, when it ran."""
    blind = summary.get("blind_baseline")
    if blind is None:
        return ("<p>No blind control in this campaign (run with <code>--rounds R --compare-blind</code> to "
                "measure guidance against fresh seeds for the same budget).</p>")
    guided = {"runs": summary["runs"], "coverage": summary["coverage"],
              "violations_by_property": summary["violations_by_property"],
              "time_to_first_failure_s": summary.get("time_to_first_failure_s")}
    rows = "".join(
        f"<tr><th>{name}</th><td>{s['runs']}</td><td>{s['coverage']}</td>"
        f"<td>{len(s['violations_by_property'])}</td><td>{s['time_to_first_failure_s']}</td></tr>"
        for name, s in (("guided", guided), ("blind", blind)))
    delta = summary["coverage"] - blind["coverage"]
    return (f'<table id="guided-vs-blind"><tr><th></th><th>runs</th><th>coverage points</th>'
            f"<th>properties violated</th><th>time to first failure (s)</th></tr>{rows}</table>"
            f"<p>Guided rounds reached {delta:+d} coverage points against blind seeds for the same budget.</p>"
            + _svg({"guided": summary["coverage_timeline"], "blind": blind["coverage_timeline"]}, "runs",
                   "runs", "guided-vs-blind-plot"))


def _timeline(path: str) -> str:
    return "\n".join(timeline(read_trace(Path(path))["states"]))


def _validation(validation: dict[str, str] | None) -> str:
    """The counterexample's trace-validation verdict (push), one line."""
    if not validation:
        return ""
    detail = f" ({validation['detail']})" if validation.get("detail") else ""
    return f"<br>trace validation against PushConsumerOffsets: <b>{html.escape(validation['verdict'] + detail)}</b>"


def _confirmation(v: dict[str, Any]) -> str:
    """The counterexample's verdict on Java (popverify/findings/confirmation.py), one line."""
    c = v.get("confirmation")
    if not c:
        return ""
    mark = "MODEL QUESTION: " if c.get("model_question") else ""
    return f"<br>on Java: <b>{html.escape(mark + c['text'])}</b>"


def domain_table_html(domain: list[dict[str, Any]], table_id: str = "domain") -> str:
    """The domain table (summary["domain"]) as HTML: per dimension the declared range, the range
    reached, the boundaries hit and those not reached (a row that missed one is marked)."""
    if not domain:
        return "<p>no domain table (no runs)</p>"
    esc = html.escape
    short = [r for r in domain if not r["all_reached"]]
    # what no run drove is said before the table, not only marked in it
    loud = ('<p class="unreached"><b>NOT REACHED: ' + esc("; ".join(
        f"{r['dimension']} {', '.join(str(b) for b in r['unreached'])}" for r in short)) + "</b></p>") if short else \
        f"<p>every boundary of all {len(domain)} dimensions reached</p>"
    cells = []
    for r in domain:
        reached = "never drawn" if r["reached"] is None else f"{r['reached'][0]}..{r['reached'][1]}"
        missing = ", ".join(str(b) for b in r["unreached"]) or "-"
        mark = "" if r["all_reached"] else ' class="unreached"'
        cells.append(f"<tr{mark}><td>{esc(r['dimension'])}</td><td>{r['declared'][0]}..{r['declared'][1]}</td>"
                     f"<td>{reached}</td><td>{len(r['boundaries_reached'])}/{len(r['boundaries'])}</td>"
                     f"<td>{esc(missing)}</td><td>{esc(r.get('java', ''))}</td></tr>")
    return (f'{loud}<table id="{table_id}"><tr><th>dimension</th><th>declared</th><th>reached</th><th>boundaries hit</th>'
            f"<th>not reached</th><th>Java</th></tr>{''.join(cells)}</table>")


def write_report(out: Path, summary: dict[str, Any]) -> None:
    """Write summary.json and report.html under ``out``."""
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    esc = html.escape
    by_prop = "".join(f"<tr><td>{esc(k)}</td><td>{v}</td></tr>" for k, v in sorted(summary["violations_by_property"].items()))
    by_sig = "".join(
        f"<tr><td>{esc(v.get('signature', v['property']))}</td><td>{'UNEXPLAINED' if v.get('unexplained') else 'explained'}"
        f"{' / UNEXPECTED' if v['unexpected'] else ''}</td><td>{v['runs']}</td><td>{v.get('first_round')}</td>"
        f"<td>{v.get('time_to_first_s')}</td><td>{v['minimal_steps']}</td>"
        f"<td>{esc(v.get('confirmation', {}).get('text', ''))}</td></tr>" for v in summary["violations"])
    cexes = "".join(
        f"<h3>{esc(v.get('signature', v['property']))} {'(UNEXPECTED)' if v['unexpected'] else '(expected finding)'}</h3>"
        f"<p>{esc(v['message'])}<br>{v['runs']} run(s); minimal trace {v['minimal_steps']} steps: "
        f"<code>{esc(Path(v['trace']).name)}</code>{_validation(v.get('validation'))}{_confirmation(v)}</p>"
        f"<pre>{esc(_timeline(v['trace']))}</pre>"
        for v in summary["violations"])
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>popverify fuzz report</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em}}td,th{{border:1px solid #bbb;padding:.3em .6em}}
table{{border-collapse:collapse}}.unreached{{background:#fdd;color:#900}}pre{{background:#f6f6f6;padding:.5em;font-size:.8em;overflow-x:auto}}</style></head>
<body><h1>Fuzz campaign: {esc(summary['profile'])} / {esc(summary['mode'])}</h1>
<table><tr><th>engine</th><td>{esc(str(summary.get('engine') or 'spark ' + str(summary.get('master'))))}</td></tr>
<tr><th>runs</th><td>{summary['runs']}</td></tr><tr><th>steps</th><td>{summary['steps']}</td></tr>
<tr><th>runs/s</th><td>{summary['runs_per_s']}</td></tr><tr><th>steps/s</th><td>{summary['steps_per_s']}</td></tr>
<tr><th>time to first failure (s)</th><td>{summary.get('time_to_first_failure_s')}</td></tr>
<tr><th>coverage points</th><td>{summary['coverage']}</td></tr>
<tr><th>z3 key witnesses reached (runs)</th><td>{esc(json.dumps(summary.get('key_witnesses_reached', {})))}</td></tr></table>
<h2>Violations by root-cause signature</h2><p>Unexplained signatures first: no known finding's
mechanism switch clears them (spec/findings/README.md).</p><table id="by-signature"><tr><th>signature</th><th>status</th>
<th>runs</th><th>first round</th><th>time to first counterexample (s)</th><th>minimal steps</th>
<th>on Java</th></tr>{by_sig}</table>
<h2>Violations by property</h2><table id="by-property"><tr><th>property</th><th>runs</th></tr>{by_prop}</table>
<h2>Input domain</h2><p>Per dimension (an action's value argument, or a configuration field):
the declared range, the range the runs reached, and the boundaries (the ends and every Java
width limit inside) hit or not reached (spec/fuzzing.md "The input domain").</p>
{domain_table_html(summary.get('domain', []))}
<h2>Coverage over time</h2>{_svg({'coverage': summary['coverage_timeline']}, 'seconds', 'seconds', 'coverage-plot')}
<h2>Guided rounds against blind seeds</h2>{_comparison(summary)}
<h2>Minimal counterexamples</h2>{cexes or '<p>none</p>'}</body></html>
"""
    (out / "report.html").write_text(page, encoding="utf-8")
