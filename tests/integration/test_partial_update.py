"""Sink reuse for partial updates (FLIP-506) with Paimon's partial-update semantics, on real Iceberg.

The values the tests change between runs reach the project as `given` values; a setting a user gives with --vars
(which makes dbt parse a project again in full) is in the dbt_project.yml of a second project on the same tables."""

import json
import re

import pytest

from tests.conftest import given, snapshots, write_files


def member(target, sql, **config):
    settings = ", ".join(f"{key}={value!r}" for key, value in {"partial_update_target": target, **config}.items())
    return f"{{{{ config({settings}) }}}}\n{sql}"


def target_yml(name, columns, key_tests=(), rules=None, **config):
    settings = {"unique_key": "id", **config}
    lines = ["version: 2", "models:", f"  - name: {name}", f"    config: {json.dumps(settings)}", "    columns:"]
    for column, data_type in columns.items():
        tests = f", data_tests: [{', '.join(key_tests)}]" if column == "id" and key_tests else ""
        rule = f", meta: {{merge: {rules[column]}}}" if column in (rules or {}) else ""
        lines.append(f"      - {{name: {column}, data_type: '{data_type}'{tests}{rule}}}")
    return "\n".join(lines) + "\n"


def rows(spark, table):
    return sorted(tuple(row) for row in spark.sql(f"select * from {table}").collect())


PAIMON = {
    "models/product.sql": "{{ partial_update_target() }}",
    "models/product.yml": target_yml("product", {"id": "bigint", "price": "double", "stock": "int", "title": "string"}),
    # Paimon's example: <1, 23.0, 10, NULL>, then <1, NULL, NULL, 'This is a book'>, then <1, 25.2, NULL, NULL>.
    "models/first_write.sql": member("product", "select 1 as id, 23.0 as price, 10 as stock, 1 as version", sequence_by="version"),
    "models/second_write.sql": member("product", "select 1 as id, 'This is a book' as title, 2 as version", sequence_by="version"),
    "models/third_write.sql": member("product", "select 1 as id, 25.2 as price, 3 as version", sequence_by="version"),
}


def test_paimon_partial_update_example(make_project, spark):
    project = make_project("paimon", PAIMON)
    project.run("run", "--write-json")
    assert rows(spark, "lakeplan_paimon.product") == [(1, 25.2, 10, "This is a book")]
    report = json.loads((project.path / "target" / "lakeplan_sink_reuse.json").read_text())
    [group] = report["targets"]["model.lakeplan.product"]["groups"]
    assert [m["name"] for m in group["members"]] == ["first_write", "second_write", "third_write"]


WIDE_COLUMNS = {"id": "bigint", "a": "int", "b": "bigint", "c": "string", "d": "double", "e": "string"}
REUSE = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml(
        "wide", WIDE_COLUMNS, key_tests=["not_null"], partial_update_on_delete=given("on_delete", "remove_record")
    ),
    "seeds/people_a.csv": "id,a\n1,10\n2,20\n3,30\n",
    "seeds/people_b.csv": "id,b\n1,100\n2,200\n",
    "seeds/labels.csv": "key,label\n1,one\n3,three\n",
    "seeds/scores.csv": "id,d\n1,1.5\n4,4.5\n",
    "seeds/events.csv": "id,op,seq,e\n1,+I,1,x\n2,+I,1,y\n2,-D,5,y\n3,+I,1,p\n3,-D,2,p\n3,+I,3,q\n",
    "models/wide_a.sql": member("wide", "select id, a from {{ ref('people_a') }}"),
    # An INT member into a BIGINT column: merged, with the cast added.
    "models/wide_b_int.sql": member("wide", "select id, cast(b as int) as b from {{ ref('people_b') }}"),
    # Upstream column names differ: merged all the same.
    "models/wide_c_renamed.sql": member("wide", "select key as id, label as c from {{ ref('labels') }}"),
    # Different write options reach the table differently: a write of its own.
    "models/wide_d_options.sql": member(
        "wide", "select id, d from {{ ref('scores') }}", write_options={"spark.sql.shuffle.partitions": "3"}
    ),
    # A changelog member: a group of its own, written after the insert-only groups.
    "models/wide_e_cdc.sql": member("wide", "select id, op, seq, e from {{ ref('events') }}", op_column="op", sequence_by="seq"),
    "models/other.sql": "{{ partial_update_target() }}",
    "models/other.yml": target_yml("other", {"id": "bigint", "x": "string", "y": "string"}),
    "models/other_x.sql": member("other", "select id, cast(a as string) as x from {{ ref('people_a') }}"),
    "models/other_y.sql": member("other", "select id, cast(b as string) as y from {{ ref('people_b') }}"),
}
# remove_record: key 2's last change is a delete; key 3 is deleted and re-inserted (its row starts afresh).
REMOVE_RECORD = [(1, 10, 100, "one", 1.5, "x"), (3, None, None, None, None, "q"), (4, None, None, None, 4.5, None)]
IGNORE = [(1, 10, 100, "one", 1.5, "x"), (2, 20, 200, None, None, "y"), (3, 30, None, "three", None, "q"), (4, None, None, None, 4.5, None)]


@pytest.fixture(scope="module")
def reuse(make_project):
    project = make_project("reuse", REUSE)
    project.run("seed")
    return project


def test_one_snapshot_per_group_with_reuse_and_one_per_member_without(reuse, make_project, spark):
    def added(table, *args, project=reuse):
        before = snapshots(spark, table)
        project.run("run", *args)
        return snapshots(spark, table) - before

    # groups: {a, b, c}, {d: options}, {e: changelog}; a new table's groups write a staging copy, created in one
    assert added("lakeplan_reuse.wide", "--full-refresh") == 1
    with_reuse = rows(spark, "lakeplan_reuse.wide")
    assert with_reuse == REMOVE_RECORD
    assert added("lakeplan_reuse.other", "--select", "other") == 1  # two members, one write

    assert added("lakeplan_reuse.wide", "--select", "wide") == 3  # an existing table: one MERGE per group
    assert rows(spark, "lakeplan_reuse.wide") == with_reuse  # a rerun that changes nothing

    without_reuse = make_project("reuse_vars", REUSE, {"vars": {"reuse_sink_enabled": False}}, schema="reuse")
    assert added("lakeplan_reuse.wide", project=without_reuse) == 5
    assert rows(spark, "lakeplan_reuse.wide") == with_reuse  # one MERGE per member, same contents
    assert added("lakeplan_reuse.other", "--select", "other", project=without_reuse) == 2


def test_report_lists_groups_digests_and_reasons(reuse):
    reuse.run("run", "--select", "wide", "--write-json")
    report = json.loads((reuse.path / "target" / "lakeplan_sink_reuse.json").read_text())
    groups = report["targets"]["model.lakeplan.wide"]["groups"]
    assert [[m["name"] for m in g["members"]] for g in groups] == [
        ["wide_a", "wide_b_int", "wide_c_renamed"], ["wide_d_options"], ["wide_e_cdc"]
    ]
    members = report["members"]
    assert members["model.lakeplan.wide_a"]["digest"] == "target=model.lakeplan.wide, writeMode=merge, inputKind=insert_only"
    assert "ungrouped_reason" not in members["model.lakeplan.wide_a"]
    assert "wide_a: options differ" in members["model.lakeplan.wide_d_options"]["ungrouped_reason"]
    assert "wide_a: inputKind differ" in members["model.lakeplan.wide_e_cdc"]["ungrouped_reason"]
    # target/run/ holds every group's statement as it ran, the first with its write_options header
    executed = next((reuse.path / "target" / "run").rglob("wide.sql")).read_text()
    assert executed.count("merge into lakeplan_reuse.wide") == 3
    assert '"spark.sql.shuffle.partitions": "3"}' in executed
    # only that group's options are its members': the others carry lakeplan's own MERGE setting alone
    assert executed.count("-- set by:") == 1 and "-- set by: the write_options of `wide_d_options`" in executed


def test_deletes_under_ignore_and_error(reuse, spark):
    reuse.run("run", "--select", "wide", "--full-refresh", on_delete="ignore")
    assert rows(spark, "lakeplan_reuse.wide") == IGNORE
    log = reuse.fail("run", "--select", "wide", on_delete="error")
    assert "Member `wide_e_cdc` of partial-update target `wide` is a changelog (op_column `op`)" in log
    assert "partial_update_on_delete: ignore" in log
    assert rows(spark, "lakeplan_reuse.wide") == IGNORE  # refused before anything was written


def test_lineage_selection_compile_and_build(reuse, spark):
    listed = reuse.run("ls", "--select", "wide_a+", "--resource-type", "model", "--output", "name").result
    assert sorted(listed) == ["wide", "wide_a"]

    compiled = reuse.run("compile", "--select", "wide").result.results[0].node.compiled_code
    assert "from wide__lakeplan_member_wide_a" in compiled and "from wide__lakeplan_member_wide_e_cdc" in compiled

    # A member alone is ephemeral: selecting it writes nothing; `member+` writes its target.
    before = snapshots(spark, "lakeplan_reuse.wide")
    reuse.run("run", "--select", "wide_a")
    assert snapshots(spark, "lakeplan_reuse.wide") == before
    reuse.run("run", "--select", "wide_a+")
    assert snapshots(spark, "lakeplan_reuse.wide") == before + 3

    # `dbt build` runs the target's tests after its write.
    order = [r.node.unique_id for r in reuse.run("build", "--select", "wide").result.results]
    test_id = next(node for node in order if node.startswith("test."))
    assert order.index("model.lakeplan.wide") < order.index(test_id)


def test_docs_manifest_and_no_write_json_keep_the_rewrite(reuse, spark):
    reuse.run("docs", "generate", "--write-json")
    manifest = json.loads((reuse.path / "target" / "manifest.json").read_text())
    assert "model.lakeplan.wide_a" in manifest["parent_map"]["model.lakeplan.wide"]
    assert manifest["nodes"]["model.lakeplan.wide_a"]["config"]["materialized"] == "ephemeral"
    catalog = json.loads((reuse.path / "target" / "catalog.json").read_text())
    assert "e" in catalog["nodes"]["model.lakeplan.wide"]["columns"]

    before = snapshots(spark, "lakeplan_reuse.wide")
    reuse.run("run", "--select", "wide", "--no-write-json")
    assert snapshots(spark, "lakeplan_reuse.wide") == before + 3


def test_partial_parsing_picks_up_a_changed_member(reuse, spark):
    reuse.run("run", "--select", "wide", "--full-refresh", on_delete="ignore")
    write_files(reuse.path, {"models/wide_a.sql": member("wide", "select id, a * 2 as a from {{ ref('people_a') }}")})
    # A changed member changes the target's fingerprint: its state must be rebuilt (see fingerprints).
    result, log = reuse.invoke("run", "--select", "wide", "--full-refresh", on_delete="ignore")
    assert result.success and "Partial parsing enabled" in log
    assert [row[1] for row in rows(spark, "lakeplan_reuse.wide")] == [20, 40, 60, None]
    write_files(reuse.path, {"models/wide_a.sql": REUSE["models/wide_a.sql"]})


def view_text(spark, name):
    """The SQL text Spark keeps for a temp view (and analyses again wherever the view is read)."""
    return spark._jsparkSession.sessionState().catalog().getRawTempView(name).get().tableMeta().viewText().get()


def test_each_member_view_carries_only_the_ctes_its_member_reads(make_project, spark):
    # dbt compiles every member (and what they read) into the target as CTEs; a member's staged view needs only
    # its own and those of the ephemeral models it reads, transitively (here b -> cleaned -> raw).
    project = make_project("member_ctes", {
        "models/slim.sql": "{{ partial_update_target() }}",
        "models/slim.yml": target_yml("slim", {"id": "bigint", "a": "int", "b": "int"}),
        "models/raw.sql": "{{ config(materialized='ephemeral') }}\nselect 1 as id, 20 as b union all select 2, 30",
        "models/cleaned.sql": "{{ config(materialized='ephemeral') }}\nselect id, b from {{ ref('raw') }} where b > 25",
        "models/slim_a.sql": member("slim", "select 1 as id, 10 as a"),
        "models/slim_b.sql": member("slim", "select id, b from {{ ref('cleaned') }}"),
    })
    project.run("run")
    assert rows(spark, "lakeplan_member_ctes.slim") == [(1, 10, None), (2, None, 30)]
    ctes = {view: set(re.findall(r"__dbt__cte__\w+", view_text(spark, f"slim__lakeplan_member_{view}")))
            for view in ("slim_a", "slim_b")}  # fmt: skip
    assert ctes == {"slim_a": {"__dbt__cte__slim_a"},
                    "slim_b": {"__dbt__cte__slim_b", "__dbt__cte__cleaned", "__dbt__cte__raw"}}  # fmt: skip
