"""Overlapping `dbt run`s of one `upsert` on the shared catalog (target `team`), each a process of its own, over a
changelog read whole and, in a second upsert, through `new_rows`: either both runs land, every change applied once
(the latest per key by its sequence, deletes remembered), or the later one stops with one sentence naming the table
and the run that committed first (docs/errors.md row 141) and the table is exactly as the first left it; no run
leaves a branch, staging table or pending consumed record behind, and a rerun converges to the right table."""

import json

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
