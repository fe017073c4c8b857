"""`change_mode: delta` (issue 47): twin targets fed the same members' rows, one MERGEd in place and one appending
its change as delta rows; after every run the merged view (what `ref()` reads) holds the in-place table's rows, and
the delta twin's run appended its change without rewriting a stored row."""

import json
import re
import threading
import time
from decimal import Decimal

from tests.conftest import command_values, env_value, given, snapshots
from tests.integration.test_explain import explain
from tests.integration.test_merge_rules import (AFTER_FIRST_RUN, AFTER_SECOND_RUN, COUNTERS, FLOATS_PROJECT, PAIMON_RESULTS,
                                               SEQUENCE_PROJECT, by_step, select)
from tests.integration.test_no_silent_loss import COUNTER as SUMS
from tests.integration.test_partial_update import IGNORE, REMOVE_RECORD, REUSE, member, rows, target_yml

SCHEMA = "lakeplan_delta_mode"


def twin(files: dict[str, str], target: str, suffix: str = "delta", config: str = "") -> dict[str, str]:
    """The target's files again as `<target>_<suffix>` in change_mode delta (another where a command gives
    `<suffix>_mode`; and `config`, more of its config as JSON), its members renamed `<suffix>_<member>`."""
    twins, name = {}, f"{target}_{suffix}"
    for path, text in files.items():
        if f"'{target}'" in text:  # a member
            twins[re.sub(r"models/", f"models/{suffix}_", path)] = text.replace(f"'{target}'", f"'{name}'")
        elif path in (f"models/{target}.sql", f"models/{target}.yml"):
            text = text.replace(f"name: {target}", f"name: {name}").replace(
                '"unique_key": "id"', f'"unique_key": "id", "change_mode": "{{{{ {env_value(f"{suffix}_mode", "delta")} }}}}"{config}')
            twins[path.replace(f"/{target}.", f"/{name}.")] = text
    return twins


def view_identity(spark, view) -> str:
    """The view's Iceberg identity (its uuid) and metadata file: both change when it is made again."""
    [properties] = [row.data_type for row in spark.sql(f"describe table extended {view}").collect()
                    if row.col_name == "Table Properties"]
    return re.search(r"metadata_location=[^,]*", properties)[0] + re.search(r"uuid=[^,\]]*", properties)[0]


def read_until(spark, view, done: threading.Event, reads: list) -> None:
    """Reads `view` again and again, each read's (start, rows), until `done` is set, and once after."""
    while True:
        stop = done.is_set()
        reads.append((time.time(), rows(spark, view)))
        if stop:
            return


def last_commit(spark, table) -> dict:
    return spark.sql(f"select operation, summary from {table}.snapshots order by committed_at desc limit 1").collect()[0]


def test_the_merged_view_holds_the_in_place_rows_after_every_run_and_the_stored_rows_are_not_rewritten(make_project, spark):
    # bucketed by the key: the merged view folds without a shuffle
    buckets = f"bucket({{{{ {env_value('buckets', 4)} }}}}, id)"
    files = {**COUNTERS, **twin(COUNTERS, "counters", config=f', "partition_by": ["{buckets}"]'),
             "models/reads_counters.sql": "select * from {{ ref('counters_delta') }}"}
    project = make_project("delta_mode", files)
    table, merged = f"{SCHEMA}.counters", f"{SCHEMA}.counters_delta__lakeplan_merged"
    project.run("run", step=1)
    assert rows(spark, merged) == rows(spark, table)
    before = snapshots(spark, f"{SCHEMA}.counters_delta")
    views = [view_identity(spark, f"{SCHEMA}.counters_delta__lakeplan_{view}") for view in ("merged", "base")]
    project.run("run", step=2)
    # the views stay as they were (dropping and making them again left readers a moment without them)
    assert [view_identity(spark, f"{SCHEMA}.counters_delta__lakeplan_{view}") for view in ("merged", "base")] == views
    assert rows(spark, table) == AFTER_SECOND_RUN
    assert rows(spark, merged) == AFTER_SECOND_RUN
    assert snapshots(spark, f"{SCHEMA}.counters_delta") == before + 1  # one commit: an append of the change alone
    commit = last_commit(spark, f"{SCHEMA}.counters_delta")
    assert commit.operation == "append" and commit.summary["added-records"] == "2"
    assert rows(spark, f"{SCHEMA}.counters_delta__lakeplan_base") == AFTER_FIRST_RUN  # the stored rows alone: the lag
    assert rows(spark, f"{SCHEMA}.reads_counters") == AFTER_SECOND_RUN  # ref() reads the merged table
    plan = spark.sql(f"explain select * from {merged}").collect()[0][0]
    # the stored rows read once and not shuffled: joined bucket by bucket with the delta rows, hashed
    assert "groupedBy=id_bucket" in plan and "Exchange" not in plan, plan
    assert "ShuffledHashJoin" in plan and "FullOuter, BuildRight" in plan and "LeftAnti" not in plan, plan
    # a rebuild with another bucket count stops before it writes: Iceberg would name both fields id_bucket
    log = project.fail("run", "--full-refresh", "-s", "counters_delta", step=2, buckets=8)
    assert ("`counters_delta` sets partition_by (bucket(8, id)), but its table lakeplan_delta_mode.counters_delta is "
            "partitioned by bucket(4, id)") in log, log
    assert "Fix: drop the table first (`drop table lakeplan_delta_mode.counters_delta`, e.g. `spark-sql -e" in log
    assert snapshots(spark, f"{SCHEMA}.counters_delta") == before + 1
    assert rows(spark, merged) == AFTER_SECOND_RUN


def test_sequence_groups_fold_as_they_merge(make_project, spark):
    project = make_project("delta_groups", {**SEQUENCE_PROJECT, **twin(SEQUENCE_PROJECT, "grouped")})
    for step, expected in enumerate(PAIMON_RESULTS, 1):
        project.run("run", "--select", "grouped+", "g_writer+", "grouped_delta+", "delta_g_writer+", step=step)
        assert rows(spark, "lakeplan_delta_groups.grouped") == [expected]
        assert rows(spark, "lakeplan_delta_groups.grouped_delta__lakeplan_merged") == [expected]
    delta = spark.sql("select _last_updated_sequence_number from lakeplan_delta_groups.grouped_delta where lakeplan_delta")
    assert len({row[0] for row in delta.collect()}) == 2  # runs 2 and 3 appended, each its commit; run 1 created the table


# each run's one row of key 1: the order of the runs decides v (last_non_null) and w (last_value: a NULL overwrites)
STEPS = [{"id": 1, "v": "'a'", "w": "'x'", "hits": 1}, {"id": 1, "v": "'b'", "w": "null", "hits": 2},
         {"id": 1, "v": "null", "w": "'z'", "hits": 3}, {"id": 2, "v": "'d'", "w": "null", "hits": 4}]
LATEST = {
    "models/latest.sql": "{{ partial_update_target() }}",
    "models/latest.yml": target_yml("latest", {"id": "bigint", "v": "string", "w": "string", "hits": "bigint"},
                                    rules={"w": "last_value", "hits": "sum"}),
    "models/latest_m.sql": member("latest", "\n".join(
        f"{{% if {env_value('step', 1)} == '{i}' %}}{select([row])}{{% endif %}}" for i, row in enumerate(STEPS, 1))),
}


def test_runs_fold_in_the_order_they_were_written_and_compaction_folds_them_in_one_commit(make_project, spark):
    # small_files 2: crossed at every run, but the fold is a delta target's compaction (a rewrite_data_files would
    # put delta rows into the stored rows' files, which every merged read then reads whole)
    compacts = twin(LATEST, "latest", "folds", ', "maintenance": {"delta_runs": 2, "small_files": 2}')
    scheduled = twin(LATEST, "latest", "scheduled", ', "maintenance": {"delta_runs": 2, "after_write": false}')
    reads = {"models/reads_latest_delta.sql": "select * from {{ ref('latest_delta') }}"}
    project = make_project("delta_order", {**LATEST, **twin(LATEST, "latest"), **compacts, **scheduled, **reads})
    folds = "lakeplan_delta_order.latest_folds"
    delta_rows = []
    operations = {}
    for step in range(1, len(STEPS) + 1):
        before = snapshots(spark, folds) if step > 1 else 0
        project.run("run", step=step)
        operations[step] = [row[0] for row in spark.sql(
            f"select operation from {folds}.snapshots order by committed_at").collect()][before:]
        expected = rows(spark, "lakeplan_delta_order.latest")
        assert rows(spark, "lakeplan_delta_order.latest_delta__lakeplan_merged") == expected
        assert rows(spark, f"{folds}__lakeplan_merged") == expected
        delta_rows.append(spark.sql(f"select count(*) from {folds} where lakeplan_delta").collect()[0][0])
        folded = "`latest_folds` folded 2 runs of delta rows into its stored rows (maintenance.delta_runs 2)."
        assert (folded in project.shown) == (step == 3)
        if step == 2:  # explain shows the delta's size, and reads without writing
            before_explain = snapshots(spark, "lakeplan_delta_order.latest_delta")
            code, _, models = explain(project, "--select", "latest_delta")
            assert code == 0 and snapshots(spark, "lakeplan_delta_order.latest_delta") == before_explain
            assert models["latest_delta"]["change"]["lands"] == (
                "delta (appends the change: 1 delta row from 1 run, folded into the stored rows at 10 runs); its "
                "table is not bucketed by its key (not bucketed or partitioned), so each read of the merged rows "
                "shuffles the whole table by the key to join it with its delta rows. Fix: `partition_by: "
                "['bucket(N, <key>)']`, then one --full-refresh (docs/delta-mode.md)")
    assert rows(spark, "lakeplan_delta_order.latest") == [(1, "b", "z", 6), (2, "d", None, 4)]
    # runs 2 and 3 are two runs of delta rows: folded after run 3's write, in one overwrite; run 4 is delta again
    assert delta_rows == [0, 1, 0, 1]
    assert operations[2] == operations[4] == ["append"] and operations[3] == ["append", "overwrite"]
    assert rows(spark, f"{folds}__lakeplan_base") == [(1, "b", "z", 6)]  # the folded rows; key 2 is run 4's delta
    # after_write false: the writes only append; lakeplan_maintain folds the four runs' delta rows, in one commit
    scheduled = "lakeplan_delta_order.latest_scheduled"
    assert spark.sql(f"select count(*) from {scheduled} where lakeplan_delta").collect()[0][0] == 3  # runs 2-4
    # the runs are counted from the files' metadata; a compaction outside lakeplan (Iceberg's rewrite_data_files) puts
    # delta and stored rows in one file, whose runs are then counted over its rows
    spark.sql(f"call system.rewrite_data_files(table => '{scheduled}', options => map('rewrite-all', 'true'))").collect()
    assert spark.sql(f"select count(*) from {scheduled}.files").collect()[0][0] == 1
    before = snapshots(spark, scheduled)
    # a reader reading the merged view again and again while the compaction runs: every read whole
    done, reads = threading.Event(), []
    reader = threading.Thread(target=read_until, args=(spark, f"{scheduled}__lakeplan_merged", done, reads))
    started = time.time()
    reader.start()
    try:
        project.run("run-operation", "lakeplan_maintain", "--args", "{select: latest_scheduled}")
    finally:
        done.set()
        reader.join()
    expected = rows(spark, "lakeplan_delta_order.latest")
    assert [read for _, read in reads if read != expected] == []
    [committed] = spark.sql(f"select cast(committed_at as double) from {scheduled}.snapshots "
                            "order by committed_at desc limit 1").collect()  # the fold's
    assert any(started < start < committed[0] for start, _ in reads) and reads[-1][0] > committed[0]
    assert "`latest_scheduled` folded 3 runs of delta rows into its stored rows (maintenance.delta_runs 2)." in project.shown
    assert snapshots(spark, scheduled) == before + 1
    assert spark.sql(f"select count(*) from {scheduled} where lakeplan_delta").collect()[0][0] == 0
    assert rows(spark, f"{scheduled}__lakeplan_merged") == rows(spark, f"{scheduled}__lakeplan_base") == rows(
        spark, "lakeplan_delta_order.latest")

    # leaving delta mode with delta rows not folded: refused before anything is written, as one sentence
    table = "lakeplan_delta_order.latest_delta"
    before = snapshots(spark, table)
    log = project.fail("run", "--select", "latest_delta", step=4, delta_mode="copy_on_write")
    assert ("partial-update target `latest_delta` is now in change_mode copy_on_write, but its table " + table
            + " holds 3 delta rows from change_mode delta not folded yet") in " ".join(log.split())
    # the fix folds without a write, so it holds where the write would not fold (maintenance.after_write false)
    assert ("Fix: set `change_mode: delta` back with `maintenance: {delta_runs: 1}`, fold them with dbt run-operation "
            "lakeplan_maintain --args '{select: latest_delta}' (it writes no new rows), then set the new change_mode "
            "and remove `delta_runs` (and `maintenance` itself where it held nothing else: an empty one turns on the "
            "default upkeep); or rebuild it: dbt run --full-refresh -s latest_delta.") in " ".join(log.split())
    assert snapshots(spark, table) == before
    # the fix taken: folded, it leaves delta mode; its views and lakeplan's columns go (`select *` through ref() shows
    # the declared columns) and its rows stay. Its new change_mode makes step 4 a new write: key 2's sum counts 4 again
    yml = project.path / "models" / "latest_delta.yml"
    declared = yml.read_text()
    yml.write_text(declared.replace('"unique_key": "id",', '"unique_key": "id", "maintenance": {"delta_runs": 1},'))
    project.run("run-operation", "lakeplan_maintain", "--args", "{select: latest_delta}")
    yml.write_text(declared)
    expected = [(i, v, w, hits * 2 if i == 2 else hits) for i, v, w, hits in rows(spark, "lakeplan_delta_order.latest")]
    project.run("run", "--select", "latest_delta", "reads_latest_delta", step=4, delta_mode="copy_on_write")
    assert [column.name for column in spark.table(table).schema] == ["id", "v", "w", "hits"]
    assert rows(spark, table) == rows(spark, "lakeplan_delta_order.reads_latest_delta") == expected
    assert [view.viewName for view in spark.sql("show views in lakeplan_delta_order").collect()
            if view.viewName.startswith("latest_delta__") and not view.isTemporary] == []
    # and enters it again (step 3 a new write too: key 1's sum counts 3 again)
    project.run("run", "--select", "latest_delta", step=3)
    assert rows(spark, f"{table}__lakeplan_merged") == [(1, "b", "z", 9), (2, "d", None, 8)]

    # a bucketing its YAML declares, which the table built before it does not have: explain's fix says so
    yml = project.path / "models" / "latest_delta.yml"
    yml.write_text(yml.read_text().replace('"unique_key": "id",', '"unique_key": "id", "partition_by": ["bucket(4, id)"],'))
    code, _, models = explain(project, "--select", "latest_delta")
    assert code == 0 and models["latest_delta"]["change"]["lands"].endswith(
        "Fix: one --full-refresh puts its declared `partition_by: ['bucket(4, id)']` in effect (docs/delta-mode.md)")


def test_several_groups_and_a_changelog_s_deletes_fold_as_they_merge_under_each_on_delete(make_project, spark):
    # the delta twin has an enforced contract too: the table's own lakeplan_* columns are not the contract's
    project = make_project("delta_groups_deletes", {**REUSE, **twin(REUSE, "wide", config=', "contract": {"enforced": true}')})
    schema, both = "lakeplan_delta_groups_deletes", ("--select", "wide+", "wide_delta+")
    table, merged = f"{schema}.wide_delta", f"{schema}.wide_delta__lakeplan_merged"
    project.run("build", "--exclude", "other+")
    project.run("run", *both)  # the same rows again, onto the stored ones
    assert rows(spark, f"{schema}.wide") == REMOVE_RECORD
    assert rows(spark, merged) == REMOVE_RECORD
    delta = spark.sql(f"select distinct lakeplan_group from {table} where lakeplan_delta")
    assert sorted(row[0] for row in delta.collect()) == [1, 2, 3]

    # --full-refresh rebuilds the table from this run's rows alone: stored rows, no delta rows
    project.run("run", *both, "--full-refresh", on_delete="ignore")
    assert rows(spark, f"{schema}.wide") == rows(spark, merged) == IGNORE
    assert spark.sql(f"select count(*) from {table} where lakeplan_delta").collect()[0][0] == 0
    project.run("run", *both, on_delete="ignore")  # delta rows again, under ignore
    assert rows(spark, merged) == rows(spark, f"{schema}.wide") == IGNORE
    delta_rows = spark.sql(f"select count(*) from {table} where lakeplan_delta").collect()[0][0]
    assert delta_rows > 0

    # error: refused before anything is written; --empty writes nothing
    before = snapshots(spark, table)
    log = project.fail("run", "--select", "wide_delta", on_delete="error")
    assert "Member `delta_wide_e_cdc` of partial-update target `wide_delta` is a changelog" in log
    project.run("run", "--select", "wide_delta", "--empty", on_delete="ignore")
    assert snapshots(spark, table) == before
    assert rows(spark, merged) == IGNORE


def wide(name: str, columns: list[str]) -> dict[str, str]:
    """A target of bigint `columns` (besides `id`), its member writing each of them `step` * its place, in delta mode."""
    step = f"{{{{ {env_value('step', 1)} }}}}"
    values = ", ".join(f"{i} * {step} as {column}" for i, column in enumerate(columns, 1))
    return {f"models/{name}.sql": "{{ partial_update_target() }}",
            f"models/{name}.yml": target_yml(name, {"id": "bigint", **{c: "bigint" for c in columns}},
                                             rules={columns[0]: "sum", columns[-1]: "sum"}, change_mode="delta"),
            f"models/{name}_m.sql": member(name, f"select id, {values} from (select explode(array(1, 2)) as id)")}


def test_a_wide_target_s_merged_view_fits_the_embedded_catalog_or_is_refused_before_anything_is_written(make_project,
                                                                                                       spark):
    # the bench's shape (10 members of 12 columns, as one member here) fits; 150 long names would not fit Derby's
    # 32,700 characters of view text, which failed the CREATE VIEW after the write had committed
    fits = [f"m{m}_c{c}" for m in range(10) for c in range(12)]
    too_long = [f"a_measure_with_a_long_name_{i:03}" for i in range(150)]
    project = make_project("delta_wide", {**wide("fits", fits), **wide("too_wide", too_long)})
    project.run("run", "--select", "fits", step=1)
    # the bound on the sums reads Iceberg's column metrics, which it keeps past the 100th column when told (the 121st
    # column, and lakeplan_delta): no stored row is read
    result, log = project.invoke("run", "--select", "fits", step=2)
    assert result.success and "the bound its column metrics allow" in log and "count(lakeplan_merged)" not in log, log
    merged = spark.sql("select * from lakeplan_delta_wide.fits__lakeplan_merged order by id").collect()
    assert [row.m0_c0 for row in merged] == [3, 3] and [row.m9_c11 for row in merged] == [360, 360]  # sums
    assert [row.m9_c10 for row in merged] == [238, 238]  # last_non_null
    log = " ".join(project.fail("run", "--select", "too_wide").split())
    assert ("partial-update target `too_wide` is in change_mode delta over 151 columns, and its "
            "view lakeplan_delta_wide.too_wide__lakeplan_folded (of the merged rows) would be") in log
    assert "more than the embedded catalog (Derby) keeps for a view (32700); nothing was written." in log
    assert not spark.catalog.tableExists("lakeplan_delta_wide.too_wide")


# the key declared after a column of its type: the merged view puts the rows it reads as they are and the rows it
# folds together by position, so each half must keep the declared order
KEY_LAST = {
    "models/key_last.sql": "{{ partial_update_target() }}",
    "models/key_last.yml": target_yml("key_last", {"total": "bigint", "id": "bigint"}, rules={"total": "sum"}),
    "models/key_last_m.sql": member("key_last", by_step(select([{"id": 1, "total": 10}, {"id": 2, "total": 20}]),
                                                        select([{"id": 2, "total": 5}]))),
}


def test_a_key_declared_after_other_columns_keeps_every_value_in_its_column(make_project, spark):
    project = make_project("delta_key_last", {**KEY_LAST, **twin(KEY_LAST, "key_last")})
    for step in (1, 2):
        project.run("run", step=step)
    merged = spark.sql("select * from lakeplan_delta_key_last.key_last_delta__lakeplan_merged")
    assert merged.columns == ["total", "id"]
    assert sorted(map(tuple, merged.collect())) == rows(spark, "lakeplan_delta_key_last.key_last") == [(10, 1), (25, 2)]


# a counter that sends only what its target has not counted yet, reading the target (the example's order counter)
COUNTER = {
    "models/tally.sql": "{{ partial_update_target() }}",
    "models/tally.yml": target_yml("tally", {"id": "bigint", "n": "bigint", "last_v": "bigint"}, rules={"n": "sum"}),
    "models/tally_m.sql": member("tally", "{% set seen = partial_update_target_relation() %}\n"
                                 "select o.id, count(*) as n, max(o.v) as last_v\n"
                                 f"from (select 1 as id, explode(sequence(1, 2 * {{{{ {env_value('step', 1)} }}}})) as v) as o\n"
                                 "{% if seen %}left join {{ seen }} as t on o.id = t.id where o.v > coalesce(t.last_v, 0)"
                                 "{% endif %}\ngroup by o.id"),
}


def test_a_member_reading_its_target_reads_the_merged_rows(make_project, spark):
    project = make_project("delta_counter", {**COUNTER, **twin(COUNTER, "tally")})
    for step in (1, 2, 3):
        project.run("run", step=step)
        assert rows(spark, "lakeplan_delta_counter.tally_delta__lakeplan_merged") == rows(
            spark, "lakeplan_delta_counter.tally") == [(1, 2 * step, 2 * step)]


# a sum over an Iceberg event log read with new_rows: each event counts once
EVENTS = "lakeplan_delta_rows.events"
SPENT = {
    "models/sources.yml": "version: 2\nsources:\n  - {name: raw, schema: lakeplan_delta_rows, tables: [{name: events}]}\n",
    "models/spent.sql": "{{ partial_update_target() }}",
    "models/spent.yml": target_yml("spent", {"id": "bigint", "total": "bigint"}, rules={"total": "sum"}),
    "models/spent_m.sql": member("spent", "select id, amount as total from {{ lakeplan.new_rows(source('raw', 'events')) }}"),
}


def head(spark, table) -> int:
    return spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").collect()[0][0]


def test_new_rows_apply_each_event_once_and_a_write_stopped_before_its_commit_is_not_taken_for_one_by_a_fold(
        make_project, spark):
    # the delta twin's fold only from lakeplan_maintain, at every run of delta rows
    project = make_project("delta_rows", {**SPENT, **twin(SPENT, "spent", config=', "maintenance": '
                                                          '{"delta_runs": 1, "after_write": false}')})
    spark.sql("create database if not exists lakeplan_delta_rows")
    spark.sql(f"create or replace table {EVENTS} (id bigint, amount bigint) using iceberg")
    twin_table, merged = "lakeplan_delta_rows.spent_delta", "lakeplan_delta_rows.spent_delta__lakeplan_merged"
    for events, expected in [("(1, 5), (2, 7)", [(1, 5), (2, 7)]), ("(1, 3)", [(1, 8), (2, 7)]), ("", None)]:
        if events:
            spark.sql(f"insert into {EVENTS} values {events}")
        project.run("run")
        assert rows(spark, merged) == rows(spark, "lakeplan_delta_rows.spent") == (expected or [(1, 8), (2, 7)])
    # a write killed after its pending record of what it read (event (2, 4)), before its commit: then
    # lakeplan_maintain folds, a commit after the write's base that is not the write's
    spark.sql(f"insert into {EVENTS} values (2, 4)")
    pending = {"base": head(spark, twin_table), "inputs": {EVENTS: head(spark, "lakeplan_delta_rows.events")}}
    spark.sql(f"alter table {twin_table} set tblproperties ('lakeplan.consumed.pending' = '{json.dumps(pending)}')")
    project.run("run-operation", "lakeplan_maintain", "--args", "{select: spent_delta}")
    assert "`spent_delta` folded 1 run of delta rows into its stored rows" in project.shown
    project.run("run")
    assert rows(spark, merged) == rows(spark, "lakeplan_delta_rows.spent") == [(1, 8), (2, 11)]  # (2, 4) once


def test_a_sum_that_would_overflow_the_merged_rows_stops_the_write_also_where_only_the_delta_rows_make_it(
        make_project, spark):
    """The in-place write refuses a sum the column cannot hold; the delta write must too, counting the delta rows not
    folded yet: an appended change that overflowed would fail every read of the merged view after it."""
    files = {**SUMS, **twin(SUMS, "counter", config=', "maintenance": {"delta_runs": 100}')}
    project = make_project("delta_overflow", files)
    table, delta = "lakeplan_delta_overflow.counter", "lakeplan_delta_overflow.counter_delta"
    merged = f"{delta}__lakeplan_merged"

    def refused(log: str, would_become: str) -> None:
        for model in ("counter", "counter_delta"):
            assert f"lakeplan: `{model}`.{would_become}" in log, log
        assert (snapshots(spark, delta), rows(spark, merged)) == (before, rows(spark, table))

    project.run("run")
    # within the bound Iceberg's column metrics give (the stored 999.00 and 2, no delta rows): no stored row is read
    result, log = project.invoke("run", add="0.00")
    assert result.success and "the bound its column metrics allow" in log and "count(lakeplan_merged)" not in log, log
    assert rows(spark, merged) == rows(spark, table) == [(1, Decimal("999.00"), 4)]
    before = snapshots(spark, delta)
    # the stored value alone: 999.00 + 5.00 does not fit decimal(5,2); 4 + 9223372036854775806 not bigint
    refused(project.fail("run", add="5.00"), "`total` (merge rule sum) would become 999.00 + 5.00 for key {\"id\":1}")
    refused(project.fail("run", add=0, hits=9223372036854775806, more=0),
            "`hits` (merge rule sum) would become 4 + 9223372036854775806 for key {\"id\":1}")
    project.run("run", add="-9.00")
    assert rows(spark, merged) == rows(spark, table) == [(1, Decimal("990.00"), 6)]
    # 999.00 stored + 9.99 would not fit, but the delta row's -9.00 counts: 999.99 does
    project.run("run", add="9.99", hits=0, more=0)
    before = snapshots(spark, delta)
    assert rows(spark, merged) == rows(spark, table) == [(1, Decimal("999.99"), 6)]
    # 999.00 stored + 0.01 would fit; with the delta rows' 0.00, -9.00 and +9.99 it does not
    refused(project.fail("run", add="0.01", hits=0, more=0), "`total` (merge rule sum) would become")
    assert spark.sql(f"select count(*) from {delta} where lakeplan_delta").collect()[0][0] == 3
    # a new member's sum column: the write adds it first, and its bound finds no value in it yet
    yml = project.path / "models" / "counter_delta.yml"
    yml.write_text(yml.read_text() + "      - {name: extra, data_type: 'int', meta: {merge: sum}}\n")
    (project.path / "models" / "delta_extra.sql").write_text(
        member("counter_delta", "select cast(1 as bigint) as id, 5 as extra"))
    project.run("run", "--select", "counter_delta", add="0.00", hits=0, more=0)
    assert rows(spark, merged) == [(1, Decimal("999.99"), 6, 5)]


def test_a_product_and_a_double_sum_that_would_overflow_once_folded_stop_the_delta_write(make_project, spark):
    """A `product` has no bound from its values' magnitudes (its check reads the stored rows), a double's sum
    overflows to infinity: the delta twin stops where the in-place target does, naming the key, and appends nothing."""
    project = make_project("delta_floats", {**FLOATS_PROJECT, **twin(FLOATS_PROJECT, "floats")})
    table, delta = "lakeplan_delta_floats.floats", "lakeplan_delta_floats.floats_delta"
    project.run("run", p="1e200", s="1e308")
    project.run("run", p="2", s="-1e308", c=7)
    # a product's change is checked against the stored rows before the append: compile shows the check, labelled
    compiled = project.run("compile", "--select", "floats_delta", p="3").result.results[0].node.compiled_code
    label = "-- lakeplan: checks that this run's change, folded onto the stored and delta rows of p, s, c, stays within "
    assert label in compiled and compiled.index(label) < compiled.index("insert into " + delta), compiled
    before, stored = snapshots(spark, delta), rows(spark, table)
    assert rows(spark, f"{delta}__lakeplan_merged") == stored == [(1, 2e200, 0.0, 14)]  # both members send c
    for values, sentence in [({"p": "1e200"}, "`.`p` (merge rule product) would become 2.0E200 * 1.0E200 for key"),
                             ({"s": "1.7e308", "p": "1"}, None), ({"s": "1.7e308"}, "`.`s` (merge rule sum) would become")]:
        if sentence is None:  # 0.0 + 1.7e308 fits: the bound from 1e308 and -1e308 would not tell, the fold does
            project.run("run", **values)
            before, stored = snapshots(spark, delta), rows(spark, table)
            continue
        log = project.fail("run", **values)
        assert f"lakeplan: `floats{sentence}" in log and f"lakeplan: `floats_delta{sentence}" in log, log
        # no wider type holds a double: the fix says so, and how a product is kept instead
        logarithm = ", or send the logarithm of each factor under merge rule sum in place of the product"
        fix = ("Fix: no Spark number type holds a larger value than double: make the values smaller where "
               f"`floats_delta`'s members compute them{logarithm if 'product' in sentence else ''}.")
        assert fix in " ".join(log.split()), log
        assert (snapshots(spark, delta), rows(spark, f"{delta}__lakeplan_merged")) == (before, stored)
    assert stored == [(1, 2e200, 1.7e308, 14)]


CLICKS = {
    "models/clicks.sql": "{{ partial_update_target() }}",
    "models/clicks.yml": target_yml("clicks", {"id": "bigint", "n": "int"}, rules={"n": "sum"}, change_mode="delta",
                                    maintenance={"delta_runs": 100}),
    "models/clicks_m.sql": member("clicks", f"select cast(1 as bigint) as id, cast({given('n', 2000000000)} as int) as n"),
}


def test_a_sum_near_its_type_s_range_reads_no_stored_row_while_its_delta_rows_keep_it_in_range(make_project, spark):
    """The bound adds the largest stored value once and the largest delta value once per run and group: a stored
    2,000,000,000 in an int column with small delta rows is checked without reading a stored row, run after run."""
    project = make_project("delta_clicks", CLICKS)
    merged = "lakeplan_delta_clicks.clicks__lakeplan_merged"
    project.run("run")
    for n in (1, 2, 3):
        result, log = project.invoke("run", n=n)
        assert result.success and "the bound its column metrics allow" in log and "count(lakeplan_merged)" not in log
    assert rows(spark, merged) == [(1, 2000000006)]
    log = project.fail("run", n=147483642)  # one past int's range
    assert "lakeplan: `clicks`.`n` (merge rule sum) would become 2000000006 + 147483642 for key {\"id\":1}" in log
    assert rows(spark, merged) == [(1, 2000000006)]


def test_widening_a_sum_column_as_the_overflow_error_says_keeps_the_merged_rows_and_applies_the_run_once(
        make_project, spark):
    """The overflow error's fix: widen the column. The views keep the types they were made with, so they are made
    again before the append (a view failing after it reported the committed run as failed, and its rerun appended the
    change again)."""
    project = make_project("delta_widen", {**CLICKS, "models/reads_clicks.sql": "select * from {{ ref('clicks') }}"})
    table, merged = "lakeplan_delta_widen.clicks", "lakeplan_delta_widen.clicks__lakeplan_merged"
    project.run("run")
    project.run("run", n=100000000)
    log = project.fail("run", n=147483648)
    assert "Fix: declare `n` as bigint in `clicks`'s YAML; the next run widens the stored column in place, keeping every " \
        "value." in log
    yml = project.path / "models" / "clicks.yml"
    yml.write_text(yml.read_text().replace("data_type: 'int'", "data_type: 'bigint'"))
    project.run("run", n=147483648)
    assert rows(spark, merged) == rows(spark, "lakeplan_delta_widen.reads_clicks") == [(1, 2247483648)]
    assert spark.sql(f"select count(*) from {table} where lakeplan_delta").collect()[0][0] == 2
    assert [(c.name, c.dataType.simpleString()) for c in spark.table(merged).schema] == [("id", "bigint"), ("n", "bigint")]


TYPED = {
    "models/typed.sql": "{{ partial_update_target() }}",
    "models/typed.yml": target_yml("typed", {"id": "bigint", "name": "varchar(10)", "small": "tinyint", "qty": "integer"},
                                   change_mode="delta", maintenance={"delta_runs": 100}),
    "models/typed_m.sql": member("typed", f"select cast(1 as bigint) as id, '{given('name', 'a')}' as name, "
                                          "cast(1 as tinyint) as small, 2 as qty"),
}


def test_types_iceberg_stores_under_another_name_leave_the_views_alone_and_the_log_quiet(make_project, spark):
    """A varchar(10) and a tinyint are stored as string and int (Iceberg has no type of its own for them), and the
    views show those: compared with the declared names, the views were made again at every write (leaving readers a
    moment without them), and every write logged that the table keeps a type a rebuild would not change."""
    project = make_project("delta_typed", TYPED)
    project.run("run")
    views = [view_identity(spark, f"lakeplan_delta_typed.typed__lakeplan_{view}") for view in ("merged", "base")]
    result, log = project.invoke("run", name="b")
    assert result.success and "is stored as" not in log
    assert [view_identity(spark, f"lakeplan_delta_typed.typed__lakeplan_{view}") for view in ("merged", "base")] == views
    assert rows(spark, "lakeplan_delta_typed.typed__lakeplan_merged") == [(1, "b", 1, 2)]


SPREAD = {
    "models/spread.sql": "{{ partial_update_target() }}",
    "models/spread.yml": target_yml("spread", {"id": "bigint", "n": "bigint"}, rules={"n": "sum"}, change_mode="delta",
                                    partition_by=["bucket(4, id)"], maintenance={"delta_runs": 100}),
    "models/spread_m.sql": member("spread", by_step(
        "select cast(id as bigint) as id, cast(1 as bigint) as n from (select explode(sequence(1, 40)) as id)",
        "select cast(7 as bigint) as id, cast(1 as bigint) as n")),
}


def test_a_change_of_one_key_is_folded_into_a_bucketed_table_without_shuffling_its_stored_rows(make_project, spark):
    """The delta rows of one key fill one bucket of four: the buckets the delta lacks are joined as empty ones, so the
    merged read still joins bucket by bucket and does not shuffle the stored rows."""
    project = make_project("delta_spread", SPREAD)
    merged = "lakeplan_delta_spread.spread__lakeplan_merged"
    project.run("run", step=1)
    project.run("run", step=2)
    assert rows(spark, merged) == [(i, 2 if i == 7 else 1) for i in range(1, 41)]
    plan = spark.sql(f"explain select * from {merged}").collect()[0][0]
    assert "groupedBy=id_bucket" in plan and "Exchange" not in plan, plan


# a target switched to change_mode delta on a run that writes no rows: its members' inputs are those of the write
# its table holds (a repeat), or new_rows finds nothing new in them
SWITCHED = {
    "models/sources.yml": "version: 2\nsources:\n  - {name: raw, schema: lakeplan_delta_switch, tables: [{name: events}]}\n",
    "models/totals.sql": "{{ partial_update_target() }}",
    "models/totals.yml": target_yml("totals", {"id": "bigint", "total": "int"}, rules={"total": "sum"},
                                    change_mode=f"{{{{ {env_value('mode', 'copy_on_write')} }}}}"),
    "models/totals_m.sql": member("totals", f"select id, amount as total from {{% if {env_value('new', 0)} == '1' %}}"
                                            "{{ lakeplan.new_rows(source('raw', 'events')) }}"
                                            "{% else %}{{ source('raw', 'events') }}{% endif %}"),
    "models/reads_totals.sql": "select * from {{ ref('totals') }}",
}


def test_a_target_switched_to_or_from_delta_mode_is_read_as_its_table_holds_it_until_and_from_its_next_run(
        make_project, spark):
    """A run of the target that writes no rows (a repeat, nothing new) still makes its table the shape its change_mode
    asks; a reader of ref() run before the target's next run reads the table as it is laid out."""
    project = make_project("delta_switch", SWITCHED)
    events, table = "lakeplan_delta_switch.events", "lakeplan_delta_switch.totals"
    spark.sql("create database if not exists lakeplan_delta_switch")
    yml = project.path / "models" / "totals.yml"
    declared = yml.read_text()
    for new, unwritten in [(0, "already holds this run"), (1, "nothing new")]:
        yml.write_text(declared)
        spark.sql(f"create or replace table {events} (id bigint, amount bigint) using iceberg")
        spark.sql(f"insert into {events} values (1, 5), (2, 7)")
        project.run("run", "--full-refresh", new=new, mode="copy_on_write")
        # a rebuild in another mode leaves no view of the delta layout behind (they would read columns it lacks)
        assert [view.viewName for view in spark.sql("show views in lakeplan_delta_switch").collect()
                if view.viewName.startswith("totals__") and not view.isTemporary] == []
        project.run("run", new=new)  # in place: nothing written
        written = snapshots(spark, table)
        # a reader run alone after the switch, before the target's run: the table holds no delta rows yet
        project.run("run", "--select", "reads_totals", new=new, mode="delta")
        assert rows(spark, "lakeplan_delta_switch.reads_totals") == [(1, 5), (2, 7)]
        if not new:  # explain plans against the table as it is: the delta write, once the next run laid it out
            with command_values({"mode": "delta"}):
                code, _, models = explain(project, "--select", "totals")
            assert code == 0 and models["totals"]["error"] is None
            assert [statement["error"] for statement in models["totals"]["statements"] if statement.get("error")] == [(
                "`totals` is in change_mode delta, but its table is not laid out for it yet: its next run adds "
                "lakeplan's columns and views, then appends its change, and explain plans against the table as it "
                "is. Fix: run it once (`dbt run -s totals`), then run explain again to see its delta write.")]
        project.run("run", new=new, mode="delta")
        assert unwritten in project.shown.lower() and snapshots(spark, table) == written
        assert rows(spark, f"{table}__lakeplan_merged") == rows(spark, "lakeplan_delta_switch.reads_totals") == [
            (1, 5), (2, 7)]
        # a type widened in place and one spelled otherwise: the same logic, so still the same run; the views show
        # the widened type
        yml.write_text(declared.replace("'int'", "'bigint'").replace("'bigint'}", "'BIGINT'}", 1))
        project.run("run", new=new, mode="delta")
        assert unwritten in project.shown.lower() and snapshots(spark, table) == written
        assert rows(spark, f"{table}__lakeplan_merged") == [(1, 5), (2, 7)]
        assert dict(spark.table(f"{table}__lakeplan_merged").dtypes)["total"] == "bigint"
        spark.sql(f"insert into {events} values (1, 1)")
        project.run("run", new=new, mode="delta")  # a member reading its whole input sends it again: a sum adds it
        merged = [(1, 6), (2, 7)] if new else [(1, 11), (2, 14)]
        assert rows(spark, f"{table}__lakeplan_merged") == merged
        # switched back, a reader run alone before the target's run: its delta rows are not folded yet, read merged
        project.run("run", "--select", "reads_totals", new=new, mode="copy_on_write")
        assert rows(spark, "lakeplan_delta_switch.reads_totals") == merged
