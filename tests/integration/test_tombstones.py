"""Deletes are remembered: a deleted key keeps the sequence of its delete (a tombstone in a side table), so a
later run's row with a lower sequence loses against the delete as it loses against a stored row.

Each run's batch reaches the models as a `given` value, not --vars, which would make dbt parse the project again in
full on every run."""

import pytest

from tests.conftest import given, snapshots
from tests.integration.test_partial_update import member, rows, target_yml

BATCH = given("batch", 1)  # the changes of one run: a run's batch number
# batch, key, op, lsn, value. Key 2: inserted and deleted (batch 1), a late update (batch 2), a newer insert
# (batch 3). Key 3 is never deleted.
CHANGES = """batch,id,op,lsn,val
1,2,+I,10,first
1,2,-D,13,first
1,3,+I,1,three
2,2,+U,12,late
2,3,+U,2,three again
3,2,+I,20,new
"""
UPSERT = {
    "seeds/changes.csv": CHANGES,
    "models/current.sql": (
        "{{ config(materialized='upsert', unique_key='id', sequence_by='lsn', op_column='op') }}\n"
        "select id, op, lsn, val from {{ ref('changes') }} where batch = " + BATCH
    ),
}
PARTIAL_UPDATE = {
    "seeds/changes.csv": CHANGES,
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "val": "string", "lsn": "bigint"},
                                  partial_update_on_delete="remove_record"),  # fmt: skip
    "models/cdc.sql": member(
        "wide", "select id, op, lsn, val from {{ ref('changes') }} where batch = " + BATCH,
        op_column="op", sequence_by="lsn",
    ),
}
KINDS = [("upsert", UPSERT, "current"), ("partial_update", PARTIAL_UPDATE, "wide")]  # what remembers deletes
AFTER = {
    1: [(3, 1, "three")],
    2: [(3, 2, "three again")],  # the late +U of key 2 (lsn 12) loses against its delete (lsn 13)
    3: [(2, 20, "new"), (3, 2, "three again")],  # a newer insert wins
}


@pytest.mark.parametrize("kind, files, table", KINDS)
def test_a_late_row_loses_against_a_delete_of_an_earlier_run(make_project, spark, kind, files, table):
    project = make_project(f"tombstones_{kind}", files)
    relation = f"lakeplan_tombstones_{kind}.{table}"
    columns = "id, lsn, val"
    for batch, expected in AFTER.items():
        before = snapshots(spark, relation)
        project.run("build" if batch == 1 else "run", batch=batch)  # the seed, with the first
        assert sorted(tuple(r) for r in spark.sql(f"select {columns} from {relation}").collect()) == expected, batch
        assert snapshots(spark, relation) == before + 1  # one commit of the table per run
    # The table users read has only its own columns; the tombstone is in the side table.
    assert "lakeplan_sequence" not in spark.table(relation).columns
    assert rows(spark, f"{relation}__lakeplan_tombstones")[0][:2] == (2, 13)


def test_tombstones_are_removed_after_their_retention(make_project, spark):
    project = make_project("tombstone_retention", {**UPSERT, "models/current.sql": UPSERT["models/current.sql"].replace(
        "op_column='op'", "op_column='op', tombstone_retention_days=2")})  # fmt: skip
    tombstones = "lakeplan_tombstone_retention.current__lakeplan_tombstones"
    project.run("build")  # the seed, then the model (batch 1)
    assert [r[:2] for r in rows(spark, tombstones)] == [(2, 13)]
    spark.sql(f"update {tombstones} set lakeplan_deleted_at = lakeplan_deleted_at - interval 1 day")
    project.run("run", batch=4)  # no changes: a day-old tombstone stays
    assert len(rows(spark, tombstones)) == 1
    spark.sql(f"update {tombstones} set lakeplan_deleted_at = lakeplan_deleted_at - interval 2 days")
    project.run("run", batch=4)  # three days old: removed
    assert rows(spark, tombstones) == []


@pytest.mark.parametrize("value", ["0", "'week'"], ids=["zero", "text"])
def test_a_bad_tombstone_retention_is_refused_before_anything_is_written(make_project, spark, value):
    project = make_project(f"retention_{value.strip(chr(39))}", {**UPSERT, "models/current.sql": UPSERT[
        "models/current.sql"].replace("op_column='op'", f"op_column='op', tombstone_retention_days={value}")})  # fmt: skip
    log = project.fail("seed")  # the parse of any command refuses it
    assert f"model `current` sets `tombstone_retention_days: {value}`" in log
    assert "Fix: e.g. `tombstone_retention_days: 30`" in log
    assert not spark.catalog.tableExists(f"lakeplan_retention_{value.strip(chr(39))}.current")


# Two members of one remove_record target, writing different columns: `seen` ordered by a timestamp, `cdc` a
# changelog ordered by an int. Key 2 is deleted by `cdc` in batch 1; in batch 2 `seen` sends it again (its
# timestamp says nothing about `cdc`'s sequence) and `cdc` a late update (seq 6 < the delete's 7).
SEEN = """batch,id,last_seen_ts,a
1,1,2024-01-01 10:00:00,a1
1,2,2024-01-01 10:00:00,a2
2,2,2024-01-02 10:00:00,a2 again
"""
CDC = """batch,id,op,seq,b
1,1,+I,5,b1
1,2,+I,5,b2
1,2,-D,7,b2
2,2,+U,6,late
3,2,+I,8,b2 new
"""
TWO_SEQUENCES = {
    "seeds/seen_rows.csv": SEEN,
    "seeds/cdc_changes.csv": CDC,
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "string", "b": "string"},
                                  partial_update_on_delete="remove_record"),  # fmt: skip
    "models/seen.sql": member("wide", "select id, cast(last_seen_ts as timestamp) as last_seen_ts, a from "
                              "{{ ref('seen_rows') }} where batch = " + BATCH, sequence_by="last_seen_ts"),
    "models/cdc.sql": member("wide", "select id, op, cast(seq as int) as seq, b from {{ ref('cdc_changes') }} "
                             "where batch = " + BATCH, op_column="op", sequence_by="seq"),
}


def test_a_delete_is_compared_only_with_rows_of_its_own_sequence(make_project, spark):
    project = make_project("tombstone_sequences", TWO_SEQUENCES)
    relation = "lakeplan_tombstone_sequences.wide"
    # batch 1: key 2 written by `seen`, then deleted by `cdc` (the changelog group writes after the insert-only one)
    # batch 2: `seen`'s row brings key 2 back (a timestamp is not compared with `cdc`'s delete), `cdc`'s late +U
    #   (seq 6) loses against the delete (seq 7); batch 3: `cdc`'s newer insert (seq 8) wins
    after = {1: [(1, "a1", "b1")], 2: [(1, "a1", "b1"), (2, "a2 again", None)],
             3: [(1, "a1", "b1"), (2, "a2 again", "b2 new")]}  # fmt: skip
    counts = []
    for batch, expected in after.items():
        project.run("build" if batch == 1 else "run", batch=batch)  # the seeds, with the first
        assert rows(spark, relation) == expected, batch
        counts.append(snapshots(spark, relation))
    assert counts == [1, 3, 5]  # created by one statement, then each run's two groups: one commit each
    assert rows(spark, f"{relation}__lakeplan_tombstones")[0][:2] == (2, 7)


REMOVING = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "string", "b": "string"},
                                  partial_update_on_delete="remove_record"),  # fmt: skip
}


@pytest.mark.parametrize("command, sequences, message", [
    ("parse", ("1 as lsn", "lsn", "timestamp'2024-01-01' as ts", "ts"),
     "Members `c1` (sequence_by `lsn`), `c2` (sequence_by `ts`) of partial-update target `wide` are changelogs whose "
     "deletes remove the record (partial_update_on_delete: remove_record), ordered by different sequences"),
    ("run", ("1 as seq", "seq", "'x' as seq", "seq"),
     "Members `c1` (int), `c2` (string) of partial-update target `wide` are ordered by one sequence `seq`, whose "
     "deletes remove the record (partial_update_on_delete: remove_record), but of different types"),
], ids=["two_sequences", "one_sequence_two_types"])  # fmt: skip
def test_deletes_that_cannot_be_ordered_are_refused_before_any_write(make_project, spark, command, sequences, message):
    first, first_name, second, second_name = sequences
    project = make_project(f"tombstone_{command}", {
        **REMOVING,
        "models/c1.sql": member("wide", f"select 1 as id, '+I' as op, {first}, 'a' as a", op_column="op",
                                sequence_by=first_name),
        "models/c2.sql": member("wide", f"select 1 as id, '-D' as op, {second}, 'b' as b", op_column="op",
                                sequence_by=second_name),
    })  # fmt: skip
    log = project.fail(command)
    assert message in log and "Fix: " in log
    assert "cast it to a bigint" not in log  # `'x' as seq` cast to bigint would be NULL
    assert not spark.catalog.tableExists(f"lakeplan_tombstone_{command}.wide")


@pytest.mark.parametrize("kind, files, table", KINDS)
def test_a_full_refresh_keeps_remembered_deletes_unless_told_to_forget(make_project, spark, kind, files, table):
    project = make_project(f"refresh_{kind}", files)
    relation = f"lakeplan_refresh_{kind}.{table}"
    project.run("build")  # the seed, then key 2 inserted and deleted (lsn 13) in batch 1
    # a rebuild from a changelog that now holds only key 2's late +U (lsn 12): the delete still wins
    project.run("run", "--full-refresh", batch=2)
    assert [r[:2] for r in rows(spark, f"{relation}__lakeplan_tombstones")] == [(2, 13)]
    assert sorted(tuple(r) for r in spark.sql(f"select id, lsn, val from {relation}").collect()) == [
        (3, 2, "three again")]
    forgetting = make_project(f"refresh_{kind}_vars", files, {"vars": {"lakeplan_forget_deletes": [table]}},
                              schema=f"refresh_{kind}")
    forgetting.run("run", "--full-refresh", batch=2)
    assert not spark.catalog.tableExists(f"{relation}__lakeplan_tombstones")  # no delete left to remember
    assert sorted(tuple(r) for r in spark.sql(f"select id, lsn, val from {relation}").collect()) == [
        (2, 12, "late"), (3, 2, "three again")]


def test_forgetting_the_deletes_of_a_model_that_does_not_exist_is_refused(make_project):
    project = make_project("forget_unknown", UPSERT)
    log = project.fail("run", "--full-refresh", "--vars", "{lakeplan_forget_deletes: [curent]}")
    assert ("The project sets lakeplan_forget_deletes [curent], but no model is named `curent`. Fix: name the "
            "`upsert` or partial-update target whose remembered deletes a rebuild forgets") in log
