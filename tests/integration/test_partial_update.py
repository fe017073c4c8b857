"""Sink reuse for partial updates (FLIP-506) with Paimon's partial-update semantics, on real Iceberg."""

import json

import pytest

PRODUCT_YML = """
version: 2
models:
  - name: product
    config: {unique_key: id}
    columns:
      - {name: id, data_type: bigint}
      - {name: price, data_type: double}
      - {name: stock, data_type: int}
      - {name: title, data_type: string}
"""


def member(target, sql, **config):
    settings = ", ".join(f"{key}={value!r}" for key, value in {"partial_update_target": target, **config}.items())
    return f"{{{{ config({settings}) }}}}\n{sql}"


PAIMON = {
    "models/product.sql": "{{ partial_update_target() }}",
    "models/product.yml": PRODUCT_YML,
    # Paimon's example: <1, 23.0, 10, NULL>, then <1, NULL, NULL, 'This is a book'>, then <1, 25.2, NULL, NULL>.
    "models/first_write.sql": member("product", "select 1 as id, 23.0 as price, 10 as stock, 1 as version", sequence_by="version"),
    "models/second_write.sql": member("product", "select 1 as id, 'This is a book' as title, 2 as version", sequence_by="version"),
    "models/third_write.sql": member("product", "select 1 as id, 25.2 as price, 3 as version", sequence_by="version"),
}


@pytest.fixture(scope="module")
def paimon(make_project):
    return make_project("paimon", PAIMON)


def rows(spark, table):
    return sorted(tuple(row) for row in spark.sql(f"select * from {table}").collect())


def snapshots(spark, table):
    return spark.sql(f"select * from {table}.snapshots").count()


def test_paimon_partial_update_example(paimon, spark):
    paimon.run("run")
    assert rows(spark, "lakeplan_paimon.product") == [(1, 25.2, 10, "This is a book")]
    report = json.loads((paimon.path / "target" / "lakeplan_sink_reuse.json").read_text())
    [group] = report["targets"]["model.lakeplan.product"]["groups"]
    assert [m["name"] for m in group["members"]] == ["first_write", "second_write", "third_write"]
