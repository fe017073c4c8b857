"""Sink reuse for partial updates (FLIP-506), planned at parse time: which models are members of which target,
every rule between them that needs no database, and the target's plan of write groups.

Members (config `partial_update_target`) become ephemeral inputs of their target: they write nothing
themselves, the manifest shows member -> target lineage, and the target's plan carries the write groups that
its `partial_update` materialization executes, one statement per group.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from dbt_lakeplan.digest import Member
from dbt_lakeplan.grouping import WriteGroup, ungrouped_reason
from dbt_lakeplan.materializations import is_target, materialization
from dbt_lakeplan.merge_rules import resolve_merge_rules
from dbt_lakeplan.node_plan import GroupMember, TargetPlan, WritePlan
from dbt_lakeplan.settings import ColumnSettings, ModelSettings
from dbt_lakeplan.spark_types import type_problem


def member(
    node, settings: ModelSettings, targets: dict[str, Any], materialized: dict[str, str], problems: list[str]
) -> Member | None:
    """The member a model is, checked against its target's declaration; None when it cannot be one.
    `targets`: name -> (node, settings) of every target; `materialized`: name -> materialization of every model."""
    name, target_name = node.name, settings.partial_update_target
    fix = ("Fix: point partial_update_target at a model whose SQL is `{{ partial_update_target() }}` "
           "(`{{ lakeplan.partial_update_target() }}` where lakeplan is a package of your project).")
    if is_target(node.config.materialized):
        problems.append(
            f"Model `{name}` is a partial-update target and also sets partial_update_target: '{target_name}'; a "
            f"target is written by its members and cannot write another table. Fix: remove partial_update_target "
            f"from `{name}`, or make it an ordinary model."
        )
        return None
    if materialization(node.config.materialized).keeps_rows:
        problems.append(
            f"Model `{name}` is materialized as `{node.config.materialized}` and sets partial_update_target: "
            f"'{target_name}'; a member writes only through its target, so its own table would never be built. Fix: "
            f"remove partial_update_target from `{name}`, or add a member that selects from `{name}`."
        )
        return None
    if is_target(materialized.get(target_name)) and target_name not in targets:
        return None  # the target's own settings are wrong, and listed; checking members against it would mislead
    if target_name not in targets:
        close = difflib.get_close_matches(str(target_name), list(targets), n=1, cutoff=0.6)
        problems.append(
            f"Model `{name}` sets partial_update_target: '{target_name}', but "
            + (f"`{target_name}` is not a partial-update target (it is materialized as `{materialized[target_name]}`)."
               if target_name in materialized else "no model of that name exists.")
            + (f" Fix: did you mean the target `{close[0]}`? Set partial_update_target: '{close[0]}'." if close
               else f" {fix}")
        )  # fmt: skip
        return None
    target, target_settings = targets[target_name]
    if settings.op_column and target_settings.partial_update_on_delete == "error":
        problems.append(
            f"Member `{name}` of partial-update target `{target_name}` is a changelog (op_column `{settings.op_column}`) "
            f"whose deletes the target refuses (partial_update_on_delete: error, as Paimon's partial-update). Fix: "
            f"set `partial_update_on_delete: ignore` (drop -D/-U rows) or `remove_record` (a -D removes the row) on "
            f"`{target_name}`."
        )
    columns = {column.lower() for column in target.columns}
    unknown = sorted(column for column in settings.static_partition or {} if column.lower() not in columns)
    if unknown:
        problems.append(
            f"Member `{name}` sets static_partition on {', '.join(unknown)}, which `{target_name}` does not declare. "
            f"Fix: name columns of `{target_name}`'s YAML in static_partition."
        )
    return Member(
        unique_id=node.unique_id, name=name, target=target.unique_id, write_mode=settings.write_mode,
        static_partition=dict(settings.static_partition or {}), write_options=dict(settings.write_options or {}),
        parallelism=settings.parallelism, op_column=settings.op_column, sequence_by=settings.sequence_by,
    )  # fmt: skip


def target_plan(
    node, settings: ModelSettings, column_settings: dict[str, ColumnSettings], problems: list[str]
) -> TargetPlan:
    """A target's plan without its groups: key, typed columns with rules, sequence groups, delete handling."""
    name = node.name
    if not settings.unique_key:
        problems.append(f"Partial-update target `{name}` has no `unique_key`; members' rows are merged per primary "
                        "key. Fix: set `unique_key` (a column or a list) in its config.")  # fmt: skip
    untyped = sorted(column_name for column_name, column in node.columns.items() if not column.data_type)
    if not node.columns or untyped:
        problems.append(
            f"Partial-update target `{name}` must declare every column with its `data_type` in YAML; missing for: "
            f"{', '.join(untyped) or 'all of them (no columns are declared)'}. Fix: list each column of the wide "
            f"table with `data_type` under `columns:` of `{name}`."
        )
    columns = [{"name": column_name, "data_type": column.data_type.lower()} for column_name, column in node.columns.items()
               if column.data_type and type_problem(column.data_type) is None]  # the planner names the others  # fmt: skip
    if node.columns:
        _check_declared(node, settings, problems)
    rules = [(c["name"], c["data_type"], _declared_rule(column_settings.get(c["name"]))) for c in columns]
    delimiters = {column: declared.listagg_delimiter for column, declared in column_settings.items()
                  if declared is not None and declared.listagg_delimiter is not None}
    merge, rule_problems = resolve_merge_rules(name, rules, settings.unique_key or [], settings.sequence_groups,
                                               delimiters)
    problems.extend(rule_problems)
    grouped = {column: group["sequence"] for group in merge["sequence_groups"]
               for column in [group["sequence"], *group["columns"]]}  # fmt: skip
    return TargetPlan(columns=columns, on_delete=settings.partial_update_on_delete, **merge, grouped=grouped)


# a partition_by entry: a column, or an Iceberg transform of one (`bucket(8, id)`, `days(at)`, `truncate(4, name)`)
PARTITION_COLUMN = re.compile(r"^\s*(?:\w+\s*\(\s*(?:\d+\s*,\s*)?)?`?(\w+)`?\s*\)?\s*$")


def _check_declared(node, settings: ModelSettings, problems: list[str]) -> None:
    """The key and the partition columns of a target are among the columns its YAML declares: a key it lacks was told
    at run time as a member's mistake, and a partition column Spark refused only when the table is created."""
    declared = {column.lower(): column for column in node.columns}

    def unknown(setting: str, value, column: str) -> None:
        close = difflib.get_close_matches(column.lower(), list(declared), n=1, cutoff=0.6)
        problems.append(
            f"Partial-update target `{node.name}` sets `{setting}: {value}`, but `{column}` is none of its declared "
            f"columns ({', '.join(node.columns)}). Fix: name a declared column"
            + (f" (did you mean `{declared[close[0]]}`?)" if close else "")
            + f", or declare `{column}` with its data_type under `columns:` of `{node.name}`.")

    for key in settings.unique_key or []:
        if key.lower() not in declared:
            unknown("unique_key", settings.unique_key if len(settings.unique_key) > 1 else key, key)
    partition_by = node.config.get("partition_by") or []
    for entry in [partition_by] if isinstance(partition_by, str) else partition_by:
        found = PARTITION_COLUMN.match(str(entry))
        if found and found.group(1).lower() not in declared:
            unknown("partition_by", entry, found.group(1))


def _declared_rule(settings: ColumnSettings | None) -> str | None:
    return settings.merge if settings is not None and "merge" in settings.model_fields_set else None


def check_groups(target_name: str, groups: list[WriteGroup], problems: list[str]) -> None:
    """Overwrites replace what they cover, so two overwrite groups must cover different partitions; they are
    written before the merges (grouping.py), so a merge's values are never wiped by an overwrite of the same run."""
    covered: list[WriteGroup] = []
    for group in (g for g in groups if g.members[0].write_mode == "overwrite"):
        first = group.members[0]
        clash = next((other for other in covered if not first.static_partition
                      or not other.members[0].static_partition
                      or other.members[0].static_partition == first.static_partition), None)  # fmt: skip
        if clash is not None:
            problems.append(
                f"Members `{clash.members[0].name}` and `{first.name}` of `{target_name}` overwrite the same rows "
                f"(write_mode: overwrite, static_partition {clash.members[0].static_partition or 'none: the whole table'}"
                f" and {first.static_partition or 'none: the whole table'}) in separate writes: the later would wipe "
                "the earlier. Fix: give them equal write settings so they share one write, or different static partitions."
            )
        covered.append(group)


def tombstone_sequence(target_name: str, on_delete: str, members: list[Member], problems: list[str]) -> str | None:
    """The sequence (a `sequence_by` column, lower case) the target's tombstones hold, or None. Under remove_record a
    sequenced changelog member's delete is remembered with its sequence value and compared, in later runs, only
    with rows of members ordered by that same sequence: members whose `sequence_by` names that column. Rows of a
    member ordered by another sequence (a timestamp against a log position) cannot be compared with it: like an
    unsequenced row, they come after every earlier run's delete (Paimon's order of arrival). Deletes ordered by two
    sequences could be ordered neither against each other nor against each other's rows: refused."""
    if on_delete != "remove_record":
        return None
    deleting = [one for one in members if one.op_column and one.sequence_by]
    sequences = sorted({one.sequence_by.lower() for one in deleting})
    if len(sequences) > 1:
        listed = ", ".join(f"`{one.name}` (sequence_by `{one.sequence_by}`)" for one in deleting)
        problems.append(
            f"Members {listed} of partial-update target `{target_name}` are changelogs whose deletes remove the "
            "record (partial_update_on_delete: remove_record), ordered by different sequences: a delete of one "
            "cannot be ordered against the other's rows, in this run or a later one. Fix: give them one "
            "`sequence_by` column that means the same in each (e.g. the source's log position), or remove "
            "`sequence_by` from all but one of them."
        )
        return None
    return sequences[0] if sequences else None


def group_plan(group: WriteGroup) -> WritePlan:
    first = group.members[0]
    return WritePlan(
        digest=group.digest, digest_id=group.digest_id, write_mode=first.write_mode,
        static_partition=first.static_partition, write_options=first.write_options, parallelism=first.parallelism,
        members=[GroupMember(unique_id=m.unique_id, name=m.name, sequence_by=m.sequence_by, op_column=m.op_column)
                 for m in group.members],
    )


def report(targets: dict[str, Any], groups: list[WriteGroup], members: list[Member], reuse_enabled: bool) -> dict:
    """The sink-reuse report (plain data, for JSON): each target's groups and rules, each member's group."""
    report_members = {}
    for group in groups:
        for one in group.members:
            entry = {"target": one.target, "digest": group.digest, "group": group.digest_id}
            if len(group.members) == 1:
                entry["ungrouped_reason"] = ungrouped_reason(one, members, reuse_enabled)
            report_members[one.unique_id] = entry
    return {"reuse_sink_enabled": reuse_enabled, "targets": targets, "members": report_members}
