"""dbt's own features on lakeplan's materializations, as dbt documents them for table / incremental: an enforced
contract, `--empty`, `on_schema_change`."""

import pytest

from tests.conftest import accepting, given, snapshots, write_files
from tests.integration.test_partial_update import member, rows, target_yml

CHANGES = "batch,id,op,seq,val\n1,1,+I,1,a\n1,2,+I,1,b\n1,2,-D,2,b\n2,1,+U,3,c\n"
UPSERT_SQL = (
    "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
    f"select cast(id as int) as id, op, cast(seq as int) as seq, {given('val', 'val')} as val\n"
    f"from {{{{ ref('changes') }}}} where batch <= {given('batch', 1)}"
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
    log = project.fail("run", batch=2)
    assert "| val         | string          | int           | data type mismatch |" in log
    assert snapshots(spark, relation) == before and rows(spark, relation) == [(1, 1, "a")]

    # The query now matches the contract, the table does not: named, nothing written, fixed by a rebuild.
    log = project.fail("run", batch=2, val="cast(length(val) as int)")
    assert ("model `current` has an enforced contract declaring `val` int, but its table "
            f"{relation} holds `val` as string") in log  # fmt: skip
    assert snapshots(spark, relation) == before and rows(spark, relation) == [(1, 1, "a")]
    project.run("run", "--full-refresh", batch=2, val="cast(length(val) as int)")
    assert rows(spark, relation) == [(1, 3, 1)]
    assert dict(spark.table(relation).dtypes)["val"] == "int"



def test_a_contract_that_widens_an_upsert_column_names_sync_all_columns_which_keeps_every_value(make_project, spark):
    """The contract widens `val` from int to bigint over a kept table: the error names on_schema_change:
    sync_all_columns (Iceberg widens the stored column in place), not a rebuild alone; with it set, the stored rows
    stay and 3,000,000,000 is written. The changed logic is accepted from the first command (a first run has none to
    accept)."""
    project = make_project("contract_widen", {"seeds/changes.csv": CHANGES, "models/current.yml": contract_yml("int"),
                                              "models/current.sql": UPSERT_SQL}, accepting("current"))  # fmt: skip
    relation = "lakeplan_contract_widen.current"
    project.run("seed")
    project.run("run", val="cast(length(val) as int)")
    before = snapshots(spark, relation)
    write_files(project.path, {"models/current.yml": contract_yml("bigint")})
    widened = {"batch": 2, "val": "cast(length(val) as bigint) * 3000000000"}
    log = project.fail("run", **widened)
    assert (f"model `current` has an enforced contract declaring `val` bigint, but its table {relation} holds `val` as "
            "int") in log
    assert ("Fix: set `on_schema_change: sync_all_columns` on `current`: it widens `val` from int to bigint in place "
            "and keeps every value") in log
    assert snapshots(spark, relation) == before and rows(spark, relation) == [(1, 1, 1)]
    synced = UPSERT_SQL.replace("op_column='op'", "op_column='op', on_schema_change='sync_all_columns'")
    write_files(project.path, {"models/current.sql": synced})
    project.run("run", **widened)
    assert rows(spark, relation) == [(1, 3, 3000000000)]
    assert dict(spark.table(relation).dtypes)["val"] == "bigint"

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
    }, accepting("product"))  # fmt: skip
    relation = "lakeplan_contract_target.product"
    project.run("run")
    assert rows(spark, relation) == [(1, 10, "book")]
    assert dict(spark.table(relation).dtypes) == TARGET_COLUMNS  # created with the declared types
    before = snapshots(spark, relation)
    write_files(project.path, {"models/product.yml": target("double")})
    # the state check sees the changed type first (accepted from the first command on: a first run has no state to
    # accept, and a widened column evolves the state, accepted or not); keeping the table then meets the contract
    log = project.fail("run")
    assert ("partial-update target `product` has an enforced contract declaring `stock` double, but its table "
            "lakeplan_contract_target.product holds `stock` as int") in log  # fmt: skip
    assert snapshots(spark, relation) == before
    # a type Iceberg widens in place meets the contract once the write widens the stored column
    write_files(project.path, {"models/product.yml": target("bigint")})
    project.run("run")
    assert dict(spark.table(relation).dtypes)["stock"] == "bigint"
    assert rows(spark, relation) == [(1, 10, "book")]
    project.run("run", "--full-refresh")
    assert dict(spark.table(relation).dtypes)["stock"] == "bigint"


CHANGELOG_SOURCE = """
version: 2
sources:
  - name: cdc
    schema: lakeplan_{name}
    tables:
"""
CHANGELOG_TABLE = """      - name: {table}
        meta: {{changelog_mode: all, primary_key: [id], sequence_by: seq, op_column: op}}
"""


def changelog_source(name, tables=("changes",)):
    """Source `cdc` in schema lakeplan_<name>: changelog tables (Flink's op codes, ordered by `seq`)."""
    return CHANGELOG_SOURCE.format(name=name) + "".join(CHANGELOG_TABLE.format(table=table) for table in tables)


EMPTY = {
    "seeds/changes.csv": CHANGES,
    "models/sources.yml": changelog_source("empty"),
    # an upsert over a real changelog source, read through scan_source (whose column check describes the table)
    "models/current.sql": (
        "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
        f"select id, op, seq, val from {{{{ scan_source('cdc', 'changes') }}}} where batch <= {given('batch', 1)}"
    ),
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "seq": "bigint", "val": "string", "n": "bigint"},
                                  partial_update_on_delete="remove_record"),  # fmt: skip
    "models/wide_cdc.sql": member("wide", "select id, op, seq, val from {{ ref('changes') }} where batch <= "
                                  + given("batch", 1), op_column="op", sequence_by="seq"),  # fmt: skip
    "models/wide_n.sql": member("wide", "select id, count(*) as n from {{ ref('changes') }} group by id"),
    "models/keyed.sql": (
        "{{ config(materialized='table', keyed_by='id', key_groups=2) }}\nselect id, val from {{ ref('changes') }}"
    ),
}
EMPTY_TABLES = ["current", "current__lakeplan_tombstones", "wide", "wide__lakeplan_tombstones"]


def test_empty_builds_every_model_and_writes_no_existing_table(make_project, spark):
    project = make_project("empty", EMPTY)
    project.run("seed")
    # a first run under --empty creates the tables, empty, as dbt's incremental does
    project.run("build", "--empty", "--exclude", "resource_type:seed")
    assert [spark.table(f"lakeplan_empty.{t}").count() for t in ["current", "wide", "keyed"]] == [0, 0, 0]

    project.run("run", batch=2)
    tables = {t: (snapshots(spark, f"lakeplan_empty.{t}"), rows(spark, f"lakeplan_empty.{t}")) for t in EMPTY_TABLES}
    assert tables["current"][1] == [(1, 3, "c")] and tables["wide"][1] == [(1, 3, "c", 2)]
    assert tables["current__lakeplan_tombstones"][1][0][:2] == (2, 2)  # key 2's delete, remembered
    for empty_run in (["build", "--empty"], ["run", "--empty", "--full-refresh"]):
        project.run(*empty_run, "--exclude", "resource_type:seed", batch=2)
        after = {t: (snapshots(spark, f"lakeplan_empty.{t}"), rows(spark, f"lakeplan_empty.{t}")) for t in EMPTY_TABLES}
        assert after == tables, empty_run  # not one commit, not one row changed
        assert project.shown.count("NOT WRITTEN (--empty)") == 2, empty_run  # the upsert and the target
        assert spark.table("lakeplan_empty.keyed").count() == 0  # dbt's table: rebuilt, empty, as dbt documents


SCHEMA_CHANGE_SQL = (
    "{{{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op', "
    "on_schema_change='{setting}') }}}}\n"
    "select * from {{{{ source('cdc', '{table}') }}}} where batch = {batch}"
)


def schema_change_sql(setting, table):
    """An upsert with on_schema_change `setting` over changelog source table `table`, reading the given batch."""
    return SCHEMA_CHANGE_SQL.format(setting=setting, table=table, batch=given("batch", 1))


SCHEMA_CASES = {  # the upsert's rows (batch, id, seq, ...) after the changed source's batch 2
    "ignore": [(1, 2, 1, "b"), (2, 1, 3, "c")],  # `extra` is not written
    "append_new_columns": [(1, 2, 1, "b", None), (2, 1, 3, "c", "new")],
    "sync_all_columns": [(1, 2, 1, None), (2, 1, 3, "new")],  # `val` dropped, `extra` added
}


SCHEMA_SETTINGS = ["ignore", "append_new_columns", "sync_all_columns", "fail"]


@pytest.fixture(scope="module")
def schema_changes(make_project, spark):
    """An upsert `current_<setting>` per on_schema_change setting over its own changelog source, whose batch 2 adds
    `extra` (and drops `val` for sync_all_columns): one project, one seed, one run of batch 1 and one of batch 2
    for all four (a project per setting cost a parse and three dbt calls each). Returns the batch-2 run's log and
    each upsert's snapshots before it."""
    files = {"models/sources.yml": changelog_source("schema_change", [f"changes_{s}" for s in SCHEMA_SETTINGS])}
    for setting in SCHEMA_SETTINGS:
        files[f"seeds/changes_{setting}.csv"] = "batch,id,op,seq,val\n1,1,+I,1,a\n1,2,+I,1,b\n"
        files[f"models/current_{setting}.sql"] = schema_change_sql(setting, f"changes_{setting}")
    project = make_project("schema_change", files)
    project.run("seed")
    project.run("run")
    for setting in SCHEMA_SETTINGS:
        source = f"lakeplan_schema_change.changes_{setting}"
        spark.sql(f"alter table {source} add columns (extra string)")
        if setting == "sync_all_columns":
            spark.sql(f"alter table {source} drop column val")
            spark.sql(f"insert into {source} (batch, id, op, seq, extra) values (2, 1, '+U', 3, 'new')")
        else:
            spark.sql(f"insert into {source} values (2, 1, '+U', 3, 'c', 'new')")
    before = {setting: snapshots(spark, f"lakeplan_schema_change.current_{setting}") for setting in SCHEMA_SETTINGS}
    return project.fail("run", batch=2), before  # current_fail fails, the others write


@pytest.mark.parametrize("setting", SCHEMA_SETTINGS)
def test_on_schema_change_applies_to_an_upsert(schema_changes, spark, setting):
    log, before = schema_changes
    relation = f"lakeplan_schema_change.current_{setting}"
    if setting == "fail":
        assert ("model `current_fail` has on_schema_change: fail, and its query no longer matches its table "
                f"{relation} (new `extra` string); nothing was written. Fix: set on_schema_change to "
                "append_new_columns, which keeps every stored column, or rebuild the table") in log  # fmt: skip
        assert "or sync_all_columns" not in log  # it would drop a column the query no longer selects
        assert snapshots(spark, relation) == before[setting]
        assert rows(spark, relation) == [(1, 1, 1, "a"), (1, 2, 1, "b")]
        return
    assert rows(spark, relation) == SCHEMA_CASES[setting]
    assert snapshots(spark, relation) == before[setting] + 1


def test_on_schema_change_where_it_cannot_apply_is_said_at_parse(make_project):
    project = make_project("schema_parse", {
        "seeds/changes.csv": CHANGES,
        "models/current.sql": UPSERT_SQL.replace("op_column='op'", "op_column='op', on_schema_change='append'"),
        "models/product.sql": "{{ config(on_schema_change='append_new_columns') }}\n{{ partial_update_target() }}",
        "models/product.yml": target_yml("product", TARGET_COLUMNS),
        "models/stock.sql": member("product", "select 1 as id, 10 as stock"),
    })  # fmt: skip
    log = project.fail("parse")
    assert "model `current` sets on_schema_change: 'append', which an `upsert` does not know. Fix: set one of " \
           "ignore, fail, append_new_columns, sync_all_columns." in log
    write_files(project.path, {"models/current.sql": UPSERT_SQL})
    project.run("parse")
    assert ("lakeplan: model `product` sets on_schema_change: append_new_columns, which a partial-update target does "
            "not follow") in project.shown


def test_sync_all_columns_refuses_a_type_iceberg_cannot_change_in_place(make_project, spark):
    project = make_project("schema_retype", {
        "seeds/changes.csv": "batch,id,op,seq,val\n1,1,+I,1,a\n",
        "models/sources.yml": changelog_source("schema_retype"),
        "models/current.sql": schema_change_sql("sync_all_columns", "changes"),
    })  # fmt: skip
    source, relation = "lakeplan_schema_retype.changes", "lakeplan_schema_retype.current"
    project.run("seed")
    project.run("run")
    spark.sql(f"alter table {source} drop column val")
    spark.sql(f"alter table {source} add columns (val int)")
    spark.sql(f"insert into {source} values (2, 1, '+U', 3, 7)")
    before = snapshots(spark, relation)
    log = project.fail("run", batch=2)
    assert (f"model `current` has on_schema_change: sync_all_columns, and its query now selects `val` as int where its "
            f"table {relation} holds string, a change Iceberg cannot make in place") in log
    assert snapshots(spark, relation) == before and rows(spark, relation) == [(1, 1, 1, "a")]
    assert dict(spark.table(relation).dtypes)["val"] == "string"


def test_an_upsert_selecting_types_iceberg_stores_as_others_is_no_schema_change(make_project, spark):
    """A tinyint is stored as an int and a varchar(n) as a string: the query's types are the table's, so a strict
    on_schema_change and an enforced contract declaring tinyint have nothing to stop (each stopped the second run:
    `small` int -> tinyint; a contract declaring `val` tinyint over a table holding int, to be fixed by a rebuild
    that stores int again)."""
    strict = UPSERT_SQL.replace("op_column='op'", "op_column='op', on_schema_change='fail'")
    project = make_project("stored_alike", {
        "seeds/changes.csv": CHANGES,
        "models/alike.sql": strict.replace(" as val\n", " as val, cast(seq as tinyint) as small, "
                                                         "cast(val as varchar(5)) as label\n"),
        "models/current.sql": strict, "models/current.yml": contract_yml("tinyint"),
    })
    project.run("seed")
    for batch in (1, 2):
        project.run("run", batch=batch, val="cast(length(val) * seq as tinyint)")
    assert rows(spark, "lakeplan_stored_alike.alike") == [(1, 3, 3, 3, "c")]
    assert dict(spark.table("lakeplan_stored_alike.alike").dtypes) == {
        "id": "int", "seq": "int", "val": "int", "small": "int", "label": "string"}
    assert rows(spark, "lakeplan_stored_alike.current") == [(1, 3, 3)]
