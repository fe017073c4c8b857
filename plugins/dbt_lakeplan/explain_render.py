"""`lakeplan explain`'s three outputs of one report (explain_dbt.py): a table for the terminal, the JSON file, and one
self-contained HTML page (inline SVG, CSS and JS: it opens without a network) with the selection's DAG."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

JSON_FILE = "lakeplan_explain.json"
HTML_FILE = "lakeplan_explain.html"
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f")
NEXT_RUN_COLOURS = {"run": "#2e7d32", "nothing new": "#9e9e9e", "create": "#607d8b", "accept": "#1565c0",
                    "rebuild": "#ef6c00", "refuse": "#c62828"}


def _short(uid: str) -> str:
    return uid.split(".", 2)[-1] if uid.startswith("source.") else uid.rsplit(".", 1)[-1]


def _sources_cell(model: dict[str, Any]) -> str:
    return ", ".join(f"{_short(s['unique_id'])}: {s['distribution']}"
                     + (f" x{s['partitions']}" if s["partitions"] else "") for s in model["sources"]) or "-"  # fmt: skip


def _shuffles_cell(model: dict[str, Any]) -> str:
    if model["shuffles"] is None:
        return "-"
    causes = [x["cause"] for x in model["exchanges"] if x["shuffle"]]
    return f"{model['shuffles']}" + (f" ({', '.join(causes)})" if causes else "")


def _keyed_cell(model: dict[str, Any]) -> str:
    keyed = model.get("keyed")
    return "-" if not keyed else ("no shuffle" if keyed["avoided_shuffle"] else "shuffles: " + keyed["reason"])


def _groups_cell(model: dict[str, Any]) -> str:
    groups = model.get("write_groups")
    if not groups:
        return f"member of {model['member_of']}" if model.get("member_of") else "-"
    return " | ".join("+".join(group["members"]) for group in groups)


def _state_cell(model: dict[str, Any]) -> str:
    state = model.get("state")
    if not state:
        return "-"
    after = f" (after {', '.join(state['after'])} writes)" if state.get("after") else ""
    return state["next_run"] + after + (f" ({'; '.join(state['changed'])})" if state["changed"] else "")


def _change_cell(model: dict[str, Any]) -> str:
    change = model.get("change")
    if not change:
        return "-"
    reads = [f"{name.rsplit('.', 1)[-1]}: {read.split(':')[0]}" for name, read in change["reads"].items()]
    return change["change_mode"] + (f"; reads {', '.join(reads)}" if reads else "")


COLUMNS = (("model", lambda m: m["name"]), ("materialized", lambda m: m["materialized"]),
           ("sources (distribution x partitions)", _sources_cell), ("shuffles (cause)", _shuffles_cell),
           ("keyed", _keyed_cell), ("write groups", _groups_cell), ("change lands", _change_cell),
           ("next run", _state_cell))  # fmt: skip
MAX_CELL = 60


def terminal_table(report: dict[str, Any]) -> str:
    """The report as an aligned text table, then its errors and the change comparison, one sentence each."""
    rows = [[name for name, _ in COLUMNS]]
    for model in report["models"]:
        rows.append([_clip(cell(model)) for _, cell in COLUMNS])
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines += [f"error: {error}" for error in report["errors"]]
    lines += [f"error in {m['name']}: {m['error']}" for m in report["models"] if m["error"]]
    lines += [f"{m['name']}: {s['error']}" for m in report["models"] for s in m["statements"] if s.get("error")]
    comparison = report.get("state_comparison")
    if comparison:
        lines.append("")
        lines.append("changes against --state:")
        for change in comparison["changed"]:
            reached = ", ".join(_short(uid) for uid in change["downstream"]) or "nothing"
            lines.append(f"  {change['class']:<10} {change['name']}: {'; '.join(change['reasons'])}; reaches {reached}")
    return "\n".join(lines)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 3] + "..."


def write_json(report: dict[str, Any], target_dir: Path) -> Path:
    path = target_dir / JSON_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n")
    return path


def layers(nodes: list[str], parents: dict[str, list[str]]) -> dict[str, int]:
    """A simple layered layout: each node one layer right of its deepest parent among `nodes`."""
    layer: dict[str, int] = {}

    def depth(uid: str, path: frozenset = frozenset()) -> int:
        if uid not in layer:
            ups = [p for p in parents.get(uid, []) if p in nodes and p not in path]
            layer[uid] = 1 + max((depth(p, path | {uid}) for p in ups), default=-1)
        return layer[uid]

    for uid in nodes:
        depth(uid)
    return layer


def dag_svg(report: dict[str, Any]) -> str:
    """The selection's DAG as inline SVG: sources and models in layers, models filled by write group, stateful ones
    outlined by what the next run does, an edge red and dashed where the model shuffles that input's rows."""
    models = {m["unique_id"]: m for m in report["models"]}
    sources = sorted({s["unique_id"] for m in models.values() for s in m["sources"]}
                     | {p for m in models.values() for p in m["inputs"] if p.startswith("source.")})  # fmt: skip
    nodes = sources + sorted(models)
    # a partial-update target's members are inlined into it: its edges come from what they read, and from each member
    parents = {uid: [p for p in m["inputs"] if p in nodes] for uid, m in models.items()}
    by_name = {m["name"]: uid for uid, m in models.items()}
    for uid, m in models.items():
        if m.get("member_of") in by_name:
            parents[by_name[m["member_of"]]].append(uid)
    layer = layers(nodes, parents)
    rows: dict[int, int] = {}
    position = {}
    for uid in sorted(nodes, key=lambda u: (layer[u], u)):
        row = rows.get(layer[uid], 0)
        rows[layer[uid]] = row + 1
        position[uid] = (20 + layer[uid] * 230, 20 + row * 64)
    colours = {}  # one colour per write group of the selection, so that two targets' groups differ
    groups = [group for uid in sorted(models) for group in models[uid].get("write_groups") or []]
    for index, group in enumerate(groups):
        for member in group["members"]:
            colours[member] = PALETTE[index % len(PALETTE)]
    width = 20 + (max(layer.values(), default=0) + 1) * 230
    height = 20 + max(rows.values(), default=1) * 64
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="dag" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">']  # fmt: skip
    for uid, ups in parents.items():
        for parent in ups:
            (x1, y1), (x2, y2) = position[parent], position[uid]
            shuffled = parent in models[uid]["moved_inputs"]
            parts.append(f'<path class="edge{" shuffle" if shuffled else ""}" data-from="{html.escape(parent)}" '
                         f'data-to="{html.escape(uid)}" d="M{x1 + 180},{y1 + 20} C{x1 + 205},{y1 + 20} {x2 - 25},{y2 + 20} '
                         f'{x2},{y2 + 20}"><title>{"shuffle" if shuffled else "no shuffle"}</title></path>')  # fmt: skip
    for uid in nodes:
        x, y = position[uid]
        model = models.get(uid)
        name = _short(uid)
        fill = "#e0e0e0" if model is None else colours.get(model["name"], "#ffffff")
        state = (model or {}).get("state")
        stroke = NEXT_RUN_COLOURS.get(state["next_run"], "#333") if state else ("#c62828" if (model or {}).get("error") else "#555")
        badge = state["next_run"] if state else ("error" if (model or {}).get("error") else "")
        shuffles = (model or {}).get("shuffles")
        parts.append(
            f'<g class="node{" model" if model else " source"}" data-id="{html.escape(uid)}" tabindex="0">'
            f'<rect x="{x}" y="{y}" width="180" height="40" rx="6" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{3 if state else 1.5}"/>'
            f'<text x="{x + 8}" y="{y + 17}">{html.escape(name[:24])}</text>'
            f'<text class="sub" x="{x + 8}" y="{y + 32}">{html.escape((model or {}).get("materialized", "source"))}'
            f'{f" · {shuffles} shuffle(s)" if shuffles else ""}{f" · {badge}" if badge else ""}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lakeplan explain</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 0; display: flex; height: 100vh; }}
#graph {{ flex: 3; overflow: auto; padding: 8px; border-right: 1px solid #ccc; }}
#details {{ flex: 2; overflow: auto; padding: 8px 16px; }}
.node {{ cursor: pointer; }} .node text {{ font-size: 12px; }} .node text.sub {{ font-size: 10px; fill: #444; }}
.node.selected rect {{ stroke: #000; stroke-width: 4; }}
.edge {{ fill: none; stroke: #888; stroke-width: 1.5; }} .edge.shuffle {{ stroke: #c62828; stroke-dasharray: 6 3; stroke-width: 2.5; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }}
pre {{ white-space: pre-wrap; background: #f6f6f6; padding: 6px; font-size: 11px; }}
.legend span {{ display: inline-block; margin-right: 12px; }}
</style></head><body>
<div id="graph"><h2>lakeplan explain</h2>
<p class="legend"><span>fill: a member's write group</span><span>outline: next run ({legend})</span>
<span style="color:#c62828">red dashed edge: the model shuffles that input</span></p>
{errors}{svg}</div>
<div id="details"><p>Click a model to see its details.</p></div>
<script type="application/json" id="report">{data}</script>
<script>
(function () {{
  const report = JSON.parse(document.getElementById('report').textContent);
  const models = Object.fromEntries(report.models.map(m => [m.unique_id, m]));
  const details = document.getElementById('details');
  function el(tag, text) {{ const e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; }}
  function table(rows, head) {{
    const t = el('table'); const h = t.insertRow(); head.forEach(c => h.appendChild(el('th', c)));
    rows.forEach(r => {{ const tr = t.insertRow(); r.forEach(c => tr.insertCell().textContent = c === null ? '-' : String(c)); }});
    return t;
  }}
  function show(uid) {{
    document.querySelectorAll('.node').forEach(n => n.classList.toggle('selected', n.dataset.id === uid));
    details.replaceChildren();
    const m = models[uid];
    if (!m) {{ details.appendChild(el('h3', uid)); details.appendChild(el('p', 'a source read by the selection')); return; }}
    details.appendChild(el('h3', m.name));
    details.appendChild(el('p', 'materialized: ' + m.materialized + (m.member_of ? ' of ' + m.member_of : '')));
    if (m.error) details.appendChild(el('p', 'error: ' + m.error));
    details.appendChild(el('h4', 'sources'));
    details.appendChild(table(m.sources.map(s => [s.unique_id, s.scan_parallelism, s.distribution, s.partitions]),
      ['source', 'scan_parallelism', 'distribution', 'partitions']));
    details.appendChild(el('h4', 'exchanges: ' + (m.shuffles === null ? 'not planned' : m.shuffles + ' shuffle(s)')));
    details.appendChild(table(m.exchanges.map(x => [x.cause, x.partitioning, x.arguments]), ['cause', 'partitioning', 'arguments']));
    if (m.keyed) details.appendChild(el('p', 'keyed: ' + (m.keyed.avoided_shuffle ? 'no shuffle' : 'shuffles') + ': ' + m.keyed.reason));
    if (m.change) {{
      details.appendChild(el('h4', 'change lands: ' + m.change.lands));
      details.appendChild(table(Object.entries(m.change.reads), ['input read with new_rows / changed_keys', 'this run reads']));
      details.appendChild(el('p', 'maintenance: ' + (m.change.maintenance ? JSON.stringify(m.change.maintenance) : 'none')));
    }}
    if (m.write_groups) {{
      details.appendChild(el('h4', 'write groups'));
      details.appendChild(table(m.write_groups.map(g => [g.members.join(', '), g.collapse.join('; '),
        Object.entries(g.split_from).map(([o, l]) => o + ': ' + l.join(', ')).join('; ')]),
        ['members', 'collapse', 'split from (digest parts)']));
    }}
    if (m.state) details.appendChild(el('p', 'state: fingerprint ' + m.state.fingerprint + ', table records ' +
      (m.state.stored || 'none') + '; next run: ' + m.state.next_run + (m.state.after ? ' (after ' + m.state.after.join(', ') + ' writes)' : '') + (m.state.changed.length ? ' (' + m.state.changed.join('; ') + ')' : '')));
    m.statements.forEach((s, i) => {{
      details.appendChild(el('h4', 'statement ' + (i + 1) + ': ' + s.action + (s.reason ? ' (' + s.reason + ')' : '')));
      if (s.error) details.appendChild(el('p', 'Spark: ' + s.error));
      details.appendChild(el('pre', s.plan || s.sql));
    }});
  }}
  document.querySelectorAll('.node').forEach(n => {{
    n.addEventListener('click', () => show(n.dataset.id));
    n.addEventListener('keydown', e => {{ if (e.key === 'Enter') show(n.dataset.id); }});
  }});
}})();
</script></body></html>
"""


def write_html(report: dict[str, Any], target_dir: Path) -> Path:
    path = target_dir / HTML_FILE
    data = json.dumps(report, sort_keys=True, default=str).replace("</", "<\\/")
    errors = "".join(f"<p class=\"error\">{html.escape(error)}</p>" for error in report["errors"])
    legend = ", ".join(f'<span style="color:{c}">{a}</span>' for a, c in NEXT_RUN_COLOURS.items())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PAGE.format(svg=dag_svg(report), data=data, errors=errors, legend=legend))
    return path
