"""`lakeplan explain`'s three outputs of one report (explain_dbt.py): a table for the terminal, the JSON file, and one
self-contained HTML page (inline SVG, CSS and JS: it opens without a network) with the selection's DAG."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from dbt_lakeplan.explain_layout import box_width, layout

JSON_FILE = "lakeplan_explain.json"
HTML_FILE = "lakeplan_explain.html"
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f")
INPUT_FILL = "#e0e0e0"
NEXT_RUN_COLOURS = {"run": "#2e7d32", "nothing new": "#9e9e9e", "create": "#607d8b", "accept": "#1565c0",
                    "rebuild": "#ef6c00", "refuse": "#c62828"}


def _short(uid: str) -> str:
    return uid.split(".", 2)[-1] if uid.startswith("source.") else uid.rsplit(".", 1)[-1]


def _sources_cell(model: dict[str, Any]) -> str:
    return ", ".join(f"{s['name']}: {s['distribution']}"
                     + (f" x{s['partitions']}" if s["partitions"] else "") for s in model["sources"]) or "-"  # fmt: skip


def _shuffles_cell(model: dict[str, Any]) -> str:
    if model["shuffles"] is None:
        sent = [s for s in model["statements"] if s["action"] != "skip"]
        return "nothing sent" if model["statements"] and not sent else "-"
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
    reads = [f"{name}: {read.split(':')[0]}" for name, read in change["reads"].items()]
    mode = change["lands"] if change["change_mode"] == "delta" else change["change_mode"]  # its delta's size
    return mode + (f"; reads {', '.join(reads)}" if reads else "")


COLUMNS = (("model", lambda m: m["name"]), ("materialized", lambda m: m["materialized"]),
           ("sources (distribution x partitions)", _sources_cell), ("shuffles (cause)", _shuffles_cell),
           ("keyed", _keyed_cell), ("write groups", _groups_cell), ("change lands", _change_cell),
           ("next run", _state_cell))  # fmt: skip
CELL_WIDTH = 60  # characters of a cell shown before `...` (lakeplan explain --width; 0: every character)


def terminal_table(report: dict[str, Any], width: int = CELL_WIDTH) -> str:
    """The report as an aligned text table (cells cut at `width` characters), then its errors and the change
    comparison, one sentence each."""
    rows = [[name for name, _ in COLUMNS]]
    for model in report["models"]:
        rows.append([_clip(cell(model), width) for _, cell in COLUMNS])
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines += [f"error: {error}" for error in report["errors"]]
    lines += [f"error in {m['name']}: {m['error']}" for m in report["models"] if m["error"]]
    lines += [f"{m['name']}: {s['error']}" for m in report["models"] for s in m["statements"]
              if s.get("error") and s["error"] != m["error"]]  # an unbuilt input: said once, for the model
    comparison = report.get("state_comparison")
    if comparison:
        lines.append("")
        lines.append("changes against --state:")
        for change in comparison["changed"]:
            reached = ", ".join(_short(uid) for uid in change["downstream"]) or "nothing"
            lines.append(f"  {change['class']:<10} {change['name']}: {'; '.join(change['reasons'])}; reaches {reached}")
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    return text if width <= 0 or len(text) <= width else text[: max(width - 3, 1)] + "..."


def write_json(report: dict[str, Any], target_dir: Path) -> Path:
    path = target_dir / JSON_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n")
    return path


def input_name(report: dict[str, Any], uid: str) -> str:
    """The name the user writes for a node (`shop.orders` for source('shop', 'orders'), a model's or seed's name)."""
    return report.get("names", {}).get(uid) or _short(uid)


def dag_edges(models: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Every input of a selected model into it (sources, seeds, models, selected or not), and each partial-update
    member into its target: a target's members are inlined into it, so it reads what they read too."""
    edges = {(parent, uid) for uid, m in models.items() for parent in m["inputs"]}
    by_name = {m["name"]: uid for uid, m in models.items()}
    edges |= {(uid, by_name[m["member_of"]]) for uid, m in models.items() if m.get("member_of") in by_name}
    return sorted(edges)


def _group_colours(models: dict[str, dict[str, Any]]) -> dict[str, str]:
    """One colour per write group of the selection (by member name), so that two targets' groups differ."""
    groups = [group for uid in sorted(models) for group in models[uid].get("write_groups") or []]
    return {member: PALETTE[i % len(PALETTE)] for i, group in enumerate(groups) for member in group["members"]}


def _node_look(uid: str, model: dict[str, Any] | None, colours: dict[str, str]) -> tuple[str, str, str, str]:
    """A node's class, subtitle, fill and outline."""
    if model is None:
        kind = uid.split(".", 1)[0]
        if kind in ("source", "seed"):
            return "node input", kind, INPUT_FILL, "#555"
        return "node outside", f"{kind}, not selected", "#ffffff", "#555"
    state = model.get("state")
    badge = state["next_run"] if state else ("error" if model.get("error") else "")
    shuffles = model.get("shuffles")
    sub = model["materialized"] + (f" · {shuffles} shuffle(s)" if shuffles else "") + (f" · {badge}" if badge else "")
    stroke = NEXT_RUN_COLOURS.get(state["next_run"], "#333") if state else ("#c62828" if model.get("error") else "#555")
    return "node model" + (" stateful" if state else ""), sub, colours.get(model["name"], "#ffffff"), stroke


def dag_svg(report: dict[str, Any]) -> str:
    """The selection's DAG as inline SVG, laid out by Graphviz (explain_layout.py): sources and seeds first, models
    filled by write group, stateful ones outlined by what the next run does, an edge red and dashed where the model
    shuffles that input's rows. NoGraphviz where `dot` is missing."""
    models = {m["unique_id"]: m for m in report["models"]}
    edges = dag_edges(models)
    nodes = sorted(set(models) | {parent for parent, _ in edges})
    colours = _group_colours(models)
    looks = {uid: _node_look(uid, models.get(uid), colours) for uid in nodes}
    widths = {uid: box_width(input_name(report, uid), looks[uid][1]) for uid in nodes}
    drawn = layout(widths, edges, [uid for uid in nodes if looks[uid][0] == "node input"])
    width, height = drawn.width + 8, drawn.height + 8
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="dag" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="-4 -4 {width:.0f} {height:.0f}">{ARROW}']  # fmt: skip
    for (parent, uid), path in drawn.edges.items():
        shuffled = parent in models[uid].get("moved_inputs", []) if uid in models else False
        parts.append(f'<path class="edge{" shuffle" if shuffled else ""}" data-from="{html.escape(parent)}" '
                     f'data-to="{html.escape(uid)}" d="{path}" marker-end="url(#arrow)">'
                     f'<title>{"shuffle" if shuffled else "no shuffle"}</title></path>')  # fmt: skip
    for uid in nodes:
        box, (kind, sub, fill, stroke) = drawn.boxes[uid], looks[uid]
        parts.append(
            f'<g class="{kind}" data-id="{html.escape(uid)}" tabindex="0">'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" rx="6" '
            f'fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{box.x + 8:.1f}" y="{box.y + 17:.1f}">{html.escape(input_name(report, uid))}</text>'
            f'<text class="sub" x="{box.x + 8:.1f}" y="{box.y + 32:.1f}">{html.escape(sub)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


ARROW = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
         'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
         '<path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>')  # fmt: skip


def _swatch(fill: str = "none", stroke: str = "#555", dash: str = "", line: bool = False) -> str:
    shape = (f'<line x1="1" y1="7" x2="27" y2="7" stroke="{stroke}" stroke-width="2.5" stroke-dasharray="{dash}"/>'
             if line else f'<rect x="1" y="1" width="26" height="12" rx="3" fill="{fill}" stroke="{stroke}" '
             f'stroke-width="2" stroke-dasharray="{dash}"/>')  # fmt: skip
    return f'<svg class="swatch" width="28" height="14" viewBox="0 0 28 14">{shape}</svg>'


def legend() -> str:
    """The page's key: each kind of box, fill, outline and edge with a swatch drawn as the graph draws it."""
    keys = [(_swatch(INPUT_FILL), "source or seed"), (_swatch("#ffffff", dash="4 3"), "model outside the selection"),
            ("".join(_swatch(c) for c in PALETTE[:3]), "a partial-update member's write group")]
    keys += [(_swatch("#ffffff", colour), next_run) for next_run, colour in NEXT_RUN_COLOURS.items()]
    keys += [(_swatch(stroke="#888", line=True), "reads"),
             (_swatch(stroke="#c62828", dash="6 3", line=True), "reads and shuffles that input's rows")]  # fmt: skip
    spans = [f'<span class="key">{swatch}<span>{html.escape(text)}</span></span>' for swatch, text in keys]
    return "".join(spans[:3]) + '<span class="title">next run (outline):</span>' + "".join(spans[3:])


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lakeplan explain</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 0; display: flex; height: 100vh; }}
#graph {{ flex: 3; min-width: 0; overflow: auto; padding: 8px; border-right: 1px solid #ccc; }}
#details {{ flex: 2; min-width: 0; overflow: auto; padding: 8px 16px; }}
svg#dag {{ max-width: 100%; height: auto; display: block; }}
.node {{ cursor: pointer; }} .node text {{ font: 12px system-ui, sans-serif; }}
.node text.sub {{ font-size: 10px; fill: #444; }} .node rect {{ stroke-width: 1.5; }}
.node.stateful rect {{ stroke-width: 3; }} .node.outside rect {{ stroke-dasharray: 4 3; }}
.node.selected rect {{ stroke: #000; stroke-width: 4; }}
.edge {{ fill: none; stroke: #888; stroke-width: 1.5; }} .edge.shuffle {{ stroke: #c62828; stroke-dasharray: 6 3; stroke-width: 2.5; }}
#details table {{ border-collapse: collapse; table-layout: fixed; width: 100%; }}
td, th {{ border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }}
pre {{ white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 6px; font-size: 11px; }}
.legend {{ display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; }}
.legend .key {{ display: inline-flex; align-items: center; gap: 4px; }} .swatch {{ flex: none; }}
.legend .title {{ margin-left: 10px; }}
</style></head><body>
<div id="graph"><h2>lakeplan explain</h2>
<p class="legend">{legend}</p>
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
  // a table only where there are rows: an empty table under a heading reads as missing data
  function rowsTable(rows, head) {{ if (rows.length) details.appendChild(table(rows, head)); }}
  function section(title, rows, head) {{
    details.appendChild(el('h4', rows.length ? title : title + ': none'));
    rowsTable(rows, head);
  }}
  const names = report.names || {{}};
  function show(uid) {{
    document.querySelectorAll('.node').forEach(n => n.classList.toggle('selected', n.dataset.id === uid));
    details.replaceChildren();
    const m = models[uid];
    if (!m) {{
      details.appendChild(el('h3', names[uid] || uid));
      const kind = uid.split('.')[0];
      details.appendChild(el('p', 'a ' + kind + ' the selection reads' + (kind === 'model' ? ' (not selected)' : '')));
      return;
    }}
    details.appendChild(el('h3', m.name));
    details.appendChild(el('p', 'materialized: ' + m.materialized + (m.member_of ? ' of ' + m.member_of : '')));
    if (m.error) details.appendChild(el('p', 'error: ' + m.error));
    section('sources', m.sources.map(s => [s.name, s.scan_parallelism, s.distribution, s.partitions]),
      ['source', 'scan_parallelism', 'distribution', 'partitions']);
    details.appendChild(el('h4', 'exchanges: ' + (m.shuffles === null ? 'not planned' : m.shuffles + ' shuffle(s)')));
    rowsTable(m.exchanges.map(x => [x.cause, x.partitioning, x.arguments]), ['cause', 'partitioning', 'arguments']);
    if (m.keyed) details.appendChild(el('p', 'keyed: ' + (m.keyed.avoided_shuffle ? 'no shuffle' : 'shuffles') + ': ' + m.keyed.reason));
    if (m.change) {{
      details.appendChild(el('h4', 'change lands: ' + m.change.lands));
      rowsTable(Object.entries(m.change.reads), ['input read with new_rows / changed_keys', 'this run reads']);
      section('maintenance', Object.entries(m.change.maintenance || {{}}).map(([k, v]) =>
        [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : v]), ['setting', 'value']);
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
      if (s.error && s.error !== m.error) details.appendChild(el('p', 'Spark: ' + s.error));
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
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PAGE.format(svg=dag_svg(report), data=data, errors=errors, legend=legend()))
    return path
