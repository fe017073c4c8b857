"""dbt snapshots of tables with a mixed-case column (`AcctName`), a plain table and a partial-update target, run
again and again: dbt-spark stages a snapshot's new rows in a view, which reports its columns in lower case, and
took `AcctName` for a missing column on the second run ([FIELDS_ALREADY_EXISTS] Cannot add column)."""

import pytest

from tests.conftest import write_files

ACCOUNTS_V1 = "id,AcctName,Balance\n1,ann,10\n2,bob,20\n"
ACCOUNTS_V2 = "id,AcctName,Balance\n1,anna,10\n2,bob,25\n3,cy,30\n"

SNAPSHOT = """{{% snapshot {name}_history %}}
{{{{ config(unique_key='id', strategy='check', check_cols='all') }}}}
select * from {{{{ ref('{name}') }}}}
{{% endsnapshot %}}
"""

FILES = {
    "seeds/accounts_seed.csv": ACCOUNTS_V1,
    "models/accounts.sql": "{{ config(materialized='table') }}\nselect * from {{ ref('accounts_seed') }}",
    "models/account_wide.sql": "{{ partial_update_target() }}",
    "models/account_wide.yml": """
version: 2
models:
  - name: account_wide
    config: {unique_key: id}
    columns:
      - {name: id, data_type: bigint}
      - {name: AcctName, data_type: string}
      - {name: Balance, data_type: bigint}
""",
    "models/account_names.sql": (
        "{{ config(partial_update_target='account_wide') }}\nselect id, AcctName from {{ ref('accounts_seed') }}"
    ),
    "models/account_balances.sql": (
        "{{ config(partial_update_target='account_wide') }}\nselect id, Balance from {{ ref('accounts_seed') }}"
    ),
    "snapshots/accounts_history.sql": SNAPSHOT.format(name="accounts"),
    "snapshots/account_wide_history.sql": SNAPSHOT.format(name="account_wide"),
}

# (id, AcctName, Balance, current) after the first and second snapshot of ACCOUNTS_V1, then one of ACCOUNTS_V2
FIRST = [(1, "ann", 10, True), (2, "bob", 20, True)]
AFTER_CHANGE = [(1, "ann", 10, False), (1, "anna", 10, True), (2, "bob", 20, False), (2, "bob", 25, True), (3, "cy", 30, True)]


def history(spark, table):
    rows = spark.sql(f"select id, AcctName, Balance, dbt_valid_to is null from lakeplan_mixed_snapshot.{table}")
    return sorted(tuple(row) for row in rows.collect())


@pytest.mark.parametrize("table", ["accounts", "account_wide"])
def test_a_snapshot_of_a_mixed_case_column_runs_again_and_records_changes(make_project, spark, table):
    project = make_project("mixed_snapshot", FILES)
    project.run("build", "--exclude", "resource_type:snapshot")
    project.run("snapshot", "--select", f"{table}_history")
    assert history(spark, f"{table}_history") == FIRST
    project.run("snapshot", "--select", f"{table}_history")  # failed here: FIELDS_ALREADY_EXISTS
    assert history(spark, f"{table}_history") == FIRST
    columns = spark.table(f"lakeplan_mixed_snapshot.{table}_history").columns
    assert columns[:3] == ["id", "AcctName", "Balance"]  # no column added, the target's case kept
    write_files(project.path, {"seeds/accounts_seed.csv": ACCOUNTS_V2})
    project.run("build", "--full-refresh", "--exclude", "resource_type:snapshot")
    project.run("snapshot", "--select", f"{table}_history")
    assert history(spark, f"{table}_history") == AFTER_CHANGE
