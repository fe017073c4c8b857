"""One planner: every lakeplan setting is checked at parse time, for the whole project at once, and a target's
every check runs before its first statement; the macros work from the plan alone."""

import json
import re

import pytest

from tests.conftest import accepting, env_value, given, snapshots, write_files
from tests.integration.test_partial_update import member, rows, target_yml

WIDE = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint", "v": "bigint"}),
}

# Misconfigurations in one project, four of them misspelt keys: one `dbt parse` names them all.
TEN = {
    **WIDE,
    "models/m_zero.sql": member("wide", "select 1 as id, 1 as a", parallelism=0),
    "models/m_text.sql": member("wide", "select 1 as id, 1 as b", parallelism="abc"),
    "models/m_static.sql": member("wide", "select 1 as id, 1 as v", static_partition="day=1"),
    "models/typo.sql": "{{ config(partial_update_taget='wide') }}\nselect 1 as id",
    # dbt keeps a misspelt key of its own in silence: the model would run dbt's default strategy
    "models/dbt_typo.sql": "{{ config(materialized='incremental', incremental_stratgy='merge') }}\nselect 1 as id",
    "models/keyed_view.sql": "{{ config(materialized='view', keyed_by='id', key_groups=4) }}\nselect 1 as id",
    "models/both.sql": "{{ config(materialized='partial_update', partial_update_target='wide') }}\nselect 1 as id",
    "models/both.yml": target_yml("both", {"id": "bigint", "a": "bigint"}),
    "models/both_member.sql": member("both", "select 1 as id, 1 as a"),
    "models/lonely.sql": "{{ partial_update_target() }}",
    "models/lonely.yml": target_yml("lonely", {"id": "bigint", "n": "decimall(5,2)"}, rules={"n": "sum"})
                         + "      - {name: m, data_type: bigint, meta: {merge_rule: sum, unit: count}}\n"
                         + "      - {name: s, data_type: bigint, merge: sum}\n"  # beside its name, not under meta
                         + "      - {name: t, data_type: bigint, meta: {lakeplan: {merge: sum}}}\n",
    "models/sources.yml": (
        "version: 2\nsources:\n  - name: raw\n    tables:\n"
        "      - {name: events, meta: {scan_paralelism: 4}}\n"
        "      - {name: changes, meta: {changelog_mode: upsert}}\n"
        "      - {name: beside, scan_parallelism: 4}\n"
    ),
    "models/sums.yml": "version: 2\nmodels:\n  - name: m_zero\n    columns:\n      - {name: a, meta: {merg: sum}}\n"
                       "      - {name: b, meta: {merge_rule: sum, owner: finance}}\n"  # a member: not merged
                       "      - {name: c, merge: sum, meta: {lakeplan: {merge: sum}}}\n"
                       "      - {name: d, data_type: integr}\n",  # in a model whose settings are refused
}
TEN_PROBLEMS = [
    ("model `m_zero` sets `parallelism: 0`", "Fix: e.g. `parallelism: 4`"),
    ("model `m_text` sets `parallelism: 'abc'`", "Fix: e.g. `parallelism: 4`"),
    ("model `m_static` sets `static_partition: 'day=1'`", "Fix: e.g. `static_partition:"),
    ("model `typo` sets `partial_update_taget`", "did you mean `partial_update_target`?"),
    ("model `dbt_typo` sets `incremental_stratgy`", "did you mean dbt's `incremental_strategy`?"),
    ("model `keyed_view` sets keyed_by ['id'], materialized as view", "Fix: key the model by one column"),
    ("Model `both` is a partial-update target and also sets partial_update_target: 'wide'", "Fix: remove"),
    ("Partial-update target `lonely` has no members", "Fix: set `partial_update_target: 'lonely'`"),
    ("Column `n` of partial-update target `lonely` has data_type `decimall(5,2)`, which Spark cannot parse: `decimall` is "
     "no Spark type; did you mean decimal?", "Fix: use"),
    ("source `raw.events` sets `scan_paralelism`", "did you mean `scan_parallelism`?"),
    ("source `raw.changes` is a changelog (changelog_mode: upsert) without `primary_key`", "Fix: add `primary_key"),
    ("column `a` of model `m_zero` sets `merg`", "did you mean `merge`"),
    ("column `m` of model `lonely` sets `merge_rule: 'sum'`", "did you mean `merge: sum`?"),
    ("column `s` of model `lonely` sets `merge: 'sum'` beside its name", "Fix: put it under `meta:`"),
    ("column `t` of model `lonely` nests `merge: 'sum'` under `lakeplan:`", "Fix: put it directly in the column"),
    ("source `raw.beside` sets `scan_parallelism: 4` beside its name", "(`meta: {scan_parallelism: 4}`)"),
    ("Column `d` of model `m_zero` has data_type `integr`, which Spark cannot parse: `integr` is no Spark type; did you "
     "mean integer?", "Fix: use"),
]


def problems_in(log: str) -> list[str]:
    return [line.strip() for line in log.splitlines() if re.match(r"\s*\d+\. ", line)]


def test_one_parse_reports_every_misconfiguration_each_with_its_owner_and_fix(make_project):
    log = make_project("planner_ten", TEN).fail("parse")
    assert "lakeplan found 17 problem(s) in this project's settings" in log
    found = problems_in(log)
    assert len(found) == 17
    for owner, fix in TEN_PROBLEMS:
        [line] = [problem for problem in found if owner in problem]
        assert fix in line and "Fix:" in line


@pytest.mark.parametrize(
    "files, fragment",
    [
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a", write_options={"spark.sql.x": {"a": 1}})},
         "model `m` sets `write_options:"),
        ({**WIDE, "models/m.sql": "{{ config(meta={'merg': 'sum'}, partial_update_target='wide') }}\nselect 1 as id"},
         None),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/plain.sql": "{{ config(materialized='table', meta={'parallelism': 3}) }}\nselect 1 as id"},
         "model `plain` sets `parallelism` under `meta:`, where lakeplan does not read it"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/cur.sql": "{{ config(materialized='upsert', unique_key='id', partial_update_target='wide') }}\n"
                            "select 1 as id, '+I' as _op"},
         "Model `cur` is materialized as `upsert` and sets partial_update_target: 'wide'"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/plain.sql": "{{ config(materialized='table', sequence_by='v') }}\nselect 1 as id, 1 as v"},
         "model `plain` sets `sequence_by`, which only an `upsert` model or a partial-update member uses"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a", op_column="_op")},
         "Member `m` of partial-update target `wide` is a changelog (op_column `_op`) whose deletes the target refuses"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/plain.sql": "{{ config(write_mode='overwrite') }}\nselect 1 as id"},
         "model `plain` sets `write_mode`, which only a partial-update member uses"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/plain.sql": "{{ config(materialized='view', parallelism=4) }}\nselect 1 as id"},
         "model `plain` sets parallelism 4 but is materialized as view, which writes nothing to distribute"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a", full_rewrite_max_mib=5)},
         "model `m` sets `full_rewrite_max_mib: 5`, which only an `upsert` model or a partial-update target uses: on a "
         "member it would do nothing. Fix: set it on the target `wide`"),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/plain.sql": "{{ config(materialized='table', tombstone_retention_days=3) }}\nselect 1 as id"},
         "model `plain` sets `tombstone_retention_days: 3`, which only an `upsert` model or a partial-update target "
         "uses: as table it would do nothing. Fix: remove it, or materialize `plain` as upsert."),
        ({**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a"),
          "models/plain.sql": "{{ config(materialized='table', change_mode='delta') }}\nselect 1 as id"},
         "model `plain` sets `change_mode: delta`, which only a partial-update target uses: as table it would do "
         "nothing. Fix: remove it, or make `plain` a partial-update target (its SQL `{{ partial_update_target() }}`, "
         "its columns written by members)."),
        ({**WIDE, "models/m1.sql": member("wide", "select 1 as id, 1 as a", write_mode="overwrite"),
          "models/m2.sql": member("wide", "select 1 as id, 1 as b", write_mode="overwrite",
                                  write_options={"spark.k.x": 1})},
         "Members `m1` and `m2` of `wide` overwrite the same rows"),
    ],
    ids=["write_options_value", "model_meta_other_keys_pass", "setting_in_model_meta", "upsert_as_member",
         "sequence_by_on_a_table", "changelog_refused", "member_only",
         "parallelism_on_view", "full_rewrite_on_a_member", "tombstone_retention_on_a_table", "delta_on_a_table",
         "two_overwrites"],
)
def test_settings_that_cannot_work_stop_the_parse(make_project, files, fragment):
    project = make_project("planner_case", files)
    if fragment is None:  # a model's own meta is the user's: lakeplan reads only the places it declares
        project.run("parse")
        return
    assert fragment in project.fail("parse")


def test_a_bad_write_option_of_a_later_group_writes_nothing(make_project, spark):
    files = {
        **WIDE,
        "models/m1.sql": member("wide", f"select id, id * {given('f', 1)} as a from range(0, 10)"),
        "models/m2.sql": (
            f"{{{{ config(partial_update_target='wide', write_options={{'spark.sql.shuffle.partitions': "
            f"{env_value('n', 4)}}}) }}}}\nselect id, id * {given('f', 1)} as b from range(0, 10)"
        ),
    }  # fmt: skip
    project = make_project("planner_options", files)
    project.run("run", "--write-json")
    before = (snapshots(spark, "lakeplan_planner_options.wide"), rows(spark, "lakeplan_planner_options.wide"))
    report = json.loads((project.path / "target" / "lakeplan_sink_reuse.json").read_text())
    assert len(report["targets"]["model.lakeplan.wide"]["groups"]) == 2
    log = project.fail("run", f=2, n="many")
    assert "spark.sql.shuffle.partitions should be int, but was many" in log and "Unhandled error" not in log
    assert (snapshots(spark, "lakeplan_planner_options.wide"), rows(spark, "lakeplan_planner_options.wide")) == before


def test_an_overwrite_and_a_merge_give_the_same_table_whatever_their_names(make_project, spark):
    results = []
    for overwrite, merge in [("a_first", "z_last"), ("z_last", "a_first")]:
        files = {
            **WIDE,
            f"models/{overwrite}.sql": member("wide", "select id, id as a from range(0, 3)", write_mode="overwrite"),
            f"models/{merge}.sql": member("wide", "select id, 10 * id as b from range(1, 4)"),
        }
        project = make_project(f"planner_order_{overwrite}", files)
        project.run("run")
        project.run("run")
        results.append(rows(spark, f"lakeplan_planner_order_{overwrite}.wide"))
    # the overwrite replaces the table, then the merge of the same run updates and inserts on it
    assert results[0] == results[1] == [(0, 0, None, None), (1, 1, 10, None), (2, 2, 20, None), (3, None, 30, None)]


def test_sequence_columns_of_different_types_on_one_column_are_refused_before_any_write(make_project, spark):
    files = {
        **WIDE,
        "models/m1.sql": member("wide", "select 1 as id, 1 as a, timestamp'2024-01-01' as t", sequence_by="t"),
        "models/m2.sql": member("wide", "select 1 as id, 2 as a, 5 as v", sequence_by="v"),
    }
    log = make_project("planner_sequence", files).fail("run")
    assert "Members `m1` and `m2` both write column `a` of partial-update target `wide`, ordered by `sequence_by` " \
           "columns of different types (`t` timestamp, `v` int)" in log
    assert "Fix: give both members versions of one type that mean the same" in log
    assert "to a bigint" not in log  # a timestamp cast to bigint loses its fraction of a second
    assert not spark.catalog.tableExists("lakeplan_planner_sequence.wide")


def test_an_incremental_keyed_model_whose_layout_changed_reports_its_real_layout(make_project, spark):
    sql = ("{{ config(materialized='incremental', file_format='iceberg', keyed_by='id', "
           f"key_groups={env_value('groups', 4)} | int) }}}}\nselect id from range(0, 100)")  # fmt: skip
    project = make_project("planner_layout", {"models/keyed.sql": sql})
    project.run("run")
    log = project.fail("run", groups=8)
    assert "model `keyed` declares keyed_by [\"id\"] with key_groups 8, but its table" in log
    assert "is bucketed by [\"id\"] into 4 buckets" in log
    assert "Fix: rebuild the table with the declared layout: dbt run --full-refresh -s keyed" in log
    project.run("run", "--full-refresh", groups=8)
    project.run("run", groups=8)
    assert spark.sql("select count(*) from lakeplan_planner_layout.keyed").first()[0] == 200
    # dbt-spark's incremental --full-refresh drops the table first: no old bucket field stays (errors.md row 165)
    assert spark.sql("select count(*) from lakeplan_planner_layout.keyed.data_files").first()[0] > 0


def test_the_plan_is_in_the_manifest_and_settings_that_only_tune_do_not_change_fingerprints(make_project):
    files = {**WIDE, "models/m.sql": member("wide", "select 1 as id, 1 as a, 1 as b"),
             "models/m_v.sql": member("wide", "select id, 1 as v from {{ ref('staged') }}"),
             "models/staged.sql": "{{ config(materialized='ephemeral') }}\nselect * from {{ ref('base') }}",
             "models/base.sql": "select 1 as id"}  # fmt: skip
    project = make_project("planner_plan", files)
    project.run("parse", "--write-json")

    def manifest():
        return json.loads((project.path / "target" / "manifest.json").read_text())["nodes"]

    plan = manifest()["model.lakeplan.wide"]["config"]["lakeplan_plan"]
    assert plan["version"] == 2 and plan["key"] == ["id"]
    assert sorted(m["name"] for g in plan["partial_update"]["groups"] for m in g["members"]) == ["m", "m_v"]
    assert manifest()["model.lakeplan.m"]["config"]["lakeplan_plan"]["member_of"]["target"] == "wide"
    assert plan["reads"] == ["model.lakeplan.base"]  # through its members and the ephemeral model they read
    fingerprint = manifest()["model.lakeplan.wide"]["config"]["lakeplan_fingerprint"]["fingerprint"]
    tuned = member("wide", "select 1 as id, 1 as a, 1 as b", parallelism=3, write_options={"spark.sql.x": 1})
    write_files(project.path, {"models/m.sql": tuned})
    project.run("parse", "--write-json")
    assert manifest()["model.lakeplan.wide"]["config"]["lakeplan_fingerprint"]["fingerprint"] == fingerprint
    write_files(project.path, {"models/wide.yml": target_yml("wide", WIDE_COLUMNS, rules={"a": "sum"})})
    project.run("parse", "--write-json")
    assert manifest()["model.lakeplan.wide"]["config"]["lakeplan_fingerprint"]["fingerprint"] != fingerprint


WIDE_COLUMNS = {"id": "bigint", "a": "bigint", "b": "bigint", "v": "bigint"}


def test_sequenced_writers_of_one_column_in_separate_writes_are_refused(make_project, spark):
    """A later write's MERGE compares with the stored value, which carries no version: the later write would win."""
    files = {
        **WIDE,
        "models/a.sql": member("wide", "select 1 as id, 5 as a, 9 as v", sequence_by="v"),
        "models/b.sql": member("wide", "select 1 as id, 7 as a, 1 as v", sequence_by="v",
                               write_options={"spark.k.x": 1}),
    }
    log = make_project("planner_split_sequence", files).fail("run")
    # both write the sequence column `v` too, a column of the target: every shared column is named at once
    assert "Members `a` and `b` both write columns `a`, `v` of partial-update target `wide`, ordered by `sequence_by`, " \
           "but in separate writes" in log and "Fix: give both members the same write settings" in log
    assert not spark.catalog.tableExists("lakeplan_planner_split_sequence.wide")


def test_accepted_logic_is_recorded_only_when_the_write_succeeds(make_project, spark):
    # the state is accepted from the first command on (a first run has no state to accept), and the last run's
    # restored logic is the recorded one: it would accept again, recording `accepted_from`, had the failure recorded
    original = member("wide", "select id, id as a from range(0, 3)")
    project = make_project("planner_accept", {**WIDE, "models/m.sql": original}, accepting("wide"))
    project.run("run")

    def recorded():
        return dict(tuple(row) for row in spark.sql("show tblproperties lakeplan_planner_accept.wide").collect())

    old = recorded()["lakeplan.fingerprint"]
    failing = "select id, id + 1 as a from range(0, 3) where assert_true(id < 2) is null"
    write_files(project.path, {"models/m.sql": member("wide", failing)})
    project.fail("run")
    assert recorded()["lakeplan.fingerprint"] == old  # the failed write recorded nothing
    write_files(project.path, {"models/m.sql": original})
    project.run("run")  # the logic that built the rows is still the recorded one: no state mismatch
    assert "lakeplan.fingerprint.accepted_from" not in recorded()
