"""Names with spaces, mixed case, reserved words and backticks, end to end through every macro and the plugin."""

import pytest

ODD = {"key": "Order Key", "op": "select", "seq": "Seq`No", "value": "Amount (EUR)", "group": "group"}
CHANGES = "Order Key,select,Seq`No,Amount (EUR)\n1,+I,1,10\n1,+U,2,11\n2,+I,1,20\n2,-D,3,20\n3,+I,1,30\n"

SOURCES = """
version: 2
sources:
  - name: lake
    schema: lakeplan_odd_names
    tables:
      - name: odd_changes
        identifier: odd_changes
        meta:
          scan_parallelism: 2
          changelog_mode: upsert
          primary_key: ["Order Key"]
          op_column: select
          sequence_by: "Seq`No"
"""

WIDE_YML = """
version: 2
models:
  - name: wide_odd
    config: {alias: "select", unique_key: "Order Key", partial_update_on_delete: ignore}
    columns:
      - {name: "Order Key", data_type: bigint}
      - {name: "Amount (EUR)", data_type: double}
      - {name: group, data_type: string}
      - {name: "Seq`No", data_type: bigint}
"""


def q(name):
    return "`" + name.replace("`", "``") + "`"


FILES = {
    "seeds/odd_changes.csv": CHANGES,
    "models/sources.yml": SOURCES,
    "models/odd_current.sql": (
        "{{ config(materialized='upsert', unique_key='Order Key', op_column='select', sequence_by='Seq`No', parallelism=2) }}\n"
        f"select * from {{{{ scan_source('lake', 'odd_changes') }}}}"
    ),
    "models/wide_odd.sql": "{{ partial_update_target() }}",  # the table: a reserved word
    "models/wide_odd.yml": WIDE_YML,
    "models/odd_member_amounts.sql": (
        "{{ config(partial_update_target='wide_odd', op_column='select', sequence_by='Seq`No') }}\n"
        f"select * from {{{{ ref('odd_changes') }}}}"
    ),
    "models/odd_member_groups.sql": (
        "{{ config(partial_update_target='wide_odd') }}\n"
        f"select {q('Order Key')}, concat('g', {q('Order Key')}) as {q('group')} from {{{{ ref('odd_changes') }}}} "
        f"group by {q('Order Key')}"
    ),
    "models/odd_keyed.sql": (
        "{{ config(materialized='table', keyed_by=['Order Key'], key_groups=2) }}\n"
        f"select * from {{{{ ref('odd_changes') }}}}"
    ),
}


@pytest.fixture(scope="module")
def project(make_project):
    # dbt's own switch for table names that need quoting (here the alias "Select")
    dbt = make_project("odd_names", FILES, project={"quoting": {"identifier": True}})
    dbt.run("seed")
    return dbt


def test_odd_names_work_through_changelog_partial_update_and_keyed_models(project, spark):
    project.run("run")
    current = {r[0]: r[2] for r in spark.sql("select * from lakeplan_odd_names.odd_current").collect()}
    assert current == {1: 11.0, 3: 30.0}
    wide = sorted(tuple(r) for r in spark.sql("select * from lakeplan_odd_names.`select`").collect())
    assert wide == [(1, 11.0, "g1", 2), (2, 20.0, "g2", 1), (3, 30.0, "g3", 1)]
    layout = {r.col_name: r.data_type for r in spark.sql("describe table extended lakeplan_odd_names.odd_keyed").collect()}
    assert layout["Part 0"] == "bucket(2, `Order Key`)"
    project.run("run")  # and again, through the MERGE paths
    assert {r[0]: r[2] for r in spark.sql("select * from lakeplan_odd_names.odd_current").collect()} == current
