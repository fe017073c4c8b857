"""dbt's own features on lakeplan's materializations, as dbt documents them for table / incremental: an enforced
contract, `--empty`, `on_schema_change`."""

import pytest

from tests.conftest import snapshots, write_files
from tests.integration.test_partial_update import member, rows, target_yml

CHANGES = "batch,id,op,seq,val\n1,1,+I,1,a\n1,2,+I,1,b\n1,2,-D,2,b\n2,1,+U,3,c\n"
UPSERT_SQL = (
    "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
    "select cast(id as int) as id, op, cast(seq as int) as seq, {{ var('val', 'val') }} as val\n"
    "from {{ ref('changes') }} where batch <= {{ var('batch', 1) }}"
)


def contract_yml(val_type, enforced=True):
    return (
        "version: 2\nmodels:\n  - name: current\n"
        f"    config: {{contract: {{enforced: {str(enforced).lower()}}}}}\n    columns:\n"
        f"      - {{name: id, data_type: int}}\n      - {{name: seq, data_type: int}}\n"
        f"      - {{name: val, data_type: {val_type}}}\n"
    )


def test_an_enforced_contract_stops_an_upsert_before_it_writes(make_project, spark):
    project = make_project("contract_upsert", {"seeds/changes.csv": CHANGES, "models/current.sql": UPSERT_SQL,
                                               "models/current.yml": contract_yml("int")})  # fmt: skip
    relation = "lakeplan_contract_upsert.current"
    project.run("seed")
    # A first run whose query returns `val` as a string: nothing is created, not even the tombstones of its -D.
    log = project.fail("run")
    assert "This model has an enforced contract that failed" in log
    assert "| val         | string          | int           | data type mismatch |" in log
    assert not spark.catalog.tableExists(relation) and not spark.catalog.tableExists(f"{relation}__lakeplan_tombstones")

    # The table built without a contract; then the contract is enforced: the MERGE run fails before it writes.
    write_files(project.path, {"models/current.yml": contract_yml("int", enforced=False)})
    project.run("run")
    before = snapshots(spark, relation)
    write_files(project.path, {"models/current.yml": contract_yml("int")})
    log = project.fail("run", "--vars", "{batch: 2}")
    assert "| val         | string          | int           | data type mismatch |" in log
    assert snapshots(spark, relation) == before and rows(spark, relation) == [(1, 1, "a")]

    # The query now matches the contract, the table does not: named, nothing written, fixed by a rebuild.
    log = project.fail("run", "--vars", "{batch: 2, val: 'cast(length(val) as int)'}")
    assert ("model `current` has an enforced contract declaring `val` int, but its table "
            f"{relation} holds `val` as string") in log  # fmt: skip
    assert snapshots(spark, relation) == before and rows(spark, relation) == [(1, 1, "a")]
    project.run("run", "--vars", "{batch: 2, val: 'cast(length(val) as int)'}", "--full-refresh")
    assert rows(spark, relation) == [(1, 3, 1)]
    assert dict(spark.table(relation).dtypes)["val"] == "int"


TARGET_COLUMNS = {"id": "bigint", "stock": "int", "title": "string"}


def test_an_enforced_contract_on_a_partial_update_target_checks_its_table(make_project, spark):
    def target(stock_type):
        return target_yml("product", {**TARGET_COLUMNS, "stock": stock_type}).replace(
            '"unique_key": "id"}', '"unique_key": "id", "contract": {"enforced": true}}')

    project = make_project("contract_target", {
        "models/product.sql": "{{ partial_update_target() }}",
        "models/product.yml": target("int"),
        "models/stock.sql": member("product", "select 1 as id, 10 as stock"),
        "models/title.sql": member("product", "select 1 as id, 'book' as title"),
    })  # fmt: skip
    relation = "lakeplan_contract_target.product"
    project.run("run")
    assert rows(spark, relation) == [(1, 10, "book")]
    assert dict(spark.table(relation).dtypes) == TARGET_COLUMNS  # created with the declared types
    before = snapshots(spark, relation)
    write_files(project.path, {"models/product.yml": target("bigint")})
    # the state check sees the changed type first; keeping the table then meets the contract
    log = project.fail("run", "--vars", "{lakeplan_accept_state: [product]}")
    assert ("partial-update target `product` has an enforced contract declaring `stock` bigint, but its table "
            "lakeplan_contract_target.product holds `stock` as int") in log  # fmt: skip
    assert snapshots(spark, relation) == before
    project.run("run", "--full-refresh")
    assert dict(spark.table(relation).dtypes)["stock"] == "bigint"
