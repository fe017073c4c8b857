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

from dbt_lakeplan.spark_types import base_type, family

DEFAULT_RULE = "last_non_null"

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
    "sum": Rule(False, lambda t: family(t) == "numeric", "a numeric type"),
    "min": Rule(False, lambda t: base_type(t) not in {"array", "map", "struct"}, "an ordered atomic type"),
    "max": Rule(False, lambda t: base_type(t) not in {"array", "map", "struct"}, "an ordered atomic type"),
    "bool_or": Rule(False, lambda t: base_type(t) == "boolean", "boolean"),
    "bool_and": Rule(False, lambda t: base_type(t) == "boolean", "boolean"),
    "append": Rule(True, lambda t: base_type(t) == "array", "an array type"),
    "append_distinct": Rule(False, lambda t: base_type(t) == "array", "an array type"),
}
ORDER_INDEPENDENT = sorted(name for name, rule in RULES.items() if not rule.order_dependent)


def _column_rule(target: str, column: str, data_type: str, rule: str | None, keys: set[str], problems: list[str]):
    where = f"column `{column}` of partial-update target `{target}`"
    if column.lower() in keys and rule is not None:
        problems.append(
            f"{where[0].upper()}{where[1:]} is part of its unique_key and has merge rule {rule!r}; a key is never "
            f"merged, it names the row. Fix: remove `merge` from `{column}`'s meta."
        )
    rule = rule or DEFAULT_RULE
    if not RULES[rule].fits(data_type):
        problems.append(
            f"Merge rule {rule!r} on {where} needs {RULES[rule].needs}, but the column is {data_type}. "
            f"Fix: change the rule, or the column's data_type."
        )
    return rule


def _sequence_groups(
    target: str, declared: dict[str, list[str]], types: dict[str, str], rules: dict[str, str], keys: set[str],
    problems: list[str],
):
    owner: dict[str, str] = {}
    groups = []
    for sequence, columns in declared.items():
        sequence = str(sequence).lower()
        for name in [sequence, *(str(c).lower() for c in columns)]:
            role = "sequence column" if name == sequence else "column"
            fix = f"declare `{name}` in `{target}`'s YAML, or remove it from sequence_groups."
            problem = None
            if name not in types:
                problem = (f"sequence_groups of `{target}` names the {role} `{name}`, which is not a column of the "
                           f"target. Fix: {fix}")
            elif name in keys:
                problem = (f"sequence_groups of `{target}` names the key column `{name}`; a key is never merged. "
                           f"Fix: remove `{name}` from sequence_groups.")
            elif name in owner:
                problem = (
                    f"Column `{name}` of `{target}` is in two sequence groups ({owner[name]} and {sequence}); one "
                    f"version must decide its value. Fix: list `{name}` under one sequence column only."
                )
            elif rules[name] != DEFAULT_RULE:
                problem = (
                    f"Column `{name}` of `{target}` is in sequence group {sequence} and has merge rule "
                    f"{rules[name]!r}; a group's columns take the accepted row's values. "
                    f"Fix: remove `merge` from `{name}`, or take it out of the sequence group."
                )
            if problem:
                problems.append(problem)
                continue
            owner[name] = sequence
        if sequence in types and base_type(types[sequence]) in {"array", "map", "struct", "boolean", "binary"}:
            problems.append(
                f"Sequence column `{sequence}` of `{target}` is {types[sequence]}; a version must be ordered. "
                "Fix: use a numeric, date, timestamp or string column as the group's sequence."
            )
        groups.append({"sequence": sequence, "columns": [c for c in owner if owner[c] == sequence and c != sequence]})
    return groups


def resolve_merge_rules(
    target: str, columns: list[tuple[str, str, str | None]], unique_key: list[str],
    sequence_groups: dict[str, list[str]] | None,
) -> tuple[dict[str, Any], list[str]]:
    """Checks a target's rules and groups. `columns`: (name, data_type, merge rule or None) as declared in its
    YAML. Returns the resolved rules and every problem found."""
    problems: list[str] = []
    keys = {key.lower() for key in unique_key}
    types = {name.lower(): data_type for name, data_type, _ in columns}
    rules = {name.lower(): _column_rule(target, name, data_type, rule, keys, problems) for name, data_type, rule in columns}
    groups = _sequence_groups(target, sequence_groups or {}, types, rules, keys, problems)
    resolved = {
        "rules": {name: rule for name, rule in rules.items() if name not in keys},
        "order_independent": ORDER_INDEPENDENT,
        "sequence_groups": groups,
    }
    return resolved, problems
