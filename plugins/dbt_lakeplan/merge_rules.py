"""Per-column merge rules and sequence groups of a partial-update target (Apache Paimon's
`fields.<f>.aggregate-function` and `fields.<seq>.sequence-group`), checked once at parse time.

A target's column says how this run's values and the stored value combine, in its YAML:

    columns:
      - {name: order_count, data_type: bigint, meta: {merge: sum}}

and the target's config may give columns their own version:

    config:
      sequence_groups: {status_seq: [status, amount]}

The result is plain data the `partial_update` materialization compiles into its collapse and MERGE:
`{"rules": {column: rule}, "sequence_groups": [{"sequence": column, "columns": [...]}]}`, names lower case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_RULE = "last_non_null"

_NUMERIC = {
    "tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long",
    "float", "real", "double", "decimal", "dec", "numeric",
}  # fmt: skip


def _base_type(data_type: str) -> str:
    return data_type.lower().split("(")[0].split("<")[0].strip()


@dataclass(frozen=True)
class Rule:
    order_dependent: bool  # several writers need `sequence_by` to decide the result
    fits: Callable[[str], bool]  # whether the rule applies to a column of this data_type
    needs: str  # what `fits` wants, for the error message


def _any(data_type: str) -> bool:
    return True


RULES = {
    "last_non_null": Rule(True, _any, "any type"),
    "first_non_null": Rule(True, _any, "any type"),
    "sum": Rule(False, lambda t: _base_type(t) in _NUMERIC, "a numeric type"),
    "min": Rule(False, lambda t: _base_type(t) not in {"array", "map", "struct"}, "an ordered atomic type"),
    "max": Rule(False, lambda t: _base_type(t) not in {"array", "map", "struct"}, "an ordered atomic type"),
    "bool_or": Rule(False, lambda t: _base_type(t) == "boolean", "boolean"),
    "bool_and": Rule(False, lambda t: _base_type(t) == "boolean", "boolean"),
    "append": Rule(True, lambda t: _base_type(t) == "array", "an array type"),
    "append_distinct": Rule(False, lambda t: _base_type(t) == "array", "an array type"),
}
ORDER_INDEPENDENT = sorted(name for name, rule in RULES.items() if not rule.order_dependent)


class MergeRuleError(ValueError):
    """A merge rule or sequence group that no correct write can follow."""


def _column_rule(target: str, column: str, data_type: str, meta: dict[str, Any], keys: set[str]) -> str:
    rule = meta.get("merge", DEFAULT_RULE)
    where = f"column `{column}` of partial-update target `{target}`"
    if column.lower() in keys and "merge" in meta:
        raise MergeRuleError(
            f"{where[0].upper()}{where[1:]} is part of its unique_key and has merge rule {rule!r}; a key is never "
            f"merged, it names the row.\nFix: remove `merge` from `{column}`'s meta."
        )
    if rule not in RULES:
        raise MergeRuleError(
            f"Unknown merge rule {rule!r} on {where}.\nRules: {', '.join(RULES)}.\n"
            f"Fix: set `meta: {{merge: <rule>}}` on `{column}` to one of them, or drop it (default {DEFAULT_RULE})."
        )
    if not RULES[rule].fits(data_type):
        raise MergeRuleError(
            f"Merge rule {rule!r} on {where} needs {RULES[rule].needs}, but the column is {data_type}.\n"
            f"Fix: change the rule, or the column's data_type."
        )
    return rule


def _sequence_groups(target: str, declared: Any, types: dict[str, str], rules: dict[str, str], keys: set[str]):
    if declared in (None, {}):
        return []
    if not isinstance(declared, dict) or not all(isinstance(v, list) and v for v in declared.values()):
        raise MergeRuleError(
            f"sequence_groups of partial-update target `{target}` is {declared!r}; it maps a sequence column to the "
            "columns it versions.\nFix: `sequence_groups: {<sequence column>: [<column>, ...]}`."
        )
    owner: dict[str, str] = {}
    groups = []
    for sequence, columns in declared.items():
        sequence = str(sequence).lower()
        for name in [sequence, *(str(c).lower() for c in columns)]:
            role = "sequence column" if name == sequence else "column"
            fix = f"declare `{name}` in `{target}`'s YAML, or remove it from sequence_groups."
            if name not in types:
                raise MergeRuleError(
                    f"sequence_groups of `{target}` names the {role} `{name}`, which is not a column of the target.\n"
                    f"Fix: {fix}"
                )
            if name in keys:
                raise MergeRuleError(
                    f"sequence_groups of `{target}` names the key column `{name}`; a key is never merged.\n"
                    f"Fix: remove `{name}` from sequence_groups."
                )
            if name in owner:
                raise MergeRuleError(
                    f"Column `{name}` of `{target}` is in two sequence groups ({owner[name]} and {sequence}); one "
                    f"version must decide its value.\nFix: list `{name}` under one sequence column only."
                )
            if rules[name] != DEFAULT_RULE:
                raise MergeRuleError(
                    f"Column `{name}` of `{target}` is in sequence group {sequence} and has merge rule "
                    f"{rules[name]!r}; a group's columns take the accepted row's values.\n"
                    f"Fix: remove `merge` from `{name}`, or take it out of the sequence group."
                )
            owner[name] = sequence
        if _base_type(types[sequence]) in {"array", "map", "struct", "boolean", "binary"}:
            raise MergeRuleError(
                f"Sequence column `{sequence}` of `{target}` is {types[sequence]}; a version must be ordered.\n"
                "Fix: use a numeric, date, timestamp or string column as the group's sequence."
            )
        groups.append({"sequence": sequence, "columns": [c for c in owner if owner[c] == sequence and c != sequence]})
    return groups


def resolve_merge_rules(target: str, columns: list[dict[str, Any]], unique_key: list[str], sequence_groups: Any):
    """Checks a target's rules and groups. `columns`: [{name, data_type, meta}] as declared in its YAML."""
    keys = {key.lower() for key in unique_key}
    types = {c["name"].lower(): c["data_type"] for c in columns}
    rules = {
        c["name"].lower(): _column_rule(target, c["name"], c["data_type"], c.get("meta") or {}, keys)
        for c in columns
    }
    groups = _sequence_groups(target, sequence_groups, types, rules, keys)
    return {
        "rules": {name: rule for name, rule in rules.items() if name not in keys},
        "order_independent": ORDER_INDEPENDENT,
        "sequence_groups": groups,
    }
