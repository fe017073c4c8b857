"""Overlapping `dbt run`s on the shared catalog (target `team`), each a process of its own: on different models both
succeed; on one partial-update target with a `sum` over `new_rows`, either both land or the later one stops with one
sentence naming the table and the run that committed first, and in the end every event is counted exactly once,
the consumed record is the input's head, and no run left a branch or staging table behind."""

import json
import sys
from pathlib import Path

import pytest

from tests.concurrency.harness import HERE, SparkSql, release, start_at_barrier
from tests.conftest import REPO, given, write_files

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

SCHEMA = "lakeplan_overlap"
EVENTS = f"{SCHEMA}.events"
TARGET_RUN = "run --select spent totals"
# the overlapping runs' models start their first statement together (AT_THE_BARRIER), this long after their release:
# a cold dbt process took about 20 s to reach it at load 5
OVERLAP_S = 40
# every run's first statement waits until one moment (epoch ms, an env_value), so the processes' writes overlap
AT_THE_BARRIER = ("select reflect('java.lang.Thread', 'sleep', "
                  f"greatest(cast(0 as bigint), {given('barrier', 0)} - unix_millis(current_timestamp())))")


def project_yml(schema: str) -> str:
    """A project whose models write to `lakeplan_<schema>`, each waiting for the barrier's moment first."""
    return f"""
name: lakeplan
version: '0.1.0'
config-version: 2
profile: lakeplan
models:
  lakeplan: {{+schema: {schema}, +file_format: iceberg, +pre-hook: "{AT_THE_BARRIER}"}}
"""


FILES = {
    "dbt_project.yml": project_yml("overlap"),
    "models/sources.yml": f"""
version: 2
sources:
  - name: raw
    schema: {SCHEMA}
    tables: [{{name: events}}]
models:
  - name: totals
    config: {{unique_key: customer}}
    columns:
      - {{name: customer, data_type: int}}
      - {{name: spent, data_type: bigint, meta: {{merge: sum}}}}
""",
    "models/totals.sql": "{{ partial_update_target() }}",
    "models/spent.sql": "{{ config(partial_update_target='totals') }}\n"
                        "select customer, amount as spent from {{ lakeplan.new_rows(source('raw', 'events')) }}",
    "models/per_customer.sql": "{{ config(materialized='table') }}\n"
                               "select customer, count(*) as events from {{ source('raw', 'events') }} group by 1",
}


def add_events(sql: SparkSql, first: int, count: int) -> None:
    values = ", ".join(f"({n % 5}, {n})" for n in range(first, first + count))
    sql(f"insert into {EVENTS} values {values}")


def dbt_process(n: int, project: Path, barrier: Path, delay: float, *cases: str) -> list[str]:
    """A process of tests/concurrency/run_dbt.py: `<case>=<dbt command>`s on the `team` target, each when released,
    its models' first statement `delay` seconds after that."""
    return [sys.executable, str(HERE / "run_dbt.py"), str(n), str(project), str(barrier), str(delay), *cases]


def landed(said: list[str], barrier: Path, n: int, must: bool = True) -> bool:
    """Whether the run of process `n` that said `said` succeeded (it `must`, or it failed showing no Java stack or
    Python traceback: its output and its error output)."""
    shown = "\n".join(said) + (barrier / f"{n}.log").read_text()
    assert said[-1] == "exit 0" or not must and "\tat " not in shown and "Traceback" not in shown, shown[-4000:]
    return said[-1] == "exit 0"


def team_project(shared_catalog: Path, tmp_path: Path, files: dict, schema: str, table: str) -> tuple:
    """The project of `files` (the repository's macros linked in), its barrier folder, and a SparkSql on the shared
    catalog that has made `schema` afresh with the Iceberg table `table` (`<name> (<columns>)`) in it."""
    project, barrier = tmp_path / "project", tmp_path / "barrier"
    project.mkdir()
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, files)
    sql = SparkSql(shared_catalog, tmp_path / "spark_sql.log")
    sql(f"drop schema if exists {schema} cascade", f"create schema {schema}",
        f"create table {schema}.{table} using iceberg")
    return project, barrier, sql


def test_overlapping_runs_of_one_target_count_every_event_once(shared_catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEPLAN_SCHEMA", "lakeplan")
    project, barrier, sql = team_project(shared_catalog, tmp_path, FILES, SCHEMA,
                                         "events (customer int, amount bigint)")
    add_events(sql, 1, 10)
    # three processes, Spark started and the project parsed; the third runs the whole project alone, then all three
    # run at once (two the target, both cold, one a different model), then the third applies what a stopped run
    # did not
    other_process = ("first=run", "overlap=run --select per_customer", f"last={TARGET_RUN}")
    runs = start_at_barrier([dbt_process(0, project, barrier, OVERLAP_S, f"overlap={TARGET_RUN}"),
                             dbt_process(1, project, barrier, OVERLAP_S, f"overlap={TARGET_RUN}"),
                             dbt_process(2, project, barrier, OVERLAP_S, *other_process)],
                            shared_catalog, barrier)
    try:
        [first] = release(runs[2:], barrier, "first").values()  # the third process's alone
        landed(first, barrier, 2)
        add_events(sql, 11, 10)
        said = release(runs, barrier, "overlap")
        landed(said[2], barrier, 2)  # a different model: it succeeds
        failed = [said[n] for n in (0, 1) if not landed(said[n], barrier, n, must=False)]
        assert len(failed) <= 1, failed
        print(f"overlapping runs of one target: {2 - len(failed)} of 2 landed")
        for out in failed:  # the later run stops with the sentence, naming the table and the run that committed first
            assert "was changed by the run of Spark application" in "\n".join(out) and "totals" in "\n".join(out)
        [last] = release(runs[2:], barrier, "last").values()
        landed(last, barrier, 2)  # applies what a stopped run did not, once
        totals, head, refs, properties, tables = sql(
            f"select sum(spent) as spent, count(*) as customers from {SCHEMA}.totals",
            f"select snapshot_id from {EVENTS}.refs where name = 'main'",
            f"select name from {SCHEMA}.totals.refs where type = 'BRANCH'", f"show tblproperties {SCHEMA}.totals",
            f"show tables in {SCHEMA}")
    finally:
        for process in runs:
            process.kill()
        sql.close()
    assert totals == [{"spent": sum(range(1, 21)), "customers": 5}]  # each of the 20 events counted once
    consumed = {row["key"]: row["value"] for row in properties}
    assert json.loads(consumed["lakeplan.consumed"]) == {EVENTS: head[0]["snapshot_id"]}
    assert "lakeplan.consumed.pending" not in consumed
    assert [ref["name"] for ref in refs] == ["main"]  # no run's branch left
    assert sorted(t["tableName"] for t in tables) == ["events", "per_customer", "totals"]  # no staging
