"""Reading an existing table's format from SHOW TABLE EXTENDED."""

from dbt_lakeplan.spark_relations import with_table_format

ICEBERG = "Type: EXTERNAL\nProvider: hive\nTable Properties: [current-snapshot-id=1, table_type=ICEBERG]\n"


def test_an_iceberg_table_in_the_session_catalog_is_iceberg():
    assert "Provider: iceberg\n" in with_table_format(ICEBERG)
    assert "Provider: hive" not in with_table_format(ICEBERG)


def test_other_tables_keep_their_provider():
    hive = "Type: MANAGED\nProvider: parquet\nTable Properties: [transient_lastDdlTime=1]\n"
    assert with_table_format(hive) == hive
