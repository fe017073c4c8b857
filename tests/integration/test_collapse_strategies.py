"""The collapse of a unioned write picks a strategy per column group: a member that sends one row per key packs
the columns it alone writes into one struct (one aggregate per member), everything else collapses column by
column. Both leave the rows the per-column collapse leaves; the guards (NULL key, duplicate rows, lossy casts,
overflowing sums) hold for packed members too, and the statement names each group's strategy."""

import re
from decimal import Decimal

import pytest

from tests.conftest import given, snapshots
from tests.integration.test_merge_rules import by_step
from tests.integration.test_partial_update import member, rows, target_yml

COLUMNS = {"id": "bigint", "a": "int", "b": "string", "c": "double", "d": "map<string,int>", "e": "bigint",
           "f": "bigint", "g": "array<int>", "h": "decimal(5,2)", "t": "string"}  # fmt: skip
MIXED = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", COLUMNS, rules={"h": "sum", "e": "max"}),
    # packed (max of a struct): a and b are its alone, one row per key
    "models/p_ab.sql": member("wide", by_step(
        "select cast(id as bigint) as id, cast(id * 10 as int) as a, concat('b', id) as b from range(1, 4)",
        "select cast(2 as bigint) as id, cast(null as int) as a, 'b2new' as b")),
    # packed with a map field (first of a struct: maps have no order), an array and a sum in the same struct
    "models/p_dgh.sql": member("wide", by_step(
        "select cast(1 as bigint) as id, map('x', 1) as d, array(1, 2) as g, cast(1.25 as decimal(5,2)) as h, "
        "'t1' as t",
        "select cast(1 as bigint) as id, map('y', 2) as d, cast(null as array<int>) as g, "
        "cast(2.50 as decimal(5,2)) as h, cast(null as string) as t")),
    # one column: collapses column by column
    "models/single_c.sql": member("wide", f"select cast(3 as bigint) as id, {given('c', 3.5)} as c"),
    # e has two writers (order-free: max): column by column; f is the second member's alone, one column: no pack
    "models/two_e1.sql": member("wide", f"select cast(1 as bigint) as id, cast({given('e', 7)} as bigint) as e"),
    "models/two_e2.sql": member("wide", "select cast(4 as bigint) as id, cast(8 as bigint) as e, "
                                "cast(9 as bigint) as f"),
}
FIRST = [
    (1, 10, "b1", None, {"x": 1}, 7, None, [1, 2], Decimal("1.25"), "t1"),
    (2, 20, "b2", None, None, None, None, None, None, None),
    (3, 30, "b3", 3.5, None, None, None, None, None, None),
    (4, None, None, None, None, 8, 9, None, None, None),
]
SECOND = [
    (1, 10, "b1", None, {"y": 2}, 70, None, [1, 2], Decimal("3.75"), "t1"),
    (2, 20, "b2new", None, None, None, None, None, None, None),
    (3, 30, "b3", 4.5, None, None, None, None, None, None),
    (4, None, None, None, None, 8, 9, None, None, None),
]


@pytest.fixture(scope="module")
def mixed(make_project, spark):
    project = make_project("collapse", MIXED)
    project.run("run")
    return project


def test_packed_and_per_column_groups_leave_the_per_column_rows(mixed, spark):
    assert rows(spark, "lakeplan_collapse.wide") == FIRST
    mixed.run("run", step=2, c=4.5, e=70)
    assert rows(spark, "lakeplan_collapse.wide") == SECOND


def test_the_statement_names_each_column_groups_strategy(mixed):
    statement = (mixed.path / "target" / "run" / "lakeplan" / "models" / "wide.sql").read_text()
    assert "/* collapse packed: member `p_ab`, one row per key, one max() of a struct: a, b */" in statement
    assert "/* collapse packed: member `p_dgh`, one row per key, one first() of a struct: d, g, h, t */" in statement
    # each column that is not packed says why: c and f are their member's only packable column, e has two writers
    notes = re.findall(r"/\* collapse column by column \(([^)]*)\) \*/[^`]*(`\w+`)", statement)
    assert notes == [("nothing to pack with", "`c`"), ("several writers", "`e`"), ("nothing to pack with", "`f`")]
    assert "max(lakeplan_pack_1) as lakeplan_pack_1" in statement and "first(lakeplan_pack_2, true)" in statement


GUARDS = {
    "models/guarded.sql": "{{ partial_update_target() }}",
    "models/guarded.yml": target_yml("guarded", {"id": "bigint", "a": "int", "b": "int", "c": "int"}),
    "models/packed.sql": member("guarded", by_step(
        "select cast(1 as bigint) as id, 1 as a, 2 as b",
        f"select cast({given('key', 1)} as bigint) as id, {given('a', 1)} as a, 2 as b "
        f"union all select cast({given('second', 5)} as bigint) as id, 3 as a, 4 as b")),
    "models/other.sql": member("guarded", "select cast(1 as bigint) as id, 9 as c"),
}


@pytest.fixture(scope="module")
def guarded(make_project, spark):
    project = make_project("collapse_guards", GUARDS)
    project.run("run")
    assert rows(spark, "lakeplan_collapse_guards.guarded") == [(1, 1, 2, 9)]
    return project


@pytest.mark.parametrize(
    "values, message",
    [
        ({"step": 2, "second": 1}, "Member `packed` of `guarded` sends more than one row for the key {\"id\":1}, and "
                                 "without `sequence_by` lakeplan cannot tell which one is last. `guarded` is "
                                 "unchanged. Fix: send one row per key from `packed`, or set its `sequence_by`"),
        ({"step": 2, "key": "null"}, "NULL primary key (id) in member `packed` of `guarded`"),
        ({"step": 2, "a": "'12abc'"}, "lakeplan: member `packed` of `guarded` sends in column `a` the value 12abc, "
                                      "which int cannot hold; this write stopped and committed nothing."),
    ],
    ids=["duplicate_rows", "null_key", "lossy_cast"],
)
def test_a_packed_member_keeps_every_guard(guarded, spark, values, message):
    table = "lakeplan_collapse_guards.guarded"
    before = snapshots(spark, table)
    log = guarded.fail("run", **values)
    assert message in log
    assert (snapshots(spark, table), rows(spark, table)) == (before, [(1, 1, 2, 9)])


def test_a_packed_sum_still_refuses_an_overflow(make_project, spark):
    project = make_project("collapse_sum", {
        "models/counter.sql": "{{ partial_update_target() }}",
        "models/counter.yml": target_yml("counter", {"id": "bigint", "total": "decimal(5,2)", "label": "string",
                                                      "note": "string"},
                                         rules={"total": "sum"}),
        "models/adds.sql": member("counter", "select cast(1 as bigint) as id, "
                                  f"cast({given('add', '999.00')} as decimal(5,2)) as total, 'x' as label"),
        "models/more.sql": member("counter", "select cast(2 as bigint) as id, 'y' as note"),
    })  # fmt: skip
    table = "lakeplan_collapse_sum.counter"
    project.run("run")
    statement = (project.path / "target" / "run" / "lakeplan" / "models" / "counter.sql").read_text()
    assert "collapse packed: member `adds`" in statement
    before = snapshots(spark, table)
    log = project.fail("run", add="5.00")
    assert (
        "lakeplan: `counter`.`total` (merge rule sum) would become 999.00 + 5.00 for key {\"id\":1}, which "
        "decimal(5,2) cannot hold; this write stopped and committed nothing. Fix: declare `total` as decimal(38,2) in "
        "`counter`'s YAML; the next run widens the stored column in place, keeping every value."
    ) in log
    assert (snapshots(spark, table), rows(spark, table)) == (before, [(1, Decimal("999.00"), "x", None), (2, None, None, "y")])
    project.run("run", add="-9.00")
    assert rows(spark, table) == [(1, Decimal("990.00"), "x", None), (2, None, None, "y")]


ONE_ROW_EACH = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "int", "b": "string", "c": "int", "d": "string"}),
    "models/m_ab.sql": member("wide", "select id, int(id) as a, string(id) as b from range(0, 100)", parallelism=3),
    "models/m_cd.sql": member("wide", "select id, int(id) * 2 as c, 'd' as d from range(50, 150)", parallelism=3),
}


def test_members_that_send_one_row_per_key_are_shuffled_on_it_once_before_the_collapse(make_project, spark):
    """Aggregating before the shuffle merges nothing when every member sends one row per key, and aggregating a
    struct makes Spark sort every row: the members' rows are distributed on the key first, into the group's
    `parallelism` partitions, so one shuffle and one sort of them remain (and no second shuffle for the write)."""
    from tests.spark_plans import exchanges, executed_plan

    project = make_project("collapse_shuffled", ONE_ROW_EACH)
    project.run("run")
    project.run("run")  # the MERGE; its member views stay in the session
    statement = (project.path / "target" / "run" / "lakeplan" / "models" / "wide.sql").read_text()
    change = statement[statement.index("using (") + len("using ("):statement.rindex(") as lakeplan_change")]
    plan = executed_plan(spark, change)
    assert [(partitioning, re.sub(r"#\d+L?", "", arguments)) for partitioning, arguments in exchanges(plan)] == [
        ("hashpartitioning", "id, 3")]
    assert len(re.findall(r"\bSort \[", plan)) == 1
    assert rows(spark, "lakeplan_collapse_shuffled.wide") == sorted(
        (i, i if i < 100 else None, str(i) if i < 100 else None, 2 * i if i >= 50 else None, "d" if i >= 50 else None)
        for i in range(150))
