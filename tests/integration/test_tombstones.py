"""Deletes are remembered: a deleted key keeps the sequence of its delete (a tombstone in a side table), so a
later run's row with a lower sequence loses against the delete as it loses against a stored row."""

import pytest

from tests.conftest import snapshots
from tests.integration.test_partial_update import member, rows, target_yml

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
        "select id, op, lsn, val from {{ ref('changes') }} where batch = {{ var('batch') }}"
    ),
}
PARTIAL_UPDATE = {
    "seeds/changes.csv": CHANGES,
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "val": "string", "lsn": "bigint"},
                                  partial_update_on_delete="remove_record"),  # fmt: skip
    "models/cdc.sql": member(
        "wide", "select id, op, lsn, val from {{ ref('changes') }} where batch = {{ var('batch') }}",
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
    project.run("seed")
    relation = f"lakeplan_tombstones_{kind}.{table}"
    columns = "id, lsn, val"
    for batch, expected in AFTER.items():
        before = snapshots(spark, relation)
        project.run("run", "--vars", f"{{batch: {batch}}}")
        assert sorted(tuple(r) for r in spark.sql(f"select {columns} from {relation}").collect()) == expected, batch
        assert snapshots(spark, relation) == before + 1  # one commit of the table per run
    # The table users read has only its own columns; the tombstone is in the side table.
    assert "lakeplan_sequence" not in spark.table(relation).columns
    assert rows(spark, f"{relation}__lakeplan_tombstones")[0][:2] == (2, 13)


def test_tombstones_are_removed_after_their_retention(make_project, spark):
    project = make_project("tombstone_retention", {**UPSERT, "models/current.sql": UPSERT["models/current.sql"].replace(
        "op_column='op'", "op_column='op', tombstone_retention_days=2")})  # fmt: skip
    project.run("seed")
    tombstones = "lakeplan_tombstone_retention.current__lakeplan_tombstones"
    project.run("run", "--vars", "{batch: 1}")
    assert [r[:2] for r in rows(spark, tombstones)] == [(2, 13)]
    spark.sql(f"update {tombstones} set lakeplan_deleted_at = lakeplan_deleted_at - interval 1 day")
    project.run("run", "--vars", "{batch: 4}")  # no changes: a day-old tombstone stays
    assert len(rows(spark, tombstones)) == 1
    spark.sql(f"update {tombstones} set lakeplan_deleted_at = lakeplan_deleted_at - interval 2 days")
    project.run("run", "--vars", "{batch: 4}")  # three days old: removed
    assert rows(spark, tombstones) == []


@pytest.mark.parametrize("value", ["0", "'week'"], ids=["zero", "text"])
def test_a_bad_tombstone_retention_is_refused_before_anything_is_written(make_project, spark, value):
    project = make_project(f"retention_{value.strip(chr(39))}", {**UPSERT, "models/current.sql": UPSERT[
        "models/current.sql"].replace("op_column='op'", f"op_column='op', tombstone_retention_days={value}")})  # fmt: skip
    log = project.fail("seed")  # the parse of any command refuses it
    assert f"model `current` sets `tombstone_retention_days: {value}`" in log
    assert "Fix: e.g. `tombstone_retention_days: 30`" in log
    assert not spark.catalog.tableExists(f"lakeplan_retention_{value.strip(chr(39))}.current")


@pytest.mark.parametrize("kind, files, table", KINDS)
def test_a_full_refresh_keeps_remembered_deletes_unless_told_to_forget(make_project, spark, kind, files, table):
    project = make_project(f"refresh_{kind}", files)
    project.run("seed")
    relation = f"lakeplan_refresh_{kind}.{table}"
    project.run("run", "--vars", "{batch: 1}")  # key 2 inserted and deleted (lsn 13)
    # a rebuild from a changelog that now holds only key 2's late +U (lsn 12): the delete still wins
    project.run("run", "--full-refresh", "--vars", "{batch: 2}")
    assert [r[:2] for r in rows(spark, f"{relation}__lakeplan_tombstones")] == [(2, 13)]
    assert sorted(tuple(r) for r in spark.sql(f"select id, lsn, val from {relation}").collect()) == [
        (3, 2, "three again")]
    project.run("run", "--full-refresh", "--vars", f"{{batch: 2, lakeplan_forget_deletes: [{table}]}}")
    assert not spark.catalog.tableExists(f"{relation}__lakeplan_tombstones")  # no delete left to remember
    assert sorted(tuple(r) for r in spark.sql(f"select id, lsn, val from {relation}").collect()) == [
        (2, 12, "late"), (3, 2, "three again")]


def test_forgetting_the_deletes_of_a_model_that_does_not_exist_is_refused(make_project):
    project = make_project("forget_unknown", UPSERT)
    log = project.fail("run", "--full-refresh", "--vars", "{batch: 1, lakeplan_forget_deletes: [curent]}")
    assert ("The project sets lakeplan_forget_deletes [curent], but no model is named `curent`. Fix: name the "
            "`upsert` or partial-update target whose remembered deletes a rebuild forgets") in log
