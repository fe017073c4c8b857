"""A rerun of a run that committed adds nothing twice: a target with a `sum` column records what each write applied
(an Iceberg tag of its snapshot: the logic, the members' queries and their input tables' snapshots), and a run the
table already holds writes nothing. New input, other logic or an input lakeplan cannot name writes again."""

import pytest

from tests.conftest import given, snapshots
from tests.integration.test_partial_update import member, rows, target_yml

VISITS = "id,n\n1,1\n2,5\n"
ONE_GROUP = {
    "seeds/visits.csv": VISITS,
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "visits": "bigint", "seen": "bigint"},
                                  rules={"visits": "sum"}),
    "models/counts.sql": member("wide", "select id, n as visits from {{ ref('visits') }}"),
    "models/seen.sql": member("wide", "select id, n * 10 as seen from {{ ref('visits') }}"),
}
# a second write group (members with other write_options write apart): the write goes through a branch
TWO_GROUPS = {**ONE_GROUP, "models/seen.sql": member(
    "wide", "select id, n * 10 as seen from {{ ref('visits') }}", write_options={"spark.sql.shuffle.partitions": 3})}


def tags(spark, table):
    return [row.name for row in spark.sql(f"select name from {table}.refs where type = 'TAG'").collect()]


@pytest.mark.parametrize("files", [ONE_GROUP, TWO_GROUPS], ids=["one_group", "two_groups"])
def test_an_exact_repeat_writes_nothing_and_new_input_writes_again(make_project, spark, files):
    name = f"rerun_{len(files)}"
    project = make_project(name, files)
    table = f"lakeplan_{name}.wide"
    project.run("build")  # loads the seed and creates the table with this run's rows
    project.run("run")  # the same inputs again: already held
    assert "already holds this run" in project.shown and "ALREADY APPLIED" in project.shown  # dbt's result line, not OK
    assert rows(spark, table) == [(1, 1, 10), (2, 5, 50)]
    written = snapshots(spark, table)
    # a type spelled otherwise is the same logic to the state check, and so the same run (delta mode and a widened
    # type: test_delta_mode.py)
    (project.path / "models" / "wide.yml").write_text(target_yml(
        "wide", {"id": "BIGINT", "visits": "BigInt", "seen": "bigint"}, rules={"visits": "sum"}))
    project.run("run")
    assert "already holds this run" in project.shown
    assert snapshots(spark, table) == written and rows(spark, table) == [(1, 1, 10), (2, 5, 50)]
    assert len(tags(spark, table)) == 1
    # new input (the seed loaded again is a new snapshot of its table): applied once, and held after that
    (project.path / "seeds" / "visits.csv").write_text("id,n\n1,2\n3,1\n")
    project.run("build")
    assert rows(spark, table) == [(1, 3, 20), (2, 5, 50), (3, 1, 10)]
    project.run("run")
    assert rows(spark, table) == [(1, 3, 20), (2, 5, 50), (3, 1, 10)]
    assert len(tags(spark, table)) == 1  # the newest write's tag replaces the older one


def with_counts(make_project, name, counts_sql):
    """A project whose `counts` member has its own query (the test's first `dbt build` loads the seed); and its
    target table."""
    return make_project(name, {**ONE_GROUP, "models/counts.sql": member("wide", counts_sql)}), f"lakeplan_{name}.wide"


def test_other_input_values_write_again(make_project, spark):
    project, table = with_counts(make_project, "rerun_vars",
                                 f"select id, n * {given('factor', 1)} as visits from {{{{ ref('visits') }}}}")
    project.run("build")
    project.run("run", factor=2)  # the member's query as rendered changed: applied
    project.run("run", factor=2)  # and held
    assert rows(spark, table) == [(1, 3, 10), (2, 15, 50)]


def test_a_member_that_reads_the_clock_is_never_taken_for_a_repeat(make_project, spark):
    project, table = with_counts(make_project, "rerun_clock", "select id, n as visits from {{ ref('visits') }} "
                                                              "where current_date() > date'2000-01-01'")
    for command in ("build", "run", "run"):
        project.run(command)
        assert "already holds this run" not in project.shown
    assert rows(spark, table) == [(1, 3, 10), (2, 15, 50)]
    assert tags(spark, table) == []

