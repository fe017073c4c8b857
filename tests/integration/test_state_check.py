"""The state check both ways (issue 16, case 5; Flink restores state by operator ID and accepts a topology
change with --allowNonRestoredState): data never invalidates a table, what changed is named at its root, a
partial-update target takes new members, a user can accept new logic, and a refusal stops the whole run
before its first write. A small project shaped like the example's customer_360 (a seed joined by a member).

The tests that leave the tables as a fresh build would have them, or change them only as the tests after them
allow, share the module's one build (`project`, in this order: refusals first, then the tests that write); the
two that record new logic in the table build a project of their own (`alone`, schema `lakeplan_state_alone`)."""

import pytest

from tests.conftest import accepting, snapshots, write_files

SCHEMA = "lakeplan_state"
WIDE, DIM, SEGMENTS, TOTALS = (f"{SCHEMA}.{name}" for name in ("wide", "dim", "segments", "totals"))
ALONE_WIDE = "lakeplan_state_alone.wide"
WIDE_YML = """
version: 2
models:
  - name: wide
    config: {{unique_key: id}}
    columns:
      - {{name: id, data_type: int}}
      - {{name: segment, data_type: string}}
      - {{name: owner, data_type: string}}
      - {{name: orders, data_type: bigint, meta: {{merge: {orders_rule}}}}}{more_columns}
"""
FILES = {
    "seeds/customers.csv": "id,segment\n1,A\n2,B\n",
    "seeds/segments.csv": "segment,owner\nA,alpha\nB,beta\n",
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": WIDE_YML.format(orders_rule="sum", more_columns=""),
    "models/m_profile.sql": (
        "{{ config(partial_update_target='wide') }}\nselect c.id, c.segment, s.owner\n"
        "from {{ ref('customers') }} as c left join {{ ref('segments') }} as s on c.segment = s.segment"
    ),
    "models/m_orders.sql": (  # a counter: every run adds 1 per customer, so a rebuild shows as a reset
        "{{ config(partial_update_target='wide') }}\nselect id, cast(1 as bigint) as orders from {{ ref('customers') }}"
    ),
    "models/dim.sql": "{{ config(materialized='table') }}\nselect * from {{ ref('segments') }}",
    "models/totals.sql": (
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}\n"
        "select id, segment from {{ ref('customers') }}{% if is_incremental() %} where id > 0{% endif %}"
    ),
}
HOOK = {"on-run-start": ["{{ lakeplan_check_state() }}"]}  # as in the template's dbt_project.yml


@pytest.fixture(scope="module")
def state_build(make_project):
    """The module's one build of FILES."""
    dbt = make_project("state", FILES, HOOK)
    dbt.run("build")
    return dbt


@pytest.fixture
def project(state_build):
    """The module's build; its files as FILES again after the test (what the test wrote to the tables stays)."""
    yield state_build
    for path in (state_build.path / "models").glob("*.sql"):
        if f"models/{path.name}" not in FILES:
            path.unlink()
    write_files(state_build.path, FILES)


@pytest.fixture
def alone(make_project):
    """A build of FILES of the test's own, for a test that records new logic in the table."""
    dbt = make_project("state_alone", FILES, HOOK)
    dbt.run("build")
    return dbt


def rows(spark, table):
    return sorted(tuple(row) for row in spark.sql(f"select * from {table}").collect())


def refusal(shown: str) -> str:
    """The on-run-start check's refusal as dbt shows it: one line (as lakeplan's other run-time errors) under dbt's
    heading, which names the hook, so the line opens with the model's name."""
    lines = {line.strip() for line in shown.splitlines() if "would reuse a table built by other logic" in line}
    assert len(lines) == 1, shown  # dbt shows one error in the run and again in its summary: the same line
    [line] = lines
    assert line.startswith("Model `") and line.endswith("Nothing was written."), line
    assert "Fix: to keep the table" in line, line
    return line


def counts(spark, *tables):
    return [snapshots(spark, table) for table in tables]


def properties(spark, table):
    return {row[0]: row[1] for row in spark.sql(f"show tblproperties {table}").collect()}


# The tests below share the module's build, in this order: those that write nothing (each checks that), then those
# that write.


def test_a_refusal_names_the_changed_node_and_writes_nothing(project, spark):
    before = counts(spark, SEGMENTS, DIM, WIDE)
    write_files(project.path, {"seeds/segments.csv": "segment,owner,tier\nA,alpha,1\nB,beta,2\n"})  # a new column
    log = project.fail("build", "-s", "segments+")
    assert (
        "Model `wide` (partial_update) would reuse a table built by other logic" in log
        and "What changed: seed `segments` changed its own SQL, columns or configs; member `m_profile` "
        "changed. Reusing it" in log
    )
    assert "dbt run -s wide --vars '{lakeplan_accept_state: [wide]}'" in log and "Nothing was written." in log
    assert refusal(project.shown).startswith("Model `wide` (partial_update) would reuse")
    assert counts(spark, SEGMENTS, DIM, WIDE) == before  # the seed and `dim` before `wide` were not rebuilt
    assert rows(spark, WIDE) == [(1, "A", "alpha", 1), (2, "B", "beta", 1)]


def test_a_changed_merge_rule_is_refused(project, spark):
    """Issue 16, case 4 on a real table: `sum` -> `max` used to merge into the table built under `sum`."""
    before = counts(spark, WIDE)
    write_files(project.path, {"models/wide.yml": WIDE_YML.format(orders_rule="max", more_columns="")})
    log = project.fail("run", "-s", "wide")
    assert "What changed: column `orders` changed its merge rule or sequence group. Reusing it" in log
    assert counts(spark, WIDE) == before and rows(spark, WIDE) == [(1, "A", "alpha", 1), (2, "B", "beta", 1)]


def test_a_changed_target_setting_is_refused_without_naming_what_did_not_change(project, spark):
    """The trial's case: only partial_update_on_delete changed, and the message listed `SQL` among what changed."""
    before = counts(spark, WIDE)
    changed = WIDE_YML.format(orders_rule="sum", more_columns="").replace(
        "config: {unique_key: id}", "config: {unique_key: id, partial_update_on_delete: error}")
    write_files(project.path, {"models/wide.yml": changed})
    log = " ".join(project.fail("run", "-s", "wide").split())
    assert ("What changed: one of its unique_key, partial_update_on_delete and own SQL (one part of its fingerprint) "
            "changed. Reusing it") in log
    assert counts(spark, WIDE) == before


def test_a_mismatch_stops_run_but_never_compile_docs_or_ls(project, spark):
    write_files(project.path, {"seeds/customers.csv": "id,segment,since\n1,A,2020\n2,B,2021\n",
                               "models/totals.sql": FILES["models/totals.sql"].replace("id > 0", "id >= 0")})
    for command in (["compile"], ["docs", "generate"], ["ls"]):
        project.run(*command)
    before = counts(spark, WIDE, TOTALS)
    log = project.fail("run")
    # both models' sentences, each with its fix, numbered, a line each (a trial read them run together)
    lines = sorted({line.strip() for line in project.shown.splitlines() if "would reuse a table built by" in line})
    assert [line[:40] for line in lines] == ["1. Model `totals` (incremental) would re", "2. Model `wide` (partial_update) would r"]
    assert lines[1].endswith("Nothing was written.") and "Nothing was written." not in lines[0]
    # a model's own change is named with the model (it read "...; its own SQL, columns or configs.")
    assert ("What changed: seed `customers` changed its own SQL, columns or configs; `totals` changed its "
            "own SQL, columns or configs. Reusing it") in lines[0]
    assert counts(spark, WIDE, TOTALS) == before


def test_a_run_names_its_spark_application_once(project, spark):
    """A beaten run's sentence names the other run by its Spark application (docs/team.md): every run that writes
    says which application it is, once whatever its threads, with the dbt invocation id its log carries; a command
    that writes nothing does not."""
    from dbt_common.invocation import get_invocation_id

    project.run("run", "-s", "dim", "totals", "--threads", "2")
    said = [line for line in project.shown.splitlines() if line.startswith("lakeplan: this run is ")]
    assert said == [f"lakeplan: this run is Spark application {spark.sparkContext.applicationId} "
                    f"(dbt invocation {get_invocation_id()})"], project.shown
    project.run("compile", "-s", "dim")
    assert "lakeplan: this run is " not in project.shown


def test_editing_seed_data_keeps_the_state(project, spark):
    assert rows(spark, WIDE) == [(1, "A", "alpha", 1), (2, "B", "beta", 1)]
    before = counts(spark, WIDE)
    write_files(project.path, {"seeds/segments.csv": "segment,owner\nA,apex\nB,beta\n"})  # data, not logic
    project.run("build", "-s", "segments+")
    assert rows(spark, WIDE) == [(1, "A", "apex", 2), (2, "B", "beta", 2)]  # merged: the counter went on
    assert counts(spark, WIDE) == [before[0] + 1]


@pytest.mark.parametrize("failure", ["column_the_target_lacks", "value_that_does_not_fit"])
def test_a_new_member_whose_write_fails_leaves_the_recorded_logic_as_it_was(project, spark, failure):
    """A new member is recorded with the write that takes it, never before: when that write fails, removing the
    member brings the project back to a state the table accepts."""
    before = counts(spark, WIDE), properties(spark, WIDE)["lakeplan.fingerprint"]
    member = {
        "column_the_target_lacks": "select id, 'x' as zzz from {{ ref('customers') }}",
        "value_that_does_not_fit": "select id, 'not a number' as score from {{ ref('customers') }}",
    }[failure]
    write_files(project.path, {
        "models/wide.yml": WIDE_YML.format(orders_rule="sum", more_columns="\n      - {name: score, data_type: int}"),
        "models/m_new.sql": "{{ config(partial_update_target='wide') }}\n" + member,
    })  # fmt: skip
    project.fail("run", "-s", "wide")
    assert (counts(spark, WIDE), properties(spark, WIDE)["lakeplan.fingerprint"]) == before
    (project.path / "models" / "m_new.sql").unlink()
    write_files(project.path, {"models/wide.yml": WIDE_YML.format(orders_rule="sum", more_columns="")})
    # new input (an unchanged CSV alone is not loaded again), so the run below writes (an exact repeat would not)
    project.run("seed", "-s", "customers", "--full-refresh")
    project.run("run", "-s", "wide")  # the project as it was: no state mismatch
    assert counts(spark, WIDE) == [before[0][0] + 1]


# The tests below record new logic in the table: each builds a project of its own.


def test_accepting_new_logic_keeps_the_table_and_later_runs_proceed(alone, make_project, spark):
    old = properties(spark, ALONE_WIDE)["lakeplan.fingerprint"]
    before = counts(spark, ALONE_WIDE)
    changed = {"models/m_profile.sql": FILES["models/m_profile.sql"].replace("s.owner", "upper(s.owner) as owner")}
    write_files(alone.path, changed)
    assert "member `m_profile` changed" in alone.fail("run", "-s", "wide")
    # the user accepts: a second project on the same tables, whose dbt_project.yml sets the var (a --vars on `alone`
    # would parse it in full again, and once more for the runs after it without the var)
    accepted = make_project("state_accepted", {**FILES, **changed}, {**HOOK, **accepting("wide")}, schema="state_alone")
    accepted.run("run", "-s", "wide")
    # said once, though the check meets the model on run start, before its write and after it
    assert accepted.shown.count("lakeplan: model `wide`: accepting its current logic") == 1, accepted.shown
    recorded = properties(spark, ALONE_WIDE)
    assert recorded["lakeplan.fingerprint.accepted_from"] == old and recorded["lakeplan.fingerprint"] != old
    assert rows(spark, ALONE_WIDE) == [(1, "A", "ALPHA", 2), (2, "B", "BETA", 2)]  # kept its counter, merged the new
    alone.run("run", "-s", "wide")  # the same inputs again: the table already holds this run (issue 28)
    assert rows(spark, ALONE_WIDE) == [(1, "A", "ALPHA", 2), (2, "B", "BETA", 2)]
    alone.run("seed", "-s", "customers", "--full-refresh")  # a new delivery (an unchanged CSV is not loaded again)
    alone.run("run", "-s", "wide")  # a normal incremental run
    assert rows(spark, ALONE_WIDE) == [(1, "A", "ALPHA", 3), (2, "B", "BETA", 3)]
    assert counts(spark, ALONE_WIDE) == [before[0] + 2]


def test_a_new_member_fills_its_columns_and_a_removed_or_changed_one_is_named(alone, spark):
    before = counts(spark, ALONE_WIDE)
    write_files(alone.path, {
        "models/wide.yml": WIDE_YML.format(orders_rule="sum", more_columns="\n      - {name: region, data_type: string}"),
        "models/m_region.sql": "{{ config(partial_update_target='wide') }}\nselect id, concat('r', id) as region from {{ ref('customers') }}",
    })  # fmt: skip
    alone.run("run", "-s", "wide")
    # no rebuild: orders went on
    assert rows(spark, ALONE_WIDE) == [(1, "A", "alpha", 2, "r1"), (2, "B", "beta", 2, "r2")]
    assert counts(spark, ALONE_WIDE) == [before[0] + 1]

    (alone.path / "models" / "m_profile.sql").unlink()
    log = alone.fail("run", "-s", "wide")
    assert "What changed: member `m_profile` was removed. Reusing it" in log
    write_files(alone.path, {
        "models/m_profile.sql": FILES["models/m_profile.sql"],
        "models/m_orders.sql": FILES["models/m_orders.sql"].replace("cast(1 as bigint)", "cast(10 as bigint)"),
    })  # fmt: skip
    log = alone.fail("run", "-s", "wide")
    assert "What changed: member `m_orders` changed its own SQL, columns or configs. Reusing it" in log  # named once
    assert counts(spark, ALONE_WIDE) == [before[0] + 1]
