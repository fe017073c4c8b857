"""Two fixes to dbt-spark's adapter, installed once per process by lakeplan's plugin.

Quoting: dbt-spark wraps a name in backticks without escaping a backtick inside it, so a column such as
`Seq`No` breaks every statement that names it (seeds first). Spark escapes a backtick by doubling it.

Table format: dbt-spark reads the format from the `Provider:` line of SHOW TABLE EXTENDED. Through the session catalog an
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


def quote(identifier: object) -> str:
    """A Spark identifier for any name: backticks around it, a backtick inside doubled. Like dbt-spark's own
    quote, it takes any value (Spark's `database` is None, which dbt's adapter tests quote)."""
    return "`{}`".format(str(identifier).replace("`", "``"))


def install() -> None:
    """Replaces dbt-spark's quoting and wraps its relation listing, once per process."""
    from dbt.adapters.spark.impl import SparkAdapter

    build = SparkAdapter._build_spark_relation_list
    if getattr(build, "lakeplan", False):
        return
    SparkAdapter.quote = lambda self, identifier: quote(identifier)

    def build_spark_relation_list(self, row_list, relation_info_func):
        def information(row):
            schema, name, text = relation_info_func(row)
            return schema, name, with_table_format(text)

        return build(self, row_list, information)

    build_spark_relation_list.lakeplan = True
    SparkAdapter._build_spark_relation_list = build_spark_relation_list
