"""How a change lands (issue 30, item 2): `change_mode` of an `upsert` and a partial-update target. Each test builds
twin models over the same seeds, one per mode, and reads both tables: the same rows, and in merge-on-read the
change is delete files beside untouched data files (Iceberg's `.delete_files`), in copy-on-write none."""

import pytest

from tests.conftest import write_files

SCHEMA = "lakeplan_change_mode"
KEYS = 200


def seed(ids, value):
    return "id,v,_op\n" + "".join(f"{i},{value},+I\n" for i in ids)


def target_files(mode: str, name: str, config: str = "") -> dict[str, str]:
    """A target with two members over the seeds, merge rules `sum` and the default; `config`: more of its config."""
    share = ", merge_on_read_max_share: 0.1" if mode == "auto" else ""  # only `auto` reads it
    return {
        f"models/{name}.sql": "{{ partial_update_target() }}",
        f"models/{name}.yml": f"""
version: 2
models:
  - name: {name}
    config: {{unique_key: id, change_mode: {mode}{share}{config}}}
    columns:
      - {{name: id, data_type: int}}
      - {{name: v, data_type: int}}
      - {{name: hits, data_type: bigint, meta: {{merge: sum}}}}
""",
        f"models/{name}_v.sql": f"{{{{ config(partial_update_target='{name}') }}}}\nselect id, v from {{{{ ref('changes') }}}}",
        f"models/{name}_hits.sql": (
            f"{{{{ config(partial_update_target='{name}') }}}}\nselect id, cast(1 as bigint) as hits from {{{{ ref('changes') }}}}"
        ),
    }


def upsert_files(mode: str, name: str) -> dict[str, str]:
    return {f"models/{name}.sql": (
        f"{{{{ config(materialized='upsert', unique_key='id', change_mode='{mode}') }}}}\n"
        "select id, v, _op from {{ ref('changes') }}"
    )}  # fmt: skip


@pytest.fixture
def project(make_project):
    files = {"seeds/changes.csv": seed(range(KEYS), 1)}
    for mode in ("copy_on_write", "merge_on_read", "auto"):
        files.update(target_files(mode, f"wide_{mode}"))
        files.update(upsert_files(mode, f"up_{mode}"))
    # maintenance after the write that would compact a change of more than 1% of the rows at once
    files.update(target_files("auto", "wide_compacts", ", maintenance: {deleted_share: 0.01}"))
    dbt = make_project("change_mode", files)
    dbt.run("build")
    return dbt


def rows(spark, table):
    return sorted(tuple(row) for row in spark.sql(f"select * from {SCHEMA}.{table}").collect())


def delete_files(spark, table) -> int:
    return spark.sql(f"select count(*) from {SCHEMA}.{table}.delete_files").collect()[0][0]


def last_operation(spark, table):
    row = spark.sql(f"select operation, summary from {SCHEMA}.{table}.snapshots order by committed_at desc limit 1")
    return row.collect()[0]


def test_the_modes_give_the_same_rows_and_auto_chooses_by_the_share_the_inputs_hold(project, spark):
    write_files(project.path, {"seeds/changes.csv": seed(range(0, KEYS, 50), 2)})  # 4 keys change: 2% of the table
    project.run("build")
    for kind in ("wide", "up"):
        copied, merged, auto = (f"{kind}_{mode}" for mode in ("copy_on_write", "merge_on_read", "auto"))
        assert rows(spark, copied) == rows(spark, merged) == rows(spark, auto)
        assert delete_files(spark, copied) == 0 and delete_files(spark, merged) > 0 and delete_files(spark, auto) > 0
        assert int(last_operation(spark, merged).summary["added-data-files"]) <= 1  # the 4 rows, not the table
    assert rows(spark, "wide_merge_on_read")[:2] == [(0, 2, 2), (1, 1, 1)]
    assert "`wide_merge_on_read` lands its change merge-on-read (change_mode: merge_on_read)" in project.shown
    assert "`wide_auto` lands its change merge-on-read (the inputs hold 8 rows against the table's 200, merge_on_read_max_share 0.1)" in project.shown
    assert "`up_auto` lands its change merge-on-read (the inputs hold 4 rows against the table's 200, merge_on_read_max_share 0.6)" in project.shown
    # the same change lands copy-on-write where merge-on-read would be compacted right after: one rewrite, not two
    assert ("`wide_compacts` lands its change copy-on-write (the inputs hold 8 rows against the table's 200, "
            "maintenance.deleted_share 0.01, past which the write would be compacted at once)") in project.shown
    assert delete_files(spark, "wide_compacts") == 0 and rows(spark, "wide_compacts") == rows(spark, "wide_auto")

    write_files(project.path, {"seeds/changes.csv": seed(range(KEYS), 3)})  # every key: 100%
    project.run("build")
    assert "`up_auto` lands its change copy-on-write (the inputs hold 200 rows against the table's 200, merge_on_read_max_share 0.6)" in project.shown
    properties = dict(spark.sql(f"show tblproperties {SCHEMA}.up_auto").collect())
    assert properties["write.merge.mode"] == "copy-on-write"  # switched back for this write
    for kind in ("wide", "up"):
        assert rows(spark, f"{kind}_auto") == rows(spark, f"{kind}_copy_on_write") == rows(spark, f"{kind}_merge_on_read")


def test_the_write_modes_in_tblproperties_are_refused(make_project):
    project = make_project("change_mode_refused", {
        "seeds/changes.csv": seed(range(3), 1),
        "models/up.sql": "{{ config(materialized='upsert', unique_key='id', "
                         "tblproperties={'write.merge.mode': 'merge-on-read'}) }}\nselect id, v, _op from {{ ref('changes') }}",
        "models/other.sql": "{{ config(materialized='upsert', unique_key='id', change_mode='sometimes') }}\n"
                            "select id, v, _op from {{ ref('changes') }}",
        "models/forced.sql": "{{ config(materialized='upsert', unique_key='id', change_mode='merge_on_read', "
                             "merge_on_read_max_share=0.3) }}\nselect id, v, _op from {{ ref('changes') }}",
        "models/appends.sql": "{{ config(materialized='upsert', unique_key='id', change_mode='delta') }}\n"
                              "select id, v, _op from {{ ref('changes') }}",
        # the default, written: quoted as written (it was quoted as `maintenance: {}`)
        "models/folds.sql": "{{ config(materialized='upsert', unique_key='id', maintenance={'delta_runs': 10}) }}\n"
                            "select id, v, _op from {{ ref('changes') }}",
    })  # fmt: skip
    log = project.fail("parse")
    assert ("Model `up` sets tblproperties `write.merge.mode`, which lakeplan sets itself at each write of an `upsert` "
            "from `change_mode` (now `copy_on_write`). Fix: remove it from tblproperties") in log
    assert "model `other` sets `change_mode: 'sometimes'`, which lakeplan cannot use" in log
    assert ("Model `forced` sets `merge_on_read_max_share: 0.3` with `change_mode: merge_on_read`: only `auto` compares a "
            "change with it, so it would do nothing. Fix: set `change_mode: auto`, or remove") in log
    assert ("Model `appends` sets `change_mode: delta` on an `upsert`: only a partial-update target appends its change "
            "as delta rows") in log
    assert ("model `folds` sets `maintenance: {'delta_runs': 10}` with `change_mode: copy_on_write`: only a target in "
            "change_mode delta has delta rows to fold, so `delta_runs` would do nothing.") in log
