"""Every error names what failed: the model or member, the column, the value and the fix, in one sentence, and
leaves the table as it was; what can be known without a database is refused when dbt parses the project.

A run's batch reaches the models as a `given` value, not --vars, which would make dbt parse the project again in
full on every run."""

import pytest

from tests.conftest import accepting, given, snapshots, write_files
from tests.integration.test_partial_update import member, rows, target_yml

VALUES = "batch,id,a,b\n1,1,1,10\n2,1,-5,20\n"
BATCH_ROWS = f"from {{{{ ref('vals') }}}} where batch = {given('batch', 1)}"
BATCH = f"{BATCH_ROWS} and assert_true(a >= 0) is null"
WIDE = {
    "seeds/vals.csv": VALUES,
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint"}),
}


@pytest.mark.parametrize("members, named", [
    ({"models/m1.sql": member("wide", f"select id, a, b {BATCH}")},
     "Member `m1` of `wide` failed while `wide` was written: '(a#"),
    ({"models/m1.sql": member("wide", f"select id, a {BATCH}"),
      "models/m2.sql": member("wide", f"select id, b {BATCH_ROWS}")},
     "A member of `wide` (`m1`, `m2`) failed while `wide` was written: '(a#"),
], ids=["one_member", "two_members"])  # fmt: skip
def test_a_members_own_check_names_the_target_and_its_members(make_project, spark, members, named):
    project = make_project("named_member_check", {**WIDE, **members})
    project.run("seed")
    project.run("run", batch=1)
    relation = "lakeplan_named_member_check.wide"
    before = snapshots(spark, relation)
    log = project.fail("run", batch=2)
    assert named in log
    assert "is not true!; `wide` is unchanged. Fix: correct the check or the data in " in log
    assert rows(spark, relation) == [(1, 1, 10)] and snapshots(spark, relation) == before


@pytest.mark.parametrize("sequence", ["", ", sequence_by='b'"], ids=["merge", "tombstones_first"])
def test_an_upserts_own_check_names_the_model(make_project, spark, sequence):
    project = make_project("named_upsert_check", {
        "seeds/vals.csv": VALUES,
        "models/current.sql": f"{{{{ config(materialized='upsert', unique_key='id'{sequence}) }}}}\n"
                              f"select id, a, b, if(b > 0, '+I', '-D') as _op {BATCH}",  # not a constant: read
    })  # fmt: skip
    project.run("seed")
    project.run("run", batch=1)
    relation = "lakeplan_named_upsert_check.current"
    before = snapshots(spark, relation)
    log = project.fail("run", batch=2)
    assert "The query of upsert `current` failed while `current` was written: '(a#" in log
    assert "is not true!; `current` is unchanged. Fix: correct the check or the data in `current`'s query" in log
    assert rows(spark, relation) == [(1, 1, 10)] and snapshots(spark, relation) == before


@pytest.mark.parametrize("kind", ["partial_update", "upsert"])
def test_a_key_whose_type_changed_is_named_before_anything_is_written(make_project, spark, kind):
    key = "cast(id as {})"
    files = {
        "partial_update": lambda key_type: {
            **WIDE, "models/wide.yml": target_yml("wide", {"id": key_type, "a": "bigint", "b": "bigint"}),
            "models/m1.sql": member("wide", "select id, a, b from {{ ref('vals') }} where batch = 1")},
        "upsert": lambda key_type: {
            "seeds/vals.csv": VALUES,
            "models/wide.sql": "{{ config(materialized='upsert', unique_key='id') }}\n"
                               f"select {key.format(key_type)} as id, a, b, '+I' as _op from {{{{ ref('vals') }}}} "
                               "where batch = 1"},
    }[kind]  # fmt: skip
    # the changed logic accepted from the first command (it counts only where a stored fingerprint differs)
    project = make_project(f"named_key_type_{kind}", files("bigint"), accepting("wide"))
    project.run("seed")
    project.run("run")
    relation = f"lakeplan_named_key_type_{kind}.wide"
    before = snapshots(spark, relation)
    write_files(project.path, files("string"))
    log = project.fail("run")  # the changed logic accepted: its types next
    owner, source, fix = {
        "partial_update": ("partial-update target `wide`", "its YAML now declares",
                           "Fix: set its data_type back to bigint, or rebuild the table with `dbt run -s wide --full-refresh`"),
        "upsert": ("upsert `wide`", "its query now gives",  # a cast of text back to bigint would make it NULL
                   "Fix: rebuild the table to store `id` as string: dbt run --full-refresh -s wide (remembered deletes "
                   "are kept); casting it to bigint in the query instead would turn each value bigint cannot hold "
                   "into NULL or another number, in silence."),
    }[kind]  # fmt: skip
    assert (f"Column `id` of {owner} is stored as bigint, but {source} string, which the table cannot take without a "
            "cast that may lose values; `wide` is unchanged.") in log
    assert fix in log
    assert rows(spark, relation) == [(1, 1, 10)] and snapshots(spark, relation) == before


UPSERT_OVER_SOURCE = """{{{{ config(materialized='upsert', unique_key='id'{settings}) }}}}
select id, val, '+I' as _op from {{{{ source('raw', 'src') }}}}
"""


def test_an_upsert_whose_source_column_widened_is_told_the_fix_that_keeps_every_value(make_project, spark):
    """An upsert's source column widens from int to bigint and then holds 3,000,000,000: the error names
    `on_schema_change: sync_all_columns` (Iceberg widens the stored column in place), not a cast back to int, which
    would turn that value into another number. Taking the fix keeps the stored rows and writes the new value."""
    schema = "lakeplan_named_widen"
    project = make_project("named_widen", {
        "models/sources.yml": f"version: 2\nsources:\n  - name: raw\n    schema: {schema}\n    tables:\n"
                              "      - name: src\n",
        "models/current.sql": UPSERT_OVER_SOURCE.format(settings=""),
    })  # fmt: skip
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create or replace table {schema}.src (id int, val int) using iceberg")
    spark.sql(f"insert into {schema}.src values (1, 5)")
    project.run("run")
    relation = f"{schema}.current"
    before = snapshots(spark, relation)
    spark.sql(f"alter table {schema}.src alter column val type bigint")
    spark.sql(f"insert into {schema}.src values (2, 3000000000)")
    log = project.fail("run")
    assert ("Column `val` of upsert `current` is stored as int, but its query now gives bigint, which the table cannot "
            "take without a cast that may lose values; `current` is unchanged.") in log
    assert ("Fix: set `on_schema_change: sync_all_columns` on `current`: it widens `val` from int to bigint in place "
            "and keeps every value") in log
    assert "back to int" not in log and "cast `val` to int" not in log
    assert rows(spark, relation) == [(1, 5)] and snapshots(spark, relation) == before
    write_files(project.path, {"models/current.sql": UPSERT_OVER_SOURCE.format(
        settings=", on_schema_change='sync_all_columns'")})
    project.run("run")
    assert rows(spark, relation) == [(1, 5), (2, 3000000000)]
    assert dict(spark.table(relation).dtypes)["val"] == "bigint"


@pytest.mark.parametrize("files, message", [
    ({**WIDE, "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "decimal(38,6", "b": "bigint"}),
      "models/m1.sql": member("wide", "select 1 as id")},
     "Column `a` of partial-update target `wide` has data_type `decimal(38,6`, which Spark cannot parse: `)` expected "
     "at the end. Fix:"),
    ({"models/plain.sql": "{{ config(materialized='table', contract={'enforced': true}) }}\nselect 1 as id",
      "models/plain.yml": "version: 2\nmodels:\n  - name: plain\n    columns:\n      - {name: id, data_type: 'array<int'}\n"},
     "Column `id` of model `plain` has data_type `array<int`, which Spark cannot parse: `>` expected at the end. Fix:"),
    ({**WIDE, "models/m1.sql": member("wide", "select 1 as id"), "models/wide.yml": (  # unquoted in a flow mapping
        "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: id}\n    columns:\n"
        "      - {name: id, data_type: bigint}\n      - {name: a, data_type: decimal(18,2)}\n"
        "      - {name: b, data_type: 'map<string,int>'}\n")},
     "Column `a` of partial-update target `wide` has data_type `decimal(18`, which Spark cannot parse: `)` expected at "
     "the end. Fix: quote the type, `data_type: 'decimal(18,2)'`: in a YAML flow mapping (`{name: ..., data_type: "
     "...}`) a comma ends the value."),
    ({**WIDE, "models/m1.sql": member("wide", "select 1 as id"), "models/wide.yml": (  # cut, and misspelt
        "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: id}\n    columns:\n"
        "      - {name: id, data_type: bigint}\n      - {name: a, data_type: decimall(5,2)}\n")},
     "has data_type `decimall(5`, which Spark cannot parse: `decimall` is no Spark type; did you mean decimal? Fix: "
     "quote the type, `data_type: 'decimall(5,2)'`: in a YAML flow mapping (`{name: ..., data_type: ...}`) a comma "
     "ends the value, and use a type Spark parses"),
], ids=["target_column", "contract_column", "flow_mapping", "flow_mapping_misspelt"])  # fmt: skip
def test_a_data_type_spark_cannot_parse_stops_the_parse(make_project, spark, files, message):
    project = make_project("named_data_type", files)
    log = project.fail("parse")
    assert message in log and ("Fix: use a type Spark parses" in log or "Fix: quote the type" in log)


DUPLICATE = "`id` and `Id` are one column, as Spark ignores case in column names; list each column once"


@pytest.mark.parametrize("files, owner", [
    ({"models/current.sql": "{{ config(materialized='upsert', unique_key=['id', 'Id']) }}\nselect 1 as id, '+I' as _op"},
     "model `current` sets `unique_key: ['id', 'Id']`"),
    ({**WIDE, "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint"}).replace(
        '"unique_key": "id"', '"unique_key": ["id", "Id"]'), "models/m1.sql": member("wide", "select 1 as id")},
     "model `wide` sets `unique_key: ['id', 'Id']`"),
    ({"models/sources.yml": "version: 2\nsources:\n  - name: raw\n    tables:\n"
                            "      - {name: changes, meta: {changelog_mode: all, primary_key: [id, Id]}}\n"},
     "source `raw.changes` sets `primary_key: ['id', 'Id']`"),
], ids=["upsert", "partial_update_target", "source_primary_key"])  # fmt: skip
def test_a_key_that_names_one_column_twice_stops_the_parse(make_project, spark, files, owner):
    log = make_project("named_duplicate_key", files).fail("parse")
    assert owner in log and DUPLICATE in log


MISSING_DATA = "/nonexistent/lakeplan_missing_source/events.parquet"


def test_a_source_whose_data_files_are_gone_is_named_with_the_fix(make_project, capsys):
    """`make clean` removes the example's generated data: the next run, or `lakeplan explain`, stopped on Spark's
    UNABLE_TO_INFER_SCHEMA, naming neither the source nor the way back (a new user's trial)."""
    from dbt_lakeplan.cli import main

    project = make_project("missing_source", {
        "models/sources.yml": "version: 2\nsources:\n  - name: raw\n    schema: lakeplan_missing_source\n    tables:\n"
                              f"      - {{name: events, external: {{location: '{MISSING_DATA}', using: parquet}}}}\n",
        "models/counted.sql": "select count(*) as n from {{ source('raw', 'events') }}",
    }, {"on-run-start": ["{{ stage_external_sources() }}"]})
    told = (f"Source `raw.events` has no data files at {MISSING_DATA} (its `external.location`), so it cannot be "
            "read. Fix: generate them (the template's example: `make data`) or correct that location.")
    project.fail("run")
    assert told in project.shown
    capsys.readouterr()
    code = main(["explain", "--project-dir", str(project.path), "--no-progress"])
    printed = capsys.readouterr().err.strip()
    assert code == 2 and printed.startswith("lakeplan explain: ") and told in printed and "\n" not in printed
