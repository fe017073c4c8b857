"""Every lakeplan setting, declared once: where it is written, its type, default, allowed values, meaning, and
whether it changes what a table holds (a fingerprint counts it) or only how the table is computed.

Four places hold settings: a source table's `meta:`, a model's config, a column's `meta:` (of a partial-update
target) and the project's vars. Each place is one pydantic model below; the planner reads every node through
them once, at parse time. docs/settings.md is generated from these declarations (scripts/settings_doc.py).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (
    AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, ValidationError, model_validator,
)

from dbt_lakeplan.merge_rules import DEFAULT_DELIMITER, DEFAULT_RULE, RULES

PLACES = {
    "source": "source table `meta:`",
    "model": "model config",
    "column": "column `meta:` of a partial-update target",
    "var": "project var",
}


def _column_list(value: Any) -> Any:
    """A column or a list of columns, as YAML allows both: always a list afterwards."""
    return [value] if isinstance(value, str) else value


def _distinct_columns(names: list[str]) -> list[str]:
    """Spark resolves column names ignoring case, so `[id, Id]` names one column twice."""
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            raise ValueError(f"`{seen[name.lower()]}` and `{name}` are one column, as Spark ignores case in column "
                             "names; list each column once")  # fmt: skip
        seen[name.lower()] = name
    return names


Names = Annotated[list[str], BeforeValidator(_column_list)]
ColumnNames = Annotated[list[str], BeforeValidator(_column_list), AfterValidator(_distinct_columns)]
# Spark counts partitions and buckets in Java ints, and dbt's manifest stores no integer beyond 64 bits (a larger
# one crashed dbt writing its partial-parse file, a Python traceback instead of a lakeplan error)
PositiveInt = Annotated[StrictInt, Field(ge=1, le=2**31 - 1)]
Long = Annotated[StrictInt, Field(ge=-(2**63), le=2**63 - 1)]
Scalar = Union[StrictBool, Long, float, str]  # a larger integer is read as a float
SPARK_KEY = r"^[A-Za-z0-9_.-]+$"  # a Spark setting's key; write options are sent as `SET key=value`


def _one_statement(value: Any) -> Any:
    if isinstance(value, str) and re.search(r"[;\n]", value):
        raise ValueError("a Spark setting's value cannot hold `;` or a line break")
    return value


SparkValue = Annotated[Scalar, AfterValidator(_one_statement)]


def setting(default: Any, meaning: str, changes_contents: bool, example: Any, **constraints: Any) -> Any:
    """A declared setting. `changes_contents`: whether changing it changes what the table holds, so that its
    fingerprint must change (FLIP-411); `example`: a valid non-default value (docs, and the test that walks
    every declaration)."""
    extra = {"changes_contents": changes_contents, "example": example}
    return Field(default, description=meaning, json_schema_extra=extra, **constraints)


class Settings(BaseModel):
    """A place's settings: unknown keys belong to dbt or other packages, and pass."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class DatagenChangelog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    keys: PositiveInt
    versions: PositiveInt


class Datagen(BaseModel):
    """A generated source: `rows` rows with `fields` (SQL over `id`), or a changelog of `keys` x `versions`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rows: Optional[Annotated[Long, Field(ge=0)]] = None
    fields: Optional[dict[str, Union[str, Long, float]]] = None
    changelog: Optional[DatagenChangelog] = None

    @model_validator(mode="after")
    def one_kind(self) -> "Datagen":
        if (self.changelog is None) == (self.rows is None or self.fields is None):
            raise ValueError("give either `rows` and `fields`, or `changelog: {keys, versions}`")
        return self


class SourceSettings(Settings):
    scan_parallelism: Optional[PositiveInt] = setting(
        None, "the number of partitions of this source's stage (Flink `scan.parallelism`)", False, 4)
    changelog_mode: Literal["insert_only", "upsert", "all"] = setting(
        "insert_only", "`insert_only`: +I rows; `upsert`: +I, +U, -D; `all`: also -U (Flink RowKind)", True, "upsert")
    primary_key: Optional[ColumnNames] = setting(
        None, "column or list of columns; required for `upsert` and `all`", True, ["id"])
    op_column: str = setting("_op", "the column holding a changelog row's op", True, "op")
    sequence_by: Optional[str] = setting(None, "the column ordering the changes of one key", True, "version")
    datagen: Optional[Datagen] = setting(
        None, "no physical table: `{rows: N, fields: {name: <SQL over id>}}`, or `{changelog: {keys: K, versions: V}}` "
        "(columns: the primary key, op and sequence columns, `status`, `amount`, `_batch`)", True,
        {"rows": 10, "fields": {"n": "id"}})
    pre_keyed_by: Optional[ColumnNames] = setting(
        None, "the column the table is bucketed by (with `key_groups`): keyed work reads it without a shuffle",
        False, ["id"])
    key_groups: Optional[PositiveInt] = setting(None, "the number of buckets of a keyed layout", False, 8)


class Maintenance(BaseModel):
    """A table's upkeep (docs/maintenance.md): each action runs when its threshold is crossed, after the model's
    write (`after_write`) and under `dbt run-operation lakeplan_maintain`; orphan files only under the latter."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    after_write: StrictBool = setting(
        True, "check the thresholds after each write of the model; `false`: only `lakeplan_maintain` maintains it",
        False, False)
    target_file_mib: Annotated[StrictInt, Field(ge=1, le=2**20)] = setting(
        512, "the size of the data files compaction writes (`rewrite_data_files`' `target-file-size-bytes`); a data "
        "file under 75% of it is small", False, 128)
    small_files: Annotated[StrictInt, Field(ge=2, le=2**31 - 1)] = setting(
        20, "compact data files (`rewrite_data_files`) when the table holds at least this many small ones (not under "
        "`change_mode: delta`, whose fold compacts: `delta_runs`)", False, 50)
    deleted_share: Annotated[float, Field(gt=0, le=1)] = setting(
        0.1, "compact the data files that have deletes, applying them (`rewrite_data_files`, then "
        "`rewrite_position_delete_files`), when the rows its delete files delete are at least this share of its data "
        "files' rows (merge-on-read tables)", False, 0.25)
    delete_files: PositiveInt = setting(
        20, "compact delete files (`rewrite_position_delete_files`) when the table holds at least this many "
        "(merge-on-read tables)", False, 50)
    delta_runs: Annotated[StrictInt, Field(ge=1, le=10_000)] = setting(
        10, "under `change_mode: delta`: fold the delta rows into the stored rows (one `insert overwrite` of the merged "
        "table) once they hold this many runs, after a write (unless `after_write` is false) and under "
        "`lakeplan_maintain`; read without `maintenance` too", False, 5)
    expire_after_hours: Optional[Annotated[StrictInt, Field(ge=0, le=24 * 365 * 100)]] = setting(
        120, "expire snapshots older than this many hours (`expire_snapshots`), when there are such snapshots "
        "beyond `keep_snapshots`; null: never", False, 48)
    keep_snapshots: PositiveInt = setting(
        1, "the number of the latest snapshots expiry keeps, however old (tagged and branch snapshots are kept too)",
        False, 5)
    orphans_after_hours: Optional[Annotated[StrictInt, Field(ge=24, le=24 * 365 * 100)]] = setting(
        72, "`lakeplan_maintain` removes files in the table's directory that no snapshot references and that are "
        "older than this many hours (`remove_orphan_files`; at least 24: a younger file may belong to a write under "
        "way); null: never", False, 168)


class ModelSettings(Settings):
    unique_key: Optional[ColumnNames] = setting(
        None, "the primary key (dbt's own setting): of an `upsert`, a partial-update target, a `parallelism` hash",
        True, ["id"])
    parallelism: Optional[PositiveInt] = setting(
        None, "the model's write is redistributed to N partitions, hashed on `unique_key` (Flink FLIP-146)", False, 4)
    keyed_by: Optional[ColumnNames] = setting(
        None, "exactly one column the table is bucketed by (with `key_groups`); an Iceberg table, incremental or upsert",
        False, ["id"])
    key_groups: Optional[PositiveInt] = setting(None, "the number of buckets of `keyed_by`", False, 8)
    op_column: Optional[str] = setting(
        None, "the column holding the changelog op: of an `upsert` (default `_op`); on a member it makes the member "
        "a changelog", True, "op")
    sequence_by: Optional[str] = setting(
        None, "the column ordering rows of one key (a version or timestamp): the later row wins", True, "version")
    tombstone_retention_days: PositiveInt = setting(
        7, "how long a delete is remembered against late rows (`upsert` with `sequence_by`, `remove_record`)",
        False, 30)
    full_rewrite_max_mib: Annotated[StrictInt, Field(ge=0, le=2**43)] = setting(
        256, "an `upsert`'s or partial-update target's MERGE into a table of at most this many MiB of data files "
        "rewrites every file, without first finding the files the change touches (Spark evaluates the change twice "
        "for that); 0: always find them", False, 0)
    change_mode: Literal["copy_on_write", "merge_on_read", "auto", "delta"] = setting(
        "copy_on_write", "how an `upsert`'s or partial-update target's MERGE lands: `copy_on_write` rewrites the data "
        "files it touches, `merge_on_read` writes delete files beside them (Iceberg's write.*.mode), `auto` chooses "
        "at each write from the rows the members read against the table's (`merge_on_read_max_share`); `delta` (a "
        "partial-update target) appends the run's collapsed change to the table as delta rows without reading its "
        "stored rows, and `ref()` reads the table merged with them (docs/delta-mode.md)", False,
        "auto")
    merge_on_read_max_share: Annotated[float, Field(gt=0, le=1)] = setting(
        0.6, "under `change_mode: auto`: the largest share of the table's rows this run's inputs may hold for the "
        "write to land as merge-on-read (lower when `maintenance.deleted_share` is: docs/small-changes.md)", False,
        0.01)
    on_state_mismatch: Literal["fail", "full_refresh", "ignore"] = setting(
        "fail", "what a stateful model does when its fingerprint no longer fits its table", False, "full_refresh")
    partial_update_target: Optional[str] = setting(
        None, "on a member: the partial-update target model it writes columns of", True, "customer_360")
    write_mode: Literal["merge", "overwrite"] = setting(
        "merge", "on a member: its group MERGEs, or INSERT OVERWRITEs the table (or `static_partition`)", True,
        "overwrite")
    static_partition: Optional[dict[str, Scalar]] = setting(
        None, "on a member: the partition (column: value) an overwrite replaces", True, {"day": "2024-01-01"})
    write_options: Optional[dict[Annotated[str, Field(pattern=SPARK_KEY)], Optional[SparkValue]]] = setting(
        None, "on a member: Spark settings in effect during its group's statement alone (then restored, also when it "
        "fails)", False, {"spark.sql.shuffle.partitions": 4})
    partial_update_on_delete: Literal["error", "ignore", "remove_record"] = setting(
        "error", "on a target: what a changelog member's -D does (`error`, as Paimon's partial-update)", True,
        "remove_record")
    maintenance: Optional[Maintenance] = setting(
        None, "compaction, snapshot expiry and orphan-file removal of an Iceberg `upsert`, partial-update target or "
        "incremental model, each by its threshold (docs/maintenance.md); `{}`: the defaults", False,
        {"small_files": 10, "expire_after_hours": 24})
    sequence_groups: Optional[Annotated[
        dict[str, Annotated[list[str], Field(min_length=1), AfterValidator(_distinct_columns)]],
        AfterValidator(lambda groups: _distinct_columns(list(groups)) and groups),
    ]] = setting(
        None, "on a target: a sequence column -> the columns it versions (Paimon's sequence-group)", True,
        {"status_seq": ["status"]})


class ColumnSettings(Settings):
    merge: Literal[tuple(RULES)] = setting(  # type: ignore[valid-type]
        DEFAULT_RULE, "how this run's values of a key and the stored value combine (Paimon's aggregate functions, "
        "listed in docs/settings.md under Merge rules)", True, "sum")
    listagg_delimiter: Optional[str] = setting(
        None, f"on a `listagg` column: the text between joined values (Paimon's list-agg-delimiter); unset: "
        f"`{DEFAULT_DELIMITER}`", True, "; ")


class ProjectVars(Settings):
    reuse_sink_enabled: StrictBool = setting(
        True, "`false`: every partial-update member writes its own MERGE (N commits, same contents)", False, False)
    fingerprint_version: Literal["v2", "v3"] = setting(
        "v3", "`v3` (chaining-agnostic, FLIP-411) or `v2` (ephemeral inlining counts)", False, "v2")
    lakeplan_accept_state: Names = setting(
        [], "models whose changed logic is accepted without a rebuild (`--vars`)", False, ["customer_360"])
    lakeplan_forget_deletes: ColumnNames = setting(
        [], "models whose remembered deletes (tombstones) a rebuild (`--full-refresh`) forgets; by default a rebuild "
        "keeps them (`--vars`)", False, ["orders_current"])


SCHEMAS: dict[str, type[Settings]] = {
    "source": SourceSettings, "model": ModelSettings, "column": ColumnSettings, "var": ProjectVars,
}

def changes_contents(place: str, name: str) -> bool:
    return SCHEMAS[place].model_fields[name].json_schema_extra["changes_contents"]


def contents_keys(place: str) -> tuple[str, ...]:
    """The settings of a place that change what a table holds: what a fingerprint counts."""
    return tuple(name for name in SCHEMAS[place].model_fields if changes_contents(place, name))


def _allowed(field: Any, name: str, spelled: str, given: Any = None) -> str:
    """What a setting allows: its values (with the one a misspelt `given` is closest to: `merge-on-read`), or a valid
    example spelled as YAML (`spelled` wraps it for a nested one)."""
    literal = re.findall(r"'([^']*)'", str(field.annotation)) if "Literal" in str(field.annotation) else []
    if literal:
        close = difflib.get_close_matches(str(given).lower().replace("-", "_"), literal, n=1, cutoff=0.6)
        meant = f" (did you mean `{close[0]}`?)" if isinstance(given, str) and close else ""
        return "one of " + ", ".join(f"`{value}`" for value in literal) + meant
    example = json.dumps(field.json_schema_extra["example"])  # YAML's spelling: true, ["id"], {"day": ...}
    return f"e.g. `{spelled % f'{name}: {example}'}`"


def _declared(place: str, name: str, inner: str, given: Any) -> tuple[str, str]:
    """The meaning and what is allowed of the setting a problem is at: a nested setting's own (`maintenance` at
    `deleted_share`), else the place's setting's; `given`: the setting's value as written."""
    field = SCHEMAS[place].model_fields[name]
    nested = [a for a in getattr(field.annotation, "__args__", (field.annotation,)) if isinstance(a, type)
              and issubclass(a, Maintenance)]  # fmt: skip
    if nested and inner in nested[0].model_fields:
        inner_field = nested[0].model_fields[inner]
        inner_given = given.get(inner) if isinstance(given, dict) else None
        return f"`{inner}`: {inner_field.description}", _allowed(inner_field, inner, f"{name}: {{%s}}", inner_given)
    if nested and inner:
        known = ", ".join(f"`{key}`" for key in nested[0].model_fields)
        close = difflib.get_close_matches(inner, list(nested[0].model_fields), n=1, cutoff=0.8)
        rename = f"rename `{inner}` to `{close[0]}` (did you mean it?); " if close else ""
        return field.description, f"{rename}use only {known} in `{name}`; {_allowed(field, name, '%s')}"
    return field.description, _allowed(field, name, "%s", given)


def read_settings(
    place: str, owner: str, raw: dict[str, Any], known: frozenset[str] = frozenset(), merged: bool = True
) -> tuple[Settings | None, list[str]]:
    """The settings of one place, read through its declaration, and every problem with them as a sentence
    that names the owner, the setting, the value, what is allowed and the fix. `known`: other tools' keys;
    `merged`: a column of a partial-update target, whose meta keys that look like a merge rule are refused."""
    found = [miss for miss in (_near_miss(place, owner, key, raw[key], merged, known) for key in raw
                               if key not in known) if miss]
    try:
        return SCHEMAS[place].model_validate(raw), found
    except ValidationError as error:
        seen = set()
        for detail in error.errors():  # one problem per setting, and per key of a nested one (`maintenance`)
            name, inner = str(detail["loc"][0]), ".".join(str(part) for part in detail["loc"][1:])
            if (name, inner) in seen:
                continue
            seen.add((name, inner))
            where = f"at `{inner}`: " if inner else ""
            reason = detail["msg"][:1].lower() + detail["msg"][1:]  # the names in it keep their case
            reason = re.sub(r" or instance of \w+", "", reason)  # pydantic names its class: not the user's word
            if detail["type"] == "literal_error":  # its values are listed once, in the fix
                reason = "it is none of the setting's values"
            meaning, allowed = _declared(place, name, inner, raw.get(name))
            found.append(
                f"{owner} sets `{name}: {_show(raw.get(name))}`, which lakeplan cannot use ({where}{reason}); "
                f"{meaning}. Fix: {allowed}, or remove it."
            )
        return None, found


# Words of a column's meta key that mean its merge rule; Paimon names it `fields.<column>.aggregate-function`
RULE_WORDS = {"merge", "rule", "aggregate", "aggregation", "agg"}


def beside_meta(place: str, owner: str, keys: dict[str, Any]) -> list[str]:
    """`merge: sum` beside a column's name, `scan_parallelism: 4` beside a source table's: dbt keeps such keys
    without a word, and lakeplan reads these settings only under `meta:`."""
    return [
        f"{owner} sets `{key}: {_show(value)}` beside its name, where lakeplan does not read it: it would do nothing. "
        f"Fix: put it under `meta:` (`meta: {{{key}: {_show(value)}}}`)."
        for key, value in keys.items() if key in SCHEMAS[place].model_fields
    ]


def _near_miss(place: str, owner: str, key: str, value: Any = None, merged: bool = True,
               known: frozenset[str] = frozenset()) -> str | None:
    """`scan_paralelism`: a key that is no setting here but one edit away from a lakeplan setting, or from one of
    the other tool's `known` keys (`incremental_stratgy`: dbt keeps an unknown config key in silence)."""
    key_text = str(key)
    if key_text in SCHEMAS[place].model_fields:
        return None
    if key_text == "lakeplan" and isinstance(value, dict) and place != "var" and (merged or place != "column"):
        nested = ", ".join(f"`{inner}: {_show(inner_value)}`" for inner, inner_value in value.items())
        return (f"{owner} nests {nested} under `lakeplan:`, where lakeplan does not read settings: it would do "
                f"nothing. Fix: put {'it' if len(value) == 1 else 'them'} directly in the {PLACES[place]}.")
    if place == "column" and merged and (rule_miss := _merge_rule_miss(owner, key_text, value)):
        return rule_miss
    elsewhere = [p for p, schema in SCHEMAS.items() if p != place and key_text in schema.model_fields]
    if elsewhere and place != "var":
        return (
            f"{owner} sets `{key_text}`, a lakeplan setting of the {PLACES[elsewhere[0]]}, not of the "
            f"{PLACES[place]}: it would do nothing here. Fix: move it to the {PLACES[elsewhere[0]]}."
        )
    places = ["var"] if place == "var" else [p for p in reversed(SCHEMAS) if p != "var"]  # user vars may be anything
    everywhere = {name: p for p in places for name in SCHEMAS[p].model_fields}
    close = difflib.get_close_matches(key_text, list(everywhere), n=1, cutoff=0.8)
    if not close:
        theirs = difflib.get_close_matches(key_text, sorted(known), n=1, cutoff=0.8)
        if not theirs:
            return None
        return (f"{owner} sets `{key_text}`, which is neither a dbt config nor a lakeplan setting and would be "
                f"ignored: did you mean dbt's `{theirs[0]}`? Fix: rename it to `{theirs[0]}` (a key of your own "
                "belongs under `meta:`).")
    setting_place = everywhere[close[0]] if close[0] not in SCHEMAS[place].model_fields else place
    where = "" if setting_place == place else f", a setting of the {PLACES[setting_place]}"
    return (
        f"{owner} sets `{key_text}`, which is no lakeplan setting and would be ignored: did you mean `{close[0]}`"
        f"{where}? Fix: rename it to `{close[0]}` ({SCHEMAS[setting_place].model_fields[close[0]].description})."
    )


def _merge_rule_miss(owner: str, key: str, value: Any) -> str | None:
    """`merge_rule: sum`: a target column's meta key whose name says merge rule but is not `merge` leaves the column
    on the default rule in silence (a new-user trial's wrong totals). A key is judged by its name alone: `unit:
    count` or `priority: max` are other tools' meta, whatever their value."""
    is_rule = isinstance(value, str) and value in RULES
    words = set(re.split(r"[^a-z]+", key.lower()))
    if not words & RULE_WORDS or "delimiter" in words:
        return None
    why = ("`aggregate-function` is Paimon's name for it" if {"aggregate", "function"} <= words else
           f"`{value}` is a merge rule" if is_rule else "its name says merge rule")
    meant = f"merge: {value}" if is_rule else "merge"
    return (
        f"{owner} sets `{key}: {_show(value)}`, which is no lakeplan setting and would be ignored, leaving the column "
        f"on the default rule `{DEFAULT_RULE}` ({why}): did you mean `{meant}`? Fix: rename `{key}` to `merge`."
    )


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)
