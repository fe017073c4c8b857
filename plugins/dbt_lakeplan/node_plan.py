"""A node's plan, as typed, frozen models: what the planner decided for a source or model at parse time, already
checked. The planner builds them; the node's config carries their JSON under `PLAN_KEY`; the macros read fields
of it (macros/utils/plan.sql) and never re-derive what is decided here. The plan section of docs/settings.md is
generated from these models' fields.

    settings (settings.py) --> planner.py --> SourcePlan / ModelPlan --> node.config["lakeplan_plan"] --> macros

Apart from planner.py, so the modules that read plans (fingerprints, explain) import without dbt.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from dbt_lakeplan.merge_rules import Arithmetic, ValueCheck
from dbt_lakeplan.settings import Maintenance

PLAN_KEY = "lakeplan_plan"
PLAN_VERSION = 2  # raised when a field changes meaning or goes; new fields keep it


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def described(meaning: str, default: Any = ...) -> Any:
    return Field(default, description=meaning)


class Keyed(Frozen):
    keys: list[str] = described("the key the data is bucketed by")
    key_groups: int = described("how many buckets (Flink's key groups)")


class SourcePlan(Frozen):
    version: int = described("the plan's shape", PLAN_VERSION)
    owner: str = described("the source as errors name it")
    parallelism: Optional[int] = described("`scan_parallelism`: the partitions of the source's stage")
    changelog_mode: Literal["insert_only", "upsert", "all"] = described("which row kinds the source holds")
    primary_key: list[str] = described("a changelog's key")
    op_column: Optional[str] = described("the column holding each row's kind (+I, +U, -U, -D)")
    sequence_by: Optional[str] = described("the column that orders a key's changes")
    datagen: Optional[dict[str, Any]] = described("a generated source's `datagen` settings")
    keyed: Optional[Keyed] = described("how the source's table is pre-keyed (`pre_keyed_by`, `key_groups`)")


class Distribution(Frozen):
    parallelism: Optional[int] = described("the model's `parallelism`: a hash-repartition on its key")


class ChangeMode(Frozen):
    mode: Literal["copy_on_write", "merge_on_read", "auto", "delta"] = described("how a MERGE lands (`change_mode`)")
    merge_on_read_max_share: float = described("under `auto`: the largest share of the table read as merge-on-read")
    share: float = described("under `auto`: the share it compares with, the lower of `merge_on_read_max_share` and, "
                             "with maintenance after the write, its `deleted_share` (a larger change would be "
                             "compacted at once, so copy-on-write rewrites once instead of twice)")
    share_from: Literal["merge_on_read_max_share", "maintenance.deleted_share"] = described("the setting `share` is")
    delta_runs: int = described("under `delta`: the runs of delta rows that a write folds into the stored rows "
                                "(`maintenance.delta_runs`)")
    delta_after_write: bool = described("under `delta`: whether a write folds them (`maintenance.after_write`; else "
                                        "`lakeplan_maintain` does)")


class Reader(Frozen):
    table: str = described("the table (schema.name) that records which snapshot it read last: a member's target's")
    model: str = described("the model whose SQL reads it (a member, or an `upsert`)")
    macro: Literal["new_rows", "changed_keys"] = described("what it reads with")


class MaintenancePlan(Maintenance):
    target_file_bytes: int = described("`target_file_mib` in bytes")
    small_file_bytes: int = described("a data file under this size is small")
    compacts: bool = described(
        "whether maintenance measures and compacts the data and delete files (`small_files`, `deleted_share`, "
        "`delete_files`): not under change_mode delta, whose fold rewrites the table as its merged rows (`delta_runs`) "
        "and which appends no deletes; a rewrite would put delta rows into the stored rows' files, which every read of "
        "the merged rows then reads whole", True)
    read_by: list[Reader] = described("the models that read this one with new_rows / changed_keys: expiry keeps the "
                                      "snapshot each read last and every later one", [])


class UpsertPlan(Frozen):
    op_column: str = described("the changelog's row-kind column")
    sequence_by: Optional[str] = described("the column that orders a key's changes")


class Column(Frozen):
    name: str = described("as the YAML declares it")
    data_type: str = described("lower case")


class MergeRuleSql(Frozen):
    """A merge rule as the macros read it (plugins/dbt_lakeplan/merge_rules.py declares each)."""

    collapse: str = described("SQL: this run's rows of a key -> one value")
    combine: str = described("SQL: that value against the stored one")
    collapse_single: Optional[str] = described("SQL: the collapse when a key has at most one value this run")
    order_independent: bool = described("several writers need no `sequence_by`")
    packable: bool = described("one row's value is the result: it may travel in its member's packed struct")
    retracts: bool = described("-U/-D rows take their value back")
    counts_again: bool = described("the same rows applied twice change the value (a rerun, an input read whole again)")
    skips_null: bool = described("the combine applies where both sides hold a value")
    null_overwrites: bool = described("a written NULL replaces the stored value")
    arithmetic: Optional[Arithmetic] = described("an overflow stops the write")
    value_check: Optional[ValueCheck] = described("a member's value the rule cannot take stops the write")


class SequenceGroup(Frozen):
    sequence: str = described("the column whose value versions the group")
    columns: list[str] = described("the columns it versions")


class Types(Frozen):
    """Spark's types as spark_types.py declares them, for the run-time checks of the columns a write meets."""

    families: dict[str, str] = described("Spark type name -> family")
    casts: dict[str, list[str]] = described("family -> the families Spark's cast turns it into")
    aliases: dict[str, str] = described("another name of a type -> the name Spark prints")
    bare: dict[str, str] = described("a type written without its parameters -> with Spark's defaults")
    integer_digits: dict[str, int] = described("integer type -> the decimal digits it holds")
    largest: dict[str, int | float] = described("integer or floating-point type -> the largest magnitude it holds")
    lossless: list[tuple[str, str]] = described("casts that never lose a value, beyond the general rules")
    promotions: list[tuple[str, str]] = described("Iceberg's in-place type promotions, beyond a decimal's precision")
    stored_as: dict[str, str] = described("a type Iceberg has none of its own for -> the type it stores it as")


class GroupMember(Frozen):
    unique_id: str = described("the member's dbt node")
    name: str = described("the member's name")
    sequence_by: Optional[str] = described("the column that orders the member's rows")
    op_column: Optional[str] = described("a changelog member's row-kind column")


class WritePlan(Frozen):
    """One write of a partial-update target: the members that share one statement and one commit."""

    digest: str = described("the reuse digest its members share (digest.py)")
    digest_id: str = described("a short id of the digest")
    write_mode: Literal["merge", "overwrite"] = described("MERGE, or INSERT OVERWRITE")
    static_partition: dict[str, Any] = described("the partition an overwrite replaces")
    write_options: dict[str, Any] = described("the members' `write_options`")
    parallelism: Optional[int] = described("the members' `parallelism`")
    members: list[GroupMember] = described("in write order")


class TargetPlan(Frozen):
    columns: list[Column] = described("the declared columns, types lower case")
    on_delete: str = described("`partial_update_on_delete`")
    rules: dict[str, str] = described("non-key column -> its merge rule")
    order_independent: list[str] = described("the rules several writers may share without `sequence_by`")
    merge_rules: dict[str, MergeRuleSql] = described("each rule the target uses -> its SQL and properties")
    delimiters: dict[str, str] = described("`listagg` column -> its delimiter")
    sequence_groups: list[SequenceGroup] = described("`sequence_groups`, lower case")
    grouped: dict[str, str] = described("a grouped column (and its sequence column) -> its sequence column")
    groups: list[WritePlan] = described("the target's writes in order (overwrites first)", [])
    tombstone_sequence: Optional[str] = described("the `sequence_by` column its tombstones hold", None)


class Kind(Frozen):
    """What a model is, from its materialization's row in materializations.py: the macros read this, never the
    materialization's name."""

    member: bool = described("a partial-update member (`partial_update_target`), whatever its materialization", False)
    stateful: bool = described("lakeplan fingerprints the logic its kept rows were built by and checks it before a "
                               "write (the state check)", False)  # fmt: skip
    table: bool = described("it writes a table of its own: a keyed layout and a write parallelism apply", False)
    merged: bool = described("lakeplan's own materialization writes it: by MERGE, recording its state after the "
                             "write and maintaining it", False)  # fmt: skip
    changelog: bool = described("it applies a changelog by key (`op_column`, `sequence_by`, tombstones) and records "
                                "what its write consumed", False)  # fmt: skip
    target: bool = described("a partial-update target: written by its members, one statement per write group", False)
    inlined: bool = described("dbt inlines it into its consumers as a CTE (an ephemeral model, or a member into its "
                              "target): it has no relation, and its consumers carry its logic", False)  # fmt: skip


class MemberOf(Frozen):
    """Where `partial_update_target_relation()` finds a member's table (a ref would make a cycle)."""

    target: str = described("the target model's name")
    schema_: str = Field(alias="schema", description="the target table's schema")
    identifier: str = described("the target table's name")


class ModelPlan(Frozen):
    version: int = described("the plan's shape", PLAN_VERSION)
    model: str = described("the model's name")
    kind: Kind = described("what the model is (its materialization's kinds)")
    key: list[str] = described("`unique_key` as a list")
    distribution: Distribution = described("how the model's rows are distributed")
    keyed: Optional[Keyed] = described("the model's keyed layout (`keyed_by`, `key_groups`)")
    on_state_mismatch: str = described("what a run does when the table's state no longer fits the logic")
    accept_state: bool = described("listed in `lakeplan_accept_state`", False)
    forget_deletes: bool = described("listed in `lakeplan_forget_deletes`", False)
    full_rewrite_max_mib: Optional[int] = described("an `upsert` or target: up to this size a MERGE rewrites all", None)
    tombstone_retention_days: Optional[int] = described("an `upsert` or target: how long a delete is remembered", None)
    change_mode: Optional[ChangeMode] = described("an `upsert` or target: how its MERGE lands", None)
    maintenance: Optional[MaintenancePlan] = described("a model with `maintenance` (docs/maintenance.md)", None)
    types: Optional[Types] = described("an `upsert` or target: Spark's types, for its run-time type checks", None)
    upsert: Optional[UpsertPlan] = described("an `upsert`", None)
    partial_update: Optional[TargetPlan] = described("a partial-update target", None)
    member_of: Optional[MemberOf] = described("a member: its target's table (it is planned as an ephemeral)", None)
    reads: list[str] = described("the sources and models it reads (dbt unique ids), through the models it inlines "
                                 "(ephemeral ones, a target's members) to what they read", [])


SECTIONS = ("full_rewrite_max_mib", "tombstone_retention_days", "change_mode", "maintenance", "types", "upsert",
            "partial_update", "member_of")


def as_config(plan: SourcePlan | ModelPlan) -> dict[str, Any]:
    """The plan's JSON for the node's config; a model's sections it does not have are left out."""
    absent = {name for name in SECTIONS if name in type(plan).model_fields and getattr(plan, name) is None}
    return plan.model_dump(mode="json", by_alias=True, exclude=absent)
