"""A MERGE into a small table rewrites every data file instead of first finding the files the change touches
(Spark's runtime group filter evaluates the change a second time for that): `full_rewrite_max_mib`, on the
partial-update target and on `upsert`. Read from the real table: which files the MERGE's snapshot replaced, the
rows it left, and the session afterwards."""

import pytest

from tests.conftest import given
from tests.integration.test_partial_update import member, rows, target_yml

GROUP_FILTER = "spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled"
KEYS = f"from range(0, 400) where {given('only', 'true')}"
MODELS = {
    "partial_update": {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/writer.sql": member("wide", f"select id, id * {given('factor', 1)} as a " + KEYS, parallelism=4),
    },
    "upsert": {
        "models/wide.sql": "{{ config(materialized='upsert', unique_key='id', parallelism=4, op_column='op', "
                           "full_rewrite_max_mib=var('limit', 256)) }}\n"
                           f"select id, id * {given('factor', 1)} as a, '+U' as op " + KEYS,
    },
}


def data_files(spark, table: str) -> int:
    return spark.sql(f"select count(*) from {table}.data_files").first()[0]


def replaced_by_last_commit(spark, table: str) -> int:
    summary = spark.sql(f"select summary from {table}.snapshots order by committed_at desc limit 1").first()[0]
    return int(summary.get("deleted-data-files", 0))


@pytest.mark.parametrize("materialization", MODELS)
@pytest.mark.parametrize("limit, replaced", [(256, "every file"), (0, "one file")])
def test_a_merge_into_a_small_table_rewrites_every_file_unless_told_not_to(make_project, spark, materialization,
                                                                           limit, replaced):  # fmt: skip
    files = dict(MODELS[materialization])
    if materialization == "partial_update":
        files["models/wide.yml"] = target_yml("wide", {"id": "bigint", "a": "bigint"}, full_rewrite_max_mib=limit)
    # the limit is the project's var from its first command: a --vars on the second run would parse it in full again
    project = make_project(f"rewrite_{materialization}_{limit}", files, {"vars": {"limit": limit}})
    table = f"lakeplan_rewrite_{materialization}_{limit}.wide"
    project.run("run")
    before = data_files(spark, table)
    assert before == 4  # parallelism 4: one file per hash partition of the key

    project.run("run", factor=2, only="id = 7")

    assert replaced_by_last_commit(spark, table) == (before if replaced == "every file" else 1)
    expected = sorted((i, i * 2 if i == 7 else i) for i in range(400))
    assert [row[:2] for row in rows(spark, table)] == expected
    assert spark.conf.get(GROUP_FILTER) == "true"  # set for the MERGE only
