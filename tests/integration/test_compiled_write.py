"""`dbt compile` of a partial-update target shows the write `dbt run` sends: one statement per write group, each
column group's collapse strategy named, built from the members' real columns; compiling writes nothing."""

import re
from pathlib import Path

from tests.conftest import snapshots, write_files
from tests.integration.test_partial_update import REUSE, member, target_yml

HEADER = "-- `dbt run` of `wide` would send these statements now"


def per_run(sql):
    """The statements with the names each run gives its own branch and staging table made alike."""
    return re.sub(r"(lakeplan_write|__lakeplan_staging)_\w{12}\b", r"\1_<run>", sql)


def tables(spark, schema):
    return sorted(row.tableName for row in spark.sql(f"show tables in {schema}").collect() if not row.isTemporary)


def test_compile_shows_the_statements_the_run_sends_and_writes_nothing(make_project, spark):
    project = make_project("compiled", REUSE)
    project.run("seed")
    project.run("run", "--select", "wide")
    # the first run of three groups wrote a staging copy, dropped with its files
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    assert not [f for f in (Path(warehouse) / "lakeplan_compiled.db").rglob("*") if "staging" in str(f) and f.is_file()]
    before = {table: snapshots(spark, f"lakeplan_compiled.{table}") for table in ("wide", "wide__lakeplan_tombstones")}
    listed = tables(spark, "lakeplan_compiled")

    node = project.run("compile", "--select", "wide").result.results[0].node
    compiled = node.compiled_code
    assert compiled.startswith(HEADER) and "the run records this run's deletes in lakeplan_compiled.wide__lakeplan_tombstones" in compiled
    # three groups (plain members, the one with write options, the changelog), written together through a branch
    for group, members in enumerate(["`wide_a`, `wide_b_int`, `wide_c_renamed`", "`wide_d_options`", "`wide_e_cdc`"], 1):
        assert f"-- write group {group} of 3 of `wide`: {members}\n" in compiled
    [branch] = set(re.findall(r"merge into lakeplan_compiled\.wide\.branch_(lakeplan_write_\w+) as lakeplan_table",
                              compiled))
    assert compiled.count(f"merge into lakeplan_compiled.wide.branch_{branch} as lakeplan_table") == 3
    assert "/* collapse column by column" in compiled
    assert f"call system.fast_forward('lakeplan_compiled.wide', 'main', '{branch}')" in compiled
    assert (project.path / node.compiled_path).read_text() == compiled  # target/compiled/ holds the same

    # nothing was written: no commit, no tombstone, no branch left, no staging table
    assert {table: snapshots(spark, f"lakeplan_compiled.{table}") for table in before} == before
    assert tables(spark, "lakeplan_compiled") == listed
    assert spark.sql("select * from lakeplan_compiled.wide.refs where name like 'lakeplan_write%'").count() == 0

    # what the run sends, and keeps in target/run/, is what compile showed
    project.run("run", "--select", "wide")
    executed = next((project.path / "target" / "run").rglob("wide.sql")).read_text()
    assert per_run(compiled).endswith("\n" + per_run(executed))  # but for the run's own branch (its invocation id)

    # `dbt show` still runs the target's own query, one row per member
    shown = project.run("show", "--select", "wide").result.results[0].agate_table
    assert sorted(row[0] for row in shown.rows) == ["wide_a", "wide_b_int", "wide_c_renamed", "wide_d_options", "wide_e_cdc"]


def test_compile_of_a_first_run_shows_the_table_created(make_project, spark):
    project = make_project("compiled_create", {
        "models/slim.sql": "{{ partial_update_target() }}",
        "models/slim.yml": target_yml("slim", {"id": "bigint", "a": "int", "b": "string", "c": "string"}),
        "models/slim_ab.sql": member("slim", "select cast(1 as bigint) as id, 10 as a, 'x' as b"),
        "models/slim_c.sql": member("slim", "select cast(1 as bigint) as id, 'y' as c"),
    })
    compiled = project.run("compile", "--select", "slim").result.results[0].node.compiled_code
    assert "-- write group 1 of 1 of `slim`: `slim_ab`, `slim_c`\n" in compiled
    assert "create or replace table lakeplan_compiled_create.slim" in compiled and "merge into" not in compiled
    assert not spark.catalog.databaseExists("lakeplan_compiled_create")  # compiling created nothing


def test_a_newly_declared_column_is_added_by_a_statement_compile_shows(make_project, spark):
    files = {
        "models/slim.sql": "{{ partial_update_target() }}",
        "models/slim.yml": target_yml("slim", {"id": "bigint", "a": "int"}),
        "models/slim_a.sql": member("slim", "select cast(1 as bigint) as id, 10 as a"),
    }
    project = make_project("compiled_evolve", files)
    project.run("run")
    write_files(project.path, {  # a new member and its column: the table keeps its rows and gains the column
        "models/slim.yml": target_yml("slim", {"id": "bigint", "a": "int", "b": "string"}),
        "models/slim_b.sql": member("slim", "select cast(1 as bigint) as id, 'x' as b"),
    })
    compiled = project.run("compile", "--select", "slim").result.results[0].node.compiled_code
    added = compiled.index("\nalter table lakeplan_compiled_evolve.slim add columns (`b` string);\n")
    assert added < compiled.index("-- write group 1 of 1 of `slim`: `slim_a`, `slim_b`\nmerge into")  # first
    assert [c.name for c in spark.table("lakeplan_compiled_evolve.slim").schema] == ["id", "a"]  # not yet

    project.run("run")
    executed = next((project.path / "target" / "run").rglob("slim.sql")).read_text()
    assert per_run(compiled).endswith("\n" + per_run(executed))  # but for the run's own branch (its invocation id)
    assert spark.sql("select * from lakeplan_compiled_evolve.slim").collect() == [(1, 10, "x")]


def test_compile_before_a_member_can_be_read_says_why_and_a_members_mistake_fails_it(make_project, spark):
    project = make_project("compiled_unbuilt", {
        "models/base.sql": "select cast(1 as bigint) as id, 10 as a",
        "models/slim.sql": "{{ partial_update_target() }}",
        "models/slim.yml": target_yml("slim", {"id": "bigint", "a": "int"}),
        "models/slim_a.sql": member("slim", "select id, a from {{ ref('base') }}"),
        "models/bad.sql": "{{ partial_update_target() }}",
        "models/bad.yml": target_yml("bad", {"id": "bigint", "a": "int"}),
        "models/bad_z.sql": member("bad", "select cast(1 as bigint) as id, 5 as z"),
        "models/refused.sql": "{{ partial_update_target() }}",
        "models/refused.yml": target_yml("refused", {"id": "bigint", "a": "int", "b": "int"}),
        "models/refused_a.sql": member("refused", "select id, a from {{ ref('base') }}"),
        "models/refused_b.sql": member("refused", "select id, a as b from {{ ref('base') }}",
                                       write_options={"spark.sql.shuffle.partitions": "abc"}),
    })
    # `base` is not built yet: the target's own query stays, under the reason
    compiled = project.run("compile", "--select", "slim").result.results[0].node.compiled_code
    first, rest = compiled.split("\n", 1)
    assert first.startswith("-- lakeplan shows the write once every member can be read: Member `slim_a` of `slim` "
                            "reads a table or schema that does not exist;")
    assert "(Spark: [TABLE_OR_VIEW_NOT_FOUND]" in first
    assert "lakeplan_rows" in rest and "at org.apache" not in compiled

    # a member that does not fit its target fails the compile, as it would fail the run
    log = project.fail("compile", "--select", "bad")
    assert "Member `bad_z` selects `z`, which is not a column of partial-update target `bad`." in log
    # so does a setting Spark refuses, also while its member's input is not built
    log = project.fail("compile", "--select", "refused")
    assert "Spark refuses `spark.sql.shuffle.partitions: abc` (in the write_options of `refused_b`)" in log
    assert "lakeplan shows the write once" not in log
