"""Every misconfiguration of sources and changelog models fails at compile time with a dbt error that
names the source or model, the setting and the fix; none passes silently."""

import pytest

PARSE_SOURCES = """
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
      - {name: key_type, identifier: rows, meta: {changelog_mode: upsert, primary_key: {id: 1}, op_column: op}}
"""
PARSE_MODELS = {
    "models/sink_zero.sql": "{{ config(materialized='table', parallelism=-1) }}\nselect 1 as id",
    "models/upsert_no_key.sql": "{{ config(materialized='upsert') }}\nselect 1 as id, '+I' as _op",
    "models/upsert_parquet.sql": (
        "{{ config(materialized='upsert', unique_key='id', file_format='parquet') }}\nselect 1 as id, '+I' as _op"
    ),
}
PARSE_CASES = [
    ("source `bad.zero` sets `scan_parallelism: 0`", "Fix: e.g. `scan_parallelism: 4`"),
    ("source `bad.text` sets `scan_parallelism: 'four'`", "Fix: e.g. `scan_parallelism: 4`"),
    ("source `bad.fraction` sets `scan_parallelism: 2.5`", "Fix: e.g. `scan_parallelism: 4`"),
    ("source `bad.no_key` is a changelog (changelog_mode: upsert) without `primary_key`", "Fix:"),
    ("source `bad.mode` sets `changelog_mode: 'retract'`", "Fix: one of `insert_only`, `upsert`, `all`"),
    ("source `bad.key_type` sets `primary_key: {'id': 1}`", "Fix: e.g. `primary_key:"),
    ("model `sink_zero` sets `parallelism: -1`", "Fix: e.g. `parallelism: 4`"),
    ("Model `upsert_no_key` is materialized as `upsert` but has no `unique_key`", "Fix:"),
    ("Model `upsert_parquet` is materialized as `upsert` with file_format 'parquet'", "Fix: set `file_format: iceberg`"),
]


def test_every_bad_setting_stops_the_parse_and_is_named_with_its_fix(make_project):
    log = make_project("errors_parse", {"models/sources.yml": PARSE_SOURCES, **PARSE_MODELS}).fail("parse")
    assert f"lakeplan found {len(PARSE_CASES)} problem(s) in this project's settings" in log
    for owner, fix in PARSE_CASES:
        [line] = [line for line in log.splitlines() if owner in line]
        assert fix in line


# What only the database can tell: columns the settings name that the source or query does not have.
SOURCES = """
version: 2
sources:
  - name: bad
    schema: lakeplan_errors
    tables:
      - {name: wrong_key, identifier: rows, meta: {changelog_mode: upsert, primary_key: [customer_id], op_column: op}}
      - {name: wrong_op, identifier: rows, meta: {changelog_mode: all, primary_key: [id]}}
      - {name: wrong_sequence, identifier: rows, meta: {changelog_mode: upsert, primary_key: [id], op_column: op, sequence_by: lsn}}
"""

CASES = {
    "wrong_key": ("source `bad.wrong_key` sets `meta.primary_key` to a column it does not have: `customer_id`", "id, op, seq"),
    "wrong_op": ("source `bad.wrong_op` sets `meta.op_column` to a column it does not have: `_op`", "Fix:"),
    "wrong_sequence": ("source `bad.wrong_sequence` sets `meta.sequence_by` to a column it does not have: `lsn`", "Fix:"),
}

MODELS = {f"models/read_{name}.sql": f"select * from {{{{ scan_source('bad', '{name}') }}}}" for name in CASES}
MODEL_CASES = {
    "upsert_no_op": (
        "{{ config(materialized='upsert', unique_key='id') }}\nselect 1 as id",
        ("model `upsert_no_op` sets no `op_column`, so it reads each row's kind from `_op` (the default), which its "
         "query does not select", "Fix: select each row's kind as `_op` (`'+I' as _op` where every row"),
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
