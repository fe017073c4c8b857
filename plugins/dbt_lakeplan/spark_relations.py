"""How dbt-spark tells an existing table's format, made to see Iceberg tables in Spark's session catalog.

dbt-spark reads the format from the `Provider:` line of SHOW TABLE EXTENDED. Through the session catalog an
Iceberg table is a Hive metastore entry printed as `Provider: hive` with the table property
`table_type=ICEBERG`, so dbt-spark takes every Iceberg table for a Hive one: snapshots refuse it ("in another
format than 'delta' or 'iceberg' or 'hudi'") and insert_overwrite writes Hive syntax. The property decides.
"""

from __future__ import annotations

import re

PROVIDER_LINE = re.compile(r"^Provider: .*$", re.MULTILINE)


def with_table_format(information: str) -> str:
    """SHOW TABLE EXTENDED information with the Provider an Iceberg table really has."""
    if "table_type=ICEBERG" in information and "Provider: iceberg" not in information:
        return PROVIDER_LINE.sub("Provider: iceberg", information, count=1)
    return information


def install() -> None:
    """Wraps dbt-spark's relation listing once per process."""
    from dbt.adapters.spark.impl import SparkAdapter

    build = SparkAdapter._build_spark_relation_list
    if getattr(build, "lakeplan", False):
        return

    def build_spark_relation_list(self, row_list, relation_info_func):
        def information(row):
            schema, name, text = relation_info_func(row)
            return schema, name, with_table_format(text)

        return build(self, row_list, information)

    build_spark_relation_list.lakeplan = True
    SparkAdapter._build_spark_relation_list = build_spark_relation_list
