"""Merge rules and sequence groups of a partial-update target, as a pure function over its declared columns."""

import re

import pytest

from dbt_lakeplan.merge_rules import RULES, resolve_merge_rules

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
    assert resolved["order_independent"] == ["append_distinct", "bool_and", "bool_or", "count", "hll_sketch", "max", "min", "product", "sum"]


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
        (None, {"g_1": ["a"], "g_2": ["a", "c"]}, "Model `wide` sets `sequence_groups: {'g_1': ['a'], 'g_2': ['a', 'c']}`, which puts column `a` in two sequence groups (g_1 and g_2); one version must decide its value. Fix: list `a` under one sequence column only, e.g. `sequence_groups: {'g_1': ['a'], 'g_2': ['c']}`."),
        (None, {"version": ["a"]}, "Model `wide` sets `sequence_groups: {'version': ['a']}`, which names the sequence column `version`, not a column of `wide`. Fix: declare `version` with its data_type under `columns:` of `wide`, or leave it out: remove `sequence_groups`."),
        (None, {"g_1": ["nope", "a"]}, "which names the column `nope`, not a column of `wide`. Fix: declare `nope` with its data_type under `columns:` of `wide`, or leave it out: e.g. `sequence_groups: {'g_1': ['a']}`."),
        (None, {"g_1": ["k"]}, "which names the key column `k`; a key is never merged, it names the row. Fix: leave it out: remove `sequence_groups`."),
        (None, {"g_1": ["g_1", "a"]}, "which lists the sequence column `g_1` among the columns it versions. Fix: list it once, as the group's sequence: e.g. `sequence_groups: {'g_1': ['a']}`."),
        (None, {"tags": ["a"]}, "Sequence column `tags` of `wide` is array<string>; a version must be ordered"),
        ({"a": "sum"}, {"g_1": ["a"]}, "Column `a` of `wide` is in sequence group g_1 and has merge rule 'sum'"),
    ],
)
def test_misconfigurations_name_the_column_and_the_fix(rules, groups, message):
    [problem] = problems(rules, groups)
    assert message in problem and "Fix:" in problem and "\n" not in problem


@pytest.mark.parametrize(
    "rules, groups, message",
    [
        (None, {"g_1": ["nope"], "g_2": ["nope", "c"]}, "names the column `nope`, not a column of `wide`"),
        (None, {"g_1": ["k"], "g_2": ["k"]}, "names the key column `k`"),
        (None, {"g_1": ["a"], "g_2": ["a"], "d": ["a"]}, "puts column `a` in three sequence groups (g_1, g_2 and d)"),
        ({"a": "sum"}, {"g_1": ["a", "b"], "g_2": ["b"]}, "Column `a` of `wide` is in sequence group g_1 and has merge rule 'sum'"),
    ],
)
def test_a_name_under_several_groups_is_one_problem(rules, groups, message):
    # each group listing the name was a problem of its own: two lines in the parse error for one mistake
    found = [problem for problem in problems(rules, groups) if message in problem]
    assert len(found) == 1, found


def test_a_grouped_column_with_a_rule_in_two_groups_is_two_mistakes_one_line_each():
    found = problems({"a": "sum"}, {"g_1": ["a"], "g_2": ["a"]})
    assert len(found) == 2 and "puts column `a` in two sequence groups (g_1 and g_2)" in found[0]
    assert "Column `a` of `wide` is in sequence groups g_1 and g_2 and has merge rule 'sum'" in found[1]


def test_every_problem_of_a_target_is_reported_at_once():
    found = problems({"b": "sum", "k": "max"}, {"g_1": ["nope"], "tags": ["a"]})
    assert len(found) == 4


@pytest.mark.parametrize(
    "rule, fits, misfits",
    [
        ("product", ["int", "bigint", "double"], ["decimal(10,2)", "string", "array<int>"]),
        ("count", ["int", "bigint", "tinyint"], ["double", "decimal(10,2)", "string"]),
        ("last_value", ["string", "map<string,int>", "array<int>"], []),
        ("first_value", ["date", "struct<a:int>"], []),
        ("listagg", ["string", "varchar(10)"], ["int", "array<string>"]),
        ("merge_map", ["map<string,int>"], ["string", "array<string>"]),
        ("hll_sketch", ["binary"], ["string", "bigint"]),
    ],
)
def test_the_rules_paimon_has_check_their_column_type_at_parse_time(rule, fits, misfits):
    for data_type in fits:
        assert resolve_merge_rules("wide", [("k", "bigint", None), ("c", data_type, rule)], ["k"], None)[1] == []
    for data_type in misfits:
        [problem] = resolve_merge_rules("wide", [("k", "bigint", None), ("c", data_type, rule)], ["k"], None)[1]
        assert f"Merge rule {rule!r} on column `c` of partial-update target `wide` needs " in problem
        assert f"but the column is {data_type}. Fix: change the rule, or the column's data_type." in problem


def test_a_listagg_column_gets_its_delimiter_and_only_a_listagg_column_may_set_one():
    columns = [("k", "bigint", None), ("names", "string", "listagg"), ("tags", "string", None), ("n", "int", "count")]
    resolved, found = resolve_merge_rules("wide", columns, ["k"], None, {"NAMES": "|"})
    assert found == [] and resolved["delimiters"] == {"names": "|"}
    assert resolve_merge_rules("wide", columns, ["k"], None)[0]["delimiters"] == {"names": ","}
    [problem] = resolve_merge_rules("wide", columns, ["k"], None, {"tags": "|"})[1]
    assert problem == ("Column `tags` of `wide` sets listagg_delimiter, but its merge rule is 'last_non_null'; only "
                       "`listagg` joins values. Fix: remove listagg_delimiter, or set `merge: listagg`.")


def test_the_plan_hands_over_the_declaration_of_each_rule_the_target_uses():
    columns = [("k", "bigint", None), ("a", "int", "sum"), ("b", "string", None)]
    declared = resolve_merge_rules("wide", columns, ["k"], None)[0]["merge_rules"]
    assert sorted(declared) == ["last_non_null", "sum"]
    assert declared["sum"]["retracts"] and declared["sum"]["arithmetic"]["operator"] == "+"


PLACEHOLDERS = {
    "collapse": {"value", "live", "signed", "sign", "order", "written_order", "in_order", "any", "single", "type",
                 "delimiter"},
    "combine": {"stored", "change", "type", "written", "delimiter"},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_rules_sql_uses_only_the_placeholders_the_macros_fill(name):
    rule = RULES[name]
    for part, template in [("collapse", rule.collapse), ("collapse", rule.collapse_single or ""), ("combine", rule.combine)]:
        assert set(re.findall(r"\{(\w+)\}", template)) <= PLACEHOLDERS[part], (part, template)
    assert not rule.null_overwrites or "{written}" in rule.combine
    assert not rule.arithmetic or rule.skips_null  # the overflow check wraps a combine of two values
