"""Per-column merge rules and sequence groups of a partial-update target (Apache Paimon's
`fields.<f>.aggregate-function` and `fields.<seq>.sequence-group`), checked once at parse time.

A target's column says how this run's values and the stored value combine, in its YAML:

    columns:
      - {name: order_count, data_type: bigint, meta: {merge: sum}}
      - {name: channels, data_type: string, meta: {merge: listagg, listagg_delimiter: '|'}}

and the target's config may give columns their own version:

    config:
      sequence_groups: {status_seq: [status, amount]}

A rule is one declaration below (`MergeRule`, as Paimon's `FieldAggregator` and its factory are one class): the
types it accepts, its SQL and the properties the write's layout depends on. The plan hands the declarations of a
target's rules to the `partial_update` materialization, which fills their placeholders
(macros/materializations/partial_update/merge_rules.sql) and knows no rule by name.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from dbt_lakeplan.sequence_groups import check_sequence_groups
from dbt_lakeplan.spark_types import base_type, family

DEFAULT_RULE = "last_non_null"
DEFAULT_DELIMITER = ","  # Paimon's list-agg-delimiter


class Arithmetic(BaseModel):
    """A merge rule whose result can leave the column's type: the write stops naming the key instead of storing
    NULL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    word: str = Field(description="what an overflow error calls the result")
    operator: str = Field(description="how the error shows the stored and the new value combined")
    result_type: str = Field(description="the type the collapse yields (`{sum_type}`, `{type}` or a type name)")
    additive: bool = Field(False, description="the result adds up the values it folds, so that their largest "
                           "magnitude bounds it: a delta write checks that bound before it reads a stored row")


class ValueCheck(BaseModel):
    """Values of the column's type that a merge rule's SQL cannot take (a library would fail on them with its own
    words): a member's value is checked first, and the write stops naming the member, column and key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    refuses: str = Field(description="SQL over `{value}`, a member's non-NULL value: true where the rule cannot take it")
    wants: str = Field(description="what a value must be, for the error")


@dataclass(frozen=True)
class MergeRule:
    """One merge rule. Its SQL are templates with placeholders the macros fill per column:

    collapse (this run's rows of one key -> one value): `{value}` the column; `{live}` its value where the row
    counts (changelog: +I/+U after the key's last delete) else NULL; `{signed}` the same, negated on a -U/-D row
    (rules that retract); `{sign}` 1, or -1 on a -U/-D row; `{order}` the row's order where the value is non-NULL
    and counts; `{written_order}` the row's order where its member writes the column, NULL values included;
    `{in_order}` the non-NULL counting values as an array, oldest first; `{any}` whether there is one; `{single}`
    the one value when a key has at most one; `{type}` the column's type; `{delimiter}` a SQL string.
    combine (that value against the stored one): `{stored}`, `{change}`, `{type}`, `{delimiter}`, and `{written}`
    whether this run wrote the column for the key (rules where NULL overwrites).
    """

    accepts: Callable[[str], bool]  # whether the rule applies to a column of this data_type
    needs: str  # what `accepts` wants, for the error message and the docs
    this_run: str  # what the collapse does, for the docs
    against_stored: str  # what the combine does, for the docs
    collapse: str
    combine: str
    collapse_single: str | None = None  # the collapse when a key has at most one value this run (else `collapse`)
    order_independent: bool = False  # several writers need no `sequence_by` to decide the result
    packable: bool = False  # one row's value is the result as it is: it may travel in its member's packed struct
    retracts: bool = False  # a changelog's -U/-D rows take their value back, so they stay in the rows
    counts_again: bool = False  # the same rows applied twice change the value: a run applied again, or an input
    # read whole again, would count them twice
    skips_null: bool = False  # the combine applies where both sides hold a value; a NULL side leaves the other
    null_overwrites: bool = False  # a written NULL replaces the stored value: the collapse says what was written
    arithmetic: Arithmetic | None = None  # the result can leave the column's type: an overflow stops the write
    value_check: ValueCheck | None = None  # a value of the type the rule's SQL would fail on, with a library's error

    def declaration(self) -> dict[str, Any]:
        """What the macros read (plain data for the plan's JSON)."""
        return {field.name: value.model_dump() if isinstance(value, BaseModel) else value
                for field in fields(self) if field.name not in ("accepts", "needs", "this_run", "against_stored")
                for value in [getattr(self, field.name)]}  # fmt: skip


def _any(data_type: str) -> bool:
    return True


def _atomic(data_type: str) -> bool:
    return base_type(data_type) not in {"array", "map", "struct"}


def _is(*names: str) -> Callable[[str], bool]:
    return lambda data_type: base_type(data_type) in names


INTEGERS = ("tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long")
LAMBDA_MAP_MERGE = "map_concat(map_filter({older}, (lakeplan_k, lakeplan_v) -> not array_contains(map_keys({newer}), lakeplan_k)), {newer})"

RULES = {
    "last_non_null": MergeRule(
        _any, "any type", "the latest non-NULL", "replaces it unless NULL",
        collapse="max_by({value}, {order})", collapse_single="{single}", combine="coalesce({change}, {stored})",
        packable=True),
    "first_non_null": MergeRule(
        _any, "any type", "the earliest non-NULL", "only fills a NULL",
        collapse="min_by({value}, {order})", collapse_single="{single}", combine="coalesce({stored}, {change})",
        packable=True),
    "last_value": MergeRule(
        _any, "any type", "the latest written value, NULL included", "replaces it, also with NULL",
        collapse="max_by({value}, {written_order})", collapse_single="{single}",
        combine="case when {written} then {change} else {stored} end", null_overwrites=True),
    "first_value": MergeRule(
        _any, "any type", "the earliest written value, NULL included", "only fills a NULL",
        collapse="min_by({value}, {written_order})", collapse_single="{single}", combine="coalesce({stored}, {change})"),
    "sum": MergeRule(
        lambda t: family(t) == "numeric", "a numeric type", "sum of non-NULLs; `-U`/`-D` rows subtract",
        "added (NULL + x = x)",
        collapse="try_sum({signed})", combine="try_add({stored}, {change})", order_independent=True, packable=True,
        retracts=True, skips_null=True, counts_again=True,
        arithmetic=Arithmetic(word="sum", operator="+", result_type="{sum_type}", additive=True)),
    "product": MergeRule(
        _is(*INTEGERS, "float", "real", "double"), "an integer or floating-point type", "product of non-NULLs",
        "multiplied (NULL × x = x)",
        collapse="case when {any} then aggregate(collect_list({live}), cast(1 as {type}), "
                 "(lakeplan_acc, lakeplan_x) -> try_cast(try_multiply(lakeplan_acc, lakeplan_x) as {type})) end",
        combine="try_multiply({stored}, {change})", order_independent=True, packable=True, skips_null=True,
        counts_again=True,
        arithmetic=Arithmetic(word="product", operator="*", result_type="{type}")),
    "count": MergeRule(
        _is(*INTEGERS), "an integer type", "how many non-NULL values; `-U`/`-D` rows subtract", "added (NULL + n = n)",
        collapse="sum(case when {signed} is not null then {sign} end)", combine="try_add({stored}, {change})",
        order_independent=True, retracts=True, skips_null=True, counts_again=True,
        arithmetic=Arithmetic(word="count", operator="+", result_type="bigint", additive=True)),
    "min": MergeRule(
        _atomic, "an ordered atomic type", "smallest", "`least`",
        collapse="min({live})", combine="least({stored}, {change})", order_independent=True, packable=True),
    "max": MergeRule(
        _atomic, "an ordered atomic type", "largest", "`greatest`",
        collapse="max({live})", combine="greatest({stored}, {change})", order_independent=True, packable=True),
    "bool_or": MergeRule(
        _is("boolean"), "boolean", "or of non-NULLs", "or",
        collapse="bool_or({live})", combine="{stored} or {change}", order_independent=True, packable=True,
        skips_null=True),
    "bool_and": MergeRule(
        _is("boolean"), "boolean", "and of non-NULLs", "and",
        collapse="bool_and({live})", combine="{stored} and {change}", order_independent=True, packable=True,
        skips_null=True),
    "append": MergeRule(
        _is("array"), "an array type", "concatenated in row order", "appended to it",
        collapse="case when {any} then flatten({in_order}) end", combine="concat({stored}, {change})",
        skips_null=True, counts_again=True),
    "append_distinct": MergeRule(
        _is("array"), "an array type", "concatenated, duplicates dropped", "appended, duplicates dropped",
        collapse="case when {any} then array_distinct(flatten({in_order})) end",
        combine="array_distinct(concat({stored}, {change}))", order_independent=True, skips_null=True),
    "listagg": MergeRule(
        _is("string", "varchar", "char"), "a string type", "joined in row order by `listagg_delimiter`",
        "appended after the delimiter",
        collapse="case when {any} then array_join({in_order}, {delimiter}) end",
        combine="concat({stored}, {delimiter}, {change})", skips_null=True, counts_again=True),
    "merge_map": MergeRule(
        _is("map"), "a map type", "merged in row order, a later entry wins", "merged, this run's entries win",
        collapse="case when {any} then aggregate({in_order}, cast(map() as {type}), (lakeplan_acc, lakeplan_map) -> "
                 + LAMBDA_MAP_MERGE.format(older="lakeplan_acc", newer="lakeplan_map") + ") end",
        combine=LAMBDA_MAP_MERGE.format(older="{stored}", newer="{change}"), skips_null=True),
    "hll_sketch": MergeRule(
        _is("binary"), "binary (an HLL sketch, as Spark's `hll_sketch_agg` makes)", "the sketches' union",
        "unioned (`hll_union`)",
        collapse="hll_union_agg({live}, true)", combine="hll_union({stored}, {change}, true)", order_independent=True,
        packable=True, skips_null=True,
        # DataSketches' header: preamble ints 2/3/10 (list, set, HLL mode), serial version 1, family 7, lg_k 4-21
        value_check=ValueCheck(refuses="not hex(substring({value}, 1, 4)) rlike '^(02|03|0A)0107(0[4-9A-F]|1[0-5])$'",
                               wants="an HLL sketch (as Spark's `hll_sketch_agg` makes)")),
}  # fmt: skip
ORDER_INDEPENDENT = sorted(name for name, rule in RULES.items() if rule.order_independent)


def _column_rule(target: str, column: str, data_type: str, rule: str | None, keys: set[str], problems: list[str]):
    where = f"column `{column}` of partial-update target `{target}`"
    if column.lower() in keys and rule is not None:
        problems.append(
            f"{where[0].upper()}{where[1:]} is part of its unique_key and has merge rule {rule!r}; a key is never "
            f"merged, it names the row. Fix: remove `merge` from `{column}`'s meta."
        )
    rule = rule or DEFAULT_RULE
    if not RULES[rule].accepts(data_type):
        problems.append(
            f"Merge rule {rule!r} on {where} needs {RULES[rule].needs}, but the column is {data_type}. "
            f"Fix: change the rule, or the column's data_type."
        )
    return rule


def resolve_merge_rules(
    target: str, columns: list[tuple[str, str, str | None]], unique_key: list[str],
    sequence_groups: dict[str, list[str]] | None, delimiters: dict[str, str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Checks a target's rules and groups. `columns`: (name, data_type, merge rule or None) as declared in its
    YAML; `delimiters`: a column's `listagg_delimiter` where set. Returns the resolved rules and every problem
    found."""
    problems: list[str] = []
    keys = {key.lower() for key in unique_key}
    types = {name.lower(): data_type for name, data_type, _ in columns}
    rules = {name.lower(): _column_rule(target, name, data_type, rule, keys, problems) for name, data_type, rule in columns}
    ruled = {name: rule for name, rule in rules.items() if rule != DEFAULT_RULE}
    groups = check_sequence_groups(target, sequence_groups or {}, types, ruled, keys, problems)
    delimiters = {name.lower(): delimiter for name, delimiter in (delimiters or {}).items()}
    for name in sorted(name for name in delimiters if rules.get(name) != "listagg"):
        problems.append(
            f"Column `{name}` of `{target}` sets listagg_delimiter, but its merge rule is {rules.get(name)!r}; only "
            f"`listagg` joins values. Fix: remove listagg_delimiter, or set `merge: listagg`."
        )
    merged = {name: rule for name, rule in rules.items() if name not in keys}
    resolved = {
        "rules": merged,
        "order_independent": ORDER_INDEPENDENT,
        "merge_rules": {rule: RULES[rule].declaration() for rule in sorted({DEFAULT_RULE, *merged.values()})},
        "delimiters": {name: delimiters.get(name, DEFAULT_DELIMITER) for name, rule in merged.items() if rule == "listagg"},
        "sequence_groups": groups,
    }
    return resolved, problems
