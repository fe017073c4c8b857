"""`change_mode: delta` (issue 47) when a process stops midway: a Ctrl-C during a run's append of its delta rows, and a
`kill -9` of the Spark JVM during a compaction (`lakeplan_maintain`'s `insert overwrite`). Readers find the merged
rows they found before, and the views they read through; a compaction run again afterwards folds the same rows.

One dbt process (tests/integration/dbt_worker.py) with a metastore and warehouse of its own, as in test_cancel.py and
test_killed_jvm.py: this session's Spark holds its own embedded Derby. After the kill, a second process with a JVM
of its own reads the table and folds it. Processes of their own: the team stage (docs/testing.md)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.integration.test_cancel import DbtWorker, dbt, interrupted, own_metastore, reported, state
from tests.integration.test_killed_jvm import killed_while, own_project
from tests.integration.test_partial_update import member, target_yml

pytestmark = pytest.mark.team_catalog  # several JVMs: `make test-team` (docs/testing.md)

ROWS = 20_000  # the compaction reads 3 rows a key (stored, 2 runs): seconds of jobs, which the kill lands in
TABLE = "lakeplan_delta_killed.wide"
ADD = "{{ var('add', 0) }}"
# `ROWS` keys; under the var `slow`, from two million rows hashed and grouped (as test_cancel's), so that a run's
# append runs for seconds and the Ctrl-C lands inside it (a filter of a million rows was done before it landed)
KEYS = (f"select k as id from (select id % {ROWS} as k, max(sha2(cast(id as string), 256)) as h "
        f"from range(0, {{{{ 2000000 if var('slow', false) else {ROWS} }}}}) group by 1) where h > ''")
FILES = {
    "models/wide.sql": "{{ partial_update_target() }}",
    # two runs of delta rows are left for lakeplan_maintain to fold
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint"}, rules={"a": "sum"},
                                  change_mode="delta", maintenance={"delta_runs": 2, "after_write": False}),
    "models/adds.sql": member("wide", f"select id, 1 as a from ({KEYS})"),
    "models/bees.sql": member("wide", f"select id, id + {ADD} as b from ({KEYS})"),
    # the merged rows and the stored rows as sums, the delta rows and the commits, and the views' identities:
    # printed by every command's on-run-start hook before it writes, and by `dbt run-operation print_state`
    "test_macros/print_state.sql": """{% macro print_state() %}
  {%- if execute and adapter.get_relation(none, 'lakeplan_delta_killed', 'wide') -%}
    {%- set state = {} -%}
    {%- for name, sql in [
        ('merged', 'select count(*), sum(a), sum(b) from """ + TABLE + """__lakeplan_merged'),
        ('base', 'select count(*), sum(a), sum(b) from """ + TABLE + """__lakeplan_base'),
        ('delta_rows', 'select count(*) from """ + TABLE + """ where lakeplan_delta'),
        ('changes', 'select count(*) from """ + TABLE + """.history'),
        ('main', "select cast(snapshot_id as string) from """ + TABLE + """.refs where name = 'main'")] -%}
      {%- do state.update({name: run_query(sql).rows[0] | map('string') | list}) -%}
    {%- endfor -%}
    {%- for view in ['merged', 'base'] -%}
      {%- for row in run_query('describe table extended """ + TABLE + """__lakeplan_' ~ view)
          if row[0] == 'Table Properties' -%}
        {%- do state.update({view ~ '_view': row[1].split('uuid=')[1]}) -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- do print('LAKEPLAN_STATE ' ~ tojson(state)) -%}
  {%- endif -%}
{% endmacro %}
""",
}  # fmt: skip
APPEND_STARTED = f"insert into {TABLE} ("
FOLD_STARTED = f"insert overwrite {TABLE} ("


def sums(runs: int) -> list[str]:
    """The merged rows after the create and `runs` more runs: each run adds 1 to a (sum) and sets b to id + its add."""
    return [str(ROWS), str(ROWS * (runs + 1)), str(ROWS * (ROWS - 1) // 2 + ROWS * runs)]


def test_a_cancelled_delta_write_and_a_killed_compaction_leave_readers_the_same_rows(tmp_path):
    project = own_project(tmp_path, "delta_killed", FILES)
    env = own_metastore(tmp_path / "home")
    worker = DbtWorker(SimpleNamespace(path=project), env)
    try:
        dbt(worker, "run")
        for add in (1, 2):  # two runs of delta rows, not folded (after_write false)
            dbt(worker, "run", "--vars", json.dumps({"add": add}))
        # Ctrl-C while the third run appends its delta rows: it never commits
        output = interrupted(worker, "wide", APPEND_STARTED, "bees")
        before_cancel = state(output)
        assert reported(output, "wide") == (False, True), output[-5000:]
        after_cancel = state(dbt(worker, "run-operation", "print_state"))
        # kill -9 of the JVM while lakeplan_maintain's compaction rewrites the table
        succeeded, killed = killed_while(worker, FOLD_STARTED, "run-operation", "lakeplan_maintain",
                                         "--args", "{select: wide}")
    finally:
        worker.process.kill()
        worker.process.wait()
    assert before_cancel["merged"] == sums(2) and before_cancel["delta_rows"] == [str(2 * ROWS)], before_cancel
    assert before_cancel["base"] == sums(0), before_cancel  # the stored rows alone lag the two runs
    assert after_cancel == before_cancel  # the same rows, commits, snapshot and views
    assert FOLD_STARTED in killed and not succeeded, killed[-4000:]

    rerun = DbtWorker(SimpleNamespace(path=project), env)  # a new process, a new JVM, on the same metastore
    try:
        after_kill = state(dbt(rerun, "run-operation", "print_state"))
        folded = dbt(rerun, "run-operation", "lakeplan_maintain", "--args", "{select: wide}")
        after_fold = state(dbt(rerun, "run-operation", "print_state"))
    finally:
        rerun.close()
    # the killed compaction committed nothing (or, had it committed, everything): readers see the same merged rows
    assert after_kill["merged"] == sums(2), after_kill
    assert after_kill == after_cancel, after_kill  # Iceberg's commit came after the jobs the kill stopped
    assert "`wide` folded 2 runs of delta rows into its stored rows (maintenance.delta_runs 2)." in folded, folded
    assert after_fold["merged"] == after_fold["base"] == sums(2) and after_fold["delta_rows"] == ["0"], after_fold
    assert int(after_fold["changes"][0]) == int(after_kill["changes"][0]) + 1  # the fold: one commit
    assert (after_fold["merged_view"], after_fold["base_view"]) == (after_kill["merged_view"], after_kill["base_view"])
