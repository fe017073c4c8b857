"""The `upsert` materialization: a changelog applied to an Iceberg table, one MERGE per run."""

import pytest

from tests.conftest import given, snapshots

# batch, key, op, seq, value: each case is commented with what it proves.
CHANGES = """batch,id,op,seq,val
1,1,+I,1,a
1,1,+U,3,c
1,1,+U,2,b
1,2,+I,1,gone
1,2,-D,2,gone
1,3,+I,1,x
2,3,-D,5,x
1,4,+I,10,new
2,4,+U,5,late
1,5,+U,7,p
1,5,+U,7,q
1,6,+I,1,z
2,6,+U,7,y
2,6,-D,7,y
1,7,+I,1,first
1,7,-U,4,first
1,7,+U,4,second
1,8,+I,,n1
2,8,+U,,n2
1,9,+I,3,m
2,9,+U,,ignored
"""
# key 1: out of order within a run -> highest seq (c). key 2: inserted and deleted in one run -> absent.
# key 3: deleted by a later run. key 4: a late row (seq 5 < stored 10) never overwrites.
# key 5: duplicate seq -> the greater row (q), deterministically. key 6: same seq, -D wins.
# key 7: -U is ignored. key 8: no sequence -> a later run wins. key 9: NULL seq counts as oldest.
AFTER_BATCH_1 = {1: "c", 3: "x", 4: "new", 5: "q", 6: "z", 7: "second", 8: "n1", 9: "m"}
AFTER_BATCH_2 = {1: "c", 4: "new", 5: "q", 7: "second", 8: "n2", 9: "m"}

GENERATED = """
version: 2
sources:
  - name: cdc
    schema: lakeplan_upsert
    tables:
      - name: seeded
        identifier: changes
      - name: generated
        meta:
          scan_parallelism: 3
          changelog_mode: all
          primary_key: [order_key]
          sequence_by: _seq
          datagen: {changelog: {keys: 60, versions: 5}}
"""

BATCH = given("batch", 0)  # each run's batch: a value of one dbt command, not --vars (a full parse each)
FILES = {
    "seeds/changes.csv": CHANGES,
    "models/sources.yml": GENERATED,
    "models/current.sql": (
        "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
        f"select id, op, seq, val from {{{{ source('cdc', 'seeded') }}}} where batch <= {BATCH}"
    ),
    "models/generated_current.sql": (
        "{{ config(materialized='upsert', unique_key='order_key', sequence_by='_seq') }}\n"
        "select order_key, _op, _seq, status, amount from {{ scan_source('cdc', 'generated') }}\n"
        f"where _batch <= {BATCH}"
    ),
}


@pytest.fixture(scope="module")
def project(make_project):
    dbt = make_project("upsert", FILES)
    dbt.run("seed")
    return dbt


def table(spark, name):
    return spark.sql(f"select * from lakeplan_upsert.{name}")


def test_changes_apply_by_sequence_across_runs(project, spark):
    project.run("run", "--select", "current", "--full-refresh", batch=1)
    assert {row.id: row.val for row in table(spark, "current").collect()} == AFTER_BATCH_1
    assert table(spark, "current").columns == ["id", "seq", "val"]  # the op column is not stored

    before = snapshots(spark, "lakeplan_upsert.current")
    project.run("run", "--select", "current", batch=2)
    assert {row.id: row.val for row in table(spark, "current").collect()} == AFTER_BATCH_2
    assert snapshots(spark, "lakeplan_upsert.current") == before + 1  # one MERGE, one commit

    project.run("run", "--select", "current", batch=2)  # a rerun changes nothing
    assert {row.id: row.val for row in table(spark, "current").collect()} == AFTER_BATCH_2


def reference_final_state(keys, versions):
    """What the generated changelog must leave, computed from its documented rules."""
    state = {}
    for key in range(1, keys + 1):
        last = versions - 1
        if key % 4 == 0 and last > 0:
            continue  # the last version deletes every 4th key
        state[key] = ("OPF"[last % 3], (key * 37 + last * 11) % 1000 + 0.25, last * keys + key)
    return state


def test_generated_changelog_batch_by_batch_equals_one_load_and_the_reference(project, spark):
    def current():
        return {
            row.order_key: (row.status, float(row.amount), row._seq)
            for row in table(spark, "generated_current").collect()
        }

    project.run("run", "--select", "generated_current", "--full-refresh", batch=6)
    at_once = current()
    assert at_once == reference_final_state(60, 5)

    # Batches 0..6 in order: version 1 of every 7th key arrives two batches late and must lose.
    project.run("run", "--select", "generated_current", "--full-refresh", batch=0)
    for batch in range(1, 7):
        project.run("run", "--select", "generated_current", batch=batch)
    assert current() == at_once


def test_invalid_op_fails_the_run_and_leaves_the_table_as_it_was(project, spark, make_project):
    project.run("run", "--select", "current", "--full-refresh", batch=1)
    before = sorted(table(spark, "current").collect())
    snapshot_count = snapshots(spark, "lakeplan_upsert.current")
    spark.sql("insert into lakeplan_upsert.changes values (2, 1, 'X', 9, 'bad')")
    try:
        log = project.fail("run", "--select", "current", batch=2)
    finally:
        spark.sql("delete from lakeplan_upsert.changes where op = 'X'")
    assert ("Invalid changelog op 'X' in model `current` (op column `op`): expected +I, +U, -U or -D; `current` is "
            "unchanged. Fix: map the values of `op` in `current`'s query to +I, +U, -U and -D.") in log
    assert sorted(table(spark, "current").collect()) == before
    assert snapshots(spark, "lakeplan_upsert.current") == snapshot_count
