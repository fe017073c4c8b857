"""A target written by several groups changes as one: when a later group's statement fails, readers see the
table as it was before the run (no table after a failed first run), never the earlier groups' writes alone.
A rerun then applies every group once (a `sum` column would otherwise count the first group's rows twice).
The failing run is given `broken` as an `env_value`, not --vars, which would make dbt parse the project again in
full."""

import pytest

from tests.conftest import env_value
from tests.integration.test_partial_update import member, rows, target_yml

BROKEN = f"{env_value('broken', 'no')} == 'yes'"
FILES = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint"}, rules={"a": "sum"},
                                  partial_update_on_delete="ignore"),
    # an insert-only group, written first
    "models/adds.sql": member("wide", "select id, 1 as a from range(0, 5)"),
    # a changelog group, written second: under `broken` it sends an op lakeplan refuses, mid-write
    "models/changes.sql": member(
        "wide", f"select id, id * 10 as b, {{{{ \"case when id = 3 then 'X' else '+U' end\" if {BROKEN} "
        "else \"'+U'\" }} as op from range(0, 5)", op_column="op"),
}  # fmt: skip
GOOD = [(i, 1, i * 10) for i in range(5)]


def history(spark, table):
    return spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").collect()


FULL = ["--full-refresh"]
# (the failing run's flags, the rerun's flags, the `sum` column `a` after the rerun): every pairing of the two
# kinds of copy (a branch into an existing table, a staging table when creating) with the next run's kind
RUNS = {
    "first_run": (None, [], [], 1),
    "incremental": ([], [], [], 2),
    "full_refresh": ([], FULL, FULL, 1),
    "full_refresh_then_run": ([], FULL, [], 2),
    "run_then_full_refresh": ([], [], FULL, 1),
}


@pytest.mark.parametrize("run", RUNS)
def test_a_failed_later_group_leaves_the_table_as_it_was(make_project, spark, run):
    first, failing, rerun, a = RUNS[run]
    project = make_project(f"atomic_{run}", FILES)
    table = f"lakeplan_atomic_{run}.wide"
    if first is not None:
        project.run("run", *first)
        assert rows(spark, table) == GOOD
    before = rows(spark, table) if first is not None else None
    main = history(spark, table) if first is not None else None

    log = project.fail("run", *failing, broken="yes")

    assert "Invalid changelog op 'X'" in log
    if first is None:
        assert not spark.catalog.tableExists(table)
    else:
        assert rows(spark, table) == before
        assert history(spark, table) == main
    project.run("run", *rerun)  # the rerun applies each group once
    assert rows(spark, table) == [(i, a, i * 10) for i in range(5)]
    # the copy the groups wrote is gone, also one a failed run left: no branch beside main, no staging table
    assert [ref.name for ref in spark.sql(f"select name from {table}.refs").collect()] == ["main"]
    schema, name = table.split(".")
    assert [t.tableName for t in spark.sql(f"show tables in {schema} like '{name}__lakeplan_staging*'").collect()] == []
