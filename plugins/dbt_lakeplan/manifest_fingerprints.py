"""Fingerprints of a parsed dbt manifest: the dbt glue of normalize.py and fingerprint.py.

Node-local logic = the stably rendered, normalised SQL (with and without `is_incremental()`), the declared
output columns and types (a partial-update target's with their merge rules and sequence groups), the configs
that change results (below), and the definitions of the macros the node calls; a seed has its CSV header instead
of SQL (its rows are data). Everything else in a config is a tuning knob and never counts.

Rendering and normalising is the costly part (~1.5 ms a node) and runs on every manifest load, so the SQL
logic is memoised by everything it depends on (`sql_cache`, kept by the plugin in dbt's target folder).
"""

from __future__ import annotations

import csv
import os
from typing import Any

import jinja2
import sqlglot

from dbt_lakeplan.fingerprint import NodeLogic, ancestors, digest, fingerprints, rerun_logic, short, target_parts
from dbt_lakeplan.materializations import is_inlined, is_stateful, is_target
from dbt_lakeplan.merge_rules import DEFAULT_RULE
from dbt_lakeplan.node_plan import PLAN_KEY
from dbt_lakeplan.normalize import normalize_sql, render_stable
from dbt_lakeplan.settings import contents_keys

CONFIG_KEY = "lakeplan_fingerprint"
FINGERPRINTED = ("model", "seed", "snapshot")
# dbt's own configs that change results; lakeplan's are those its declarations mark (settings.py)
DBT_RESULT_CONFIGS = (
    "incremental_strategy", "incremental_predicates", "predicates", "merge_update_columns", "merge_exclude_columns",
    "strategy", "updated_at", "check_cols", "column_types",
)
RESULT_CONFIGS = DBT_RESULT_CONFIGS + contents_keys("model")
RESULT_SOURCE_META = contents_keys("source")


class _Resolver:
    """ref() and source() names to unique_ids, as the manifest resolves them."""

    def __init__(self, manifest):
        self.refs: dict[tuple, str] = {}
        for node in manifest.nodes.values():
            if node.resource_type in FINGERPRINTED:
                self.refs.setdefault((node.name,), node.unique_id)
                self.refs[(node.package_name, node.name)] = node.unique_id
        self.sources = {(s.source_name, s.name): s.unique_id for s in manifest.sources.values()}

    def ref(self, *names, **_) -> str:
        return self.refs.get(tuple(names), "ref:" + ".".join(names))

    def source(self, source_name: str, table_name: str) -> str:
        return self.sources.get((source_name, table_name), f"source:{source_name}.{table_name}")


def _parents(node) -> list[str]:
    return list(getattr(node.depends_on, "nodes", []))  # a seed depends on macros only


def _columns(node) -> list[tuple[str, str | None]]:
    return [(name, column.data_type) for name, column in node.columns.items()]


def _target_columns(node) -> dict[str, list]:
    """A partial-update target's columns: type, and the merge rule and sequence group its values obey
    (resolved by sink reuse, which runs first). The default rule is left out, so a target without rules keeps
    the fingerprint it had before rules counted."""
    merge = node.config[PLAN_KEY]["partial_update"]
    groups = {column: group["sequence"] for group in merge.get("sequence_groups", []) for column in group["columns"]}
    columns = {}
    for name, data_type in _columns(node):
        rule = merge.get("rules", {}).get(name.lower(), DEFAULT_RULE)
        settings = {"merge": rule if rule != DEFAULT_RULE else None, "sequence_group": groups.get(name.lower()),
                    "delimiter": merge.get("delimiters", {}).get(name.lower())}
        columns[name] = [name, data_type, *([{k: v for k, v in settings.items() if v}] if any(settings.values()) else [])]
    return columns


def _seed_header(node) -> list[str]:
    """A seed's column names, from its CSV's first line: its logic. The rows below are data, which flows into
    incremental tables as any source's rows do and never invalidates them."""
    path = os.path.join(node.root_path, node.original_file_path)
    with open(path, newline="", encoding="utf-8") as csv_file:
        return next(csv.reader(csv_file, delimiter=node.config.get("delimiter") or ","), [])


def _sql_logic(raw_sql: str, render) -> dict[str, Any]:
    try:
        full = render(raw_sql, False)
        # only `is_incremental()` tells the two renderings apart (this runs on every manifest load: keep it lean)
        incremental = render(raw_sql, True) if "is_incremental" in raw_sql else full
        sql = normalize_sql(full)
        incremental_sql = normalize_sql(incremental) if incremental != full else sql
        return {"sql": sql, "incremental_sql": incremental_sql if incremental_sql != sql else None}
    except jinja2.TemplateError as error:
        return {"raw_sql": normalize_sql(raw_sql), "render_error": type(error).__name__}


def _written_configs(node, manifest) -> dict[str, Any]:
    """The node's configs as written: dbt's unrendered configs (project file, `config()` calls) and the raw
    `config:` of its YAML entry, which dbt stores only rendered."""
    written = dict(node.unrendered_config or {})
    yaml_file = manifest.files.get(node.patch_path) if node.patch_path else None
    for entry in (getattr(yaml_file, "dict_from_yaml", None) or {}).get(f"{node.resource_type}s", []):
        if isinstance(entry, dict) and entry.get("name") == node.name:
            written.update(entry.get("config") or {})
    return written


def _result_configs(node, config: dict[str, Any], manifest, render) -> dict[str, Any]:
    """Configs that change results, as written and rendered with the project's default vars, so a
    `var()` in a config never makes --vars change a fingerprint."""
    written = _written_configs(node, manifest)
    values = {key: written.get(key, config[key]) for key in RESULT_CONFIGS if key in config}
    return {key: render(value) if isinstance(value, str) and "{" in value else value for key, value in values.items()}


def _cache_key(node, config: dict[str, Any], project_vars: dict[str, Any]) -> str:
    """Everything a node's rendered SQL depends on: its text, configs, inputs, the vars and the normaliser."""
    return digest({
        "sql": node.raw_code, "this": node.unique_id, "inputs": sorted(_parents(node)), "vars": project_vars,
        "config": {k: v for k, v in config.items() if not k.startswith("lakeplan_")}, "sqlglot": sqlglot.__version__,
    })  # fmt: skip


def _node_logic(node, manifest, resolver: _Resolver, project_vars: dict[str, Any], cached: dict, used: dict) -> dict:
    """The node-local logic as labelled parts (plain data); its digest is the node's `logic`."""
    config = node.config.to_dict(omit_none=True)  # once per node: every render below reads it

    def render(template: str, incremental: bool = False) -> str:
        return render_stable(
            template, resolve_ref=resolver.ref, resolve_source=resolver.source, project_vars=project_vars,
            config=config, this=node.unique_id, incremental=incremental,
        )

    columns = list(_target_columns(node).values()) if is_target(node.config.materialized) else _columns(node)
    parts: dict[str, Any] = {"columns": columns, "configs": _result_configs(node, config, manifest, render)}
    if node.resource_type == "seed":
        parts["header"] = _seed_header(node)
    else:
        key = _cache_key(node, config, project_vars)
        used[key] = cached.get(key) or _sql_logic(node.raw_code, render)
        parts.update(used[key])
        parts["macros"] = {m: digest(manifest.macros[m].macro_sql) for m in node.depends_on.macros if m in manifest.macros}
    return parts


def _source_logic(source) -> str:
    meta = source.meta or {}
    return digest({
        "relation": source.relation_name,
        "columns": _columns(source),
        "meta": {key: meta[key] for key in RESULT_SOURCE_META if key in meta},
    })


def apply_fingerprints(
    manifest, version: str, project_vars: dict[str, Any], sql_cache: dict | None = None
) -> dict[str, Any]:
    """Puts each model's, seed's and snapshot's fingerprint in its config (`lakeplan_fingerprint`, for
    macros) and returns the fingerprint report (plain data, for JSON). `sql_cache` (key -> SQL logic) is
    read and filled in place; afterwards it holds exactly this manifest's entries."""
    cached, used = dict(sql_cache or {}), {}
    resolver = _Resolver(manifest)
    fingerprinted = {uid: n for uid, n in manifest.nodes.items() if n.resource_type in FINGERPRINTED}
    consumers: dict[str, list[str]] = {}
    for node in fingerprinted.values():
        for parent in _parents(node):
            consumers.setdefault(parent, []).append(node.unique_id)

    logic = {uid: NodeLogic(uid, _source_logic(s)) for uid, s in manifest.sources.items()}
    local_parts = {}
    for uid, node in fingerprinted.items():
        inlined = is_inlined(node.config.materialized)
        local_parts[uid] = _node_logic(node, manifest, resolver, project_vars, cached, used)
        logic[uid] = NodeLogic(
            uid, digest(local_parts[uid]), tuple(_parents(node)), tuple(consumers.get(uid, ())) if inlined else ()
        )
    prints = fingerprints(logic, version)
    if sql_cache is not None:
        sql_cache.clear()
        sql_cache.update(used)

    report = {}
    for uid, node in sorted(fingerprinted.items()):
        entry = {
            "fingerprint": prints[uid],
            "logic": logic[uid].logic,
            "inputs": {i: prints.get(i, i) for i in sorted(set(_parents(node)))},
        }
        node.config[CONFIG_KEY] = {"version": version, **entry, **_state_record(node, local_parts[uid], logic, prints)}
        report[uid] = entry
    return {"version": version, "nodes": report}


def _state_record(node, local_parts: dict[str, Any], logic: dict[str, NodeLogic], prints: dict[str, str]) -> dict:
    """What a stateful model's table records beside its fingerprint, for the state check to say what changed
    and what may change: every ancestor's own logic (so a mismatch names the node that changed, not the input
    it reached the model through), and for a partial-update target its parts, each checked on its own, and its
    columns (not recorded in the table: where a column's part differs, the state check asks what the part was
    before its type was widened, fingerprint.earlier_parts), and the logic its rerun guard compares."""
    if node.resource_type != "model" or not is_stateful(node.config.materialized):
        return {}
    record = {"ancestors": {uid: short(logic[uid].logic) for uid in ancestors(logic, node.unique_id)}}
    if is_target(node.config.materialized):
        members = [m["unique_id"] for g in node.config[PLAN_KEY]["partial_update"]["groups"] for m in g["members"]]
        settings = {label: part for label, part in local_parts.items() if label != "columns"}
        columns = _target_columns(node)
        record["parts"] = target_parts(settings, columns, {m: prints[m] for m in members})
        record["columns"] = columns
        record["rerun_logic"] = rerun_logic(settings, columns, record["ancestors"])
    return record
