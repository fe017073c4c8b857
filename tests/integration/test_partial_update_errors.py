"""Every partial-update misconfiguration is a dbt error naming the model and the fix, raised before
anything is written; none passes silently or as a Python traceback."""

import shutil

import pytest

from tests.conftest import snapshots, write_files
from tests.integration.test_partial_update import member, target_yml

TARGET = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "int", "b": "string"}),
}

PARSE_CASES = {
    "unknown_target": (
        {**TARGET, "models/m.sql": member("nope", "select 1 as id")},
        ["Model `m` sets partial_update_target: 'nope', but no model of that name exists", "Fix:"],
    ),
    "misspelt_target": (
        {**TARGET, "models/m.sql": member("wdie", "select 1 as id")},
        ["Model `m` sets partial_update_target: 'wdie', but no model of that name exists. Fix: did you mean the target "
         "`wide`? Set partial_update_target: 'wide'."],
    ),
    "not_a_target": (
        {**TARGET, "models/plain.sql": "select 1 as id", "models/m.sql": member("plain", "select 1 as id")},
        ["`plain` is not a partial-update target (it is materialized as `view`)", "Fix:"],
    ),
    "no_unique_key": (
        {
            "models/wide.sql": "{{ partial_update_target() }}",
            "models/wide.yml": target_yml("wide", {"id": "bigint"}, unique_key=None),
            "models/m.sql": member("wide", "select 1 as id"),
        },
        ["Partial-update target `wide` has no `unique_key`", "Fix: set `unique_key`"],
    ),
    "no_types": (
        {
            "models/wide.sql": "{{ partial_update_target() }}",
            "models/wide.yml": "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: id}\n    columns:\n"
            "      - {name: id, data_type: bigint}\n      - {name: a}\n",
            "models/m.sql": member("wide", "select 1 as id"),
        },
        ["Partial-update target `wide` must declare every column with its `data_type`", "missing for: a"],
    ),
    "write_mode": (
        {**TARGET, "models/m.sql": member("wide", "select 1 as id", write_mode="upsert")},
        ["model `m` sets `write_mode: 'upsert'`", "Fix: one of `merge`, `overwrite`"],
    ),
}


def rules_target(rules=None, **config):
    columns = {"id": "bigint", "a": "int", "b": "string", "v": "int", "w": "int"}
    return {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", columns, rules=rules, **config),
        "models/m.sql": member("wide", "select 1 as id"),
    }


PARSE_CASES.update({
    "unknown_rule": (rules_target({"a": "avg"}), ["column `a` of model `wide` sets `merge: 'avg'`", "Fix: one of `last_non_null`"]),
    "sum_on_string": (rules_target({"b": "sum"}), ["Merge rule 'sum' on column `b` of partial-update target `wide` needs a numeric type, but the column is string"]),
    "append_on_int": (rules_target({"a": "append"}), ["Merge rule 'append' on column `a` of partial-update target `wide` needs an array type"]),
    "rule_on_key": (rules_target({"id": "max"}), ["Column `id` of partial-update target `wide` is part of its unique_key and has merge rule 'max'"]),
    # a sequence-group mistake is one sentence, however many groups list the name: "found 1 problem(s)"
    "two_groups": (rules_target(sequence_groups={"v": ["a"], "w": ["a", "b"]}), ["lakeplan found 1 problem(s)", "Model `wide` sets `sequence_groups: {'v': ['a'], 'w': ['a', 'b']}`, which puts column `a` in two sequence groups (v and w); one version must decide its value. Fix: list `a` under one sequence column only, e.g. `sequence_groups: {'v': ['a'], 'w': ['b']}`."]),
    "three_groups": (rules_target(sequence_groups={"v": ["a"], "w": ["a"], "b": ["a"]}), ["lakeplan found 1 problem(s)", "which puts column `a` in three sequence groups (v, w and b); one version must decide its value. Fix: list `a` under one sequence column only, e.g. `sequence_groups: {'v': ['a']}`."]),
    "unknown_sequence": (rules_target(sequence_groups={"version": ["a"]}), ["lakeplan found 1 problem(s)", "Model `wide` sets `sequence_groups: {'version': ['a']}`, which names the sequence column `version`, not a column of `wide`. Fix: declare `version` with its data_type under `columns:` of `wide`, or leave it out: remove `sequence_groups`."]),
    "unknown_in_two_groups": (rules_target(sequence_groups={"v": ["nope", "a"], "w": ["nope"]}), ["lakeplan found 1 problem(s)", "Model `wide` sets `sequence_groups: {'v': ['nope', 'a'], 'w': ['nope']}`, which names the column `nope`, not a column of `wide`. Fix: declare `nope` with its data_type under `columns:` of `wide`, or leave it out: e.g. `sequence_groups: {'v': ['a']}`."]),
    "key_in_two_groups": (rules_target(sequence_groups={"v": ["id"], "w": ["id", "b"]}), ["lakeplan found 1 problem(s)", "Model `wide` sets `sequence_groups: {'v': ['id'], 'w': ['id', 'b']}`, which names the key column `id`; a key is never merged, it names the row. Fix: leave it out: e.g. `sequence_groups: {'w': ['b']}`."]),
    "sequence_among_columns": (rules_target(sequence_groups={"v": ["v", "a"]}), ["lakeplan found 1 problem(s)", "Model `wide` sets `sequence_groups: {'v': ['v', 'a']}`, which lists the sequence column `v` among the columns it versions. Fix: list it once, as the group's sequence: e.g. `sequence_groups: {'v': ['a']}`."]),
    "product_on_string": (rules_target({"b": "product"}), ["Merge rule 'product' on column `b` of partial-update target `wide` needs an integer or floating-point type, but the column is string"]),
    "listagg_on_int": (rules_target({"a": "listagg"}), ["Merge rule 'listagg' on column `a` of partial-update target `wide` needs a string type, but the column is int"]),
    "merge_map_on_int": (rules_target({"a": "merge_map"}), ["Merge rule 'merge_map' on column `a` of partial-update target `wide` needs a map type"]),
    "delimiter_without_listagg": (rules_target({"b": "last_value, listagg_delimiter: '|'"}), ["Column `b` of `wide` sets listagg_delimiter, but its merge rule is 'last_value'; only `listagg` joins values. Fix: remove listagg_delimiter, or set `merge: listagg`."]),
    # a key or a partition column the YAML does not declare: the key was told at run time as a member's mistake (with
    # "drop it" as a fix), the partition column only when the table is created, with Spark's schema dump
    "undeclared_key": (rules_target(unique_key="iid"), ["lakeplan found 1 problem(s)", "Partial-update target `wide` sets `unique_key: iid`, but `iid` is none of its declared columns (id, a, b, v, w). Fix: name a declared column (did you mean `id`?), or declare `iid` with its data_type under `columns:` of `wide`."]),
    "undeclared_partition": (rules_target(partition_by=["bucket(4, idd)"]), ["lakeplan found 1 problem(s)", "Partial-update target `wide` sets `partition_by: bucket(4, idd)`, but `idd` is none of its declared columns (id, a, b, v, w). Fix: name a declared column (did you mean `id`?), or declare `idd` with its data_type under `columns:` of `wide`."]),
    "rule_off_target": ({
        "models/plain.sql": "select 1 as id, 'x' as names",
        "models/plain.yml": target_yml("plain", {"id": "bigint", "names": "string"}, rules={"names": "listagg, listagg_delimiter: '|'"}),
    }, ["Column `names` of model `plain` sets `listagg_delimiter` and `merge` in its meta, which only a column of a partial-update target follows. Fix: remove it, or declare it on the target's column."]),
})  # fmt: skip


@pytest.fixture(scope="module")
def mistakes(make_project):
    """One project that each parse case rewrites: from its last good parse, dbt's partial parse re-reads only the
    changed files (a new project per case was a full parse each)."""
    project = make_project("pu_parse", {**TARGET, "models/m.sql": member("wide", "select 1 as id")})
    project.run("parse")
    return project


def parse_fails(project, files):
    """dbt parse's log after the project's models are replaced by `files`; the parse must fail."""
    shutil.rmtree(project.path / "models")
    write_files(project.path, files)
    return project.fail("parse")


@pytest.mark.parametrize("case", sorted(PARSE_CASES))
def test_structural_mistakes_stop_parsing(mistakes, case):
    files, fragments = PARSE_CASES[case]
    log = parse_fails(mistakes, files)
    assert "Compilation Error" in log
    for fragment in fragments:
        assert fragment in log


def test_reuse_switch_must_be_a_boolean(make_project):
    # a project of its own: a new --vars value would make dbt parse the cases' project again in full
    project = make_project("pu_reuse_switch", {**TARGET, "models/m.sql": member("wide", "select 1 as id")},
                           {"vars": {"reuse_sink_enabled": "maybe"}})
    log = project.fail("parse")
    assert "the project sets `reuse_sink_enabled: 'maybe'`" in log and "Fix: e.g. `reuse_sink_enabled: false`" in log


RUN_CASES = {
    "extra_column": (
        "select 1 as id, 2 as z",
        ["Member `m_extra_column` selects `z`, which is not a column of partial-update target `t_extra_column`"],
    ),
    "no_key": (
        "select 5 as a",
        ["Member `m_no_key` of partial-update target `t_no_key` does not select the key column `id`"],
    ),
    "bad_cast": (
        "select 1 as id, array(1, 2) as a",
        ["Member `m_bad_cast` writes `a` as array<int>, which Spark cannot cast to the target's int"],
    ),
}


DATA_CASES = {
    "t_null_key": ("select cast(null as bigint) as id, 1 as a", "NULL primary key (id) in member `m_t_null_key` of "
                   "`t_null_key`; `t_null_key` is unchanged. Fix: filter out the rows whose key is NULL in "
                   "`m_t_null_key`, or give them a key."),
    "t_duplicate": (
        "select 1 as id, 1 as a, 5 as v union all select 1 as id, 2 as a, 5 as v",
        "Two rows of member `m_t_duplicate` of `t_duplicate` have the key {\"id\":1} and one `sequence_by` value, so "
        "lakeplan cannot tell which one is last. `t_duplicate` is unchanged. Fix: make each member's sequence values "
        "unique per key.",
    ),
}


def member_mistakes() -> dict[str, str]:
    """Targets whose members are wrong in a way only the write can see (RUN_CASES, an overlap, a sequence group)."""
    files = {}
    for case, (sql, _) in RUN_CASES.items():
        files[f"models/t_{case}.sql"] = "{{ partial_update_target() }}"
        files[f"models/t_{case}.yml"] = target_yml(f"t_{case}", {"id": "bigint", "a": "int", "b": "string"})
        files[f"models/m_{case}.sql"] = member(f"t_{case}", sql)
    files["models/t_overlap.sql"] = "{{ partial_update_target() }}"
    files["models/t_overlap.yml"] = target_yml("t_overlap", {"id": "bigint", "a": "int", "b": "int", "c": "string"},
                                               rules={"b": "last_value"})
    files["models/m_first.sql"] = member("t_overlap", "select 1 as id, 1 as a, 1 as b, 'x' as c, 1 as v", sequence_by="v")
    files["models/m_second.sql"] = member("t_overlap", "select 1 as id, 2 as a, 2 as b")
    files["models/m_third.sql"] = member("t_overlap", "select 1 as id, 'y' as c")
    files["models/t_group.sql"] = "{{ partial_update_target() }}"
    files["models/t_group.yml"] = target_yml("t_group", {"id": "bigint", "a": "int", "v": "int"}, sequence_groups={"v": ["a"]})
    files["models/m_group.sql"] = member("t_group", "select 1 as id, 2 as a")
    return files


def data_mistakes() -> dict[str, str]:
    """Targets and an upsert whose rows are wrong (DATA_CASES, a NULL key in a changelog)."""
    files = {
        "models/upsert_null_key.sql": (
            "{{ config(materialized='upsert', unique_key='id') }}\nselect cast(null as bigint) as id, '+I' as _op"
        )
    }
    for target, (sql, _) in DATA_CASES.items():
        files[f"models/{target}.sql"] = "{{ partial_update_target() }}"
        files[f"models/{target}.yml"] = target_yml(target, {"id": "bigint", "a": "int"})
        files[f"models/m_{target}.sql"] = member(target, sql, sequence_by="v") if "v" in sql else member(target, sql)
    return files


def later_mistakes() -> dict[str, str]:
    """Two targets a first run writes, whose next run fails: one member computes rand(), one reads `base`."""
    return {
        "models/scored.sql": "{{ partial_update_target() }}",
        "models/scored.yml": target_yml("scored", {"id": "bigint", "a": "int", "r": "double"}),
        "models/scored_a.sql": member("scored", "select cast(1 as bigint) as id, 10 as a"),
        "models/scored_r.sql": member("scored", "select cast(1 as bigint) as id, rand() as r"),
        "models/base.sql": "select cast(1 as bigint) as id, 10 as a",
        "models/kept.sql": "{{ partial_update_target() }}",
        "models/kept.yml": target_yml("kept", {"id": "bigint", "a": "int", "b": "int"}),
        "models/kept_a.sql": member("kept", "select id, a from {{ ref('base') }}"),
        "models/kept_b.sql": member("kept", "select cast(1 as bigint) as id, 5 as b"),
    }


@pytest.fixture(scope="module")
def run_errors(make_project, spark):
    """One project and one `dbt run` of every runtime case (a project and a run per case cost a parse and ~2 s of
    dbt each): dbt runs every model whatever the others do, so the run's log holds each case's error."""
    project = make_project("pu_runtime", {**member_mistakes(), **data_mistakes(), **later_mistakes()})
    log = project.fail("run")
    assert snapshots(spark, "lakeplan_pu_runtime.scored") and snapshots(spark, "lakeplan_pu_runtime.kept")
    return project, log


@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_member_mistakes_fail_the_target_before_writing(run_errors, spark, case):
    _, log = run_errors
    assert f"Compilation Error in model t_{case}" in log
    for fragment in RUN_CASES[case][1]:
        assert fragment in log
    assert spark.sql(f"show tables in lakeplan_pu_runtime like 't_{case}'").count() == 0


def test_a_mistake_found_at_run_time_is_one_sentence_and_the_macro_chain_goes_to_the_debug_log(run_errors):
    """dbt showed lakeplan's sentence on three lines and then the chain of lakeplan's macros that raised it
    (`> in macro lakeplan_validate_partial_update_member ... > called by model`), a new user's trial."""
    _, log = run_errors
    sentences = [line for line in log.splitlines() if "Member `m_extra_column` selects `z`" in line]
    assert sentences and all("Its columns: " in line and ". Fix: " in line for line in sentences)  # one line each
    assert not [line for line in log.splitlines() if line.strip().startswith("> in macro lakeplan_")]
    assert "lakeplan: raised > in macro lakeplan_" in log  # the chain, in one debug line


def test_overlapping_columns_without_sequence_are_ambiguous(run_errors):
    """Every pair of members and every column they share is named in one error, not one column per run."""
    _, log = run_errors
    assert ("Members `m_first` and `m_second` both write columns `a`, `b` of partial-update target `t_overlap`, "
            "whose merge rules last_non_null, last_value depend on order") in log  # fmt: skip
    assert "Members `m_first` and `m_third` both write column `c` of partial-update target `t_overlap`" in log
    assert "Fix: set `sequence_by` on both members" in log


def test_a_sequence_group_column_without_its_version_is_refused(run_errors):
    _, log = run_errors
    assert "Member `m_group` writes `a` of partial-update target `t_group`, which is in sequence group v" in log
    assert "Fix: select the group's version as `v`" in log


@pytest.mark.parametrize("target", sorted(DATA_CASES))
def test_bad_rows_stop_the_write(run_errors, spark, target):
    _, log = run_errors
    assert DATA_CASES[target][1] in log
    assert not spark.catalog.tableExists(f"lakeplan_pu_runtime.{target}")  # a failed first run leaves no table


def test_null_key_in_a_changelog_stops_the_upsert(run_errors):
    _, log = run_errors
    assert ("NULL primary key (id) in model `upsert_null_key` (op column `_op`); `upsert_null_key` is unchanged. Fix: "
            "filter out the rows whose key is NULL in `upsert_null_key`'s query, or give them a key.") in log


def test_a_non_deterministic_member_is_named_when_the_merge_refuses_it(run_errors, spark):
    # The first run created the table (one CREATE TABLE AS SELECT, which takes rand()); the MERGE of the next refuses
    # it, and Spark's own sentence names lakeplan's join condition, not the member.
    project, _ = run_errors
    before = snapshots(spark, "lakeplan_pu_runtime.scored")
    log = project.fail("run", "--select", "scored")
    assert ("A member of `scored` (`scored_a`, `scored_r`) computes a value that differs on every evaluation "
            "(such as rand(), uuid() or reflect()), which a MERGE cannot take; `scored` is unchanged. Fix: compute "
            "that value upstream, in a table model the member reads.") in log
    assert snapshots(spark, "lakeplan_pu_runtime.scored") == before


def test_a_member_spark_cannot_read_is_named_and_the_target_is_kept(run_errors, spark):
    # The write stages each member's query first; Spark's sentence there names a table or a column, not the member.
    project, _ = run_errors
    before = snapshots(spark, "lakeplan_pu_runtime.kept")
    spark.sql("drop table lakeplan_pu_runtime.base")
    log = project.fail("run", "--select", "kept")
    assert ("Member `kept_a` of `kept` reads a table or schema that does not exist; `kept` is unchanged. Fix: build "
            "what `kept_a` reads first (`dbt run -s +kept` builds `kept` with everything upstream of it), or correct "
            "the name in `kept_a`. (Spark: [TABLE_OR_VIEW_NOT_FOUND]") in log
    assert snapshots(spark, "lakeplan_pu_runtime.kept") == before

    (project.path / "models/kept_b.sql").write_text(member("kept", "select cast(1 as bigint) as id, zz as b"))
    log = project.fail("run", "--select", "+kept")  # `base` is built again first; `kept_b` names a missing column
    assert ("Member `kept_b` of `kept` has a query Spark cannot run; `kept` is unchanged. Fix: correct the query of "
            "`kept_b`. (Spark: [UNRESOLVED_COLUMN") in log
    assert snapshots(spark, "lakeplan_pu_runtime.kept") == before
