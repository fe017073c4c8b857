"""Every misconfiguration of sources and changelog models fails at compile time with a dbt error that
names the source or model, the setting and the fix; none passes silently."""

import pytest

SOURCES = """
version: 2
sources:
  - name: bad
    schema: lakeplan_errors
    tables:
      - {name: zero, identifier: rows, meta: {scan_parallelism: 0}}
      - {name: text, identifier: rows, meta: {scan_parallelism: four}}
      - {name: fraction, identifier: rows, meta: {scan_parallelism: 2.5}}
      - {name: no_key, identifier: rows, meta: {changelog_mode: upsert}}
      - {name: mode, identifier: rows, meta: {changelog_mode: retract, primary_key: [id]}}
      - {name: wrong_key, identifier: rows, meta: {changelog_mode: upsert, primary_key: [customer_id], op_column: op}}
      - {name: wrong_op, identifier: rows, meta: {changelog_mode: all, primary_key: [id]}}
      - {name: wrong_sequence, identifier: rows, meta: {changelog_mode: upsert, primary_key: [id], op_column: op, sequence_by: lsn}}
      - {name: key_type, identifier: rows, meta: {changelog_mode: upsert, primary_key: {id: 1}, op_column: op}}
"""

CASES = {
    "zero": ("Invalid configured parallelism 0 for source `bad.zero`", "meta.scan_parallelism"),
    "text": ('Invalid configured parallelism "four" for source `bad.text`', "positive integer"),
    "fraction": ("Invalid configured parallelism 2.5 for source `bad.fraction`", "meta.scan_parallelism"),
    "no_key": ("source `bad.no_key` is a changelog source (changelog_mode: upsert) without `meta.primary_key`", "Fix:"),
    "mode": ('Unknown changelog_mode "retract" for source `bad.mode`', "insert_only, upsert, all"),
    "wrong_key": ("source `bad.wrong_key` sets `meta.primary_key` to a column it does not have: `customer_id`", "id, op, seq"),
    "wrong_op": ("source `bad.wrong_op` sets `meta.op_column` to a column it does not have: `_op`", "Fix:"),
    "wrong_sequence": ("source `bad.wrong_sequence` sets `meta.sequence_by` to a column it does not have: `lsn`", "Fix:"),
    "key_type": ("Invalid `primary_key`", "source `bad.key_type`"),
}

MODELS = {f"models/read_{name}.sql": f"select * from {{{{ scan_source('bad', '{name}') }}}}" for name in CASES}
MODEL_CASES = {
    "sink_zero": (
        "{{ config(materialized='table', parallelism=-1) }}\nselect 1 as id",
        ("Invalid configured parallelism -1 for model `sink_zero`", "`parallelism`"),
    ),
    "upsert_no_key": (
        "{{ config(materialized='upsert') }}\nselect 1 as id, '+I' as _op",
        ("model `upsert_no_key` is materialized as `upsert` but has no `unique_key`", "Fix:"),
    ),
    "upsert_no_op": (
        "{{ config(materialized='upsert', unique_key='id') }}\nselect 1 as id",
        ("model `upsert_no_op` sets `op_column` to `_op`, which its query does not select", "Fix:"),
    ),
    "upsert_parquet": (
        "{{ config(materialized='upsert', unique_key='id', file_format='parquet') }}\nselect 1 as id, '+I' as _op",
        ("model `upsert_parquet` is materialized as `upsert` with file_format \"parquet\"", "iceberg"),
    ),
}


@pytest.fixture(scope="module")
def project(make_project):
    files = {
        "models/sources.yml": SOURCES,
        "seeds/rows.csv": "id,op,seq\n1,+I,1\n",
        **MODELS,
        **{f"models/{name}.sql": sql for name, (sql, _) in MODEL_CASES.items()},
    }
    dbt = make_project("errors", files)
    dbt.run("seed")
    return dbt


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_source_setting_is_a_compile_error(project, name):
    log = project.fail("compile", "--select", f"read_{name}")
    assert f"Compilation Error in model read_{name}" in log
    for fragment in CASES[name]:
        assert fragment in log


@pytest.mark.parametrize("name", sorted(MODEL_CASES))
def test_bad_model_setting_fails_before_any_write(project, spark, name):
    log = project.fail("run", "--select", name)
    for fragment in MODEL_CASES[name][1]:
        assert fragment in log
    assert spark.sql(f"show tables in lakeplan_errors like '{name}'").count() == 0
