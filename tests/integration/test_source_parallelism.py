"""Per-source parallelism (FLIP-367) and changelog hash distribution, on real Spark plans and tables."""

import pytest

from tests.spark_plans import exchanges, executed_plan

# the events seed read round-robin and as a changelog (test_explain.py declares them too)
EVENT_SOURCES = """      - name: events_parallel
        identifier: events_seed
        meta: {scan_parallelism: 3}
      - name: events_changelog
        identifier: events_seed
        meta: {scan_parallelism: 5, changelog_mode: upsert, primary_key: [account_id], op_column: op, sequence_by: seq}
"""
SOURCES = """
version: 2
sources:
  - name: lake
    schema: lakeplan_scan
    tables:
      - name: events
        identifier: events_seed
""" + EVENT_SOURCES + """\
  - name: cdc
    schema: lakeplan_scan
    tables:
      - name: order_changes
        meta:
          scan_parallelism: 3
          changelog_mode: all
          primary_key: order_key
          sequence_by: _seq
          datagen: {changelog: {keys: 40, versions: 4}}
      - name: numbers
        meta: {scan_parallelism: 4, datagen: {rows: 1000, fields: {n: id, square: id * id}}}
"""

EVENTS = "account_id,op,seq,amount\n" + "".join(
    f"{i % 10},+I,{i},{i * 1.5}\n" for i in range(40)
)

MODELS = {
    "models/sources.yml": SOURCES,
    "seeds/events_seed.csv": EVENTS,
    "models/plain.sql": "select * from {{ scan_source('lake', 'events') }}",
    "models/round_robin.sql": (
        "select account_id, count(*) as events\n"
        "from {{ scan_source('lake', 'events_parallel') }} as e\ngroup by account_id"
    ),
    "models/hashed.sql": "select * from {{ scan_source('lake', 'events_changelog') }}",
    "models/numbers.sql": "select * from {{ scan_source('cdc', 'numbers') }}",
    "models/sink_parallel.sql": (
        "{{ config(materialized='table', parallelism=2, unique_key='account_id') }}\n"
        "select account_id, sum(amount) as total from {{ scan_source('lake', 'events') }} group by account_id"
    ),
    "models/order_status.sql": (
        "{{ config(materialized='upsert', unique_key='order_key', sequence_by='_seq') }}\n"
        "select order_key, _op, _seq, status, amount\n"
        "from {{ scan_source('cdc', 'order_changes') }} as c\n"
        "where _batch <= {{ var('batch', 99) }}"
    ),
}


@pytest.fixture(scope="module")
def project(make_project):
    dbt = make_project("scan", MODELS)
    dbt.run("seed")
    return dbt


def compiled(project, model):
    result = project.run("compile", "--select", model)
    return result.result.results[0].node.compiled_code


def test_without_scan_parallelism_scan_source_is_exactly_source(project):
    assert compiled(project, "plain").strip() == "select * from lakeplan_scan.events_seed"


def test_insert_only_source_gets_round_robin_of_its_own(project, spark):
    sql = compiled(project, "round_robin")
    assert "/*+ REPARTITION(3) */" in sql
    found = exchanges(executed_plan(spark, sql))
    # The source's stage: round-robin into 3; the aggregation's shuffle keeps spark.sql.shuffle.partitions (8).
    assert ("RoundRobinPartitioning", "3") in found
    assert [kind for kind, _ in found].count("hashpartitioning") == 1
    assert [args for kind, args in found if kind == "hashpartitioning"][0].endswith(", 8")


def test_changelog_source_is_hashed_on_its_primary_key(project, spark):
    sql = compiled(project, "hashed")
    assert "/*+ REPARTITION(5, `account_id`) */" in sql
    found = exchanges(executed_plan(spark, sql))
    assert len(found) == 1 and found[0][0] == "hashpartitioning"
    assert found[0][1].startswith("account_id#") and found[0][1].endswith(", 5")


def test_datagen_scans_with_its_parallelism_and_no_shuffle(project, spark):
    sql = compiled(project, "numbers")
    assert "range(0, 1000, 1, 4)" in sql
    frame = spark.sql(sql)
    assert frame.rdd.getNumPartitions() == 4
    assert exchanges(executed_plan(spark, sql)) == []
    assert frame.count() == 1000 and frame.where("square = n * n").count() == 1000


def test_sink_parallelism_hashes_the_final_write_on_the_unique_key(project, spark):
    project.run("run", "--select", "sink_parallel")
    files = spark.sql("select file_path from lakeplan_scan.sink_parallel.files").count()
    assert 1 <= files <= 2  # at most one data file per write partition
    assert spark.sql("select count(*) from lakeplan_scan.sink_parallel").first()[0] == 10


def test_changelog_dedup_adds_no_second_exchange(project, spark):
    project.run("run", "--select", "order_status", "--full-refresh")
    # The materialization's staged changes (latest row per key) stay in the shared session as a temp view.
    found = exchanges(executed_plan(spark, "select * from order_status__lakeplan_changes"))
    assert len(found) == 1 and found[0][0] == "hashpartitioning" and found[0][1].endswith(", 3")
