"""Pre-keyed sources and keyed models: keyed work without a shuffle, checked against the real layout."""

import pytest

from tests.conftest import env_value
from tests.spark_plans import exchanges, executed_plan

ORDERS = "order_id,customer_id,amount\n" + "".join(f"{i},{i % 37},{(i * 7) % 101}.5\n" for i in range(1, 400))
PAYMENTS = "customer_id,paid\n" + "".join(f"{c},{c * 3}.25\n" for c in range(0, 37))

SOURCES = """
version: 2
sources:
  - name: lake
    schema: lakeplan_keyed
    tables:
      - {name: orders_bucketed, identifier: orders_keyed, meta: {pre_keyed_by: [customer_id], key_groups: 4}}
      - {name: orders_parquet, identifier: orders_parquet_bucketed, meta: {pre_keyed_by: customer_id, key_groups: 4}}
      - {name: wrong_groups, identifier: orders_keyed, meta: {pre_keyed_by: [customer_id], key_groups: 8}}
      - {name: wrong_key, identifier: orders_keyed, meta: {pre_keyed_by: [order_id], key_groups: 4}}
      - {name: not_bucketed, identifier: orders_plain, meta: {pre_keyed_by: [customer_id], key_groups: 4}}
      - {name: parallel_equal, identifier: orders_keyed, meta: {pre_keyed_by: [customer_id], key_groups: 4, scan_parallelism: 4}}
"""


def keyed(key_groups):
    return f"{{{{ config(materialized='table', keyed_by=['customer_id'], key_groups={key_groups}) }}}}\n"


FILES = {
    "seeds/orders_seed.csv": ORDERS,
    "seeds/payments_seed.csv": PAYMENTS,
    "models/sources.yml": SOURCES,
    "models/orders_keyed.sql": keyed(4) + "select * from {{ ref('orders_seed') }}",
    "models/payments_keyed.sql": keyed(4) + "select * from {{ ref('payments_seed') }}",
    "models/payments_keyed_8.sql": keyed(8) + "select * from {{ ref('payments_seed') }}",
    "models/regrouped.sql": (
        f"{{{{ config(materialized='table', keyed_by=['customer_id'], key_groups={env_value('groups', 4)} | int) }}}}\n"
        "select * from {{ ref('payments_seed') }}"
    ),
    "models/orders_plain.sql": "{{ config(materialized='table') }}\nselect * from {{ ref('orders_seed') }}",
    "models/payments_plain.sql": "{{ config(materialized='table') }}\nselect * from {{ ref('payments_seed') }}",
    "models/joined_mismatch.sql": (
        "{{ config(materialized='table') }}\nselect o.order_id, p.paid from {{ ref('orders_keyed') }} as o\n"
        "join {{ ref('payments_keyed_8') }} as p on o.customer_id = p.customer_id"
    ),
    **{
        f"models/read_{name}.sql": (
            f"select customer_id, count(*) as orders from {{{{ scan_source('lake', '{name}') }}}} group by customer_id"
        )
        for name in [
            "orders_bucketed", "orders_parquet", "wrong_groups", "wrong_key", "not_bucketed", "parallel_equal",
        ]
    },
}

QUERIES = {
    "group by": "select customer_id, count(*) as n, sum(amount) as total from {orders} group by customer_id",
    "window": "select order_id, row_number() over (partition by customer_id order by order_id) as position from {orders}",
    "join": "select o.order_id, p.paid from {orders} as o join {payments} as p on o.customer_id = p.customer_id",
}


@pytest.fixture(scope="module")
def project(make_project, spark, tmp_path_factory):
    dbt = make_project("keyed", FILES)
    dbt.run("seed")
    dbt.run("run", "--exclude", "read_*")
    # A Spark-bucketed parquet table (the other layout a pre-keyed source can have), outside the warehouse.
    spark.sql("drop table if exists lakeplan_keyed.orders_parquet_bucketed")
    spark.sql(
        "create table lakeplan_keyed.orders_parquet_bucketed using parquet clustered by (customer_id) into 4 buckets "
        f"location '{tmp_path_factory.mktemp('bucketed')}/orders' as select * from lakeplan_keyed.orders_seed"
    )
    return dbt


@pytest.fixture
def no_broadcast(spark):
    # Small test tables would be broadcast (a BroadcastExchange); large keyed tables are not.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def rows(spark, sql):
    return sorted(tuple(row) for row in spark.sql(sql).collect())


@pytest.mark.parametrize("work", sorted(QUERIES))
def test_keyed_models_need_no_exchange_and_give_the_same_rows(project, spark, no_broadcast, work):
    keyed_sql = QUERIES[work].format(orders="lakeplan_keyed.orders_keyed", payments="lakeplan_keyed.payments_keyed")
    plain_sql = QUERIES[work].format(orders="lakeplan_keyed.orders_plain", payments="lakeplan_keyed.payments_plain")
    assert exchanges(executed_plan(spark, keyed_sql)) == []
    assert exchanges(executed_plan(spark, plain_sql)) != []  # the same work unbucketed shuffles
    assert rows(spark, keyed_sql) == rows(spark, plain_sql)


def test_keyed_model_is_an_iceberg_bucket_partitioned_table(project, spark):
    layout = {row.col_name: row.data_type for row in spark.sql("describe table extended lakeplan_keyed.orders_keyed").collect()}
    assert layout["Part 0"] == "bucket(4, customer_id)" and layout["Provider"] == "iceberg"


@pytest.mark.parametrize("source", ["orders_bucketed", "orders_parquet", "parallel_equal"])
def test_pre_keyed_sources_are_read_without_a_shuffle(project, spark, source):
    sql = project.run("compile", "--select", f"read_{source}").result.results[0].node.compiled_code
    assert "REPARTITION" not in sql
    assert exchanges(executed_plan(spark, sql)) == []
    assert rows(spark, sql) == rows(
        spark, "select customer_id, count(*) from lakeplan_keyed.orders_plain group by customer_id"
    )


LAYOUT_ERRORS = {
    "wrong_groups": "declares pre_keyed_by [\"customer_id\"] with key_groups 8, but its table lakeplan_keyed.orders_keyed "
    "is bucketed by [\"customer_id\"] into 4 buckets",
    "wrong_key": "declares pre_keyed_by [\"order_id\"] with key_groups 4, but its table lakeplan_keyed.orders_keyed "
    "is bucketed by [\"customer_id\"] into 4 buckets",
    "not_bucketed": "but its table lakeplan_keyed.orders_plain is not bucketed or partitioned",
}


@pytest.mark.parametrize("source", sorted(LAYOUT_ERRORS))
def test_a_wrong_declaration_is_a_clear_error(project, source):
    log = project.fail("compile", "--select", f"read_{source}")
    assert f"source `lake.{source}`" in log
    assert LAYOUT_ERRORS[source] in log
    assert "Fix:" in log


def test_join_of_different_key_groups_works_and_says_what_is_reshuffled(project, spark, no_broadcast):
    _, log = project.invoke("run", "--select", "joined_mismatch")
    assert (
        "lakeplan: model `joined_mismatch` reads keyed inputs with different key_groups "
        "(orders_keyed: 4, payments_keyed_8: 8); Spark reshuffles orders_keyed, payments_keyed_8" in log
    )
    assert spark.sql("select count(*) from lakeplan_keyed.joined_mismatch").first()[0] == 399


DECLARATION_ERRORS = {
    "models/sources.yml": (
        "version: 2\nsources:\n  - name: lake\n    tables:\n"
        "      - {name: half_declared, meta: {pre_keyed_by: [customer_id]}}\n"
        "      - {name: parallel_other, meta: {pre_keyed_by: [customer_id], key_groups: 4, scan_parallelism: 3}}\n"
    ),
    "models/two_keys.sql": "{{ config(materialized='table', keyed_by=['a', 'b'], key_groups=4) }}\nselect 1 as a, 2 as b",
}


def test_keyed_declarations_that_cannot_hold_stop_the_parse(make_project):
    log = make_project("keyed_declarations", DECLARATION_ERRORS).fail("parse")
    assert "lakeplan found 3 problem(s)" in log
    assert "source `lake.half_declared` sets only one of `pre_keyed_by` (['customer_id']) and `key_groups` (None)" in log
    assert "source `lake.parallel_other` is pre-keyed into 4 key groups but sets scan_parallelism 3" in log
    assert "model `two_keys` sets keyed_by ['a', 'b'], materialized as table" in log and "Fix: key the model by one column" in log


def test_a_rebuild_with_another_bucket_count_stops_before_it_writes_and_names_the_way_that_works(project, spark):
    # Iceberg names the new bucket field as the old (customer_id_bucket): its metadata tables could no longer be read
    table = "lakeplan_keyed.regrouped"
    before = spark.sql(f"select count(*) from {table}.snapshots").first()[0]
    log = project.fail("run", "-s", "regrouped", groups=8)
    assert ("`regrouped` sets key_groups 8 (bucket(8, `customer_id`)), but its table lakeplan_keyed.regrouped is "
            "partitioned by bucket(4, customer_id)") in log, log
    assert ("nothing was written. Fix: drop the table first (`drop table lakeplan_keyed.regrouped`, e.g. `spark-sql -e "
            "\"drop table lakeplan_keyed.regrouped\"` in the activated venv), then run `dbt run -s regrouped "
            "--full-refresh`; or keep bucket(4, customer_id).") in log, log
    assert spark.sql(f"select count(*) from {table}.snapshots").first()[0] == before
    assert spark.sql(f"select count(*) from {table}.data_files").first()[0] > 0  # its metadata reads as before
    spark.sql(f"drop table {table}")
    project.run("run", "-s", "regrouped", "--full-refresh", groups=8)
    assert "bucket(8, customer_id)" in [row.data_type for row in spark.sql(f"describe table extended {table}").collect()]
    project.run("run", "-s", "regrouped", groups=8)  # the same width again: nothing to refuse
