"""Overlapping `dbt run`s of one `upsert` on the shared catalog (target `team`), each a process of its own, over a
changelog read whole and, in a second upsert, through `new_rows`: either both runs land, every change applied once
(the latest per key by its sequence, deletes remembered), or the later one stops with one sentence naming the table
and the run that committed first (docs/errors.md row 141) and the table is exactly as the first left it; no run
leaves a branch, staging table or pending consumed record behind, and a rerun converges to the right table. A run of
an upsert without `sequence_by` over `new_rows` that read its inputs before another run applied newer changes to the
same keys never writes its older values over them (issue 46)."""

import json
import threading
import time

import pytest

from tests.concurrency.harness import SparkSql, release, start_at_barrier
from tests.integration.test_changelog_upsert import AFTER_BATCH_1, AFTER_BATCH_2, CHANGES
from tests.integration.test_overlapping_runs import OVERLAP_S, dbt_process, landed, prepared, project_yml

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

SCHEMA = "lakeplan_overlap_upsert"
SOURCE = f"{SCHEMA}.changes"
UPSERT = "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
FILES = {
    "dbt_project.yml": project_yml("overlap_upsert"),
    "models/sources.yml": f"""
version: 2
sources:
  - name: cdc
    schema: {SCHEMA}
    tables: [{{name: changes}}]
""",
    # the changelog read whole, and only what is new since this upsert's last write
    "models/current.sql": UPSERT + "select id, op, seq, val from {{ source('cdc', 'changes') }}",
    "models/current_new.sql": UPSERT + "select id, op, seq, val from {{ lakeplan.new_rows(source('cdc', 'changes')) }}",
}
MODELS = ("current", "current_new")
# a third batch the rerun applies: key 4 newer than its stored row, key 2 back after its delete, key 5 deleted
BATCH_3 = [(4, "+U", 11, "newer"), (2, "+I", 3, "back"), (5, "-D", 8, "q")]
AFTER_BATCH_3 = {**{k: v for k, v in AFTER_BATCH_2.items() if k != 5}, 4: "newer", 2: "back"}


def batch(number: int) -> list[tuple]:
    """The rows of test_changelog_upsert's changelog in `number` (id, op, seq, val; seq NULL where it is empty)."""
    rows = [line.split(",") for line in CHANGES.split()[1:]]
    return [(int(k), op, int(seq) if seq else None, val) for b, k, op, seq, val in rows if int(b) == number]


def add(sql: SparkSql, rows: list[tuple]) -> None:
    values = ", ".join(f"({k}, '{op}', {'null' if seq is None else seq}, '{val}')" for k, op, seq, val in rows)
    sql(f"insert into {SOURCE} values {values}")


def outcome(said: list[str], model: str) -> str:
    """What a run that printed `said` did to `model`: `wrote` (dbt reported it written), `nothing new` (it found
    nothing new to apply: another run's write had consumed it) or `stopped`, which it must have told in row 141's
    sentence, naming the upsert's table and the run that committed first."""
    shown = "\n".join(said)
    [result] = [line for line in said if f" model {SCHEMA}.{model} " in line and " START " not in line]
    if " OK created " in result:
        return "nothing new" if "[NOTHING NEW" in result else "wrote"
    assert f"Runtime Error in model {model} " in shown, shown[-4000:]
    table = f"{SCHEMA}.{model}"
    assert (f"{table} was changed by the run of Spark application " in shown
            and f"this run's write was not committed and {table} is as that run left it" in shown), shown[-4000:]
    return "stopped"


def test_overlapping_runs_of_one_upsert_apply_every_change_once(shared_catalog, tmp_path, monkeypatch):
    project, barrier, sql = prepared(shared_catalog, tmp_path, monkeypatch, FILES, f"{SCHEMA}.changes",
                                     "id int, op string, seq bigint, val string")
    add(sql, batch(1))

    def state(model: str) -> tuple[dict, int]:
        rows, snapshots = sql(f"select id, val from {SCHEMA}.{model}",
                              f"select count(*) as n from {SCHEMA}.{model}.snapshots")
        return {row["id"]: row["val"] for row in rows}, snapshots[0]["n"]

    # two processes, Spark started and the project parsed; the first creates both upserts alone, then both run each
    # upsert at once (their writes overlapping: one release per upsert, as a run writes one model after the other),
    # then the first applies a third batch
    overlaps = [f"{model}=run --select {model}" for model in MODELS]
    runs = start_at_barrier([dbt_process(0, project, barrier, OVERLAP_S, "first=run", *overlaps, "last=run"),
                             dbt_process(1, project, barrier, OVERLAP_S, *overlaps)], shared_catalog, barrier)
    try:
        [first] = release(runs[:1], barrier, "first").values()
        landed(first, barrier, 0)
        created = {model: state(model) for model in MODELS}
        add(sql, batch(2))
        overlapped = {}
        for model in MODELS:
            said = release(runs, barrier, model)
            for n in (0, 1):
                landed(said[n], barrier, n, must=False)  # succeeded, or failed without a Java stack or traceback
            overlapped[model] = (state(model), [outcome(said[n], model) for n in (0, 1)])
        add(sql, BATCH_3)
        [last] = release(runs[:1], barrier, "last").values()
        landed(last, barrier, 0)
        final = {model: state(model) for model in MODELS}
        head, properties, tables, *refs = sql(
            f"select snapshot_id from {SOURCE}.refs where name = 'main'", f"show tblproperties {SCHEMA}.current_new",
            f"show tables in {SCHEMA}", *[f"select name from {SCHEMA}.{model}.refs where type = 'BRANCH'"
                                          for model in MODELS])
    finally:
        for process in runs:
            process.kill()
        sql.close()
    for model in MODELS:
        assert created[model] == (AFTER_BATCH_1, 1)  # the CREATE's snapshot
        (rows, snapshots), outcomes = overlapped[model]
        print(f"overlapping runs of upsert `{model}`: {outcomes}")
        wrote = outcomes.count("wrote")
        assert wrote >= 1, outcomes
        # each run that wrote committed one MERGE, and the table holds every change of batches 1 and 2: a later run's
        # write, stopped, left it as the first did; one that found nothing new had nothing left to apply
        assert rows == AFTER_BATCH_2 and snapshots == 1 + wrote, (model, rows, snapshots, outcomes)
        assert final[model] == (AFTER_BATCH_3, 2 + wrote), (model, final[model])
    consumed = {row["key"]: row["value"] for row in properties}
    assert json.loads(consumed["lakeplan.consumed"]) == {SOURCE: head[0]["snapshot_id"]}
    assert "lakeplan.consumed.pending" not in consumed
    assert [[ref["name"] for ref in model_refs] for model_refs in refs] == [["main"], ["main"]]  # no run's branch
    # no staging table; the tombstones' side tables are the upserts' own (their deletes have a sequence)
    assert sorted(t["tableName"] for t in tables) == sorted(
        ["changes", *MODELS, *[f"{model}__lakeplan_tombstones" for model in MODELS]])


# an upsert without `sequence_by` over new_rows: a change of a later batch replaces its key's row whatever it holds
LATEST = {
    "dbt_project.yml": project_yml("overlap_upsert"),
    "models/sources.yml": FILES["models/sources.yml"],
    "models/latest.sql": "{{ config(materialized='upsert', unique_key='id', op_column='op') }}\n"
                         "select id, op, val from {{ lakeplan.new_rows(source('cdc', 'changes')) }}",
}
# the stale run's write waits this long after its release: its compile, the other run's whole run and the batch
# between them fit in it on a busy machine (100 s did not, with two test sessions and a dbt project on 2 cores: the
# compile alone took over 40 s)
STALE_S = 150


def test_a_run_that_read_older_changes_does_not_write_them_over_a_later_runs(shared_catalog, tmp_path, monkeypatch):
    """Run A compiles (new_rows fixes the snapshots it reads: batch 1) and waits; batch 2 updates the same keys and
    run B applies it and commits; then A writes. A must stop with row 141's sentence (or write nothing stale): the
    table keeps batch 2's values and the consumed record stays at the head B read. Before, A's MERGE, planned after
    B's commit, met no conflict: it wrote batch 1's values over batch 2's and set the consumed record back."""
    project, barrier, sql = prepared(shared_catalog, tmp_path, monkeypatch, LATEST, SOURCE,
                                     "id int, op string, val string")

    def add_values(values: list[tuple]) -> int:
        sql(f"insert into {SOURCE} values " + ", ".join(f"({k}, '{op}', '{val}')" for k, op, val in values))
        return sql(f"select snapshot_id from {SOURCE}.refs where name = 'main'")[0][0]["snapshot_id"]

    add_values([(1, "+I", "a0"), (2, "+I", "b0")])
    # A waits in its process's first case (its pre-hook's moment, read from the environment of that run); B, in the
    # process that created the table, waits for no moment
    runs = start_at_barrier([dbt_process(0, project, barrier, 0, "first=run", "b=run --select latest"),
                             dbt_process(1, project, barrier, STALE_S, "a=run --select latest")],
                            shared_catalog, barrier)
    stale = {}
    try:
        [first] = release(runs[:1], barrier, "first").values()
        landed(first, barrier, 0)
        add_values([(1, "+U", "a1"), (2, "+U", "b1")])
        waiting = threading.Thread(target=lambda: stale.update(release(runs[1:], barrier, "a", wait=True)), daemon=True)
        waiting.start()
        while not (barrier / "go-a").exists():  # the thread's release touches it
            time.sleep(0.1)
        moment = (barrier / "go-a").stat().st_mtime + STALE_S
        compiled = project / "target-1" / "compiled" / "lakeplan" / "models" / "latest.sql"
        while not compiled.exists():  # A has compiled (dbt writes the SQL before it runs the materialization)
            assert time.time() < moment - 60 and waiting.is_alive(), "run A did not compile in time"
            time.sleep(0.5)
        assert "lakeplan new_rows: " in compiled.read_text()
        head = add_values([(1, "+U", "a2"), (2, "+U", "b2")])
        [applied] = release(runs[:1], barrier, "b").values()
        landed(applied, barrier, 0)
        assert time.time() < moment, "run B ended after run A's write began: raise STALE_S"
        waiting.join(timeout=STALE_S + 600)
        assert not waiting.is_alive(), "run A did not end"
        rows, properties, refs = sql(f"select id, val from {SCHEMA}.latest",
                                     f"show tblproperties {SCHEMA}.latest",
                                     f"select name from {SCHEMA}.latest.refs where type = 'BRANCH'")
    finally:
        for process in runs:
            process.kill()
        sql.close()
    said = stale[0]  # process 1's lines (release numbers the processes it is given)
    landed(said, barrier, 1, must=False)
    print(f"a run that read older changes: {outcome(said, 'latest')}")
    assert outcome(said, "latest") in ("stopped", "nothing new"), said[-40:]
    assert {row["id"]: row["val"] for row in rows} == {1: "a2", 2: "b2"}  # before: a1, b1 (A's stale write)
    consumed = {row["key"]: row["value"] for row in properties}
    assert json.loads(consumed["lakeplan.consumed"]) == {SOURCE: head}  # before: batch 1's head, set back
    assert "lakeplan.consumed.pending" not in consumed
    assert [ref["name"] for ref in refs] == ["main"]
