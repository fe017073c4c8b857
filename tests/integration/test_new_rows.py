"""Members that read only what is new (issue 30, item 1): `lakeplan.new_rows(source(...))` reads the rows an Iceberg
input gained since the consuming table's last committed write, and that write records the input's snapshot, so
every row is applied once. The reference is a twin target whose members read the inputs whole, rebuilt from
scratch (its config `full_refresh: true`) in the same run as every step: the incremental target must hold the same
rows. The module's tests share one project; each starts on an empty schema."""

import json
import re

import pytest

from tests.conftest import env_value, given, snapshots, write_files
from tests.integration.test_explain import explain

SCHEMA = "lakeplan_new_rows"
ORDERS = f"{SCHEMA}.orders"
ORDERS_SOURCE = "raw.orders"  # how explain names that table: the source the models read it as
TARGET_YML = """
version: 2
sources:
  - name: raw
    schema: lakeplan_new_rows
    tables: [{name: orders}]
models:
  - name: totals
    # maintenance only when asked (lakeplan_maintain), and then it expires every snapshot but the last
    config: {unique_key: customer, maintenance: {after_write: false, expire_after_hours: 0, keep_snapshots: 1}}
    columns: &columns
      - {name: customer, data_type: int}
      - {name: spent, data_type: bigint, meta: {merge: sum}}
      - {name: last_amount, data_type: bigint}
  - name: totals_whole
    # rebuilt from scratch by every run that selects it: the reference, written beside `totals` in the same run
    config: {unique_key: customer, full_refresh: true}
    columns: *columns
  - name: counts
    config: {unique_key: customer}
    columns: &counted
      - {name: customer, data_type: int}
      - {name: orders, data_type: bigint}
  - name: counts_every_key
    config: {unique_key: customer}
    columns: *counted
"""


def member(target: str, reads: str, columns: str, **config: str) -> str:
    settings = ", ".join([f"partial_update_target='{target}'", *(f"{k}='{v}'" for k, v in config.items())])
    return f"{{{{ config({settings}) }}}}\nselect {columns} from {reads}"


NEW = "{{ lakeplan.new_rows(source('raw', 'orders')) }}"
WHOLE = "{{ source('raw', 'orders') }}"
FILES = {
    "models/sources.yml": TARGET_YML,
    "models/totals.sql": "{{ partial_update_target() }}",
    "models/totals_whole.sql": "{{ partial_update_target() }}",
    "models/spent.sql": member("totals", NEW, "customer, amount as spent")
    + f"\n{{% if {env_value('fail', 'false')} == 'true' %}}where raise_error('a failing member') is null{{% endif %}}",
    "models/last.sql": member("totals", NEW, "customer, id, amount as last_amount", sequence_by="id"),
    "models/spent_whole.sql": member("totals_whole", WHOLE, "customer, amount as spent"),
    "models/last_whole.sql": member("totals_whole", WHOLE, "customer, id, amount as last_amount", sequence_by="id"),
    "models/counts.sql": "{{ partial_update_target() }}",
    "models/counts_every_key.sql": "{{ partial_update_target() }}",
    "models/counted.sql": member("counts", WHOLE, "customer, count(*) as orders") + (
        " where customer in {{ lakeplan.changed_keys(source('raw', 'orders'), 'customer') }} group by customer"),
    "models/counted_every_key.sql": member("counts_every_key", WHOLE, "customer, count(*) as orders") + " group by customer",
    "models/current.sql": (
        "{{ config(materialized='upsert', unique_key='id', sequence_by='id') }}\n"
        f"select id, customer, amount, case when amount < 0 then '-D' else '+I' end as _op from {NEW}"
    ),
}


@pytest.fixture(scope="module")
def new_rows_project(make_project):
    """One project (one parse) for the module: each test starts it over on empty tables (`project`)."""
    return make_project("new_rows", FILES)


@pytest.fixture
def project(new_rows_project, spark):
    spark.sql(f"drop schema if exists {SCHEMA} cascade")  # the tables an earlier test of the module wrote
    spark.sql(f"create schema {SCHEMA}")
    spark.sql(f"create table {ORDERS} (id int, customer int, amount bigint) using iceberg")
    return new_rows_project


def add_orders(spark, *rows):
    spark.sql(f"insert into {ORDERS} values " + ", ".join(str(row) for row in rows))


def table_rows(spark, table):
    return sorted(tuple(row) for row in spark.sql(f"select * from {table}").collect())


def rows(spark, table):
    return table_rows(spark, f"{SCHEMA}.{table}")


def consumed(spark, table):
    properties = dict(spark.sql(f"show tblproperties {SCHEMA}.{table}").collect())
    return {key: json.loads(value) for key, value in properties.items() if key.startswith("lakeplan.consumed")}


def head(spark, table):
    return spark.sql(f"select snapshot_id from {SCHEMA}.{table}.refs where name = 'main'").collect()[0][0]


def matches_a_whole_rebuild(spark):
    """`totals` holds what `totals_whole`, selected in the same run (and so rebuilt from scratch), holds."""
    return rows(spark, "totals") == rows(spark, "totals_whole")


def test_new_rows_apply_each_row_once_and_empty_runs_read_and_record_nothing(project, spark):
    """Each row an input gains is applied once. `--empty` renders every input as a query of no rows: new_rows reads
    nothing and the write records nothing consumed, so the first real run after it reads every row; over existing
    tables it writes nothing, and the real run after it reads what came before it."""
    add_orders(spark, (1, 10, 5), (2, 20, 7), (3, 10, 1))
    project.run("run", "--empty", "-s", "totals", "current")  # creates both tables, empty
    assert rows(spark, "totals") == [] and rows(spark, "current") == [] and consumed(spark, "totals") == {}
    project.run("run", "-s", "totals", "totals_whole", "current")  # every row, since --empty recorded nothing
    assert consumed(spark, "totals") == {"lakeplan.consumed": {ORDERS: head(spark, "orders")}}
    assert rows(spark, "totals") == [(10, 6, 1), (20, 7, 7)] and matches_a_whole_rebuild(spark)

    def written():
        return snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current"), consumed(spark, "totals")

    add_orders(spark, (4, 20, 3), (5, 30, 9))
    before = written()
    project.run("run", "--empty", "-s", "totals", "current")
    assert project.shown.count("NOT WRITTEN (--empty)") == 2
    assert written() == before
    read = consumed(spark, "totals")["lakeplan.consumed"][ORDERS]
    code, report, models = explain(project, "--select", "totals")  # what the next run would read, before it runs
    assert code == 0 and models["totals"]["change"]["reads"] == {
        ORDERS_SOURCE: f"what is new: snapshots after {read} up to {head(spark, 'orders')}"}
    result, log = project.invoke("run", "-s", "totals", "totals_whole", "current")  # orders 4 and 5, once
    # appends alone: Iceberg's incremental scan of the files they added, not its changelog (which sorts every row)
    assert result.success and "from lakeplan_new_rows_" in log and "using iceberg options (path" in log
    assert "create_changelog_view" not in log
    assert rows(spark, "totals") == [(10, 6, 1), (20, 10, 3), (30, 9, 9)] and matches_a_whole_rebuild(spark)
    assert consumed(spark, "totals") == {"lakeplan.consumed": {ORDERS: head(spark, "orders")}}  # pending is gone

    before = snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current")
    project.run("run", "-s", "totals", "current")  # nothing new
    assert "`totals`: its members read nothing new since its last write" in project.shown
    shown = re.sub(r"\x1b\[\d+m", "", project.shown)  # dbt's result line, uncoloured: not `[OK in ...]`
    assert re.search(r"partial_update model lakeplan_new_rows\.totals \.* \[NOTHING NEW in ", shown), shown
    assert re.search(r"upsert model lakeplan_new_rows\.current \.* \[NOTHING NEW in ", shown)
    assert f"`current`: its query reads nothing new since its last write ({ORDERS} at " in project.shown
    assert (snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current")) == before


def test_runs_given_one_parse_each_read_what_is_new_since_the_last(project, spark):
    """dbtRunner(manifest=...) reuses one parse for every invocation (a scheduler, a long-running writer): each run's
    members read the rows added since the run before, not the first run's SQL again (dbt kept a compiled ephemeral
    model's SQL on the manifest: every later run read the input whole and recorded the first run's snapshot)."""
    add_orders(spark, (1, 10, 5))
    reusing = project.parsed_once()
    reusing.run("run", "-s", "totals", "totals_whole")
    for order in range(2, 5):  # each run after an order of its own
        add_orders(spark, (order, 10, 10 ** order))
        reusing.run("run", "-s", "totals", "totals_whole")
        assert consumed(spark, "totals") == {"lakeplan.consumed": {ORDERS: head(spark, "orders")}}
        assert rows(spark, "totals") == [(10, 5 + sum(10 ** n for n in range(2, order + 1)), 10 ** order)]
        assert matches_a_whole_rebuild(spark)


def test_a_run_beaten_by_a_commit_after_it_read_the_record_leaves_that_commit_s_record(make_project, spark):
    """Another run commits and records what it consumed after this run read the record (its target's pre-hook plays
    that run here): this run is beaten and must leave that record, not set back the one it read, which made the next
    run read those rows again (seen in the concurrency test: every event of its first round counted twice)."""
    other_run = [f"{{% if {env_value('other_run', '')} %}}{statement}{{% endif %}}" for statement in (
        "insert into {{ this }} values (99, 0, 0)",
        f"alter table {{{{ this }}}} set tblproperties ('lakeplan.consumed' = '{given('other_run', '')}')")]
    project = make_project("beaten_record", {
        "models/sources.yml": TARGET_YML.replace("schema: lakeplan_new_rows", "schema: lakeplan_beaten_record"),
        "models/totals.sql": f"{{{{ config(pre_hook={other_run}) }}}}\n{{{{ partial_update_target() }}}}",
        "models/spent.sql": member("totals", NEW, "customer, amount as spent"),
        "models/last.sql": member("totals", NEW, "customer, id, amount as last_amount", sequence_by="id")})
    orders = "lakeplan_beaten_record.orders"
    spark.sql("create schema lakeplan_beaten_record")
    spark.sql(f"create table {orders} (id int, customer int, amount bigint) using iceberg")
    spark.sql(f"insert into {orders} values (1, 10, 5)")
    project.run("run", "-s", "totals")
    spark.sql(f"insert into {orders} values (2, 10, 7)")
    recorded = {orders: spark.sql(f"select snapshot_id from {orders}.refs where name = 'main'").collect()[0][0]}
    log = project.fail("run", "-s", "totals", other_run=json.dumps(recorded))
    # the other run's commit is this process's own (its pre-hook): one application, told as another session of it
    assert "was changed by another session of Spark application" in log
    properties = dict(spark.sql("show tblproperties lakeplan_beaten_record.totals").collect())
    assert json.loads(properties["lakeplan.consumed"]) == recorded and "lakeplan.consumed.pending" not in properties


def test_an_input_snapshot_that_adds_no_row_is_nothing_new_and_what_comes_after_it_is_read_once(project, spark):
    """A compaction of the input (rewrite_data_files) moves its rows and adds none: the readers of new_rows write
    nothing, and explain and the compiled write say so; what is appended after it is read once. Iceberg commits an
    empty `overwrite` for a MERGE that matched nothing (another pipeline's, or a lakeplan write whose members filtered
    every new row away). It changes no row: a reader of new_rows has nothing new, and a `sum` is not stopped as if rows
    had changed. An `overwrite` that only added rows (a MERGE whose rows were all new) is read as new rows, as an
    append is."""
    add_orders(spark, (1, 10, 5), (2, 20, 7), (3, 10, 1), (4, 20, 3), (5, 30, 9))
    project.run("run", "-s", "totals", "current")
    before = snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current")
    spark.sql(f"call system.rewrite_data_files(table => '{ORDERS}', options => map('rewrite-all', 'true'))")
    project.run("run", "-s", "totals", "current")  # a compaction of the input moves its rows and adds none
    assert re.sub(r"\x1b\[\d+m", "", project.shown).count("[NOTHING NEW in ") == 2, project.shown
    assert (snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current")) == before
    code, _, models = explain(project, "--select", "totals")
    assert code == 0 and models["totals"]["state"]["next_run"] == "nothing new"
    # what `dbt run` would send now (explain's `dbt compile` wrote it): no write
    compiled = (project.path / "target" / "compiled" / "lakeplan" / "models" / "totals.sql").read_text()
    assert "nothing new to write" in compiled and "merge into" not in compiled.lower()

    add_orders(spark, (6, 20, -1))  # the upsert's changelog deletes order 6 (never inserted) and keeps the rest
    project.run("run", "-s", "totals", "totals_whole", "current")  # after the compaction: only order 6 is new
    assert rows(spark, "current") == [(1, 10, 5), (2, 20, 7), (3, 10, 1), (4, 20, 3), (5, 30, 9)]
    assert rows(spark, "totals") == [(10, 6, 1), (20, 9, -1), (30, 9, 9)] and matches_a_whole_rebuild(spark)

    before = snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current")
    spark.sql(f"merge into {ORDERS} as t using (select * from {ORDERS} where false) as s on t.id = s.id "
              "when matched then update set * when not matched then insert *")  # fmt: skip
    newest = spark.sql(f"select operation, summary from {ORDERS}.snapshots order by committed_at desc limit 1").first()
    assert newest.operation == "overwrite" and "added-records" not in newest.summary
    project.run("run", "-s", "totals", "current")
    assert re.sub(r"\x1b\[\d+m", "", project.shown).count("[NOTHING NEW in ") == 2, project.shown
    assert (snapshots(spark, f"{SCHEMA}.totals"), snapshots(spark, f"{SCHEMA}.current")) == before

    add_orders(spark, (7, 10, 3))  # what comes after it is read as new rows, once
    # merge-on-read, as an upstream `upsert` may write: a MERGE that only inserts commits an `overwrite` there (a
    # copy-on-write one commits an `append`)
    spark.sql(f"alter table {ORDERS} set tblproperties ('write.merge.mode' = 'merge-on-read')")
    spark.sql(f"merge into {ORDERS} as t using (select 8 as id, 20 as customer, cast(4 as bigint) as amount) as s "
              "on t.id = s.id when matched then update set * when not matched then insert *")  # fmt: skip
    newest = spark.sql(f"select operation, summary from {ORDERS}.snapshots order by committed_at desc limit 1").first()
    assert newest.operation == "overwrite" and newest.summary["added-records"] == "1"
    result, log = project.invoke("run", "-s", "totals", "totals_whole", "current")
    assert result.success and "reads all of" not in log and "_change_type = 'INSERT'" in log
    assert rows(spark, "totals") == [(10, 9, 3), (20, 13, 4), (30, 9, 9)] and matches_a_whole_rebuild(spark)
    assert rows(spark, "current") == [
        (1, 10, 5), (2, 20, 7), (3, 10, 1), (4, 20, 3), (5, 30, 9), (7, 10, 3), (8, 20, 4)]


def test_a_write_stopped_after_its_commit_is_not_applied_again(project, spark):
    """The record of what a write consumed follows its commit; a process killed between the two leaves the pending
    record, and the table's history says the write committed. And lakeplan's fixed work per write (issue 30): the
    target's two members, the write's record of what it consumed and its change_mode share one read of the target's
    properties (the state check reads its own), and each member's new_rows reads its input's snapshots and head in
    one query."""
    add_orders(spark, (1, 10, 5))
    project.run("run", "-s", "totals")
    first = {"base": head(spark, "totals"), "record": consumed(spark, "totals")["lakeplan.consumed"]}
    add_orders(spark, (2, 10, 7))
    result, log = project.invoke("run", "-s", "totals")
    assert result.success and rows(spark, "totals") == [(10, 12, 7)]
    before_write = log.split(f"merge into {SCHEMA}.totals")[0]
    assert before_write.count(f"show tblproperties {SCHEMA}.totals") == 2
    assert before_write.count(f"from {ORDERS}.snapshots") == 2  # one query per member
    # back to the state between the commit and the record: the old record, and this write's pending one
    pending = {"base": first["base"], "inputs": {ORDERS: head(spark, "orders")}}
    spark.sql(f"alter table {SCHEMA}.totals set tblproperties ('lakeplan.consumed' = '{json.dumps(first['record'])}', "
              f"'lakeplan.consumed.pending' = '{json.dumps(pending)}')")  # fmt: skip
    project.run("run", "-s", "totals")
    assert rows(spark, "totals") == [(10, 12, 7)]  # not 19: order 2 was applied once

    # the same, and before the next run lakeplan_maintain expires the snapshot the pending record starts from: it
    # settles the record first, so order 2 still counts once
    spark.sql(f"alter table {SCHEMA}.totals set tblproperties ('lakeplan.consumed' = '{json.dumps(first['record'])}', "
              f"'lakeplan.consumed.pending' = '{json.dumps(pending)}')")  # fmt: skip
    project.run("run-operation", "lakeplan_maintain", "--args", "{select: totals}")
    assert first["base"] not in [row[0] for row in spark.sql(f"select snapshot_id from {SCHEMA}.totals.snapshots").collect()]
    assert consumed(spark, "totals") == {"lakeplan.consumed": {ORDERS: head(spark, "orders")}}
    project.run("run", "-s", "totals")
    assert rows(spark, "totals") == [(10, 12, 7)]

    # a write stopped before its commit: the record it kept, and its pending one on the table's current snapshot
    record = {ORDERS: head(spark, "orders")}
    add_orders(spark, (3, 10, 1))
    pending = {"base": head(spark, "totals"), "inputs": {ORDERS: head(spark, "orders")}}
    spark.sql(f"alter table {SCHEMA}.totals set tblproperties ('lakeplan.consumed' = '{json.dumps(record)}', "
              f"'lakeplan.consumed.pending' = '{json.dumps(pending)}')")  # fmt: skip
    project.run("run", "-s", "totals", "totals_whole")
    assert rows(spark, "totals") == [(10, 13, 1)] and matches_a_whole_rebuild(spark)


def test_a_failed_write_then_its_rerun_counts_each_row_once(project, spark):
    """A write that fails after noting what it was about to consume (its MERGE fails) changes nothing, and its rerun
    reads the same rows again: each is counted once."""
    add_orders(spark, (1, 10, 5))
    project.run("run", "-s", "totals")
    add_orders(spark, (2, 10, 7))
    before = snapshots(spark, f"{SCHEMA}.totals")
    project.fail("run", "-s", "totals", fail="true")
    assert snapshots(spark, f"{SCHEMA}.totals") == before and rows(spark, "totals") == [(10, 5, 5)]
    assert consumed(spark, "totals")["lakeplan.consumed.pending"]["base"] == head(spark, "totals")  # noted, not done
    project.run("run", "-s", "totals", "totals_whole")
    assert rows(spark, "totals") == [(10, 12, 7)] and matches_a_whole_rebuild(spark)
    assert set(consumed(spark, "totals")) == {"lakeplan.consumed"}
    project.run("run", "-s", "totals")  # nothing new: nothing counted again
    assert rows(spark, "totals") == [(10, 12, 7)]


def test_changed_rows_of_an_input_stop_a_sum_and_full_refresh_reads_everything(project, spark):
    add_orders(spark, (1, 10, 5), (2, 20, 7))
    project.run("run", "-s", "totals", "current")
    spark.sql(f"update {ORDERS} set amount = 50 where id = 1")
    log = project.fail("run", "-s", "totals")
    assert ("reads new_rows(lakeplan_new_rows.orders), whose snapshots since the last write of `totals` "
            "changed or removed rows (overwrite ") in log and "Fix: rebuild it with `dbt run -s totals --full-refresh`" in log
    code, _, models = explain(project, "--select", "current")  # what the next run would read, before it runs
    assert list(models["current"]["change"]["reads"]) == [ORDERS_SOURCE] and models["current"]["change"]["reads"][
        ORDERS_SOURCE].startswith("everything: snapshots since the last write of `current` changed or removed rows (overwrite ")
    project.run("run", "-s", "current")  # an upsert reads the input whole and gets the same rows
    assert "`current` reads all of lakeplan_new_rows.orders: its snapshots since the last write" in project.shown
    assert rows(spark, "current") == [(1, 10, 50), (2, 20, 7)]
    project.run("run", "-s", "totals", "totals_whole", "--full-refresh")
    assert rows(spark, "totals") == [(10, 50, 50), (20, 7, 7)] and matches_a_whole_rebuild(spark)


def test_changed_keys_recompute_only_the_keys_whose_rows_changed(project, spark):
    """An aggregating member restricted to the changed keys gives the rows of one that recomputes every key, through
    appends, an update that moves an order to another customer, and a delete."""
    def same():
        """Writes both in one run: its log where it succeeded and they hold the same rows, else ''."""
        result, log = project.invoke("run", "-s", "counts", "counts_every_key")
        return log if result.success and rows(spark, "counts") == rows(spark, "counts_every_key") else ""

    add_orders(spark, (1, 10, 5), (2, 20, 7), (3, 10, 1))
    assert same() and rows(spark, "counts") == [(10, 2), (20, 1)]
    add_orders(spark, (4, 30, 3))
    log = same()  # counts_every_key reads no changed keys: the query of them is `counts`'s
    assert "select distinct `customer` from lakeplan_new_rows_" in log  # only customer 30's key
    assert log and rows(spark, "counts") == [(10, 2), (20, 1), (30, 1)]
    spark.sql(f"update {ORDERS} set customer = 30 where id = 1")  # customer 10 loses an order, 30 gains it
    assert same() and rows(spark, "counts") == [(10, 1), (20, 1), (30, 2)]
    spark.sql(f"delete from {ORDERS} where id = 3")
    assert same() and rows(spark, "counts") == [(10, 1), (20, 1), (30, 2)]  # no order left: neither sends customer 10
    project.run("run", "-s", "counts")
    assert "`counts`: its members read nothing new since its last write" in project.shown


def test_an_input_with_delete_files_is_read_as_the_difference_of_its_snapshots(project, spark):
    """Iceberg's changelog refuses a table that holds delete files (a merge-on-read UPDATE, as an upstream `upsert`
    with change_mode: merge_on_read writes): new rows and changed keys then come from the difference of the two
    snapshots, with the same rows as a whole reading."""
    spark.sql(f"alter table {ORDERS} set tblproperties ('write.update.mode' = 'merge-on-read', "
              "'write.delete.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')")
    add_orders(spark, (1, 10, 5), (2, 20, 7), (3, 10, 1))
    project.run("run", "-s", "totals", "counts", "counts_every_key")
    spark.sql(f"update {ORDERS} set customer = 30 where id = 1")  # customer 10 loses an order, 30 gains it
    assert spark.sql(f"select count(*) from {ORDERS}.delete_files").first()[0] > 0
    project.run("run", "-s", "counts", "counts_every_key")
    assert "`counted` reads lakeplan_new_rows.orders as the difference of its snapshots" in project.shown
    assert rows(spark, "counts") == rows(spark, "counts_every_key") == [(10, 1), (20, 1), (30, 1)]

    project.run("run", "-s", "totals", "--full-refresh")  # a sum cannot follow the update: rebuilt once
    add_orders(spark, (4, 20, 3), (5, 30, 9))
    # appends alone: the delete files before them do not matter
    result, log = project.invoke("run", "-s", "totals", "totals_whole")
    assert result.success and "as the difference of its snapshots" not in log and "using iceberg options (path" in log
    assert rows(spark, "totals") == [(10, 1, 1), (20, 10, 3), (30, 14, 9)] and matches_a_whole_rebuild(spark)


def test_reading_what_is_new_where_it_cannot_work_is_refused(make_project, spark):
    parse = make_project("new_rows_refused", {
        "models/pq.sql": "{{ config(materialized='table', file_format='parquet') }}\nselect 1 as id",
        "models/plain.sql": "{{ config(materialized='table') }}\nselect * from {{ lakeplan.new_rows(ref('pq')) }}",
        # a view inherits the project's file_format: iceberg, but has no snapshots
        "models/staged.sql": "{{ config(materialized='view') }}\nselect 1 as id, '+I' as _op",
        "models/latest.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
                             "select * from {{ lakeplan.new_rows(ref('staged')) }}",
        # a target in change_mode delta: its snapshots append changes, not rows
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: id, change_mode: delta}\n"
                           "    columns: [{name: id, data_type: int}, {name: n, data_type: int}]\n",
        "models/wide_n.sql": "{{ config(partial_update_target='wide') }}\nselect 1 as id, 2 as n",
        "models/follows.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
                              "select id, n, '+I' as _op from {{ lakeplan.new_rows(ref('wide')) }}",
    })  # fmt: skip
    log = parse.fail("parse")
    assert ("Model `follows` reads `new_rows(ref('wide'))`, but `wide` is in change_mode delta: its snapshots append "
            "delta rows, which are changes to fold, not its rows, so new_rows would read them as rows.") in log
    assert ("Model `plain` reads `new_rows(ref('pq'))` but is materialized as table: only a partial-update member or "
            "an `upsert` records what its write consumed") in log
    assert "Model `plain` reads `new_rows(ref('pq'))`, but `pq` has file_format 'parquet': new_rows reads Iceberg's" in log
    assert ("Model `latest` reads `new_rows(ref('staged'))`, but `staged` is materialized as view: new_rows reads an "
            "Iceberg table's snapshots, which a view has none of. Fix: materialize `staged` as a table") in log

    run = make_project("new_rows_parquet", {
        "models/sources.yml": "version: 2\nsources: [{name: raw, schema: lakeplan_new_rows_parquet, tables: [{name: pq}]}]",
        "models/current.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
                              "select id, '+I' as _op from {{ lakeplan.new_rows(source('raw', 'pq')) }}",
        "models/keyed.sql": "{{ config(materialized='upsert', unique_key='id') }}\nselect id, '+I' as _op from "
                            "{{ source('raw', 'pq') }} where id in {{ lakeplan.changed_keys(source('raw', 'pq'), 'idd') }}",
    })  # fmt: skip
    spark.sql("create schema if not exists lakeplan_new_rows_parquet")
    spark.sql("create table lakeplan_new_rows_parquet.pq using parquet as select 1 as id")
    log = run.fail("run")
    assert ("`current` reads new_rows(lakeplan_new_rows_parquet.pq), which is not an Iceberg table: only Iceberg's "
            "snapshots tell what is new. Nothing was written. Fix:") in log
    # a source that is a view, which the parse cannot see
    spark.sql("drop table lakeplan_new_rows_parquet.pq")
    spark.sql("create view lakeplan_new_rows_parquet.pq as select 1 as id")
    log = run.fail("run")
    assert "`current` reads new_rows(lakeplan_new_rows_parquet.pq), which is a view: only Iceberg's snapshots" in log
    spark.sql("drop view lakeplan_new_rows_parquet.pq")  # no table at all
    log = run.fail("run")
    assert ("`current` reads new_rows(lakeplan_new_rows_parquet.pq), which does not exist. Nothing was written. Fix: "
            "create it (or build the model that writes it) first, or correct the name.") in log
    # changed_keys of a column the table does not have: told before Spark's own error on the compiled SQL
    spark.sql("create table lakeplan_new_rows_parquet.pq (id int, amount bigint) using iceberg")
    log = run.fail("run", "-s", "keyed")
    assert ("`keyed` reads changed_keys(lakeplan_new_rows_parquet.pq, 'idd'), but lakeplan_new_rows_parquet.pq has no "
            "column `idd`. Nothing was written. Fix: name one of its columns as the key: id, amount.") in log


CHANGELOG_TARGET = """
  - name: {name}
    config: {{unique_key: id, partial_update_on_delete: {on_delete}, sequence_groups: {{status_seq: [status]}}{full}}}
    columns:
      - {{name: id, data_type: int}}
      - {{name: status, data_type: string}}
      - {{name: status_seq, data_type: int}}
      - {{name: amount, data_type: bigint}}
"""
CHANGES = ("{{ config(partial_update_target='%s', op_column='op', sequence_by='seq') }}\n"
           "select id, op, seq, status, status_seq, amount from %s")


def changelog_project(make_project, spark, name, on_deletes):
    """A changelog table `cdc` in schema `lakeplan_<name>` and, per partial_update_on_delete value, a target
    `state_<value>` whose member reads what is new of it and its twin `state_<value>_whole` whose member reads it
    whole (rebuilt from the whole changelog by every run that selects it: `full_refresh`)."""
    schema = f"lakeplan_{name}"
    files = {"models/schema.yml": f"version: 2\nsources: [{{name: raw, schema: {schema}, tables: [{{name: cdc}}]}}]\n"
                                  "models:"}  # fmt: skip
    for on_delete in on_deletes:
        state = f"state_{on_delete}"
        files["models/schema.yml"] += CHANGELOG_TARGET.format(name=state, on_delete=on_delete, full="")
        files["models/schema.yml"] += CHANGELOG_TARGET.format(name=f"{state}_whole", on_delete=on_delete,
                                                              full=", full_refresh: true")  # fmt: skip
        files[f"models/{state}.sql"] = files[f"models/{state}_whole.sql"] = "{{ partial_update_target() }}"
        files[f"models/changes_{on_delete}.sql"] = CHANGES % (state, "{{ lakeplan.new_rows(source('raw', 'cdc')) }}")
        files[f"models/changes_{on_delete}_whole.sql"] = CHANGES % (f"{state}_whole", "{{ source('raw', 'cdc') }}")
    project = make_project(name, files)
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create table {schema}.cdc (id int, op string, seq int, status string, status_seq int, amount bigint) "
              "using iceberg")
    return project, schema


def test_a_changelog_member_with_a_sequence_group_reads_its_new_changes(make_project, spark):
    """A changelog member (op column, sequence) and a sequence group, reading only the changes appended since the last
    write, give the table a rebuild from the whole changelog gives, deletes included, whether a delete is ignored or
    removes the record (both in one run)."""
    on_deletes = ("ignore", "remove_record")
    project, schema = changelog_project(make_project, spark, "new_changes", on_deletes)
    batches = [
        "(1, '+I', 1, 'new', 1, 10), (2, '+I', 2, 'new', 1, 20)",
        "(1, '+U', 3, 'paid', 2, 11), (2, '-D', 4, null, null, null)",
        "(2, '+I', 5, 'again', 3, 22), (1, '+U', 6, null, null, 12)",
    ]
    for batch in batches:
        spark.sql(f"insert into {schema}.cdc values {batch}")
        project.run("run", "-s", *(f"state_{on_delete}" for on_delete in on_deletes),
                    *(f"state_{on_delete}_whole" for on_delete in on_deletes))
        for on_delete in on_deletes:  # the twin: rebuilt from the whole changelog (full_refresh)
            state = f"{schema}.state_{on_delete}"
            assert table_rows(spark, state) == table_rows(spark, f"{state}_whole"), on_delete
    expected = [(1, "paid", 2, 12), (2, "again", 3, 22)]
    assert table_rows(spark, f"{schema}.state_ignore") == table_rows(spark, f"{schema}.state_remove_record") == expected


def test_a_changelog_member_of_a_target_whose_deletes_are_errors_is_refused(make_project, spark):
    """Under `partial_update_on_delete: error`, a changelog member is refused whether it reads what is new or
    everything."""
    project, schema = changelog_project(make_project, spark, "new_changes_error", ["error"])
    for model in ("state_error", "state_error_whole"):
        log = project.fail("run", "-s", model)
        assert f"Member `changes{model[5:]}` of partial-update target `{model}` is a changelog (op_column `op`)" in log
    assert not spark.catalog.tableExists(f"{schema}.state_error")
    assert not spark.catalog.tableExists(f"{schema}.state_error_whole")


TALLY_YML = """
version: 2
sources:
  - name: raw
    schema: lakeplan_new_rows_tally
    tables: [{name: orders}, {name: customers}]
models:
  - name: tallies
    config: {unique_key: customer}
    columns:
      - {name: customer, data_type: int}
      - {name: seen, data_type: bigint, meta: {merge: count}}
      - {name: tier, data_type: string}
"""


def test_a_rule_that_counts_rows_again_stops_where_the_input_changed_or_expired(make_project, spark):
    """Not only `sum`: `count` (and `product`, `append`, `listagg`) would count an input read whole again twice, so a
    member that writes such a column stops where its input changed rows (it read them whole, counting every row
    again), and where the snapshot it last consumed expired or was rolled back, with the fix for each. A member of the same target that
    writes no such column reads its changed input whole and the write goes on."""
    schema = "lakeplan_new_rows_tally"
    project = make_project("new_rows_tally", {
        "models/sources.yml": TALLY_YML,
        "models/tallies.sql": "{{ partial_update_target() }}",
        "models/seen.sql": member("tallies", "{{ lakeplan.new_rows(source('raw', 'orders')) }}", "customer, id as seen"),
        "models/tier.sql": member("tallies", "{{ lakeplan.new_rows(source('raw', 'customers')) }}", "customer, tier"),
    })  # fmt: skip
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create or replace table {schema}.orders (id int, customer int, amount bigint) using iceberg")
    spark.sql(f"create or replace table {schema}.customers (customer int, tier string) using iceberg")
    spark.sql(f"insert into {schema}.orders values (1, 10, 5), (2, 10, 7)")
    spark.sql(f"insert into {schema}.customers values (10, 'bronze')")
    project.run("run")
    assert table_rows(spark, f"{schema}.tallies") == [(10, 2, "bronze")]

    spark.sql(f"update {schema}.customers set tier = 'gold' where customer = 10")  # `tier` writes no count
    project.run("run")
    assert "`tier` reads all of lakeplan_new_rows_tally.customers: its snapshots since the last write" in project.shown
    assert table_rows(spark, f"{schema}.tallies") == [(10, 2, "gold")]  # the count is not counted again

    spark.sql(f"update {schema}.orders set amount = 50 where id = 1")
    log = project.fail("run")
    assert ("`seen` reads new_rows(lakeplan_new_rows_tally.orders), whose snapshots since the last write of `tallies` "
            "changed or removed rows (overwrite ") in log
    assert ("`tallies` adds up what `seen` sends (`seen` (count)), and reading the input whole would count its rows "
            "again. `tallies` is unchanged. Fix: rebuild it with `dbt run -s tallies --full-refresh`, or append to") in log
    assert "`seen` reads all of" not in project.shown  # a whole reading is told only where the write goes on
    assert table_rows(spark, f"{schema}.tallies") == [(10, 2, "gold")]

    project.run("run", "--full-refresh")
    spark.sql(f"insert into {schema}.orders values (3, 10, 1)")
    spark.sql(f"insert into {schema}.orders values (4, 20, 1)")
    spark.sql(f"call system.expire_snapshots(table => '{schema}.orders', "
              "older_than => timestamp '2999-01-01 00:00:00', retain_last => 1)")  # fmt: skip
    log = project.fail("run")
    assert ("of it, which the last write of `tallies` consumed, or one after it, has expired, so what is new since "
            "cannot be told") in log
    assert ("Fix: rebuild it with `dbt run -s tallies --full-refresh`, and keep the snapshots of "
            "lakeplan_new_rows_tally.orders (its expire_snapshots retention) longer than the time between two runs "
            "of `tallies`.") in log
    assert table_rows(spark, f"{schema}.tallies") == [(10, 2, "gold")]

    # a rollback of the input past the consumed snapshot (its parent expired above): not told as an expiry
    project.run("run", "--full-refresh")
    before = spark.sql(f"select snapshot_id from {schema}.orders.refs where name = 'main'").first()[0]
    spark.sql(f"insert into {schema}.orders values (5, 10, 1)")
    project.run("run")
    spark.sql(f"call system.rollback_to_snapshot('{schema}.orders', {before})")
    spark.sql(f"insert into {schema}.orders values (6, 10, 1)")
    log = project.fail("run")
    assert ("which the last write of `tallies` consumed, is not in its history any more: it was replaced (by "
            "whatever writes it: this project does not) or rolled back, so what is new since cannot be told") in log
    assert ("Fix: rebuild it with `dbt run -s tallies --full-refresh` after each rebuild or rollback of "
            "lakeplan_new_rows_tally.orders.") in log

    # a member that read its input whole, then reads it with new_rows: the table records none of it consumed, but
    # holds the counts of every row the member read before
    write_files(project.path, {"models/seen.sql": member("tallies", "{{ source('raw', 'orders') }}", "customer, id as seen")})
    project.run("run", "--full-refresh")
    counted = table_rows(spark, f"{schema}.tallies")
    write_files(project.path, {"models/seen.sql": member(
        "tallies", "{{ lakeplan.new_rows(source('raw', 'orders')) }}", "customer, id as seen")})
    spark.sql(f"insert into {schema}.orders values (7, 10, 1)")
    log = " ".join(project.fail("run", "--vars", "{lakeplan_accept_state: [tallies]}").split())
    assert ("`seen` reads new_rows(lakeplan_new_rows_tally.orders), but `tallies` records no snapshot of it consumed "
            "while it holds what `seen` sent before: `tallies` adds up what `seen` sends (`seen` (count)), and reading "
            "the input whole would count its rows again. `tallies` is unchanged. Fix: rebuild it with `dbt run -s "
            "tallies --full-refresh`; or, if `seen` never read lakeplan_new_rows_tally.orders before (a new input of "
            "it), read it in a new member of its own, whose columns hold nothing of it yet.") in log
    assert table_rows(spark, f"{schema}.tallies") == counted


def test_a_model_that_also_reads_a_table_whole_is_written_when_only_that_table_changed(make_project, spark):
    """A write is skipped as `nothing new` only when every table the model reads (through its members) is read with
    new_rows and gained nothing, or, where it also reads a table whole, when it then sends no row: a union with that
    table takes its new rows, and a join of no new rows with it writes nothing."""
    schema = "lakeplan_new_rows_union"
    orders, corrections = NEW.replace("raw", "mixed"), "{{ source('mixed', 'corrections') }}"
    union = f"select COLUMNS from {orders} union all select COLUMNS from {corrections}"
    dbt = make_project("new_rows_union", {
        "models/sources.yml": f"""
version: 2
sources: [{{name: mixed, schema: {schema}, tables: [{{name: orders}}, {{name: corrections}}]}}]
models:
  - name: last_amounts
    config: {{unique_key: customer}}
    columns: [{{name: customer, data_type: int}}, {{name: last_amount, data_type: bigint}}]
  - name: corrected
    config: {{unique_key: customer}}
    columns: [{{name: customer, data_type: int}}, {{name: correction, data_type: bigint}}]
""",
        "models/last_amounts.sql": "{{ partial_update_target() }}",
        "models/amounts.sql": "{{ config(partial_update_target='last_amounts') }}\n"
        + union.replace("COLUMNS", "customer, amount as last_amount"),
        "models/current.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
        + union.replace("COLUMNS", "id, customer, amount, '+I' as _op"),
        "models/corrected.sql": "{{ partial_update_target() }}",
        "models/corrections_of_new_orders.sql": "{{ config(partial_update_target='corrected') }}\n"
        f"select o.customer, c.amount as correction from {orders} as o join {corrections} as c on c.id = o.id + 99",
    })  # fmt: skip
    spark.sql(f"create schema if not exists {schema}")
    for table in ("orders", "corrections"):
        spark.sql(f"create table {schema}.{table} (id int, customer int, amount bigint) using iceberg")
    spark.sql(f"insert into {schema}.orders values (1, 10, 5)")
    spark.sql(f"insert into {schema}.corrections values (100, 50, 9)")
    dbt.run("run")
    before = snapshots(spark, f"{schema}.corrected")
    spark.sql(f"insert into {schema}.corrections values (101, 60, 4)")  # only the table read whole gains a row
    dbt.run("run")
    shown = re.sub(r"\x1b\[\d+m", "", dbt.shown)
    assert re.findall(r"model lakeplan_new_rows_union\.(\w+) \.* \[NOTHING NEW", shown) == ["corrected"]
    assert snapshots(spark, f"{schema}.corrected") == before  # no new order to join: nothing written
    assert table_rows(spark, f"{schema}.last_amounts") == [(10, 5), (50, 9), (60, 4)]
    assert table_rows(spark, f"{schema}.current") == [(1, 10, 5), (100, 50, 9), (101, 60, 4)]
    assert table_rows(spark, f"{schema}.corrected") == [(10, 9)]


def test_explain_reports_a_target_whose_member_cannot_compile_and_explains_the_rest(make_project, spark):
    """A member is inlined into its target: its compile error is the target's, and the other models are explained."""
    schema = "lakeplan_new_rows_missing"
    project = make_project("new_rows_missing", {
        "models/sources.yml": f"""
version: 2
sources: [{{name: raw, schema: {schema}, tables: [{{name: gone}}]}}]
models:
  - name: wide
    config: {{unique_key: id}}
    columns: [{{name: id, data_type: int}}, {{name: v, data_type: int}}]
""",
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/m.sql": "{{ config(partial_update_target='wide') }}\n"
                        "select id, v from {{ lakeplan.new_rows(source('raw', 'gone')) }}",
        "models/plain.sql": "{{ config(materialized='table') }}\nselect 1 as id",
    })  # fmt: skip
    spark.sql(f"create schema if not exists {schema}")
    code, _, models = explain(project)
    assert code == 1 and models["plain"]["error"] is None  # explained
    assert f"`m` reads new_rows({schema}.gone), which does not exist" in models["wide"]["error"]


def test_an_unchanged_seed_is_nothing_new_and_a_reloaded_one_is_said_to_be(make_project, spark):
    """`dbt build` twice over an unchanged seed: lakeplan keeps the seed's table (the same snapshot), so the upsert that
    reads it with new_rows finds nothing new and writes nothing. A changed CSV is loaded again, and the log says that
    `dbt seed` loaded it again, not that the model writing it was refreshed."""
    schema = "lakeplan_new_rows_seed"
    project = make_project("new_rows_seed", {
        "seeds/orders.csv": "id,amount\n1,5\n2,7\n",
        "models/current.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
                              "select id, amount, '+I' as _op from {{ lakeplan.new_rows(ref('orders')) }}",
    })  # fmt: skip
    head = f"select snapshot_id from {schema}.orders.refs where name = 'main'"
    project.run("build")
    loaded, written = spark.sql(head).first()[0], snapshots(spark, f"{schema}.current")
    project.run("build")
    assert "lakeplan: seed `orders` is as its table" in project.shown
    assert "`current`: its query reads nothing new since its last write" in project.shown
    assert spark.sql(head).first()[0] == loaded and snapshots(spark, f"{schema}.current") == written

    write_files(project.path, {"seeds/orders.csv": "id,amount\n1,5\n2,8\n3,1\n"})
    project.run("build")
    assert spark.sql(head).first()[0] != loaded
    assert ("is not in its history any more: it is the seed `orders`, which `dbt seed` loaded again (its CSV or its "
            "config changed, or --full-refresh)") in project.shown  # fmt: skip
    assert "--full-refresh of" not in project.shown
    assert sorted(tuple(r) for r in spark.sql(f"select id, amount from {schema}.current").collect()) == [
        (1, 5), (2, 8), (3, 1)]
