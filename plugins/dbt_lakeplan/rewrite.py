"""Applies sink reuse to a parsed dbt manifest (the dbt-specific half of the feature).

Members (config `partial_update_target`) become ephemeral inputs of their target: they write nothing
themselves, the manifest shows member -> target lineage, and the target's config carries the write groups
that its `partial_update` materialization executes, one statement per group.
"""

from __future__ import annotations

from typing import Any

from dbt_common.exceptions import CompilationError

from dbt_lakeplan.digest import Member
from dbt_lakeplan.grouping import WriteGroup, group_members, ungrouped_reason
from dbt_lakeplan.merge_rules import MergeRuleError, resolve_merge_rules

TARGET_MATERIALIZATION = "partial_update"
GROUPS_CONFIG_KEY = "lakeplan_write_groups"
MERGE_RULES_CONFIG_KEY = "lakeplan_merge_rules"
TARGET_RELATION_CONFIG_KEY = "lakeplan_target_relation"
WRITE_MODES = ("merge", "overwrite")


class PartialUpdateConfigError(CompilationError):
    """A partial-update member or target is configured so that no correct write exists."""


def _fail(message: str) -> None:
    raise PartialUpdateConfigError(message)


def _member(node, targets_by_name: dict[str, Any]) -> Member:
    config = node.config
    target_name = config.get("partial_update_target")
    if not isinstance(target_name, str) or target_name not in targets_by_name:
        _fail(
            f"Model `{node.name}` sets partial_update_target: {target_name!r}, but no model of that name exists.\n"
            "Fix: name the partial-update target model (its SQL is `{{ partial_update_target() }}`)."
        )
    target = targets_by_name[target_name]
    if target.config.materialized != TARGET_MATERIALIZATION:
        _fail(
            f"Model `{node.name}` sets partial_update_target: '{target_name}', but `{target_name}` is not a "
            f"partial-update target (it is materialized as `{target.config.materialized}`).\n"
            "Fix: point partial_update_target at a model whose SQL is `{{ partial_update_target() }}`."
        )
    write_mode = config.get("write_mode") or "merge"
    if write_mode not in WRITE_MODES:
        _fail(
            f"Model `{node.name}` has write_mode: {write_mode!r}; a partial-update member writes with one of "
            f"{', '.join(WRITE_MODES)}.\nFix: set write_mode to `merge` (the default) or `overwrite`."
        )
    return Member(
        unique_id=node.unique_id,
        name=node.name,
        target=target.unique_id,
        write_mode=write_mode,
        static_partition=dict(config.get("static_partition") or {}),
        write_options=dict(config.get("write_options") or {}),
        parallelism=config.get("parallelism"),
        op_column=config.get("op_column"),
        sequence_by=config.get("sequence_by"),
    )


def _merge_rules(node) -> dict[str, Any]:
    unique_key = node.config.get("unique_key")
    columns = [
        {"name": c.name, "data_type": c.data_type, "meta": {**c.meta, **c.config.meta}} for c in node.columns.values()
    ]
    try:
        return resolve_merge_rules(
            node.name, columns, [unique_key] if isinstance(unique_key, str) else list(unique_key),
            node.config.get("sequence_groups"),
        )  # fmt: skip
    except MergeRuleError as error:
        raise PartialUpdateConfigError(str(error)) from None


def _check_target(node) -> None:
    if not node.config.get("unique_key"):
        _fail(
            f"Partial-update target `{node.name}` has no `unique_key`.\n"
            "Members' rows are merged per primary key. Fix: set `unique_key` (a column or a list) in its config."
        )
    untyped = sorted(name for name, column in node.columns.items() if not column.data_type)
    if not node.columns or untyped:
        missing = ", ".join(untyped) or "all of them (no columns are declared)"
        _fail(
            f"Partial-update target `{node.name}` must declare every column with its `data_type` in YAML; "
            f"missing for: {missing}.\nFix: list each column of the wide table with `data_type` under "
            f"`columns:` of `{node.name}`."
        )


def _group_config(group: WriteGroup) -> dict[str, Any]:
    first = group.members[0]
    return {
        "digest": group.digest,
        "digest_id": group.digest_id,
        "write_mode": first.write_mode,
        "static_partition": first.static_partition,
        "write_options": first.write_options,
        "parallelism": first.parallelism,
        "members": [
            {"unique_id": m.unique_id, "name": m.name, "sequence_by": m.sequence_by, "op_column": m.op_column}
            for m in group.members
        ],
    }


def apply_sink_reuse(manifest, reuse_enabled: bool) -> dict[str, Any]:
    """Rewrites the manifest in place and returns the sink-reuse report (plain data, for JSON).
    Idempotent: applying it to an already rewritten manifest changes nothing. The caller rebuilds dbt's flat
    graph (what macros see as `graph`) once its own changes are made too."""
    models = [node for node in manifest.nodes.values() if node.resource_type == "model"]
    targets_by_name = {node.name: node for node in models}
    members = [_member(node, targets_by_name) for node in models if node.config.get("partial_update_target")]
    targets = {node.unique_id: node for node in models if node.config.materialized == TARGET_MATERIALIZATION}
    for target in targets.values():
        _check_target(target)

    groups = group_members(members, reuse_enabled)
    for member in members:
        node = manifest.nodes[member.unique_id]
        node.config.materialized = "ephemeral"
        # where `partial_update_target_relation()` finds the table (a ref would make a cycle)
        target = manifest.nodes[member.target]
        node.config[TARGET_RELATION_CONFIG_KEY] = {"schema": target.schema, "identifier": target.alias}
    report_targets = {}
    for target_id, target in sorted(targets.items()):
        target_groups = [g for g in groups if g.target == target_id]
        for member in (m for g in target_groups for m in g.members):
            if member.unique_id not in target.depends_on.nodes:
                target.depends_on.nodes.append(member.unique_id)
        target.config[GROUPS_CONFIG_KEY] = [_group_config(g) for g in target_groups]
        target.config[MERGE_RULES_CONFIG_KEY] = _merge_rules(target)
        report_targets[target_id] = {
            "relation": target.relation_name,
            "groups": target.config[GROUPS_CONFIG_KEY],
            "merge_rules": target.config[MERGE_RULES_CONFIG_KEY],
        }

    report_members = {}
    for group in groups:
        for member in group.members:
            entry = {"target": member.target, "digest": group.digest, "group": group.digest_id}
            if len(group.members) == 1:
                entry["ungrouped_reason"] = ungrouped_reason(member, members, reuse_enabled)
            report_members[member.unique_id] = entry
    return {"reuse_sink_enabled": reuse_enabled, "targets": report_targets, "members": report_members}
