"""lakeplan's fixes to dbt-spark's adapter: quoting, and an existing table's format."""

from dbt_lakeplan.spark_adapter import quote, with_table_format

ICEBERG = "Type: EXTERNAL\nProvider: hive\nTable Properties: [current-snapshot-id=1, table_type=ICEBERG]\n"


def test_an_iceberg_table_in_the_session_catalog_is_iceberg():
    assert "Provider: iceberg\n" in with_table_format(ICEBERG)
    assert "Provider: hive" not in with_table_format(ICEBERG)


def test_other_tables_keep_their_provider():
    hive = "Type: MANAGED\nProvider: parquet\nTable Properties: [transient_lastDdlTime=1]\n"
    assert with_table_format(hive) == hive


def test_a_backtick_inside_a_name_is_doubled():
    assert quote("Seq`No") == "`Seq``No`" and quote("Order Key") == "`Order Key`"


def test_none_is_quoted_as_stock_dbt_spark_quotes_it():
    # Spark's `database` is None; dbt's adapter tests quote it (dbt-spark gives `None`, no error).
    assert quote(None) == "`None`"
