"""Nothing lost, nothing half-written: failures during a write leave the table as it was; reruns converge."""

import threading
import time

import pytest

from tests.conftest import given

# the values a test gives one dbt command (--vars would make dbt parse the project in full at each new value)
HEALTHY, FACTOR, ROWS = given("healthy", "true"), given("factor", 1), given("rows", 1000)
FILES = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": (
        "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: id}\n    columns:\n"
        "      - {name: id, data_type: bigint}\n      - {name: a, data_type: bigint}\n      - {name: b, data_type: bigint}\n"
    ),
    # A member that raises on some rows when told to, and another that is slow enough to be killed.
    "models/wide_a.sql": (
        "{{ config(partial_update_target='wide') }}\n"
        f"select id, id * {FACTOR} as a from range(0, 1000) where assert_true({HEALTHY} or id != 7) is null"
    ),
    "models/wide_b.sql": (
        "{{ config(partial_update_target='wide') }}\n"
        f"select id % 1000 as id, max(id * {FACTOR}) as b from range(0, {ROWS}) group by id % 1000"
    ),
    "models/changes.sql": (
        "{{ config(materialized='upsert', unique_key='id', sequence_by='seq') }}\n"
        f"select id % 1000 as id, '+U' as _op, id as seq, id * {FACTOR} as v\n"
        f"from range(0, {ROWS}) where assert_true({HEALTHY} or id != 7) is null"
    ),
}


@pytest.fixture(scope="module")
def project(make_project):
    dbt = make_project("reliable", FILES)
    dbt.run("run")
    return dbt


def state(spark, table):
    current = spark.sql(f"select snapshot_id from lakeplan_reliable.{table}.snapshots order by committed_at desc limit 1")
    return current.first()[0], sorted(tuple(r) for r in spark.sql(f"select * from lakeplan_reliable.{table}").collect())


@pytest.mark.parametrize("model", ["wide", "changes"])
def test_a_row_that_fails_leaves_the_table_at_its_snapshot_and_a_fixed_rerun_converges(project, spark, model):
    before = state(spark, model)
    log = project.fail("run", "--select", f"+{model}", healthy="false", factor=2)
    assert "' is not true!" in log and "Runtime Error in model" in log
    assert state(spark, model) == before
    project.run("run", "--select", f"+{model}", factor=2)
    after_snapshot, after_rows = state(spark, model)
    assert after_snapshot != before[0] and after_rows != before[1]
    project.run("run", "--select", f"+{model}", factor=2)  # idempotent
    assert state(spark, model)[1] == after_rows


@pytest.mark.parametrize("model", ["wide", "changes"])
def test_a_killed_spark_job_leaves_the_table_at_its_snapshot(project, spark, model):
    before = state(spark, model)
    tracker = spark.sparkContext.statusTracker()
    run_ended = threading.Event()

    def kill_jobs_until_the_run_ends():
        # A short metadata job may end between being seen and being cancelled, so keep cancelling until one is.
        while not run_ended.wait(0.05):
            if tracker.getActiveJobsIds():
                spark.sparkContext.cancelAllJobs()

    killer = threading.Thread(target=kill_jobs_until_the_run_ends)
    killer.start()
    try:
        log = project.fail("run", "--select", model, rows=30_000_000, factor=5)
    finally:
        run_ended.set()
        killer.join()
    assert "cancel" in log.lower()
    assert state(spark, model) == before


def test_concurrent_separate_writers_conflict_and_the_unioned_write_cannot(project, spark):
    """Two separate writers (what reuse off amounts to when run as separate jobs) MERGE into one table at
    once: Iceberg refuses the later commit. The unioned write is one statement, so it has no rival."""
    spark.sql("create or replace table lakeplan_reliable.contested (id bigint, a bigint, b bigint) using iceberg")
    spark.sql("insert into lakeplan_reliable.contested select id, 0, 0 from range(0, 200000)")
    start, outcome = threading.Barrier(2), {}

    def writer(column, source_rows):
        # the slow writer computes over many rows, so both surely start from the same snapshot
        source = f"select id % 200000 as id, max(id % 200000) + 1 as v from range(0, {source_rows}) group by id % 200000"
        start.wait()
        try:
            spark.sql(
                f"merge into lakeplan_reliable.contested t using ({source}) s on t.id = s.id "
                f"when matched then update set {column} = s.v"
            )
            outcome[column] = "committed"
        except Exception as error:  # the JVM's exception, as PySpark reports it
            outcome[column] = "Found conflicting files" if "Found conflicting files" in str(error) else str(error)

    threads = [threading.Thread(target=writer, args=args) for args in [("a", 40_000_000), ("b", 200_000)]]
    [thread.start() for thread in threads]
    [thread.join() for thread in threads]
    # Which one commits first depends on how the two jobs share the cores; exactly one of them is refused.
    assert sorted(outcome.values()) == ["Found conflicting files", "committed"]
    winner = next(column for column, result in outcome.items() if result == "committed")
    loser = "b" if winner == "a" else "a"
    written = spark.sql("select count_if(a > 0) as a, count_if(b > 0) as b from lakeplan_reliable.contested").first()
    assert (written[winner], written[loser]) == (200000, 0)  # the refused writer's column is missing until it reruns
