"""Everything a dbt user does, on lakeplan's local Iceberg profile (dbt-spark session)."""

import json

import pytest

from tests.conftest import given, write_files

PEOPLE_V1 = "id,name,tier,updated_at\n1,ann,gold,2024-01-01 00:00:00\n2,bob,silver,2024-01-01 00:00:00\n3,cy,bronze,2024-01-01 00:00:00\n"
PEOPLE_V2 = "id,name,tier,updated_at\n1,ann,platinum,2024-02-01 00:00:00\n2,bob,silver,2024-01-01 00:00:00\n3,cy,bronze,2024-01-01 00:00:00\n4,di,gold,2024-02-01 00:00:00\n"
PEOPLE_V3 = "id,name,tier,updated_at\n1,ann,platinum,2024-02-01 00:00:00\n2,bob,gold,2024-03-01 00:00:00\n3,cy,bronze,2024-01-01 00:00:00\n4,di,gold,2024-02-01 00:00:00\n"

SNAPSHOT = """{{% snapshot people_{strategy} %}}
{{{{ config(unique_key='id', strategy='{strategy}', {settings}) }}}}
select * from {{{{ ref('people') }}}}
{{% endsnapshot %}}
"""

# (id, tier, current) after snapshotting PEOPLE_V1, V2 and V3 in turn, with either strategy
SNAPSHOT_HISTORY = [
    (1, "gold", False), (1, "platinum", True), (2, "gold", True), (2, "silver", False), (3, "bronze", True), (4, "gold", True),
]

FILES = {
    "seeds/people.csv": PEOPLE_V1,
    "seeds/sales.csv": "day,amount\n2024-01-01,10\n2024-01-02,20\n",
    "snapshots/people_check.sql": SNAPSHOT.format(strategy="check", settings="check_cols=['tier']"),
    "snapshots/people_timestamp.sql": SNAPSHOT.format(strategy="timestamp", settings="updated_at='updated_at'"),
    "models/people_view.sql": "{{ config(materialized='view') }}\nselect id, upper(name) as name from {{ ref('people') }}",
    "models/people_ephemeral.sql": "{{ config(materialized='ephemeral') }}\nselect id, tier from {{ ref('people') }}",
    "models/people_table.sql": (
        "{{ config(materialized='table') }}\n"
        "select v.id, v.name, e.tier from {{ ref('people_view') }} as v join {{ ref('people_ephemeral') }} as e on v.id = e.id"
    ),
    "models/sales_merge.sql": (
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='day') }}\n"
        f"select cast(day as date) as day, amount * {given('factor', 1)} as amount from {{{{ ref('sales') }}}}"
    ),
    "models/sales_append.sql": (
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "select cast(day as date) as day, amount from {{ ref('sales') }}"
    ),
    "models/sales_overwrite.sql": (
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['day']) }}\n"
        f"select amount * {given('factor', 1)} as amount, cast(day as date) as day from {{{{ ref('sales') }}}}\n"
        "{% if is_incremental() %}where day = '2024-01-02'{% endif %}"
    ),
    "models/fragile.sql": (
        "{{ config(materialized='table') }}\n"
        f"select 1 as checked from range(1) where assert_true({given('healthy', 'false')}, 'fragile is not healthy') is null"
    ),
    "models/schema.yml": """
version: 2
models:
  - name: people_table
    columns:
      - name: id
        data_tests: [unique, not_null]
      - name: tier
        data_tests:
          - accepted_values: {arguments: {values: [gold, silver, bronze, platinum]}}
unit_tests:
  - name: people_table_joins_name_and_tier
    model: people_table
    given:
      - input: ref('people_view')
        rows: [{id: 1, name: ANN}]
      - input: ref('people_ephemeral')  # dbt: an ephemeral input is given as SQL
        format: sql
        rows: select 1 as id, 'gold' as tier
    expect:
      rows: [{id: 1, name: ANN, tier: gold}]
""",
    "tests/singular/no_negative_sales.sql": "select * from {{ ref('sales_merge') }} where amount < 0",
}


@pytest.fixture(scope="module")
def project(make_project):
    dbt = make_project("parity", FILES, project={"test-paths": ["tests/singular"]})
    dbt.run("seed")
    return dbt


def provider(spark, table):
    return {r.col_name: r.data_type for r in spark.sql(f"describe table extended {table}").collect()}["Provider"]


def test_seeds_load_into_iceberg_and_reload(project, spark):
    assert provider(spark, "lakeplan_parity.people") == "iceberg"
    project.run("seed")  # a second load: no LOCATION_ALREADY_EXISTS
    project.run("seed", "--full-refresh")


def test_materializations_tests_and_unit_tests(project, spark):
    results = project.run("build", "--exclude", "fragile", "resource_type:snapshot").result.results
    statuses = {r.node.name: str(r.status) for r in results}
    assert statuses["people_table_joins_name_and_tier"] == "pass"  # a dbt unit test
    assert statuses["no_negative_sales"] == "pass"  # a singular test
    assert sorted(spark.sql("select * from lakeplan_parity.people_table").collect())[0].name == "ANN"
    for table in ["people_table", "sales_merge", "sales_append", "sales_overwrite"]:
        assert provider(spark, f"lakeplan_parity.{table}") == "iceberg"

    project.run("run", "--select", "sales_merge", "sales_append", "sales_overwrite", factor=3)
    assert sorted(r.amount for r in spark.sql("select * from lakeplan_parity.sales_merge").collect()) == [30, 60]
    assert spark.sql("select count(*) from lakeplan_parity.sales_append").first()[0] == 4
    # insert_overwrite on Iceberg replaces only the partition the run wrote
    assert sorted((str(r.day), r.amount) for r in spark.sql("select * from lakeplan_parity.sales_overwrite").collect()) == [
        ("2024-01-01", 10), ("2024-01-02", 60)
    ]


def test_a_failing_test_fails(project):
    write_files(project.path, {"tests/singular/always_fails.sql": "select 1 as failure"})
    try:
        log = project.fail("test", "--select", "always_fails")
        assert "Failure in test always_fails" in log
    finally:
        (project.path / "tests" / "singular" / "always_fails.sql").unlink()


def test_show_and_docs_catalog(project):
    shown = project.run("show", "--inline", "select id, tier from {{ ref('people') }} order by id", "--limit", "2")
    table = shown.result.results[0].agate_table
    assert [(int(row["id"]), row["tier"]) for row in table.rows] == [(1, "gold"), (2, "silver")]
    project.run("docs", "generate")
    catalog = json.loads((project.path / "target" / "catalog.json").read_text())
    node = catalog["nodes"]["model.lakeplan.people_table"]
    assert set(node["columns"]) == {"id", "name", "tier"}


def test_retry_reruns_what_failed(project, spark):
    project.fail("run", "--select", "fragile", "--write-json")  # what retry reads
    result, _ = project.invoke("retry", healthy="true")
    assert result.success and [r.node.name for r in result.result.results] == ["fragile"]
    assert spark.sql("select * from lakeplan_parity.fragile").count() == 1


def test_snapshots_close_and_open_versions_across_runs(project, spark):
    def history(strategy):
        rows = spark.sql(f"select id, tier, dbt_valid_to is null as current from lakeplan_parity.people_{strategy}").collect()
        return sorted((r.id, r.tier, r.current) for r in rows)

    for people in (PEOPLE_V1, PEOPLE_V2, PEOPLE_V3):
        write_files(project.path, {"seeds/people.csv": people})
        project.run("seed", "--full-refresh", "--select", "people")
        project.run("snapshot")
    assert history("check") == SNAPSHOT_HISTORY and history("timestamp") == SNAPSHOT_HISTORY


def test_clone_is_refused_with_the_reason(project, tmp_path):
    # dbt-spark clones with Delta's SHALLOW CLONE; Iceberg has no SQL clone, so dbt clone cannot apply.
    project.run("compile", "--write-json")
    state = tmp_path / "state"
    state.mkdir()
    (state / "manifest.json").write_text((project.path / "target" / "manifest.json").read_text())
    log = project.fail("clone", "--state", str(state), "--select", "people_table", "--full-refresh")
    assert "shallow clone requires file_format be set to 'delta'" in log
