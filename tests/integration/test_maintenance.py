"""Maintenance as a dbt user controls it (docs/maintenance.md): per model, compaction, snapshot expiry and orphan-file
removal run after the write when a threshold is crossed and not otherwise, or on their own under
`dbt run-operation lakeplan_maintain`; the table's rows and lakeplan's state in it (tags, recorded fingerprints,
tombstones) are the same after them. Read from the tables and their metadata tables."""

import functools
import os
import time

import pytest

from tests.conftest import JAVA_FRAME, given, write_files
from tests.integration.test_partial_update import member, rows, target_yml
from tests.integration.test_tombstones import CHANGES

HOOK = "{{ lakeplan.lakeplan_maintenance_hook() }}"
N = given("n", 1)  # each run's value


def operations(spark, table):
    """The operation of each snapshot still in the table, oldest first."""
    return [r.operation for r in spark.sql(f"select operation from {table}.snapshots order by committed_at").collect()]


def files(spark, table):
    """(data files, data rows, delete files) of the table's current snapshot."""
    row = spark.sql(f"select count_if(content = 0), coalesce(sum(if(content = 0, record_count, 0)), 0), "
                    f"count_if(content != 0) from {table}.files").collect()[0]  # fmt: skip
    return tuple(row)


def recorded(spark, table):
    """lakeplan's state in the table: its recorded fingerprint properties and its refs (tags, branches) by name."""
    properties = {r.key: r.value for r in spark.sql(f"show tblproperties {table}").collect()
                  if r.key.startswith("lakeplan.")}  # fmt: skip
    return properties, sorted(r.name for r in spark.sql(f"select name from {table}.refs").collect())


def source(spark, schema, table, columns, rows):
    """The source `raw.<table>` in `schema` holding only these rows (what a loader delivers between runs; not a seed,
    whose load would be one more dbt node per run), and its YAML."""
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create table if not exists {schema}.{table} ({columns}) using iceberg")
    spark.sql(f"insert overwrite {schema}.{table} values " + ", ".join(str(row) for row in rows))
    return f"version: 2\nsources: [{{name: raw, schema: {schema}, tables: [{{name: {table}}}]}}]\n"


def test_a_target_compacts_when_its_deleted_share_is_crossed_and_keeps_its_rows_and_tags(make_project, spark):
    """Merge-on-read target with a `sum`: each run's changed keys become position deletes; the write compacts once
    deletes reach 30% of the rows, not before; the `lakeplan_applied_*` tag survives compaction and expiry, so a
    rerun of the same input still adds nothing twice."""
    maintenance = {"deleted_share": 0.3, "small_files": 1000, "delete_files": 1000, "expire_after_hours": 0}
    project = make_project("maint_target", {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "visits": "bigint"}, rules={"visits": "sum"},
                                      change_mode="merge_on_read", maintenance=maintenance),
        "models/counts.sql": member("wide", "select id, n as visits from {{ source('raw', 'visits') }}"),
    })  # fmt: skip
    visits = functools.partial(source, spark, "lakeplan_maint_target", "visits", "id int, n int")
    write_files(project.path, {"models/sources.yml": visits([(1, 1), (2, 1), (3, 1), (4, 1)])})
    table = "lakeplan_maint_target.wide"
    project.run("run")
    # 1 of 5 data rows deleted (20%): no compaction; 3 of 7 (43%): compaction, which applies every delete
    for delivered, share, compacts in [([(1, 1)], "20.0%", False), ([(2, 1), (3, 1)], "42.9%", True)]:
        visits(delivered)
        properties = recorded(spark, table)[0]
        _, log = project.invoke("run")
        assert ("replace" in operations(spark, table)) == compacts, share
        assert f"{share} of rows deleted (threshold 30.0%)" in log
        assert files(spark, table)[2] == (0 if compacts else 1)
    assert "lakeplan maintenance of `wide`: rewrite_data_files (" in project.shown
    assert "rewrite_data_files (42.9% of rows deleted (threshold 30.0%)): " in project.shown
    assert "rewrite_position_delete_files (after the deletes were applied, 42.9% of rows deleted" in project.shown
    assert files(spark, table)[:2] == (1, 4)
    assert rows(spark, table) == [(1, 2), (2, 2), (3, 2), (4, 1)]
    assert recorded(spark, table)[0] == properties and properties["lakeplan.fingerprint"]
    # expired down to the two compactions' snapshots (younger than the cutoff taken before them); the run's tag moved
    assert "expire_snapshots" in project.shown
    assert operations(spark, table) == ["replace", "replace"]
    [tag] = spark.sql(f"select r.snapshot_id = s.snapshot_id from {table}.refs as r, {table}.refs as s "
                      "where r.name like 'lakeplan_applied_%' and s.name = 'main'").collect()  # fmt: skip
    assert tag[0]
    # a team's own compaction job, twice: snapshots between the tag and the current one, which expiry removes
    for _ in range(2):
        spark.sql(f"call system.rewrite_data_files(table => '{table}', options => map('rewrite-all', 'true'))")
    project.run("run-operation", "lakeplan_maintain", "--args", "{select: wide}")
    assert "expire_snapshots" in project.shown and len(operations(spark, table)) == 1
    project.run("run")
    assert "already holds this run" in project.shown
    assert rows(spark, table) == [(1, 2), (2, 2), (3, 2), (4, 1)]


def test_lakeplan_maintain_maintains_an_upsert_that_never_compacts_on_write(make_project, spark):
    """`after_write: false`: the writes never compact or expire, however far past the thresholds; the run-operation
    does all of it, and removes an old orphan file in the table's own directory only: a new one (a write under way)
    and one in the tombstones' side table, whose directory starts with the table's name, stay."""
    maintenance = {"after_write": False, "small_files": 2, "deleted_share": 1, "expire_after_hours": 0}
    project = make_project("maint_upsert", {
        "seeds/changes.csv": CHANGES,
        "models/current.sql": "{{ config(materialized='upsert', unique_key='id', sequence_by='lsn', op_column='op', "
                              f"change_mode='merge_on_read', maintenance={maintenance!r}) }}}}\n"
                              "select id, op, lsn, val from {{ ref('changes') }} where batch = " + given("batch", 1),
    })  # fmt: skip
    table, tombstones = "lakeplan_maint_upsert.current", "lakeplan_maint_upsert.current__lakeplan_tombstones"
    for batch in (1, 2, 3):
        project.run("build" if batch == 1 else "run", batch=batch)  # the seed, with the first
        assert "lakeplan maintenance" not in project.shown
    assert "replace" not in operations(spark, table) and len(operations(spark, table)) == 3
    assert files(spark, table)[0] >= 2  # past the small files' threshold, not compacted
    delete_files = files(spark, table)[2]
    assert delete_files > 0  # merge-on-read
    before = rows(spark, table), rows(spark, tombstones), operations(spark, tombstones), recorded(spark, table)
    location = spark.sql(f"describe table extended {table}").where("col_name = 'Location'").collect()[0].data_type
    side = spark.sql(f"describe table extended {tombstones}").where("col_name = 'Location'").collect()[0].data_type
    four_days_ago = time.time() - 4 * 86400
    strays = {"old": f"{location}/data/old-orphan.parquet", "new": f"{location}/data/new-orphan.parquet",
              "side": f"{side}/data/old-orphan.parquet"}  # fmt: skip
    for name, path in strays.items():
        path = path.removeprefix("file:")
        with open(path, "w") as stray:
            stray.write("not a data file of any snapshot")
        if name != "new":
            os.utime(path, (four_days_ago, four_days_ago))

    project.run("run-operation", "lakeplan_maintain", "--args", "{select: [current]}")
    assert "lakeplan maintenance of `current`: rewrite_data_files (" in project.shown
    assert "lakeplan maintenance of `current`: expire_snapshots (" in project.shown
    assert "lakeplan maintenance of `current`: remove_orphan_files (files under" in project.shown
    assert "): 1 orphan files removed." in project.shown
    assert {name: os.path.exists(path.removeprefix("file:")) for name, path in strays.items()} == {
        "old": False, "new": True, "side": True}
    # compacting the small files applied their deletes; the delete files no live file needs went with them (left,
    # they would count as deleted rows), and expiry says how many it deleted
    assert "rewrite_position_delete_files (after the deletes were applied, 3 small data files " in project.shown
    assert f"data files, {delete_files} delete files and " in project.shown
    assert files(spark, table)[0] == 1 and files(spark, table)[2] == 0 and operations(spark, table) == ["replace"]
    assert (rows(spark, table), rows(spark, tombstones), operations(spark, tombstones), recorded(spark, table)) == before
    project.run("run-operation", "lakeplan_maintain", "--args", "{select: current}")
    assert "lakeplan maintenance of `current`: no threshold crossed for compaction: 1 small data files (threshold 2)" in project.shown


def test_an_incremental_model_compacts_through_its_post_hook(make_project, spark):
    """dbt-spark's incremental: the post-hook runs its maintenance; appends add a file each, the second crosses 2."""
    project = make_project("maint_incremental", {"models/events.sql": (
        "{{ config(materialized='incremental', incremental_strategy='append', post_hook=\"" + HOOK + "\", "
        "maintenance={'small_files': 2, 'expire_after_hours': none}) }}\nselect " + N + " as id")})  # fmt: skip
    table = "lakeplan_maint_incremental.events"
    for n in (1, 2):
        project.run("run", n=n)
        assert ("replace" in operations(spark, table)) == (n == 2), n
    assert "rewrite_data_files (2 small data files (threshold 2)): " in project.shown
    assert files(spark, table) == (1, 2, 0)
    assert rows(spark, table) == [(1,), (2,)]


UPSERT = "{{ config(materialized='upsert', unique_key='id', maintenance=%s) }}\nselect 1 as id, '+I' as _op"
WIDE = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint"}),
}


@pytest.mark.parametrize("files, fragment", [
    ({"models/current.sql": UPSERT % "{'deleted_share': 2}"},
     "model `current` sets `maintenance: {'deleted_share': 2}`, which lakeplan cannot use (at `deleted_share`: input "
     "should be less than or equal to 1); `deleted_share`: compact the data files that have deletes"),
    ({"models/current.sql": UPSERT % "{'orphans_after_hours': 1}"},
     "Fix: e.g. `maintenance: {orphans_after_hours: 168}`, or remove it."),
    ({"models/current.sql": UPSERT % "{'small_file': 5}"},
     "(at `small_file`: extra inputs are not permitted); compaction, snapshot expiry and orphan-file removal of an "
     "Iceberg `upsert`, partial-update target or incremental model, each by its threshold (docs/maintenance.md); `{}`: "
     "the defaults. Fix: rename `small_file` to `small_files` (did you mean it?); use only `after_write`, "
     "`target_file_mib`, `small_files`"),
    ({"models/plain.sql": "{{ config(materialized='table', maintenance={}) }}\nselect 1 as id"},
     "model `plain` sets `maintenance: {}`, but it is materialized as table, not a table that runs write into (an "
     "incremental, `upsert` or partial-update target): it would do nothing. Fix: remove `maintenance`"),
    ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a", maintenance={"small_files": 5})},
     "model `m` sets `maintenance: {'small_files': 5}`, but it is a partial-update member: its rows are written into "
     "its target's table. Fix: set `maintenance` on the target `wide`."),
    ({"models/events.sql": "{{ config(materialized='incremental', file_format='parquet', post_hook=\"" + HOOK
      + "\", maintenance={}) }}\nselect 1 as id"},
     "model `events` sets `maintenance: {}` with file_format 'parquet'; compaction and snapshot expiry are Iceberg "
     "procedures. Fix: set `file_format: iceberg`, or remove `maintenance`."),
    ({"models/events.sql": "{{ config(materialized='incremental', maintenance={}) }}\nselect 1 as id"},
     "model `events` sets `maintenance: {}` (after_write: true), but it is incremental and none of its post-hooks runs "
     "lakeplan's maintenance (dbt-spark's incremental materialization does not call it). Fix: add `+post-hook: "
     "\"{{ lakeplan.lakeplan_maintenance_hook() }}\"`"),
], ids=["share_out_of_range", "orphans_too_young", "unknown_key", "on_a_table", "on_a_member", "not_iceberg",
        "incremental_without_hook"])  # fmt: skip
def test_maintenance_that_cannot_work_stops_the_parse(make_project, files, fragment):
    project = make_project("maint_bad", {**files, "models/other.sql": UPSERT % "{'keep_snapshots': 0}"})
    log = project.fail("parse")
    assert "lakeplan found 2 problem(s)" in log  # listed with every other problem of the project
    assert fragment in log
    assert "model `other` sets `maintenance: {'keep_snapshots': 0}`" in log


@pytest.fixture(scope="module")
def maint_select(make_project):
    """One project (one parse) for every selection: lakeplan_maintain refuses them all, writing nothing."""
    return make_project("maint_select", {"models/current.sql": UPSERT % "{}", "models/plain.sql": "select 1 as id"})


UNKNOWN = ("lakeplan_maintain: select names `curent`, but this project has no enabled model of that name. Fix: select "
           "models with `maintenance` by name: current.")  # not `plain`, which has none
WITHOUT = ("lakeplan_maintain: model `plain` has no `maintenance` settings, so lakeplan does not know its thresholds. "
           "Fix: add `maintenance: {}` (the defaults) to its config, or leave it out of select (models with "
           "`maintenance`: current).")
NONE_SELECTED = ("lakeplan_maintain: select names no model, so nothing would be maintained. Fix: name them, as in "
                 "`dbt run-operation lakeplan_maintain --args '{select: [a, b]}'`; models with `maintenance`: current.")


@pytest.mark.parametrize("select, fragments", [
    ("{select: [current, curent]}", [UNKNOWN]),
    ("{select: plain}", [WITHOUT]),
    ("{select: [plain, curent]}", [WITHOUT, UNKNOWN]),  # every problem at once
    ("{}", [NONE_SELECTED]),  # a scheduled job whose arguments lost the list: it did nothing, and said nothing
    ("{select: []}", [NONE_SELECTED]),
], ids=["unknown_model", "without_maintenance", "both", "no_select", "empty_select"])  # fmt: skip
def test_lakeplan_maintain_refuses_a_selection_it_cannot_maintain(maint_select, select, fragments):
    project = maint_select  # the module's one project
    # not DbtProject.fail: dbt's run-operation logs every error it catches with its Python stack at debug level
    result, log = project.invoke("run-operation", "lakeplan_maintain", "--args", select)
    assert not result.success and "lakeplan maintenance of" not in log
    assert [fragment for fragment in fragments if fragment not in project.shown] == [], project.shown
    assert "Traceback" not in project.shown and not JAVA_FRAME.search(project.shown)


def test_expiry_keeps_the_snapshots_a_new_rows_reader_has_not_read(make_project, spark):
    """A table whose own maintenance expires every snapshot but the last, read by a target's member with new_rows: in
    the same `dbt run` the table appends, expires, and the target then reads what is new since its last write. The
    snapshot the target consumed last, and those after it, stay; older ones go. Without that the target's `count`
    would stop on every run (its consumed snapshot expired)."""
    events = ("{{ config(materialized='incremental', incremental_strategy='append', post_hook=\"" + HOOK + "\", "
              "maintenance={'small_files': 1000, 'expire_after_hours': 0, 'keep_snapshots': 1}) }}\n"
              "select " + N + " as id, 7 as customer")  # fmt: skip
    project = make_project("maint_readers", {
        "models/events.sql": events,
        "models/tally.sql": "{{ partial_update_target() }}",
        "models/tally.yml": target_yml("tally", {"customer": "int", "seen": "bigint", "last_id": "int"},
                                       rules={"seen": "count"}, unique_key="customer"),
        "models/seen.sql": member("tally", "select customer, id as seen from {{ lakeplan.new_rows(ref('events')) }}"),
        "models/latest.sql": member("tally", "select customer, max(id) as last_id from {{ ref('events') }} where "
                                    "customer in {{ lakeplan.changed_keys(ref('events'), 'customer') }} group by 1"),
    })  # fmt: skip
    events_table, tally_table = "lakeplan_maint_readers.events", "lakeplan_maint_readers.tally"
    for n in (1, 2, 3):  # the third run is the first whose expiry removes a snapshot
        project.run("run", n=n)
        assert rows(spark, tally_table) == [(7, n, n)], n  # each event counted once
        # the events' maintenance ran before the tally read: it kept the snapshot the tally had consumed and the new
        # one, and expired the older ones
        assert len(operations(spark, events_table)) == min(n, 2), n
    # the log names the members and what each reads with, not their target's table
    assert "those `latest` read with changed_keys, `seen` read with new_rows last and since" in project.shown


NESTED = ("{{ config(materialized='upsert', unique_key='id', change_mode='auto', maintenance=%s%s) }}\n"
          "select id, map('n', val) as counts, array(cast(val as string)) as labels, named_struct('v', val) as info, "
          "'+I' as _op from {{ source('raw', 'updates') }}")
# each batch's rows, the source `updates` of that run: six rows, then one row changed per batch
BATCHES = {1: [(i, 0) for i in range(1, 7)], 2: [(1, 2)], 3: [(2, 3)], 4: [(3, 4)]}


def run_batch(project, spark, table, batch, batches=BATCHES):
    """`dbt run` of `table` with the source holding that batch's rows."""
    schema = table.split(".")[0]
    sources = source(spark, schema, "updates", "id int, val int", batches[batch])
    write_files(project.path, {"models/sources.yml": sources})
    project.run("run")


def live_delete_files(spark, table):
    """The delete files of the table a live data file needs: those naming (by their file_path bounds) a data file
    still in the table."""
    return spark.sql(f"select count(*) from {table}.delete_files where cast(lower_bounds[2147483546] as string) in "
                     f"(select file_path from {table}.data_files)").collect()[0][0]  # fmt: skip


def test_a_merge_on_read_upsert_with_map_and_array_columns_is_maintained(make_project, spark):
    """Iceberg 1.10.2's rewrite_position_delete_files fails on a table with a map or array column
    (apache/iceberg#14619): each update of an `auto` upsert lands as a position delete; the second crosses
    `deleted_share` and the write compacts by rewrite_data_files, which applies the deletes, and keeps the applied
    delete files (no live file needs them) rather than call that procedure. The figures (deleted share, delete
    files) and `auto`'s row count then count only the deletes a live data file needs: the table holds 6 rows, not 6
    less the 2 deletes left behind."""
    maintenance = {"deleted_share": 0.25, "delete_files": 3, "small_files": 1000, "expire_after_hours": None}
    project = make_project("maint_nested", {"models/current.sql": NESTED % (maintenance, "")})
    table = "lakeplan_maint_nested.current"
    for batch in (1, 2, 3, 4):
        run_batch(project, spark, table, batch)
        if batch > 1:  # one row of the table's six changes: merge-on-read, counted against all six
            assert "lands its change merge-on-read (the inputs hold 1 rows against the table's 6, " in project.shown
        if batch == 3:  # 2 of 8 data rows deleted: 25.0%
            assert ("lakeplan maintenance of `current`: rewrite_data_files (25.0% of rows deleted (threshold 25.0%)): "
                    in project.shown)  # fmt: skip
            assert "rewrite_position_delete_files" not in project.shown
            assert "replace" in operations(spark, table) and live_delete_files(spark, table) == 0
    assert [row[:2] for row in rows(spark, table)] == [(1, {"n": 2}), (2, {"n": 3}), (3, {"n": 4}), (4, {"n": 0}),
                                                       (5, {"n": 0}), (6, {"n": 0})]  # fmt: skip
    # batch 4 left one live delete of its row; what the compaction applied stays, and counts for nothing
    assert files(spark, table)[2] > live_delete_files(spark, table) == 1
    project.run("run-operation", "lakeplan_maintain", "--args", "{select: current}")
    assert ("small data files (threshold 1000), 14.3% of rows deleted (threshold 25.0%), 1 delete files (threshold 3)"
            in project.shown)  # fmt: skip


def test_many_delete_files_of_a_table_with_a_map_column_are_applied_by_rewriting_data_files(make_project, spark):
    """`delete_files` crossed on a table rewrite_position_delete_files cannot compact: rewrite_data_files rewrites the
    data files that carry deletes, and the log line says why. Id 1 changes twice: its first change is a delete in
    the first data file, its second one in the file the first change wrote (one delete file per data file)."""
    maintenance = {"deleted_share": 1, "delete_files": 2, "small_files": 1000, "expire_after_hours": None}
    project = make_project("maint_nested_files", {"models/current.sql": NESTED % (maintenance, "")})
    table = "lakeplan_maint_nested_files.current"
    for batch in (1, 2, 3):
        run_batch(project, spark, table, batch, {**BATCHES, 3: [(1, 3)]})
    assert ("rewrite_data_files (2 delete files (threshold 2), applied: the table has a map or array column, on which "
            "rewrite_position_delete_files fails): ") in project.shown  # fmt: skip
    assert live_delete_files(spark, table) == 0
    assert [row[:2] for row in rows(spark, table)][:3] == [(1, {"n": 3}), (2, {"n": 0}), (3, {"n": 0})]


def test_maintenance_that_fails_after_the_write_is_reported_as_such_and_the_run_goes_on(make_project, spark):
    """Expiry on a table with `gc.enabled` false fails in Iceberg; after the write that is a warning saying the write
    committed, which procedure failed and what to do; the rows are in the table and the run succeeds. Under
    lakeplan_maintain, maintenance is the job: it fails, naming the model and the procedure."""
    maintenance = {"expire_after_hours": 0, "keep_snapshots": 1}
    project = make_project("maint_fails", {
        "models/current.sql": NESTED % (maintenance, ", tblproperties={'gc.enabled': 'false'}")})
    table = "lakeplan_maint_fails.current"
    run_batch(project, spark, table, 1)
    run_batch(project, spark, table, 2)
    assert ("lakeplan maintenance of `current` failed after its write committed (the rows are written; only the upkeep "
            "stopped): expire_snapshots failed: ") in project.shown  # fmt: skip
    assert ("Fix: correct the cause, then run `dbt run-operation lakeplan_maintain --args '{select: current}'`; or set "
            "`maintenance: {after_write: false}` and schedule that.") in project.shown  # fmt: skip
    assert not JAVA_FRAME.search(project.shown)
    assert (1, {"n": 2}) in [row[:2] for row in rows(spark, table)]
    result, _ = project.invoke("run-operation", "lakeplan_maintain", "--args", "{select: current}")
    assert not result.success
    assert "lakeplan_maintain: maintenance of `current` failed: expire_snapshots failed: " in project.shown
    assert "Traceback" not in project.shown and not JAVA_FRAME.search(project.shown)
