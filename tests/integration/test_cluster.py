"""The same project on a real Spark cluster (standalone master, two workers, Thrift Server on loopback)."""

import json
import subprocess
import urllib.request

import pytest
from pyhive import hive

from tests.conftest import REPO, env_value, given, model_tables, write_files
from tests.integration import test_dbt_on_iceberg as iceberg
from tests.integration import test_dbt_parity as parity

THRIFT_PORT, DRIVER_UI = 10001, 4050
# The example's commands on the cluster keep their own target/ (its partial-parse state): a change of target makes
# dbt parse the whole project again, so sharing target/ with the local commands parsed the example three times.
ON_CLUSTER = ("--target", "cluster", "--target-path", "target/cluster")


@pytest.fixture(scope="module")
def cluster(shared_catalog):
    subprocess.run([str(REPO / "scripts" / "cluster.sh"), "up"], check=True, timeout=300)
    try:
        yield hive.connect("127.0.0.1", port=THRIFT_PORT)
    finally:  # stops exactly what `up` started, also when a test failed
        subprocess.run([str(REPO / "scripts" / "cluster.sh"), "down"], check=True, timeout=120)


def contents(cursor_or_spark, tables: list[str]) -> dict[str, list[str]]:
    """Every row of `tables` as JSON, sorted, by table: one statement for all of them, since each statement over Thrift
    is a round trip and a Spark job of its own."""
    sql = " union all ".join(f"select '{table}', to_json(struct(*)) from {table}" for table in tables)
    if hasattr(cursor_or_spark, "execute"):
        cursor_or_spark.arraysize = 100_000  # PyHive fetches 1000 rows a round trip by default
        cursor_or_spark.execute(sql)
        rows = cursor_or_spark.fetchall()
    else:
        rows = cursor_or_spark.sql(sql).collect()
    by_table: dict[str, list[str]] = {table: [] for table in tables}
    for table, row in rows:
        by_table[table].append(row)
    return {table: sorted(table_rows) for table, table_rows in by_table.items()}


def assert_same_contents(cursor, spark, tables: list[str]) -> None:
    on_cluster, local = contents(cursor, tables), contents(spark, tables)
    for table in tables:
        assert on_cluster[table] == local[table], f"{table} differs between targets"


UPSERT = {
    "models/current.sql": "{{ config(materialized='upsert', unique_key='id', op_column='op', "
    "on_schema_change='append_new_columns') }}\n"
    f"select cast(1 as bigint) as id, '+U' as op, cast({given('price', '1.50')} as decimal(12,2)) as price"
    f"{{% if {env_value('more', '')} %}}, cast(7 as bigint) as extra{{% endif %}}",
}


@pytest.fixture(scope="module")
def seed_and_upsert(cluster, make_project):
    """A seed with empty cells and an upsert's first run, in one project and one `dbt build`."""
    project = make_project("cluster_small", {"seeds/cells.csv": iceberg.SEED_WITH_EMPTY_CELLS, **UPSERT})
    cluster.cursor().execute("drop schema if exists lakeplan_cluster_small cascade")  # the cluster keeps its metastore
    project.run("build", "--target", "cluster")
    return project


def test_empty_seed_cells_load_as_null_over_thrift(cluster, seed_and_upsert):
    cursor = cluster.cursor()
    cursor.execute("select id, name, score, flag, cast(day as string) from lakeplan_cluster_small.cells")
    assert sorted(tuple(row) for row in cursor.fetchall()) == iceberg.SEED_ROWS


def test_an_upsert_runs_again_on_the_cluster_and_adds_a_column(cluster, seed_and_upsert):
    """The second run compares its query's types with the table's: over Thrift dbt read them as BIGINT_TYPE and
    DECIMAL_TYPE (no precision), and stopped the run ("stored as bigint, but its query now gives BIGINT_TYPE")."""
    seed_and_upsert.run("run", "--target", "cluster", price=2.25, more=True)
    cursor = cluster.cursor()
    cursor.execute("select id, cast(price as string), extra from lakeplan_cluster_small.current")
    assert cursor.fetchall() == [(1, "2.25", 7)]


def test_snapshots_close_and_open_versions_on_the_cluster(cluster, make_project):
    files = {name: text for name, text in parity.FILES.items() if name.startswith(("snapshots/", "seeds/people"))}
    project = make_project("cluster_snapshots", files)
    cursor = cluster.cursor()
    cursor.execute("drop schema if exists lakeplan_cluster_snapshots cascade")  # the cluster keeps its metastore
    for people in (parity.PEOPLE_V1, parity.PEOPLE_V2, parity.PEOPLE_V3):
        write_files(project.path, {"seeds/people.csv": people})
        project.run("build", "--full-refresh", "--target", "cluster")  # the seed, then the snapshots of it
    for strategy in ("check", "timestamp"):
        cursor.execute(f"select id, tier, dbt_valid_to is null from lakeplan_cluster_snapshots.people_{strategy}")
        assert sorted(tuple(row) for row in cursor.fetchall()) == parity.SNAPSHOT_HISTORY, strategy


FAILING = {
    "models/null_key.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
    "select cast(null as bigint) as id, '+I' as _op, 1 as v",
    "models/missing_input.sql": "select * from lakeplan_cluster_errors.no_such_table",
}


def test_a_failed_statement_on_the_cluster_is_one_sentence(cluster, make_project):
    """The Thrift Server wraps Spark's sentence in its own exception and appends the statement
    (`org.apache.hive.service.cli.HiveSQLException: Error running query: ...`, `== SQL ==`): the user sees the
    sentence alone, as on the local target."""
    project = make_project("cluster_errors", FAILING)
    cluster.cursor().execute("drop schema if exists lakeplan_cluster_errors cascade")
    project.fail("run", "--target", "cluster")
    shown = project.shown
    for wrapping in ("HiveSQLException", "Error running query", "== SQL ==", "org.apache.spark"):
        assert wrapping not in shown
    assert "NULL primary key (id) in model `null_key` (op column `_op`)" in shown
    assert "[TABLE_OR_VIEW_NOT_FOUND]" in shown and "no_such_table" in shown


# The example is built on the cluster in three commands, each with the test that reads it: in one `dbt build` it took
# longer than a test may. customer_360 (the unioned partial-update write) and its data tests come last.
@pytest.fixture(scope="module")
def example_on_cluster(cluster, example):
    """The example's models, seed and snapshot but customer_360, built on the cluster."""
    example.run("build", *ON_CLUSTER, "--exclude-resource-type", "test", "--exclude", "customer_360")
    return cluster


def test_the_example_builds_on_the_cluster_with_the_local_contents(example_on_cluster, built, spark):
    tables = model_tables(built)
    assert "lakeplan.customer_360" in tables and "lakeplan.customer_order_status" in tables
    inputs = [table for table in tables if table != "lakeplan.customer_360"]
    assert_same_contents(example_on_cluster.cursor(), spark, inputs)


def test_the_examples_data_tests_pass_on_the_cluster(example_on_cluster, example):
    """All but customer_360's, which run with it (customer_360_on_cluster)."""
    example.run("test", *ON_CLUSTER, "--exclude", "customer_360+")


@pytest.fixture(scope="module")
def customer_360_on_cluster(example_on_cluster, example):
    """customer_360 and its data tests, on the cluster."""
    example.run("build", *ON_CLUSTER, "--select", "customer_360+")
    return example_on_cluster


def test_customer_360_builds_on_the_cluster_with_the_local_contents(customer_360_on_cluster, spark):
    assert_same_contents(customer_360_on_cluster.cursor(), spark, ["lakeplan.customer_360"])


def test_a_second_snapshot_on_the_cluster_recognises_its_iceberg_table(example_on_cluster, example):
    example.run("snapshot", *ON_CLUSTER)


def test_the_example_build_ran_on_the_workers_executors(customer_360_on_cluster):
    """The work ran on the workers' executors, not in one process."""
    api = f"http://127.0.0.1:{DRIVER_UI}/api/v1/applications"
    [application] = json.load(urllib.request.urlopen(api))
    executors = json.load(urllib.request.urlopen(f"{api}/{application['id']}/executors"))
    busy = [e for e in executors if e["id"] != "driver" and e["totalTasks"] > 0]
    assert len(busy) >= 2, executors
