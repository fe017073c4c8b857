"""Merge rules and sequence groups of a partial-update target, as a pure function over its declared columns."""

import pytest

from dbt_lakeplan.merge_rules import resolve_merge_rules

COLUMNS = {
    "k": "bigint", "a": "int", "b": "string", "g_1": "bigint", "c": "decimal(10,2)", "d": "date",
    "g_2": "timestamp", "flag": "boolean", "tags": "array<string>", "props": "map<string,int>",
}  # fmt: skip


def resolve(rules=None, groups=None, key=("k",), problems=()):
    columns = [(n, t, (rules or {}).get(n)) for n, t in COLUMNS.items()]
    resolved, found = resolve_merge_rules("wide", columns, list(key), groups)
    assert found == list(problems)
    return resolved


def problems(rules=None, groups=None):
    return resolve_merge_rules("wide", [(n, t, (rules or {}).get(n)) for n, t in COLUMNS.items()], ["k"], groups)[1]


def test_default_rule_is_last_non_null_and_keys_have_none():
    resolved = resolve()
    assert resolved["rules"] == {name: "last_non_null" for name in COLUMNS if name != "k"}
    assert resolved["sequence_groups"] == []
    assert resolved["order_independent"] == ["append_distinct", "bool_and", "bool_or", "max", "min", "sum"]


def test_each_rule_on_a_column_it_fits():
    rules = {"a": "sum", "c": "sum", "b": "max", "d": "min", "flag": "bool_or", "tags": "append_distinct", "g_1": "first_non_null"}
    assert {n: r for n, r in resolve(rules)["rules"].items() if n in rules} == rules
    assert resolve({"flag": "bool_and", "tags": "append"})["rules"]["tags"] == "append"


def test_sequence_groups_list_their_columns_lower_case():
    resolved = resolve(groups={"G_1": ["A", "b"], "g_2": ["c", "d"]})
    assert resolved["sequence_groups"] == [{"sequence": "g_1", "columns": ["a", "b"]}, {"sequence": "g_2", "columns": ["c", "d"]}]


@pytest.mark.parametrize(
    "rules, groups, message",
    [
        ({"b": "sum"}, None, "Merge rule 'sum' on column `b` of partial-update target `wide` needs a numeric type, but the column is string"),
        ({"a": "append"}, None, "Merge rule 'append' on column `a` of partial-update target `wide` needs an array type, but the column is int"),
        ({"tags": "bool_or"}, None, "needs boolean, but the column is array<string>"),
        ({"props": "max"}, None, "needs an ordered atomic type, but the column is map<string,int>"),
        ({"k": "sum"}, None, "Column `k` of partial-update target `wide` is part of its unique_key and has merge rule 'sum'"),
        (None, {"g_1": ["a"], "g_2": ["a", "c"]}, "Column `a` of `wide` is in two sequence groups (g_1 and g_2)"),
        (None, {"version": ["a"]}, "sequence_groups of `wide` names the sequence column `version`, which is not a column"),
        (None, {"g_1": ["nope"]}, "names the column `nope`, which is not a column of the target"),
        (None, {"g_1": ["k"]}, "names the key column `k`"),
        (None, {"tags": ["a"]}, "Sequence column `tags` of `wide` is array<string>; a version must be ordered"),
        ({"a": "sum"}, {"g_1": ["a"]}, "Column `a` of `wide` is in sequence group g_1 and has merge rule 'sum'"),
    ],
)
def test_misconfigurations_name_the_column_and_the_fix(rules, groups, message):
    [problem] = problems(rules, groups)
    assert message in problem and "Fix:" in problem and "\n" not in problem


def test_every_problem_of_a_target_is_reported_at_once():
    found = problems({"b": "sum", "k": "max"}, {"g_1": ["nope"], "tags": ["a"]})
    assert len(found) == 4
