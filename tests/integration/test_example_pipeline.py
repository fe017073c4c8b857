"""The example pipeline (what `make run` builds) on embedded Spark + Iceberg."""

import subprocess

import pytest

from tests.conftest import REPO, model_tables, snapshots

DAILY_HISTORY = "select snapshot_id, parent_id from lakeplan.fct_daily_revenue.history order by made_current_at"
DAILY_ROWS = "select * from lakeplan.fct_daily_revenue order by order_date"


def test_every_table_is_an_iceberg_table_with_snapshots(built, spark):
    tables = model_tables(built)
    assert "lakeplan.fct_daily_revenue" in tables and "lakeplan.market_segments" in tables
    for table in tables:
        details = {row.col_name: row.data_type for row in spark.sql(f"describe table extended {table}").collect()}
        assert details.get("Provider") == "iceberg", f"{table} is not an Iceberg table: {details}"
        assert spark.sql(f"select * from {table}.snapshots").count() >= 1, table


def test_sources_are_the_generated_tpch_data(built, spark):
    assert spark.sql("select count(*) from tpch.customer").first()[0] == 1500  # TPC-H: 150,000 x SF 0.01
    assert spark.sql("select count(*) from lakeplan.dim_customer").first()[0] == 1500


def contents(spark, build_result) -> dict:
    """Every table a build wrote, with its rows."""
    tables = model_tables(build_result)
    return {table: sorted(map(tuple, spark.sql(f"select * from {table}").collect())) for table in tables}


@pytest.fixture(scope="module")
def rebuilt(built, example, spark):
    """A second `dbt build` of the example on unchanged inputs, data tests included, with fct_daily_revenue's history
    and rows and every table's contents before it, and its result and log."""
    before = {"history": spark.sql(DAILY_HISTORY).collect(), "rows": spark.sql(DAILY_ROWS).collect(),
              "contents": contents(spark, built)}  # fmt: skip
    result, log = example.invoke("build")
    return before, result, log


def test_second_run_merges_into_the_existing_incremental_table(rebuilt, spark):
    before, result, log = rebuilt
    after = spark.sql(DAILY_HISTORY).collect()
    # The table was not re-created: its history is the old one plus exactly one new snapshot,
    # and that snapshot is the MERGE (Iceberg records a row-level MERGE as an overwrite).
    assert after[: len(before["history"])] == before["history"]
    assert len(after) == len(before["history"]) + 1 and after[-1].parent_id == before["history"][-1].snapshot_id
    operation = spark.sql(
        f"select operation from lakeplan.fct_daily_revenue.snapshots where snapshot_id = {after[-1].snapshot_id}"
    ).first()[0]
    assert operation == "overwrite"
    assert "merge into lakeplan.fct_daily_revenue" in log
    # Unchanged inputs: merging the recomputed days changes no value.
    assert spark.sql(DAILY_ROWS).collect() == before["rows"]


def test_a_second_build_on_unchanged_inputs_changes_no_table(rebuilt, built, spark):
    before, result, log = rebuilt
    assert result.success, log[-3000:]
    assert contents(spark, built) == before["contents"]
    for table, key in [("lakeplan.customer_360", "customer_key"), ("lakeplan.customer_order_status", "customer_key")]:
        assert spark.sql(f"select count(*) = count(distinct {key}) from {table}").first()[0]


def test_parse_prints_no_deprecation_warnings(example):
    events = []
    from dbt.cli.main import dbtRunner
    from dbt.deprecations import reset_deprecations

    # as a new dbt process: a deprecation dbt already counted in this worker is not told again, and its summary of
    # another project's would be counted here (tests/conftest.py's invoke)
    reset_deprecations()
    result = dbtRunner(callbacks=[events.append]).invoke(["parse", "--project-dir", str(REPO)])
    assert result.success
    deprecations = [event.info.msg for event in events if "Deprecation" in event.info.name]
    assert deprecations == []


def test_second_setup_skips_what_is_installed():
    output = subprocess.run(
        [str(REPO / "scripts" / "setup.sh")], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    assert "installing" not in output


def test_keyed_orders_save_the_order_statistics_member_two_exchanges(built, example, spark):
    from tests.spark_plans import exchanges, executed_plan

    sql = example.run("compile", "--select", "c360_order_stats").result.results[0].node.compiled_code
    assert "lakeplan.orders_by_customer" in sql
    assert exchanges(executed_plan(spark, sql)) == []
    unkeyed = sql.replace("lakeplan.orders_by_customer", "lakeplan.stg_orders")
    assert len(exchanges(executed_plan(spark, unkeyed))) == 2


def test_customer_360_is_written_by_two_groups(built, spark):
    row = spark.sql("select * from lakeplan.customer_360 where customer_key = 1").first().asDict()
    assert len(row) >= 40 and row["customer_name"] == "Customer#000000001"
    assert row["nation_name"] and row["order_count"] and row["net_revenue"] and row["latest_order_status"]
    # merge rules: the sum counter counted each order once; the status is the latest version of the changelog
    assert row["counted_orders"] == row["order_count"]
    latest = spark.sql(
        "select max(_seq) from lakeplan.stg_customer_order_status_changes where customer_key = 1 and _op in ('+I', '+U')"
    ).first()[0]
    assert row["status_seq"] == latest


def test_an_edited_seed_value_and_an_added_member_update_customer_360_without_a_rebuild(built, example, spark):
    """Issue 16, case 5: one value of market_segments.csv is data; customer_360 used to be refused, blaming the
    unchanged c360_profile, after the seed and dim_customer were already rebuilt. Issue 16: adding a member is
    compatible with the table's state (its own new column); the table is written by MERGE, every snapshot it had stays
    an ancestor of the current one (a rebuild would start a new history). One build puts the seed and the table back."""
    seed = REPO / "seeds" / "market_segments.csv"
    folder = REPO / "models" / "marts" / "customer_360"
    schema_file, member_file = folder / "_customer_360.yml", folder / "c360_loyalty.sql"
    originals = {seed: seed.read_text(), schema_file: schema_file.read_text()}
    table = "lakeplan.customer_360"
    owners = f"select distinct segment_owner from {table} where market_segment = 'MACHINERY'"
    ancestors = f"select snapshot_id from {table}.history where is_current_ancestor"
    before = snapshots(spark, table)
    try:
        seed.write_text(originals[seed].replace("MACHINERY,industrial team,1", "MACHINERY,machines team,1"))
        example.run("build", "-s", "market_segments+")
        assert [row[0] for row in spark.sql(owners).collect()] == ["machines team"]
        assert snapshots(spark, table) == before + 2  # its two groups' MERGEs, no rebuild

        history = {row[0] for row in spark.sql(ancestors).collect()}
        schema_file.write_text(originals[schema_file].replace(
            "    columns:\n      - name: customer_key\n",
            "    columns:\n      - {name: loyalty_tier, data_type: string}\n      - name: customer_key\n", 1))
        member_file.write_text("{{ config(partial_update_target='customer_360') }}\n"
                               "select customer_key, case when customer_key % 2 = 0 then 'gold' else 'silver' end"
                               " as loyalty_tier from {{ ref('stg_customer') }}\n")  # fmt: skip
        example.run("run", "-s", "customer_360")
        assert history <= {row[0] for row in spark.sql(ancestors).collect()}  # no rebuild: the old history stays
        tiers = spark.sql(f"select loyalty_tier, count(*) from {table} group by 1 order by 1").collect()
        assert [tuple(row) for row in tiers] == [("gold", 750), ("silver", 750)]
    finally:
        for path, text in originals.items():
            path.write_text(text)
        member_file.unlink(missing_ok=True)
        example.run("build", "-s", "market_segments+", "--full-refresh")  # the seed's value, and no member's column
    assert [row[0] for row in spark.sql(owners).collect()] == ["industrial team"]
    assert "loyalty_tier" not in spark.table(table).columns


def test_a_command_that_reads_no_tpch_source_stages_none(example, spark):
    spark.sql("drop table if exists tpch.region")
    example.run("run", "--select", "stg_customer_order_status_changes")
    assert not spark.catalog.tableExists("tpch.region")  # the example's on-run-start hook ran no statement for it
    example.run("run", "--select", "stg_region")
    assert spark.sql("select count(*) from tpch.region").first()[0] == 5
