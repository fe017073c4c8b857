"""The planner: reads every lakeplan setting of a parsed project once, through its declaration (settings.py),
checks everything that needs no database, and hands each source and model one plan.

    sources' meta ---+
    models' config --+--> settings (typed) --> rules per feature --> problems: all raised at once, or
    columns' meta ---+                                           --> plans: node.config["lakeplan_plan"]
    project vars ----+

The macros read a node's plan and nothing else of lakeplan's settings; they keep only what needs a live
session: members' real columns and casts, source columns, table layouts. docs/settings.md describes the plan.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from dbt.adapters.spark.impl import SparkConfig
from dbt.artifacts.resources import ModelConfig
from dbt.events.types import JinjaLogWarning
from dbt_common.events.functions import warn_or_error
from dbt_common.exceptions import CompilationError

from dbt_lakeplan import partial_update, spark_types
from dbt_lakeplan.grouping import group_members
from dbt_lakeplan.materializations import materialization, node_kind
from dbt_lakeplan.node_plan import (
    PLAN_KEY, ChangeMode, Distribution, Keyed, MaintenancePlan, MemberOf, ModelPlan, Reader, SourcePlan, Types,
    UpsertPlan, as_config,
)
from dbt_lakeplan.settings import Maintenance, ModelSettings, ProjectVars, SourceSettings, beside_meta, read_settings
from dbt_lakeplan.spark_types import type_problem

MEMBER_ONLY = ("write_mode", "static_partition", "write_options")
TARGET_ONLY = ("partial_update_on_delete", "sequence_groups")
# settings of the MERGE that writes an `upsert` or a partial-update target (materializations.py: merged)
MERGE_ONLY = ("full_rewrite_max_mib", "tombstone_retention_days", "change_mode", "merge_on_read_max_share")
MAINTENANCE_HOOK = "lakeplan_maintenance_hook"  # what runs an incremental model's maintenance after its write
SMALL_FILE_SHARE = 0.75  # a data file under this share of the target size is small (Iceberg's `min-file-size-bytes`)
ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")  # dbt's, as for an incremental
# dbt's and dbt-spark's own model configs: never a misspelt lakeplan setting
DBT_MODEL_CONFIGS = frozenset(
    {f.name for f in dataclasses.fields(ModelConfig) + dataclasses.fields(SparkConfig)}
    | {"tblproperties", "merge_exclude_columns", "incremental_predicates", "predicates", "post-hook", "pre-hook"}
)


class LakeplanConfigError(CompilationError):
    """lakeplan settings that no correct run can follow; every one found in the project, each a sentence."""


def raise_problems(found: list[str]) -> None:
    if found:
        listed = "\n".join(f"  {n}. {problem}" for n, problem in enumerate(found, 1))
        raise LakeplanConfigError(f"lakeplan found {len(found)} problem(s) in this project's settings:\n{listed}")


def read_vars(raw_vars: dict[str, Any], found: list[str]) -> ProjectVars:
    settings, var_problems = read_settings("var", "the project", raw_vars)
    found.extend(var_problems)
    return settings or ProjectVars()


def source_plan(source, written: dict[str, Any], found: list[str]) -> SourcePlan | None:
    """`written`: the source table's keys as its YAML has them."""
    owner = f"source `{source.source_name}.{source.name}`"
    settings, source_problems = read_settings("source", owner, dict(source.meta or {}))
    found.extend(source_problems + beside_meta("source", owner, written))
    if settings is None:
        return None
    s = settings
    keyed = _keyed(s.pre_keyed_by, s.key_groups, owner, "pre_keyed_by", found)
    if s.changelog_mode != "insert_only" and not s.primary_key:
        found.append(
            f"{owner} is a changelog (changelog_mode: {s.changelog_mode}) without `primary_key`; changes of one key "
            "must reach one partition in order. Fix: add `primary_key: [<column>, ...]` to its meta."
        )
    if keyed and s.scan_parallelism is not None and s.scan_parallelism != s.key_groups:
        found.append(
            f"{owner} is pre-keyed into {s.key_groups} key groups but sets scan_parallelism {s.scan_parallelism}; "
            "repartitioning it would break its keyedness (every keyed operator after it would shuffle again). "
            f"Fix: set scan_parallelism to {s.key_groups} or remove it."
        )
    if keyed and s.changelog_mode != "insert_only" and s.primary_key and _lower(s.pre_keyed_by) != _lower(s.primary_key):
        found.append(
            f"{owner} is a changelog pre-keyed by {s.pre_keyed_by}, not by its primary_key {s.primary_key}: changes "
            "of one key could sit in different buckets, out of order. Fix: bucket the table by the primary key and "
            "declare `pre_keyed_by` the same."
        )
    if keyed and s.datagen:
        found.append(f"{owner} is a datagen source and cannot be pre_keyed_by: it has no bucketed table. Fix: remove "
                     "`pre_keyed_by` and `key_groups` from its meta.")  # fmt: skip
    return SourcePlan(
        owner=owner, parallelism=s.scan_parallelism, changelog_mode=s.changelog_mode, primary_key=s.primary_key or [],
        op_column=s.op_column, sequence_by=s.sequence_by, keyed=keyed,
        datagen=s.datagen.model_dump(exclude_none=True) if s.datagen else None,
    )  # fmt: skip


def _lower(names: list[str] | None) -> list[str]:
    return [name.lower() for name in names or []]


def _keyed(keys, key_groups, owner: str, keys_setting: str, found: list[str]) -> Keyed | None:
    if keys is None and key_groups is None:
        return None
    if not keys or key_groups is None:
        found.append(
            f"{owner} sets only one of `{keys_setting}` ({keys}) and `key_groups` ({key_groups}); a keyed layout needs "
            f"both. Fix: set both, e.g. `{keys_setting}: [customer_key]` and `key_groups: 8`, or neither."
        )
        return None
    return Keyed(keys=keys, key_groups=key_groups)


def model_settings(node, found: list[str]) -> tuple[ModelSettings | None, dict[str, Any]]:
    """A model's settings and its columns' (column name -> ColumnSettings)."""
    owner = f"model `{node.name}`"
    raw = {k: v for k, v in node.config.to_dict(omit_none=True).items() if not k.startswith("lakeplan_")}
    settings, model_problems = read_settings("model", owner, raw, DBT_MODEL_CONFIGS)
    found.extend(model_problems)
    columns = {}
    merged = materialization(node.config.materialized).target
    for name, column in node.columns.items():
        meta = {**column.meta, **column.config.meta}
        column_settings, column_problems = read_settings("column", f"column `{name}` of {owner}", meta, merged=merged)
        found.extend(column_problems + (beside_meta("column", f"column `{name}` of {owner}", column._extra)
                                        if merged else []))
        columns[name] = column_settings
    # also where the settings are refused (and no plan follows): one parse lists every problem
    _check_data_types(node, "partial-update target" if merged else "model", found)
    return settings, columns


def model_plan(node, settings: ModelSettings, columns: dict[str, Any], found: list[str]) -> ModelPlan:
    """The plan every model gets: its key, distribution and layout, and per role (upsert, target, member) the
    checks that need no database."""
    name, materialized, owner = node.name, node.config.materialized, f"model `{node.name}`"
    is_member = settings.partial_update_target is not None
    # what the plan says the model is (a member is only that), and the materialization it names
    kind, registered = node_kind(materialized, is_member), materialization(materialized)
    is_target = registered.target
    for setting in (s for s in MEMBER_ONLY if s in settings.model_fields_set and not is_member):
        found.append(f"{owner} sets `{setting}`, which only a partial-update member uses: it would do nothing here. "
                     f"Fix: remove it, or set `partial_update_target` to make `{name}` a member.")  # fmt: skip
    for setting in (s for s in TARGET_ONLY if s in settings.model_fields_set and not is_target):
        found.append(f"{owner} sets `{setting}`, which only a partial-update target uses: it would do nothing here. "
                     "Fix: set it on the target (its SQL is `{{ partial_update_target() }}`).")  # fmt: skip
    for setting in (s for s in MERGE_ONLY if s in settings.model_fields_set and not registered.merged):
        # delta rows are a partial-update target's alone (an upsert in delta mode is refused below)
        delta = setting == "change_mode" and settings.change_mode == "delta"
        found.append(
            f"{owner} sets `{setting}: {getattr(settings, setting)}`, which only "
            + ("a partial-update target uses: " if delta else "an `upsert` model or a partial-update target uses: ")
            + (f"on a member it would do nothing. Fix: set it on the target `{settings.partial_update_target}`, "
               "whose MERGE writes the member's rows." if is_member else
               f"as {materialized} it would do nothing. Fix: remove it"
               + (f", or make `{name}` a partial-update target (its SQL `{{{{ partial_update_target() }}}}`, its "
                  "columns written by members)." if delta else f", or materialize `{name}` as upsert."))
        )  # fmt: skip
    for column, column_settings in columns.items():
        declared = sorted(column_settings.model_fields_set) if column_settings is not None and not is_target else []
        if declared:
            found.append(
                f"Column `{column}` of {owner} sets {' and '.join(f'`{name}`' for name in declared)} in its meta, which "
                "only a column of a partial-update target follows. Fix: remove it, or declare it on the target's column."
            )
    table = kind.table
    keyed = _keyed(settings.keyed_by, settings.key_groups, owner, "keyed_by", found)
    if keyed and (len(keyed.keys) != 1 or not table or node.config.get("file_format") != "iceberg"):
        found.append(
            f"{owner} sets keyed_by {keyed.keys}, materialized as {'a member' if is_member else materialized}, file_format "
            f"{node.config.get('file_format')!r}; lakeplan keys an Iceberg table, incremental or upsert by exactly one "
            "column (Iceberg buckets one column per transform). Fix: key the model by one column (e.g. a surrogate "
            "key), materialized as a table, incremental or upsert with `file_format: iceberg`."
        )
    if settings.parallelism is not None and not table and not is_member:
        found.append(f"{owner} sets parallelism {settings.parallelism} but is materialized as {materialized}, which "
                     "writes nothing to distribute. Fix: remove it, or materialize the model as a table.")  # fmt: skip
    for setting in ("sequence_by", "op_column"):
        if getattr(settings, setting) is not None and not registered.changelog and not is_member and not is_target:
            found.append(f"{owner} sets `{setting}`, which only an `upsert` model or a partial-update member uses: "
                         f"as {materialized} it would do nothing. Fix: remove it, or materialize `{name}` as upsert.")  # fmt: skip
    if is_member and settings.static_partition and settings.write_mode != "overwrite":
        found.append(f"{owner} sets `static_partition` with write_mode: merge; only an overwrite replaces a partition. "
                     "Fix: set `write_mode: overwrite`, or remove static_partition.")  # fmt: skip
    for key in node.meta or {}:
        if key in type(settings).model_fields:
            found.append(f"{owner} sets `{key}` under `meta:`, where lakeplan does not read it: it would do nothing. "
                         f"Fix: move it to the model's config (`config: {{{key}: ...}}`).")  # fmt: skip
    sections: dict[str, Any] = {}
    if registered.merged:
        sections["full_rewrite_max_mib"] = settings.full_rewrite_max_mib
        sections["tombstone_retention_days"] = settings.tombstone_retention_days
        upkeep = settings.maintenance
        compacts = upkeep is not None and upkeep.after_write and upkeep.deleted_share < settings.merge_on_read_max_share
        sections["change_mode"] = ChangeMode(
            mode=settings.change_mode, merge_on_read_max_share=settings.merge_on_read_max_share,
            share=upkeep.deleted_share if compacts else settings.merge_on_read_max_share,
            share_from="maintenance.deleted_share" if compacts else "merge_on_read_max_share",
            delta_runs=(upkeep or Maintenance()).delta_runs, delta_after_write=(upkeep or Maintenance()).after_write)
        _check_change_mode(node, settings, found)
        sections["types"] = Types(families=spark_types.FAMILIES, casts=spark_types.CASTS, aliases=spark_types.ALIASES,
                                  bare=spark_types.BARE, integer_digits=spark_types.INTEGER_DIGITS,
                                  largest=spark_types.LARGEST, lossless=spark_types.LOSSLESS,
                                  promotions=spark_types.PROMOTIONS, stored_as=spark_types.STORED_AS)  # fmt: skip
        if node.config.get("file_format") != "iceberg":
            found.append(f"Model `{name}` is materialized as `{materialized}` with file_format "
                         f"{node.config.get('file_format')!r}; its writes are MERGEs, which need row-level updates. Fix: "
                         "set `file_format: iceberg`.")  # fmt: skip
    if settings.maintenance is not None:
        sections["maintenance"] = _maintenance(node, settings, is_member, found)
    if registered.changelog:
        sections["upsert"] = _upsert(node, settings, found)
    if registered.changelog and node.config.get("on_schema_change") not in ON_SCHEMA_CHANGE:
        found.append(f"{owner} sets on_schema_change: {node.config.get('on_schema_change')!r}, which an `upsert` does "
                     f"not know. Fix: set one of {', '.join(ON_SCHEMA_CHANGE)}.")  # fmt: skip
    if (is_target or is_member) and node.config.get("on_schema_change") not in (None, "ignore"):
        warn_or_error(JinjaLogWarning(msg=(
            f"lakeplan: {owner} sets on_schema_change: {node.config.get('on_schema_change')}, which a partial-update "
            f"{'target' if is_target else 'member'} does not follow: the target's columns are the ones its YAML "
            "declares (a newly declared column is added to the table on its next run; a member column the YAML lacks "
            "is an error). Fix: remove on_schema_change from it, or set it to ignore where a project-wide default "
            "reaches it.")), node=node)  # fmt: skip
    if is_target:
        sections["partial_update"] = partial_update.target_plan(node, settings, columns, found)
    return ModelPlan(
        model=name, kind=kind, key=settings.unique_key or [], distribution=Distribution(parallelism=settings.parallelism),
        keyed=keyed, on_state_mismatch=settings.on_state_mismatch, **sections,
    )  # fmt: skip


ROW_LEVEL_MODES = ("write.merge.mode", "write.update.mode", "write.delete.mode")  # Iceberg's; change_mode sets them


def _check_change_mode(node, settings: ModelSettings, found: list[str]) -> None:
    """`merge_on_read_max_share` counts only under `auto`; lakeplan sets a MERGE's Iceberg write modes at each write
    (change_mode): the same properties in the model's tblproperties would be overwritten by the first write."""
    if "merge_on_read_max_share" in settings.model_fields_set and settings.change_mode != "auto":
        found.append(
            f"Model `{node.name}` sets `merge_on_read_max_share: {settings.merge_on_read_max_share}` with `change_mode: "
            f"{settings.change_mode}`: only `auto` compares a change with it, so it would do nothing. Fix: set "
            "`change_mode: auto`, or remove `merge_on_read_max_share`."
        )
    is_target = materialization(node.config.materialized).target
    if settings.change_mode == "delta" and not is_target:
        found.append(
            f"Model `{node.name}` sets `change_mode: delta` on an `upsert`: only a partial-update target appends its "
            "change as delta rows (an upsert's change replaces whole rows, so a MERGE costs it the change already). "
            "Fix: set `change_mode: merge_on_read` (or `copy_on_write`, or `auto`)."
        )
    given = sorted(key for key in (node.config.get("tblproperties") or {}) if str(key).lower() in ROW_LEVEL_MODES)
    if given:
        writer = "a partial-update target" if is_target else "an `upsert`"
        found.append(
            f"Model `{node.name}` sets tblproperties {', '.join(f'`{key}`' for key in given)}, which lakeplan sets "
            f"itself at each write of {writer} from `change_mode` (now `{settings.change_mode}`). Fix: remove "
            f"{'it' if len(given) == 1 else 'them'} from tblproperties and set `change_mode: merge_on_read` (or "
            "`copy_on_write`, or `auto`) in the model's config."
        )


def _check_data_types(node, kind: str, found: list[str]) -> None:
    """Every column's `data_type` is parsed as Spark parses it (spark_types.py), not only a target's: a contract's
    type that Spark cannot parse would otherwise stop the run at its first statement."""
    for column_name, column in node.columns.items():
        reason = type_problem(column.data_type) if column.data_type else None
        if reason:
            # `{name: a, data_type: decimal(18,2)}`: YAML's flow mapping ends the value at the comma, and the rest
            # (`2)`) becomes a key of its own without a value
            rest = [key for key, value in column._extra.items() if value is None]
            meant = ",".join([column.data_type, *rest])
            fix = ("use a type Spark parses, such as bigint, int, double, decimal(10,2), string, boolean, date, "
                   "timestamp, array<string>, map<string,int> or struct<a:int,b:string>")
            if rest:
                quote = (f"quote the type, `data_type: '{meant}'`: in a YAML flow mapping (`{{name: ..., data_type: "
                         "...}`) a comma ends the value")  # fmt: skip
                fix = f"{quote}, and {fix}" if type_problem(meant) else quote
            found.append(
                f"Column `{column_name}` of {kind} `{node.name}` has data_type `{column.data_type}`, which Spark cannot "
                f"parse: {reason}{'' if reason.endswith('?') else '.'} Fix: {fix}."
            )


def _maintenance(node, settings: ModelSettings, is_member: bool, found: list[str]) -> MaintenancePlan:
    """What the maintenance macros read (macros/maintenance/): the settings, with the sizes in bytes. Refused where
    no Iceberg table is written into run after run, and on an incremental model no post-hook would run it on."""
    maintenance, materialized = settings.maintenance, node.config.materialized
    registered = materialization(materialized)
    owner = f"model `{node.name}` sets `maintenance: {maintenance.model_dump(exclude_unset=True)}`"  # as written
    if is_member:
        found.append(f"{owner}, but it is a partial-update member: its rows are written into its target's table. Fix: "
                     f"set `maintenance` on the target `{settings.partial_update_target}`.")  # fmt: skip
    elif not registered.stateful:
        found.append(f"{owner}, but it is materialized as {materialized}, not a table that runs write into (an "
                     "incremental, `upsert` or partial-update target): it would do nothing. Fix: remove "
                     "`maintenance`, or materialize the model as one of those.")  # fmt: skip
    elif node.config.get("file_format") != "iceberg":
        found.append(f"{owner} with file_format {node.config.get('file_format')!r}; compaction and snapshot expiry "
                     "are Iceberg procedures. Fix: set `file_format: iceberg`, or remove `maintenance`.")  # fmt: skip
    elif not registered.merged and maintenance.after_write and not any(
            MAINTENANCE_HOOK in hook.sql for hook in node.config.post_hook):
        found.append(
            f"{owner} (after_write: true), but it is incremental and none of its post-hooks runs lakeplan's "
            f"maintenance (dbt-spark's incremental materialization does not call it). Fix: add `+post-hook: "
            f"\"{{{{ lakeplan.{MAINTENANCE_HOOK}() }}}}\"` to the model or its folder in dbt_project.yml, or set "
            "`after_write: false` and schedule `dbt run-operation lakeplan_maintain`."
        )
    elif "delta_runs" in maintenance.model_fields_set and settings.change_mode != "delta":
        found.append(f"{owner} with `change_mode: {settings.change_mode}`: only a target in change_mode delta has delta "
                     "rows to fold, so `delta_runs` would do nothing. Fix: set `change_mode: delta`, or remove "
                     "`delta_runs`.")  # fmt: skip
    target_bytes = maintenance.target_file_mib * 2**20
    return MaintenancePlan(**maintenance.model_dump(), target_file_bytes=target_bytes,
                           small_file_bytes=int(target_bytes * SMALL_FILE_SHARE),
                           compacts=settings.change_mode != "delta")


def _upsert(node, settings: ModelSettings, found: list[str]) -> UpsertPlan:
    if not settings.unique_key:
        found.append(f"Model `{node.name}` is materialized as `upsert` but has no `unique_key`; the key decides which row "
                     "a change replaces. Fix: add `unique_key` (the changelog's primary key) to its config.")  # fmt: skip
    return UpsertPlan(op_column=settings.op_column or "_op", sequence_by=settings.sequence_by)


def _as_written(manifest, source) -> dict[str, Any]:
    """A source table's keys in its YAML file: the parsed source keeps only dbt's own."""
    written_yaml = getattr(manifest.files.get(source.file_id), "dict_from_yaml", None) or {}
    for written in written_yaml.get("sources") or []:
        if written.get("name") == source.source_name:
            return next((table for table in written.get("tables") or [] if table.get("name") == source.name), {})
    return {}


def plan_project(manifest, raw_vars: dict[str, Any]) -> tuple[ProjectVars, dict[str, Any]]:
    """Checks the whole project and puts every source's and model's plan in its config; raises with every
    problem found. Members become ephemeral inputs of their target. Returns the project vars and the
    sink-reuse report. Idempotent: planning an already planned manifest changes nothing."""
    found: list[str] = []
    project = read_vars(raw_vars, found)
    source_plans = {uid: source_plan(source, _as_written(manifest, source), found)
                    for uid, source in manifest.sources.items()}
    models = [node for node in manifest.nodes.values() if node.resource_type == "model"]
    read = {node.unique_id: model_settings(node, found) for node in models}
    plans = {uid: model_plan(manifest.nodes[uid], *read[uid], found) for uid in read if read[uid][0] is not None}
    settings = {uid: read[uid][0] for uid in plans}
    _listed_models("lakeplan_accept_state", "accept_state", project.lakeplan_accept_state, models, plans, found,
                   "the stateful model whose changed logic you accept")
    _listed_models("lakeplan_forget_deletes", "forget_deletes", project.lakeplan_forget_deletes, models, plans, found,
                   "the `upsert` or partial-update target whose remembered deletes a rebuild forgets")
    members, groups = _partial_updates(models, settings, plans, project.reuse_sink_enabled, found)
    _check_incremental_reads(models, settings, found)
    raise_problems(found)

    for one in members:
        node, target = manifest.nodes[one.unique_id], manifest.nodes[one.target]
        node.config.materialized = "ephemeral"
        plans[one.unique_id] = plans[one.unique_id].model_copy(
            update={"member_of": MemberOf(target=target.name, schema=target.schema, identifier=target.alias)})
        if one.unique_id not in target.depends_on.nodes:
            target.depends_on.nodes.append(one.unique_id)
    _record_readers(models, plans)
    for uid, plan in plans.items():
        plans[uid] = plan.model_copy(update={"reads": _reads(manifest.nodes[uid], manifest, plans)})
    for uid, plan in source_plans.items():
        manifest.sources[uid].config[PLAN_KEY] = as_config(plan)
    for uid, plan in plans.items():
        manifest.nodes[uid].config[PLAN_KEY] = as_config(plan)
    report_targets = {
        uid: {"relation": manifest.nodes[uid].relation_name,
              **plan.partial_update.model_dump(mode="json", include={"groups", "rules", "sequence_groups"})}
        for uid, plan in plans.items() if plan.partial_update is not None
    }  # fmt: skip
    return project, partial_update.report(report_targets, groups, members, project.reuse_sink_enabled)


def _reads(node, manifest, plans: dict[str, ModelPlan]) -> list[str]:
    """The sources and models `node` reads, through the models it inlines (whose SQL it carries) to what they read."""
    found, stack, seen = [], list(node.depends_on.nodes), set()
    while stack:
        uid = stack.pop(0)
        if uid in seen:
            continue
        seen.add(uid)
        if uid in plans and plans[uid].kind.inlined:
            stack.extend(manifest.nodes[uid].depends_on.nodes)
        elif uid in manifest.sources or uid in manifest.nodes:
            found.append(uid)
    return sorted(found)


INCREMENTAL_READ = re.compile(r"""\b(new_rows|changed_keys)\(\s*(ref|source)\(([^)]*)\)""")


def _incremental_reads(models: list):
    """Each `new_rows(...)` / `changed_keys(...)` in a model's SQL: (the model, the macro, `ref` or `source`, its
    arguments as written, the project's model it reads, or None)."""
    by_name = {node.name: node for node in models}
    for node in models:
        for macro, kind, arguments in INCREMENTAL_READ.findall(node.raw_code or ""):
            names = re.findall(r"""['"]([^'"]+)['"]""", arguments)
            yield node, macro, kind, arguments, by_name.get(names[-1]) if kind == "ref" and names else None


def _check_incremental_reads(models: list, settings: dict[str, ModelSettings], found: list[str]) -> None:
    """`new_rows` / `changed_keys` record what a write consumed on the table an `upsert` or a partial-update
    target writes, and read Iceberg's snapshots: elsewhere, or over a model that is not Iceberg, they cannot work."""
    for node, macro, kind, arguments, read in _incremental_reads(models):
        owner = f"Model `{node.name}` reads `{macro}({kind}({arguments}))`"
        member = node.unique_id in settings and settings[node.unique_id].partial_update_target is not None
        if not member and not materialization(node.config.materialized).changelog:
            found.append(f"{owner} but is materialized as {node.config.materialized}: only a partial-update member "
                         "or an `upsert` records what its write consumed, so every run would read everything "
                         f"again. Fix: make `{node.name}` a member (`partial_update_target`) or an `upsert`, or "
                         f"read the input with {kind}(...) alone.")  # fmt: skip
        if read is not None and materialization(read.config.materialized).no_table:
            found.append(f"{owner}, but `{read.name}` is materialized as {read.config.materialized}: {macro} reads "
                         f"an Iceberg table's snapshots, which a {read.config.materialized} has none of. Fix: "
                         f"materialize `{read.name}` as a table (`table`, `incremental`), or read it with ref(...) "
                         "alone.")  # fmt: skip
        elif read is not None and read.unique_id in settings and settings[read.unique_id].change_mode == "delta":
            found.append(f"{owner}, but `{read.name}` is in change_mode delta: its snapshots append delta rows, which "
                         f"are changes to fold, not its rows, so {macro} would read them as rows. Fix: read it with "
                         f"ref(...) alone (its merged rows), or set another change_mode on `{read.name}`.")  # fmt: skip
        elif read is not None and read.config.get("file_format") != "iceberg":
            found.append(f"{owner}, but `{read.name}` has file_format {read.config.get('file_format')!r}: "
                         f"{macro} reads Iceberg's snapshots. Fix: set `file_format: iceberg` on `{read.name}`, "
                         f"or read it with ref(...) alone.")  # fmt: skip


def _record_readers(models: list, plans: dict[str, ModelPlan]) -> None:
    """A model with `maintenance` that others read with new_rows / changed_keys: its plan names the tables that record
    what they consumed of it (a member's target, or the reading `upsert`), whose snapshots its expiry keeps."""
    readers: dict[str, set[Reader]] = {}
    for node, macro, _, _, read in _incremental_reads(models):
        if read is not None and node.unique_id in plans and read.unique_id in plans:
            member_of = plans[node.unique_id].member_of
            table = f"{member_of.schema_}.{member_of.identifier}" if member_of else f"{node.schema}.{node.alias}"
            readers.setdefault(read.unique_id, set()).add(Reader(table=table, model=node.name, macro=macro))
    for uid, read_by in readers.items():
        if plans[uid].maintenance is not None:
            ordered = sorted(read_by, key=lambda reader: (reader.model, reader.macro))
            maintenance = plans[uid].maintenance.model_copy(update={"read_by": ordered})
            plans[uid] = plans[uid].model_copy(update={"maintenance": maintenance})


def _listed_models(var: str, key: str, names: list[str], models: list, plans: dict[str, ModelPlan], found: list[str],
                   meant: str) -> None:
    """A var that names models (`--vars '{<var>: [model]}'`): each model's plan says, under `key`, whether it is
    one of them; a name no model has is a problem."""
    for name in sorted(set(names) - {node.name for node in models}):
        found.append(f"The project sets {var} [{name}], but no model is named `{name}`. Fix: name {meant}, e.g. "
                     f"`--vars '{{{var}: [my_model]}}'`.")  # fmt: skip
    for node in models:
        if node.unique_id in plans:
            plans[node.unique_id] = plans[node.unique_id].model_copy(update={key: node.name in names})


def _partial_updates(models: list, settings: dict[str, ModelSettings], plans: dict[str, ModelPlan], reuse_enabled: bool,
                     found: list[str]) -> tuple[list, list]:  # fmt: skip
    """Every member checked against its target, grouped into writes; each target's plan gets its groups."""
    planned = [node for node in models if node.unique_id in plans]
    targets = {node.name: (node, settings[node.unique_id]) for node in planned
               if materialization(node.config.materialized).target}  # fmt: skip
    materialized = {node.name: node.config.materialized for node in models}
    members = [partial_update.member(node, settings[node.unique_id], targets, materialized, found)
               for node in planned if settings[node.unique_id].partial_update_target]  # fmt: skip
    members = [member for member in members if member is not None]
    groups = group_members(members, reuse_enabled)
    named = {node.config.get("partial_update_target") for node in models}  # even with bad settings
    for name, (target, target_settings) in sorted(targets.items()):
        own = [group for group in groups if group.target == target.unique_id]
        if name not in named:
            found.append(f"Partial-update target `{name}` has no members, so it would be created empty. Fix: set "
                         f"`partial_update_target: '{name}'` on the models that write its columns.")  # fmt: skip
        partial_update.check_groups(name, own, found)
        plan = plans[target.unique_id]
        writes = plan.partial_update.model_copy(update={
            "groups": [partial_update.group_plan(group) for group in own],
            "tombstone_sequence": partial_update.tombstone_sequence(
                name, target_settings.partial_update_on_delete, [one for group in own for one in group.members], found),
        })
        plans[target.unique_id] = plan.model_copy(update={"partial_update": writes})
    return members, groups
