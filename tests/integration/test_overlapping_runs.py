"""Overlapping `dbt run`s on the shared catalog (target `team`), each a process of its own: on different models both
succeed; on one partial-update target with a `sum` over `new_rows`, either both land or the later one stops with one
sentence naming the table and the run that committed first (also on a target of two write groups, which a run
publishes through a branch of its own), and in the end every event is counted exactly once,
the consumed record is the input's head, and no run left a branch or staging table behind."""

import json
import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.concurrency.harness import HERE, SparkSql, release, start_at_barrier
from tests.conftest import REPO, env_value, write_files

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

SCHEMA = "lakeplan_overlap"
EVENTS = f"{SCHEMA}.events"
TARGET_RUN = "run --select spent totals"
GROUPED_RUN = "run --select g_spent g_events grouped"
# the overlapping runs' models start their first statement together (AT_THE_BARRIER), this long after their release:
# a warm dbt process (its parse done) reaches it in a few seconds, in about 10 at load 5
OVERLAP_S = 20
# every run's first statement waits until one moment (epoch ms, an env_value), so the processes' writes overlap. A hook
# of dbt-spark's session method that is a query is never run (Spark's SELECT is lazy, and dbt fetches no hook's rows):
# run_query fetches the sleep's one row, so the wait happens
AT_THE_BARRIER = ("{% do run_query(\"select reflect('java.lang.Thread', 'sleep', greatest(cast(0 as bigint), \" ~ "
                  + env_value("barrier", 0) + " ~ \" - unix_millis(current_timestamp())))\") %}")


def project_yml(schema: str) -> str:
    """A project whose models write to `lakeplan_<schema>`, each waiting for the barrier's moment first."""
    return f"""
name: lakeplan
version: '0.1.0'
config-version: 2
profile: lakeplan
models:
  lakeplan: {{+schema: {schema}, +file_format: iceberg, +pre-hook: {json.dumps(AT_THE_BARRIER)}}}
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
  - name: grouped
    config: {{unique_key: customer}}
    columns:
      - {{name: customer, data_type: int}}
      - {{name: spent, data_type: bigint, meta: {{merge: sum}}}}
      - {{name: events, data_type: bigint, meta: {{merge: sum}}}}
""",
    "models/totals.sql": "{{ partial_update_target() }}",
    "models/spent.sql": "{{ config(partial_update_target='totals') }}\n"
                        "select customer, amount as spent from {{ lakeplan.new_rows(source('raw', 'events')) }}",
    # a target of two write groups (g_events' own parallelism: another reuse digest), written through its run's branch
    "models/grouped.sql": "{{ partial_update_target() }}",
    "models/g_spent.sql": "{{ config(partial_update_target='grouped') }}\n"
                          "select customer, amount as spent from {{ lakeplan.new_rows(source('raw', 'events')) }}",
    "models/g_events.sql": "{{ config(partial_update_target='grouped', parallelism=2) }}\n"
                           "select customer, cast(1 as bigint) as events "
                           "from {{ lakeplan.new_rows(source('raw', 'events')) }}",
    "models/per_customer.sql": "{{ config(materialized='table') }}\n"
                               "select customer, count(*) as events from {{ source('raw', 'events') }} group by 1",
}


def prepared(shared_catalog: Path, tmp_path: Path, monkeypatch, files: dict, events: str, columns: str) -> tuple:
    """The project of `files` (lakeplan's macros linked in), its barrier folder, and a reader process on the shared
    catalog, which has made the events table `events` (`columns`) in a schema of its own, new."""
    monkeypatch.setenv("LAKEPLAN_SCHEMA", "lakeplan")
    project, barrier = tmp_path / "project", tmp_path / "barrier"
    project.mkdir()
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, files)
    sql = SparkSql(shared_catalog, tmp_path / "spark_sql.log")
    new_schema(sql, events, columns)
    return project, barrier, sql


def new_schema(sql: SparkSql, events: str, columns: str) -> None:
    """The schema of `events` made anew, holding only that table (`columns`), empty."""
    schema = events.split(".")[0]
    sql(f"drop schema if exists {schema} cascade", f"create schema {schema}",
        f"create table {events} ({columns}) using iceberg")


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


def at_most_one_beaten(said: dict[int, list[str]], barrier: Path, table: str, what: str) -> None:
    """Processes 0 and 1 ran `table`'s target at once: both landed, or the later one stopped with the sentence naming
    the table and the run that committed first."""
    failed = [said[n] for n in (0, 1) if not landed(said[n], barrier, n, must=False)]
    assert len(failed) <= 1, failed
    print(f"overlapping runs of {what}: {2 - len(failed)} of 2 landed")
    for out in failed:
        assert "was changed by the run of Spark application" in "\n".join(out) and table in "\n".join(out)


def test_overlapping_runs_of_one_target_count_every_event_once(shared_catalog, tmp_path, monkeypatch):
    project, barrier, sql = prepared(shared_catalog, tmp_path, monkeypatch, FILES, EVENTS,
                                     "customer int, amount bigint")
    add_events(sql, 1, 10)
    # three processes, Spark started and the project parsed; the third runs the whole project alone, then all three
    # run at once (two the target, both cold, one a different model), then the third applies what a stopped run
    # did not; then the same for a target of two write groups
    other_process = ("first=run", "overlap=run --select per_customer", f"last={TARGET_RUN}", f"grouped_last={GROUPED_RUN}")
    runs = start_at_barrier([dbt_process(n, project, barrier, OVERLAP_S, f"overlap={TARGET_RUN}", f"grouped={GROUPED_RUN}")
                             for n in (0, 1)] + [dbt_process(2, project, barrier, OVERLAP_S, *other_process)],
                            shared_catalog, barrier)
    try:
        [first] = release(runs[2:], barrier, "first").values()  # the third process's alone
        landed(first, barrier, 2)
        add_events(sql, 11, 10)
        said = release(runs, barrier, "overlap")
        landed(said[2], barrier, 2)  # a different model: it succeeds
        at_most_one_beaten(said, barrier, "totals", "one target")
        [last] = release(runs[2:], barrier, "last").values()
        landed(last, barrier, 2)  # applies what a stopped run did not, once
        [totals_head] = sql(f"select snapshot_id from {EVENTS}.refs where name = 'main'")
        add_events(sql, 21, 10)  # the grouped target consumed events 1-10 in the first run: 11-30 are new to it
        at_most_one_beaten(release(runs[:2], barrier, "grouped"), barrier, "grouped", "a target of two write groups")
        [last] = release(runs[2:], barrier, "grouped_last").values()
        landed(last, barrier, 2)
        totals, grouped, head, refs, grouped_refs, properties, grouped_properties, tables = sql(
            f"select sum(spent) as spent, count(*) as customers from {SCHEMA}.totals",
            f"select sum(spent) as spent, sum(events) as events, count(*) as customers from {SCHEMA}.grouped",
            f"select snapshot_id from {EVENTS}.refs where name = 'main'",
            f"select name from {SCHEMA}.totals.refs where type = 'BRANCH'",
            f"select name from {SCHEMA}.grouped.refs where type = 'BRANCH'", f"show tblproperties {SCHEMA}.totals",
            f"show tblproperties {SCHEMA}.grouped", f"show tables in {SCHEMA}")
    finally:
        for process in runs:
            process.kill()
        sql.close()
    assert totals == [{"spent": sum(range(1, 21)), "customers": 5}]  # each of the 20 events counted once
    assert grouped == [{"spent": sum(range(1, 31)), "events": 30, "customers": 5}]  # each of the 30, in both groups
    # each target's consumed record is the events' head when it last ran
    for written, events_head in ((properties, totals_head), (grouped_properties, head)):
        consumed = {row["key"]: row["value"] for row in written}
        assert json.loads(consumed["lakeplan.consumed"]) == {EVENTS: events_head[0]["snapshot_id"]}
        assert "lakeplan.consumed.pending" not in consumed
    assert [ref["name"] for ref in refs] == [ref["name"] for ref in grouped_refs] == ["main"]  # no run's branch left
    assert sorted(t["tableName"] for t in tables) == ["events", "grouped", "per_customer", "totals"]  # no staging


INCREMENTAL_SCHEMA = "lakeplan_overlap_incremental"
INCREMENTAL_EVENTS = f"{INCREMENTAL_SCHEMA}.events"
INCREMENTAL_MODELS = ("appended", "merged", "per_half")
INCREMENTAL_RUN = f"run --threads 3 --select {' '.join(INCREMENTAL_MODELS)}"
INCREMENTAL_COLUMNS = "id int, amount bigint"
# an incremental run's rows are computed slowly (1.5 s a new row, in the tasks: after the statement read `{{ this }}`
# and before it commits), so the other run's commit lands between this run's read of the table and its own commit
SLOW_ROW = "reflect('java.lang.Thread', 'sleep', cast(1500 as bigint)) is not null"
NEW_EVENTS = f"""{{% if is_incremental() %}}
where {SLOW_ROW} and id > (select max(id) from {{{{ this }}}})
{{% endif %}}"""
INCREMENTAL_FILES = {
    "dbt_project.yml": FILES["dbt_project.yml"].replace("+schema: overlap,", "+schema: overlap_incremental,")
    + "macro-paths: [macros, test_macros]\n",
    "models/sources.yml": f"""
version: 2
sources:
  - name: raw
    schema: {INCREMENTAL_SCHEMA}
    tables: [{{name: events}}]
""",
    # dbt-spark's incremental strategies on Iceberg, each a plain dbt model
    "models/appended.sql": "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
                           f"select id, amount from {{{{ source('raw', 'events') }}}}\n{NEW_EVENTS}",
    # a MERGE refuses a source that sleeps (reflect() is not deterministic): its runs overlap at the barrier alone
    "models/merged.sql": "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}\n"
                         "select id, amount from {{ source('raw', 'events') }}\n"
                         "{% if is_incremental() %}where id > (select max(id) from {{ this }}){% endif %}",
    # every run recomputes both partitions from every event
    "models/per_half.sql": "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', "
                           "partition_by=['half']) }}\n"
                           "select count(*) as events, sum(amount) as amount, id % 2 as half "
                           "from {{ source('raw', 'events') }}\n"
                           f"{{% if is_incremental() %}}where {SLOW_ROW}{{% endif %}}\ngroup by id % 2",
    # a project's own MERGE for one model, which does not start as dbt-spark's does
    "models/rewritten.sql": "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}\n"
                            "select id, amount from {{ source('raw', 'events') }}",
    "test_macros/merge.sql": """{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, predicates) %}
  {%- set merge_sql = dbt.spark__get_merge_sql(target, source, unique_key, dest_columns, predicates) -%}
  {{ return(merge_sql | replace('merge into', 'MERGE INTO') if model.name == 'rewritten' else merge_sql) }}
{% endmacro %}""",
}


@pytest.fixture(scope="module")
def incremental(shared_catalog, tmp_path_factory):
    """INCREMENTAL_FILES' project, a reader, and two processes that run the cases of this module's incremental tests,
    started once for them (a process's JVM start and parse cost 30-60 s); each test makes the schema anew."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        project, barrier, sql = prepared(shared_catalog, tmp_path_factory.mktemp("incremental"), monkeypatch,
                                         INCREMENTAL_FILES, INCREMENTAL_EVENTS, INCREMENTAL_COLUMNS)
        runs = start_at_barrier([dbt_process(0, project, barrier, OVERLAP_S, "first=run", f"overlap={INCREMENTAL_RUN}",
                                             f"last={INCREMENTAL_RUN}", "rewritten_first=run --select rewritten",
                                             "rewritten=run --select rewritten", "appended_first=run --select appended",
                                             "cancelled=run --select appended"),
                                 dbt_process(1, project, barrier, OVERLAP_S, f"overlap={INCREMENTAL_RUN}",
                                             "rerun=run --select appended")],
                                shared_catalog, barrier)
        try:
            yield barrier, sql, runs
        finally:
            for process in runs:
                process.kill()
            sql.close()


def add_incremental_events(sql: SparkSql, ids: range) -> None:
    sql(f"insert into {INCREMENTAL_EVENTS} values " + ", ".join(f"({n}, {n})" for n in ids))


def test_overlapping_runs_of_one_incremental_model_add_each_row_once(incremental):
    """Two overlapping runs of plain dbt incremental models (append, merge, insert_overwrite), each run's commit
    landing between the other's read of `{{ this }}` and its commit: either both land with each new row once, or the
    later stops with the sentence naming the table and the other run; the table is as the first left it, and no run
    leaves a branch behind. Before, both appends reported OK and the new rows were stored twice."""
    barrier, sql, runs = incremental
    new_schema(sql, INCREMENTAL_EVENTS, INCREMENTAL_COLUMNS)
    add_incremental_events(sql, range(1, 11))
    [first] = release(runs[:1], barrier, "first").values()
    landed(first, barrier, 0)
    add_incremental_events(sql, range(11, 21))
    said = release(runs, barrier, "overlap")
    beaten = {}
    for n in (0, 1):
        if not landed(said[n], barrier, n, must=False):
            shown = "\n".join(said[n])  # a failed run stops with the sentence, naming the table and the run
            named = {name: re.findall(rf"{INCREMENTAL_SCHEMA}\.{name} was changed by the run of Spark "
                                      r"application (\S+) ", shown) for name in INCREMENTAL_MODELS}
            beaten[n] = [name for name in INCREMENTAL_MODELS if named[name]]
            assert beaten[n], shown[-4000:]
            # the other process's run, not this run's own (its branch's snapshot, newer: seen in a trial)
            other = (barrier / f"application-{1 - n}").read_text()
            assert all(set(named[name]) == {other} for name in beaten[n]), (other, named)
            own = (barrier / f"application-{n}").read_text()  # and it names its own run, which stopped
            assert f"while this run (Spark application {own}) wrote it" in shown, shown[-4000:]
    print(f"overlapping incremental runs: beaten {beaten}")
    for name in INCREMENTAL_MODELS:
        assert len([n for n in beaten if name in beaten[n]]) <= 1  # the first to commit lands
    [last] = release(runs[:1], barrier, "last").values()
    landed(last, barrier, 0)  # adds what a stopped run did not, once
    appended, merged, per_half, *refs = sql(
        *(f"select count(*) as rows, count(distinct id) as ids, sum(amount) as amount "
          f"from {INCREMENTAL_SCHEMA}.{name}" for name in ("appended", "merged")),
        f"select sum(events) as rows, count(*) as halves, sum(amount) as amount from {INCREMENTAL_SCHEMA}.per_half",
        *(f"select name from {INCREMENTAL_SCHEMA}.{name}.refs where type = 'BRANCH'" for name in INCREMENTAL_MODELS))
    each_once = {"rows": 20, "ids": 20, "amount": sum(range(1, 21))}
    assert appended == [each_once]  # before: 30 rows, ids 11-20 twice
    assert merged == [each_once]
    assert per_half == [{"rows": 20, "halves": 2, "amount": sum(range(1, 21))}]
    assert [[ref["name"] for ref in table] for table in refs] == [["main"]] * 3  # no run's branch left


def test_an_incremental_write_that_does_not_start_as_dbt_spark_s_is_refused_and_writes_nothing(incremental):
    """errors.md row 148: a project's own merge macro writes `MERGE INTO`, which the branch path cannot tell apart
    from dbt-spark's statement; the incremental run stops with the sentence and the table is as its first run left
    it, with no branch."""
    barrier, sql, runs = incremental
    new_schema(sql, INCREMENTAL_EVENTS, INCREMENTAL_COLUMNS)
    add_incremental_events(sql, range(1, 11))
    [first] = release(runs[:1], barrier, "rewritten_first").values()
    landed(first, barrier, 0)  # a first run creates the table: no branch, no refusal
    add_incremental_events(sql, range(11, 21))
    [rewritten] = release(runs[:1], barrier, "rewritten").values()
    assert not landed(rewritten, barrier, 0, must=False)
    assert ("lakeplan cannot write incremental model `rewritten` through its run's branch: its write does not start"
            f" with `insert into table {INCREMENTAL_SCHEMA}.rewritten`") in "\n".join(rewritten)
    rows, refs = sql(f"select count(*) as rows from {INCREMENTAL_SCHEMA}.rewritten",
                     f"select name from {INCREMENTAL_SCHEMA}.rewritten.refs where type = 'BRANCH'")
    assert rows == [{"rows": 10}] and [ref["name"] for ref in refs] == ["main"]  # as its first run left it


def test_a_cancelled_incremental_run_through_its_branch_leaves_the_table_and_no_branch(incremental):
    """A Ctrl-C (a real SIGINT to the dbt process) while an incremental run writes into its run's branch: the run is
    cancelled, main keeps its snapshot and rows, the branch is removed, and a rerun adds the new rows once. Last of
    the module: the SIGINT's cancel may log to the process's error output, which the tests above read."""
    barrier, sql, runs = incremental
    table = f"{INCREMENTAL_SCHEMA}.appended"
    new_schema(sql, INCREMENTAL_EVENTS, INCREMENTAL_COLUMNS)
    add_incremental_events(sql, range(1, 11))
    [first] = release(runs[:1], barrier, "appended_first").values()
    landed(first, barrier, 0)
    add_incremental_events(sql, range(11, 21))
    [[before]] = sql(f"select snapshot_id from {table}.refs where name = 'main'")
    cancelled = {}
    writing = threading.Thread(target=lambda: cancelled.update(release(runs[:1], barrier, "cancelled")), daemon=True)
    writing.start()
    deadline = time.monotonic() + 300
    while not sql(f"select name from {table}.refs where type = 'BRANCH' and name != 'main'")[0]:
        assert time.monotonic() < deadline and writing.is_alive(), "the run never made its branch"
        time.sleep(0.2)
    runs[0].send_signal(signal.SIGINT)  # its new rows take 15 s to compute (SLOW_ROW): it is writing them now
    writing.join(timeout=300)
    assert not writing.is_alive(), "the cancelled run did not end"
    said = "\n".join(cancelled[0])
    assert not landed(cancelled[0], barrier, 0, must=False) and "CANCEL query model.lakeplan.appended" in said, said
    after, rows, refs, tables = sql(f"select snapshot_id from {table}.refs where name = 'main'",
                                    f"select count(*) as rows from {table}",
                                    f"select name from {table}.refs where type = 'BRANCH'",
                                    f"show tables in {INCREMENTAL_SCHEMA}")
    assert after == [before] and rows == [{"rows": 10}]  # main as it was: the branch's write never reached it
    assert [ref["name"] for ref in refs] == ["main"]  # the run's branch removed
    assert not [t["tableName"] for t in tables if "lakeplan" in t["tableName"]]  # nor any copy of it
    [rerun] = release(runs[1:], barrier, "rerun").values()
    landed(rerun, barrier, 1)
    assert sql(f"select count(*) as rows, count(distinct id) as ids, sum(amount) as amount from {table}") == [
        [{"rows": 20, "ids": 20, "amount": sum(range(1, 21))}]]  # the rerun adds the new rows once
