"""Per-column merge rules and sequence groups (Paimon's aggregate functions and sequence-group) in the
unioned partial-update write, against real Iceberg tables: one MERGE per group still does all of it.

The values a test changes between runs reach the members as `env_value`s, not --vars, which would make dbt parse
the whole project again; a project var a test changes (reuse_sink_enabled, lakeplan_accept_state) is set in a second
project's dbt_project.yml from its first command."""

from datetime import date
from decimal import Decimal

import pytest

from tests.conftest import accepting, env_value, given, snapshots
from tests.integration.test_partial_update import member, rows, target_yml


# one MERGE per member: the project var a user sets with `--vars '{reuse_sink_enabled: false}'`
WITHOUT_REUSE = {"vars": {"reuse_sink_enabled": False}}


def by_step(first, second):
    """A member query that sends `first` in run 1 (value step) and `second` after."""
    return f"{{% if {env_value('step', 1)} == '1' %}}\n{first}\n{{% else %}}\n{second}\n{{% endif %}}"


def select(values):
    """`select ... union all select ...` of rows given as {column: SQL literal} dicts."""
    return "\nunion all\n".join("select " + ", ".join(f"{v} as {k}" for k, v in row.items()) for row in values)


NOTHING = "select cast(1 as bigint) as id where false"
COUNTER_COLUMNS = {
    "id": "bigint", "total": "bigint", "amount": "decimal(10,2)", "first_seen": "date", "lo": "int", "hi": "int",
    "any_flag": "boolean", "all_flag": "boolean", "tags": "array<string>", "tag_set": "array<string>", "latest": "string",
    "props": "map<string,int>",  # no order: its one value per key is taken by first(), not max()
}  # fmt: skip
COUNTER_RULES = {
    "total": "sum", "amount": "sum", "first_seen": "first_non_null", "lo": "min", "hi": "max",
    "any_flag": "bool_or", "all_flag": "bool_and", "tags": "append", "tag_set": "append_distinct",
}  # fmt: skip
COUNTERS = {
    "models/counters.sql": "{{ partial_update_target() }}",
    "models/counters.yml": target_yml("counters", COUNTER_COLUMNS, rules=COUNTER_RULES),
    # Order-free rules: three members write the same columns without `sequence_by`.
    "models/c_a.sql": member("counters", by_step(
        select([{"id": 1, "total": 10, "amount": 1.50, "lo": 5, "hi": 5, "any_flag": "false", "all_flag": "true", "tag_set": "array('x')"}]),
        select([{"id": 1, "total": 5, "amount": 2.25, "lo": 3, "hi": 4, "any_flag": "false", "all_flag": "true", "tag_set": "array('y', 'x')"},
                {"id": 2, "total": 1, "amount": "null", "lo": "null", "hi": "null", "any_flag": "null", "all_flag": "null", "tag_set": "null"}]),
    )),  # fmt: skip
    "models/c_b.sql": member("counters", by_step(
        NOTHING,
        select([{"id": 1, "total": "null", "lo": "null", "hi": 9, "any_flag": "true", "all_flag": "null"}]),
    )),  # fmt: skip
    # Two rows for one key in one member: a sum adds both.
    "models/c_c.sql": member("counters", by_step(
        NOTHING,
        select([{"id": 1, "total": 3, "all_flag": "false", "tag_set": "array('z')"},
                {"id": 1, "total": 4, "all_flag": "true", "tag_set": "null"},
                {"id": 2, "total": 2, "all_flag": "null", "tag_set": "null"}]),
    )),  # fmt: skip
    "models/c_first.sql": member("counters", by_step(
        select([{"id": 1, "first_seen": "date'2024-01-01'", "tags": "array('x')", "latest": "'one'", "props": "map('a', 1)"}]),
        select([{"id": 1, "first_seen": "date'2025-05-05'", "tags": "array('y')", "latest": "'two'", "props": "map('b', 2)"},
                {"id": 2, "first_seen": "null", "tags": "null", "latest": "'new'", "props": "null"}]),
    )),  # fmt: skip
}
AFTER_FIRST_RUN = [(1, 10, Decimal("1.50"), date(2024, 1, 1), 5, 5, False, True, ["x"], ["x"], "one", {"a": 1})]
# sum: 10 stored + 5 + NULL + (3 + 4); first_non_null keeps the stored date; append keeps the order of arrival.
AFTER_SECOND_RUN = [
    (1, 22, Decimal("3.75"), date(2024, 1, 1), 3, 9, True, False, ["x", "y"], ["x", "y", "z"], "two", {"b": 2}),
    (2, 3, None, None, None, None, None, None, None, None, "new", None),
]


def test_every_rule_against_the_stored_value_in_one_merge_and_without_reuse(make_project, spark):
    project = make_project("merge_rules", COUNTERS)
    table = "lakeplan_merge_rules.counters"

    def run(step):
        before = snapshots(spark, table)
        project.run("run", step=step)
        return snapshots(spark, table) - before

    assert run(1) == 1
    assert rows(spark, table) == AFTER_FIRST_RUN
    assert run(2) == 1  # four members, one unioned MERGE
    assert rows(spark, table) == AFTER_SECOND_RUN

    # reuse_sink_enabled: false — one MERGE per member, each against the stored value: same contents.
    project = make_project("merge_rules_separate", COUNTERS, WITHOUT_REUSE)
    table = "lakeplan_merge_rules_separate.counters"
    project.run("run", "--full-refresh", step=1)  # as the rebuild of the unioned table was
    assert rows(spark, table) == AFTER_FIRST_RUN
    before = snapshots(spark, table)
    project.run("run", step=2)
    assert snapshots(spark, table) - before == 4
    assert rows(spark, table) == AFTER_SECOND_RUN


SEQUENCE_COLUMNS = {"id": "bigint", "a": "int", "b": "int", "g_1": "int", "c": "int", "d": "int", "g_2": "int"}
SEQUENCE_GROUPS = {"g_1": ["a", "b"], "g_2": ["c", "d"]}
# Paimon's documented example: each write is a whole row (k, a, b, g_1, c, d, g_2).
PAIMON_WRITES = ["1, 1, 1, 1, 1, 1, 1", "1, 2, 2, 2, 2, 2, null", "1, 3, 3, 1, 3, 3, 3"]
PAIMON_RESULTS = [(1, 1, 1, 1, 1, 1, 1), (1, 2, 2, 2, 1, 1, 1), (1, 2, 2, 2, 3, 3, 3)]


def paimon_row(values):
    return "select " + ", ".join(f"cast({v} as int) as {name}" for v, name in zip(values.split(", "), SEQUENCE_COLUMNS))


SEQUENCE_PROJECT = {
    "models/grouped.sql": "{{ partial_update_target() }}",
    "models/grouped.yml": target_yml("grouped", SEQUENCE_COLUMNS, sequence_groups=SEQUENCE_GROUPS),
    # one write per run, selected by the value step
    "models/g_writer.sql": member("grouped", "\n".join(
        f"{{% if {env_value('step', 1)} == '{i}' %}}{paimon_row(w)}{{% endif %}}" for i, w in enumerate(PAIMON_WRITES, 1)
    )),  # fmt: skip
    # the same three writes in one run, from three members without `sequence_by`: the groups order them
    "models/all_at_once.sql": "{{ partial_update_target() }}",
    "models/all_at_once.yml": target_yml("all_at_once", SEQUENCE_COLUMNS, sequence_groups=SEQUENCE_GROUPS),
    **{f"models/once_{i}.sql": member("all_at_once", paimon_row(w)) for i, w in enumerate(PAIMON_WRITES, 1)},
}


def test_sequence_groups_follow_paimons_example(make_project, spark):
    project = make_project("sequence_groups", SEQUENCE_PROJECT)
    grouped, all_at_once = "lakeplan_sequence_groups.grouped", "lakeplan_sequence_groups.all_at_once"
    for step, expected in enumerate(PAIMON_RESULTS, 1):
        project.run("run", step=step)
        assert rows(spark, grouped) == [expected]
    assert rows(spark, all_at_once) == [PAIMON_RESULTS[-1]]

    before = snapshots(spark, all_at_once)
    project.run("run", step=3)  # a rerun that changes nothing
    assert rows(spark, grouped) == [PAIMON_RESULTS[-1]]
    assert rows(spark, all_at_once) == [PAIMON_RESULTS[-1]]
    assert snapshots(spark, all_at_once) == before + 1  # three members, one MERGE


def changes(values):
    return select([dict(zip(["id", "op", "seq", "total", "note"], row)) for row in values])


LEDGER_CHANGES = by_step(
    changes([(1, "'+I'", 1, 10, "'a'"), (2, "'+I'", 1, 3, "'b'"), (3, "'+I'", 1, 3, "'c'")]),
    changes([(1, "'-U'", 2, 10, "'a'"), (1, "'+U'", 3, 17, "'a'"), (2, "'-D'", 2, 3, "'b'"), (3, "'+U'", 2, 4, "'c'"),
             (4, "'+I'", 1, 1, "'d1'"), (4, "'-D'", 2, 1, "'d1'"), (4, "'+I'", 3, 2, "'d2'")]),
)  # fmt: skip
# A retraction (-U/-D) takes its value back from a sum: 10 - 10 + 17; a -D under `ignore` keeps the row.
RETRACTED = {
    "ignore": [(1, 17, "a"), (2, 0, "b"), (3, 7, "c"), (4, 2, "d2")],
    "remove_record": [(1, 17, "a"), (3, 7, "c"), (4, 2, "d2")],
}
# one ledger per partial_update_on_delete, each with its member of the same changes
LEDGERS = {
    file: text for on_delete in RETRACTED for file, text in {
        f"models/ledger_{on_delete}.sql": "{{ partial_update_target() }}",
        f"models/ledger_{on_delete}.yml": target_yml(
            f"ledger_{on_delete}", {"id": "bigint", "total": "bigint", "note": "string"}, rules={"total": "sum"},
            partial_update_on_delete=on_delete,
        ),
        f"models/ledger_{on_delete}_changes.sql": member(
            f"ledger_{on_delete}", LEDGER_CHANGES, op_column="op", sequence_by="seq"
        ),
    }.items()
}  # fmt: skip


@pytest.fixture(scope="module")
def ledger_rows(make_project, spark):
    """Each ledger's rows after the first run and after the second: both ledgers write in the same two runs."""
    after = {on_delete: [] for on_delete in RETRACTED}
    project = make_project("ledgers", LEDGERS)
    for step in (1, 2):
        project.run("run", step=step)
        for on_delete in RETRACTED:
            after[on_delete].append(rows(spark, f"lakeplan_ledgers.ledger_{on_delete}"))
    return after


@pytest.mark.parametrize("on_delete", sorted(RETRACTED))
def test_retractions_take_back_their_value_from_a_sum(ledger_rows, on_delete):
    first, second = ledger_rows[on_delete]
    assert first == [(1, 10, "a"), (2, 3, "b"), (3, 3, "c")]
    assert second == RETRACTED[on_delete]


# The rules Paimon has beyond the first nine, each one declaration in merge_rules.py.
PAIMON_RULES_COLUMNS = {
    "id": "bigint", "prod": "int", "n": "bigint", "lv": "string", "fv": "string", "names": "string",
    "attrs": "map<string,int>",
}  # fmt: skip
PAIMON_RULES = {
    "prod": "product", "n": "count", "lv": "last_value", "fv": "first_value",
    "names": "listagg, listagg_delimiter: '|'", "attrs": "merge_map",
}  # fmt: skip


def ordered_row(values):
    return {"id": values[0], "seq": values[1], "prod": values[2], "n": values[3], "lv": values[4], "fv": values[5],
            "names": values[6], "attrs": values[7]}  # fmt: skip


PAIMON_RULES_PROJECT = {
    "models/paimon_rules.sql": "{{ partial_update_target() }}",
    "models/paimon_rules.yml": target_yml("paimon_rules", PAIMON_RULES_COLUMNS, rules=PAIMON_RULES),
    # Order-dependent rules: one member, ordered by `seq`, several rows per key.
    "models/ordered_writer.sql": member("paimon_rules", by_step(
        select([ordered_row([1, 1, 2, 5, "null", "null", "'x'", "map('a', 1)"]),
                ordered_row([1, 2, 3, "null", "'a'", "'b'", "'y'", "map('a', 2, 'b', 1)"]),
                ordered_row([4, 1, "null", "null", "'keep'", "'first'", "null", "null"])]),
        select([ordered_row([1, 3, given("prod", 2), 1, "null", "'d'", "'z'", "map('b', 5, 'c', 3)"]),
                ordered_row([2, 1, "null", 4, "'e'", "'f'", "'w'", "map('x', 1)"])]),
    ), sequence_by="seq"),  # fmt: skip
    # Order-free rules: a second member writes the same columns without `sequence_by`.
    "models/free_writer.sql": member("paimon_rules", by_step(
        select([{"id": 1, "prod": 5, "n": 7}, {"id": 2, "prod": 4, "n": "null"}]),
        select([{"id": 1, "prod": given("free_prod", "null"), "n": "null"}, {"id": 3, "prod": 7, "n": 9},
                {"id": 4, "prod": 2, "n": "null"}]),
    )),  # fmt: skip
}
# run 1: product 2 * 3 * 5; count of non-NULL values 2; last_value 'a' (seq 2); first_value NULL (seq 1 wrote NULL);
# listagg in seq order; merge_map: the later entry of `a` wins.
PAIMON_RULES_AFTER_FIRST_RUN = [
    (1, 30, 2, "a", None, "x|y", {"a": 2, "b": 1}),
    (2, 4, None, None, None, None, None),
    (4, None, None, "keep", "first", None, None),
]
# run 2: the ordered writer's NULL overwrites `lv` of key 1; key 4, which it does not send, keeps 'keep'; a stored
# NULL of first_value is filled (a written NULL cannot be told from none in the stored row).
PAIMON_RULES_AFTER_SECOND_RUN = [
    (1, 60, 3, None, "d", "x|y|z", {"a": 2, "b": 5, "c": 3}),
    (2, 4, 1, "e", "f", "w", {"x": 1}),
    (3, 7, 1, None, None, None, None),
    (4, 2, None, "keep", "first", None, None),
]


def test_paimons_other_rules_against_the_stored_value_in_one_merge_and_without_reuse(make_project, spark):
    project = make_project("paimon_rules", PAIMON_RULES_PROJECT)
    table = "lakeplan_paimon_rules.paimon_rules"

    def run(step):
        before = snapshots(spark, table)
        project.run("run", step=step)
        return snapshots(spark, table) - before

    assert run(step=1) == 1
    assert rows(spark, table) == PAIMON_RULES_AFTER_FIRST_RUN
    before, stored = snapshots(spark, table), rows(spark, table)
    # a product that leaves int stops the write, naming the key: within the run, and against the stored 30
    for products, sentence in [
        ({"prod": 65536, "free_prod": 65536},
         "(merge rule product): the product of this run's values for key {\"id\":1}"),
        ({"prod": 2147483647}, "(merge rule product) would become 30 * 2147483647 for key {\"id\":1}"),
    ]:
        log = project.fail("run", step=2, **products)
        assert f"lakeplan: `paimon_rules`.`prod` {sentence}" in log
        assert "which int cannot hold; this write stopped and committed nothing." in log
        assert (snapshots(spark, table), rows(spark, table)) == (before, stored)
    assert run(step=2) == 1  # two members, one unioned MERGE
    assert rows(spark, table) == PAIMON_RULES_AFTER_SECOND_RUN

    # reuse_sink_enabled: false, one MERGE per member: the same contents.
    project = make_project("paimon_rules_separate", PAIMON_RULES_PROJECT, WITHOUT_REUSE)
    table = "lakeplan_paimon_rules_separate.paimon_rules"
    project.run("run", "--full-refresh", step=1)  # as the rebuild of the unioned table was
    assert rows(spark, table) == PAIMON_RULES_AFTER_FIRST_RUN
    assert run(step=2) == 2
    assert rows(spark, table) == PAIMON_RULES_AFTER_SECOND_RUN


def sketch(*values):
    """An HLL sketch of the values, as a member computes one."""
    return f"(select hll_sketch_agg(v) from values {', '.join(f'({v})' for v in values)} as t(v))"


HLL_PROJECT = {
    "models/visits.sql": "{{ partial_update_target() }}",
    "models/visits.yml": target_yml("visits", {"id": "bigint", "visitors": "binary"}, rules={"visitors": "hll_sketch"}),
    "models/web.sql": member("visits", by_step(f"select 1 as id, {sketch(1, 2, 3)} as visitors",
                                              f"select 1 as id, {sketch(3, 4)} as visitors")),
    "models/app.sql": member("visits", by_step(f"select 1 as id, {sketch(2, 5)} as visitors union all "
                                              f"select 2 as id, {sketch(7)} as visitors", NOTHING)),
    "models/imported.sql": member("visits", f"select 3 as id, cast('{given('sketch', '')}' as binary) as visitors "
                                            f"where {{{{ {env_value('sketch', '')} != '' }}}}"),
}


def test_hll_sketches_union_across_members_and_runs(make_project, spark):
    project = make_project("hll_rule", HLL_PROJECT)
    table = "lakeplan_hll_rule.visits"

    def estimates():
        return sorted(tuple(r) for r in spark.sql(f"select id, hll_sketch_estimate(visitors) from {table}").collect())

    project.run("run", step=1)
    assert estimates() == [(1, 4), (2, 1)]  # {1, 2, 3} and {2, 5} from two members in one write
    project.run("run", step=2)
    assert estimates() == [(1, 5), (2, 1)]  # and {3, 4} against the stored sketch
    # a binary that is no sketch stops the write in lakeplan's words, not DataSketches' ("Illegal Family ID")
    before = snapshots(spark, table)
    log = project.fail("run", step=2, sketch="not a sketch")
    assert ("lakeplan: member `imported` of `visits` sends in column `visitors` a value that is not an HLL sketch (as "
            "Spark's `hll_sketch_agg` makes) for key {\"id\":3}; this write stopped and committed nothing. Fix: send an "
            "HLL sketch") in log  # fmt: skip
    assert "Illegal Family ID" not in project.shown
    assert (snapshots(spark, table), estimates()) == (before, [(1, 5), (2, 1)])


FLOATS_PROJECT = {
    "models/floats.sql": "{{ partial_update_target() }}",
    "models/floats.yml": target_yml("floats", {"id": "bigint", "p": "double", "s": "double", "c": "int"},
                                    rules={"p": "product", "s": "sum", "c": "sum"}),
    "models/f_one.sql": member("floats", f"select 1 as id, cast({given('p', 'null')} as double) as p, "
                                         f"cast({given('s', 'null')} as double) as s, "
                                         f"cast({given('c', 'null')} as int) as c"),
    "models/f_two.sql": member("floats", f"select 1 as id, cast({given('p2', 'null')} as double) as p, "
                                         f"cast({given('c', 'null')} as int) as c"),
}


def test_an_arithmetic_rule_that_overflows_stops_the_write_naming_the_key(make_project, spark):
    """A double that overflows becomes infinity, not NULL: the write stops as for an integer, and stores no `inf`;
    every overflow names the key."""
    project = make_project("float_rules", FLOATS_PROJECT)
    table = "lakeplan_float_rules.floats"
    project.run("run", p="1e200", s="1e308")
    before, stored = snapshots(spark, table), rows(spark, table)
    assert stored == [(1, 1e200, 1e308, None)]
    for values, sentence in [
        ({"p": "1e200"}, "`floats`.`p` (merge rule product) would become 1.0E200 * 1.0E200 for key {\"id\":1}"),
        ({"s": "1e308"}, "`floats`.`s` (merge rule sum) would become 1.0E308 + 1.0E308 for key {\"id\":1}"),
        ({"p": "1e200", "p2": "1e200"},
         "`floats`.`p` (merge rule product): the product of this run's values for key {\"id\":1}"),
        # an int column's sum is a bigint until it is cast back: the error names the key there too
        ({"c": 2000000000},
         "`floats`.`c` (merge rule sum): this run's sum is 4000000000 for key {\"id\":1}, which int"),
    ]:
        log = project.fail("run", **values)
        assert f"lakeplan: {sentence}" in log and "cannot hold; this write stopped" in log
        assert (snapshots(spark, table), rows(spark, table)) == (before, stored)


def test_widening_a_column_as_the_overflow_error_says_keeps_the_stored_values(make_project, spark):
    """The overflow error's fix (widen the column's data_type) is taken: the state check takes the widened column
    for the same logic, the stored column is widened in place (Iceberg's type promotion) and the write goes on with
    every stored value kept; a narrowing is still a change of logic."""
    project = make_project("widen_rules", FLOATS_PROJECT)
    table = "lakeplan_widen_rules.floats"
    project.run("run", s=2.5, c=1000000000)
    assert rows(spark, table) == [(1, None, 2.5, 2000000000)]
    assert "which int cannot hold" in project.fail("run", c=1000000000)
    wide = {"id": "bigint", "p": "double", "s": "double", "c": "bigint"}
    yml = project.path / "models/floats.yml"
    yml.write_text(target_yml("floats", wide, rules={"p": "product", "s": "sum", "c": "sum"}))
    project.run("run", c=1000000000)
    assert rows(spark, table) == [(1, None, 2.5, 4000000000)]
    assert dict(spark.table(table).dtypes)["c"] == "bigint"
    yml.write_text(target_yml("floats", {**wide, "c": "int"}, rules={"p": "product", "s": "sum", "c": "sum"}))
    log = project.fail("run", c=1)
    assert ("What changed: column `c` changed its type: the table stores bigint, the YAML declares int (accepting keeps "
            "bigint and writes only values it holds; --full-refresh stores int).") in log
    assert rows(spark, table) == [(1, None, 2.5, 4000000000)]
    # a type whose values bigint cannot all hold: the write would refuse it, so the fix does not offer accepting
    yml.write_text(target_yml("floats", {**wide, "c": "double"}, rules={"p": "product", "s": "sum", "c": "sum"}))
    log = " ".join(project.fail("run", c=1).split())
    assert ("column `c` changed its type: the table stores bigint, the YAML declares double (which the table cannot take "
            "without a cast that may lose values, so accepting cannot keep it; --full-refresh stores double). ") in log
    assert ("Fix: to keep the table and what it accumulated, set the data_type of `c` back to bigint; to rebuild it "
            "from scratch with the new types: dbt run --full-refresh -s floats.") in log
    assert "lakeplan_accept_state" not in log
    yml.write_text(target_yml("floats", {**wide, "c": "int"}, rules={"p": "product", "s": "sum", "c": "sum"}))
    # accepted, the narrowing keeps the wider stored column and says so; a stored value int cannot hold still stops.
    # A second project accepts: the same files, and the same schema (so the same table), with the var set in its
    # dbt_project.yml, as --vars '{lakeplan_accept_state: [floats]}' would set it
    project = make_project("widen_rules_accepted", {**FLOATS_PROJECT, "models/floats.yml": yml.read_text()},
                           accepting("floats"), schema="widen_rules")
    log = project.fail("run", c=1)
    assert ("column `c` of partial-update target `floats` is stored as bigint, but its YAML now declares int: the "
            "table keeps bigint") in log  # fmt: skip
    assert "which int cannot hold; this write stopped" in log
    assert dict(spark.table(table).dtypes)["c"] == "bigint" and rows(spark, table) == [(1, None, 2.5, 4000000000)]


SMALL = {
    "models/small.sql": "{{ partial_update_target() }}",
    "models/small.yml": target_yml("small", {"id": "bigint", "n": "tinyint", "label": "varchar(10)"}, rules={"n": "sum"}),
    "models/small_m.sql": member("small", f"select cast(1 as bigint) as id, cast({given('n', 1)} as tinyint) as n, "
                                          f"'{given('label', 'a')}' as label"),
}


def test_a_type_iceberg_stores_as_another_widens_as_the_overflow_error_says(make_project, spark):
    """A tinyint is stored as an int and a varchar(n) as a string (Iceberg has no types of their own for them). The
    overflow error's fix for a tinyint (declare bigint) is taken: the state check takes it for a widening, as for an
    int, and the stored values are kept; a varchar's new length and a type's other spelling change nothing stored,
    so they are no change of logic (they were refused, the tinyint's as a changed merge rule)."""
    project = make_project("small_types", SMALL)
    table = "lakeplan_small_types.small"
    project.run("run", n=100)
    log = project.fail("run", n=100)
    assert "Fix: declare `n` as bigint in `small`'s YAML; the next run widens the stored column in place" in log
    yml = project.path / "models/small.yml"
    for columns in ({"id": "bigint", "n": "TINYINT", "label": "varchar(20)"},  # nothing stored changes
                    {"id": "bigint", "n": "bigint", "label": "string"}):  # n widened, as the fix says
        yml.write_text(target_yml("small", columns, rules={"n": "sum"}))
        project.run("run", n=1, label="b")
    assert dict(spark.table(table).dtypes)["n"] == "bigint" and rows(spark, table) == [(1, 102, "b")]
    project.run("run", n=100)
    assert rows(spark, table) == [(1, 202, "a")]
