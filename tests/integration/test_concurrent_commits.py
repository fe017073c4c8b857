"""Several processes commit to one Iceberg table at once, on the shared catalog (a Hive metastore in PostgreSQL,
Iceberg's Hive locks on): every commit lands once, in one unbroken chain of snapshots; so do lakeplan's own writes of
one target, run by dbt in each process. Without the lock (a table with `engine.hive.lock-enabled` false, today's
embedded settings on a metastore without HIVE-26882) the same writers lose commits while each reports success.

The writers start once for the module (one JVM each, tests/concurrency/writer.py) and run each test's case together
at a barrier; the test that kills one of them comes last."""

import signal
import sys

import pytest

from tests.concurrency.harness import HERE, SparkSql, release, snapshot_chain, start_at_barrier
from tests.conftest import REPO, write_files

WRITERS, COMMITS = 4, 25
SCHEMA = "lakeplan_concurrent_commits"  # its own: it drops it, and test_stale_lock.py uses lakeplan_concurrency
PLAIN, UNLOCKED, KILLED = f"{SCHEMA}.plain", f"{SCHEMA}.unlocked", f"{SCHEMA}.killed"
TARGET = f"{SCHEMA}.totals"
EXPECTED_TOTAL = sum(writer * 1000 + commit for writer in range(WRITERS) for commit in range(COMMITS))
PROJECT = {  # a lakeplan target whose member adds one commit and writer * 1000 + commit to the writer's row
    "dbt_project.yml": "name: lakeplan\nversion: '0.1.0'\nconfig-version: 2\nprofile: lakeplan\n"
                       "models:\n  lakeplan: {+schema: concurrent_commits, +file_format: iceberg}\n",
    "models/totals.yml": """
version: 2
models:
  - name: totals
    config: {unique_key: writer}
    columns:
      - {name: writer, data_type: int}
      - {name: commits, data_type: bigint, meta: {merge: sum}}
      - {name: total, data_type: bigint, meta: {merge: sum}}
""",
    "models/totals.sql": "{{ partial_update_target() }}",
    "models/added.sql": "{{ config(partial_update_target='totals') }}\nselect {{ env_var('WRITER') }} as writer, "
                        "cast(1 as bigint) as commits, cast({{ env_var('WRITER') }} * 1000 + {{ env_var('COMMIT') }} "
                        "as bigint) as total",
}


@pytest.fixture(scope="module")
def catalog(shared_catalog, tmp_path_factory):
    """The shared catalog's reader, with fresh tables for every case."""
    sql = SparkSql(shared_catalog, tmp_path_factory.mktemp("reader") / "spark.log")
    columns = "(writer int, commit int, value bigint) using iceberg"
    sql(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}", f"create table {PLAIN} {columns}",
        f"create table {KILLED} {columns}",
        f"create table {UNLOCKED} {columns} tblproperties ('engine.hive.lock-enabled' = 'false')")
    yield sql
    sql.close()


@pytest.fixture(scope="module")
def writers(shared_catalog, catalog, tmp_path_factory):
    """WRITERS processes, Spark started and the target's project parsed, waiting at the barrier."""
    project, barrier = tmp_path_factory.mktemp("project"), tmp_path_factory.mktemp("barrier")
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, PROJECT)
    cases = [PLAIN, UNLOCKED, "target", KILLED]
    commands = [[sys.executable, str(HERE / "writer.py"), str(n), str(COMMITS), str(barrier), str(project), *cases]
                for n in range(WRITERS)]
    processes = start_at_barrier(commands, shared_catalog, barrier)
    yield processes, barrier
    for process in processes:
        process.kill()


def table_state(catalog, table: str) -> tuple[dict, list[dict]]:
    totals, snapshots = catalog(
        f"select count(*) as rows, count(distinct writer, commit) as distinct_rows, sum(value) as total from {table}",
        f"select snapshot_id, parent_id, summary from {table}.snapshots")
    return totals[0], snapshots


def assert_one_chain_of_single_row_commits(snapshots: list[dict], rows: int) -> None:
    chain = snapshot_chain(snapshots)
    assert len(snapshots) == rows and len(chain) == len(snapshots)
    assert all(snapshot["summary"]["added-records"] == "1" for snapshot in chain)


def test_every_commit_of_four_writers_lands_once_in_one_chain(catalog, writers):
    release(*writers, PLAIN)
    totals, snapshots = table_state(catalog, PLAIN)
    assert totals == {"rows": WRITERS * COMMITS, "distinct_rows": WRITERS * COMMITS, "total": EXPECTED_TOTAL}
    assert_one_chain_of_single_row_commits(snapshots, WRITERS * COMMITS)


def test_without_locks_the_same_writers_lose_commits_in_silence(catalog, writers):
    """The negative control: a race, so a run where no two commits met passes by chance (skipped, saying so)."""
    release(*writers, UNLOCKED)  # every writer reports success ...
    totals, snapshots = table_state(catalog, UNLOCKED)
    lost = WRITERS * COMMITS - totals["rows"]
    if lost == 0:
        pytest.skip("no two commits met this time (a race); the control shows nothing either way")
    assert lost > 0 and len(snapshot_chain(snapshots)) == totals["rows"]  # ... while commits vanished from history
    print(f"locks off: {lost} of {WRITERS * COMMITS} commits lost")


def test_every_run_of_four_writers_of_one_lakeplan_target_lands_once(catalog, writers):
    """Each writer runs dbt until COMMITS of its runs landed; a run another run beat stops with lakeplan's sentence
    and leaves nothing (its rerun is what lands). Every landed run is counted exactly once."""
    said = release(*writers, "target")
    rows, branches, tables, main = catalog(
        f"select writer, commits, total from {TARGET} order by writer",
        f"select name from {TARGET}.refs where type = 'BRANCH'", f"show tables in {SCHEMA}",
        f"select count(*) as snapshots from {TARGET}.history where is_current_ancestor")
    assert rows == [{"writer": n, "commits": COMMITS, "total": sum(n * 1000 + c for c in range(COMMITS))}
                    for n in range(WRITERS)] + [{"writer": 4, "commits": 1, "total": 4000}]
    assert [ref["name"] for ref in branches] == ["main"]  # no run's branch left
    assert not [t["tableName"] for t in tables if "staging" in t["tableName"]]  # nor its staging copy
    beaten = sum(line.startswith("beaten") for lines in said.values() for line in lines)
    print(f"lakeplan target: {WRITERS * COMMITS} runs landed, {beaten} beaten and run again, "
          f"{main[0]['snapshots']} snapshots on main")


def test_a_writer_killed_mid_run_leaves_the_others_and_the_table_right(catalog, writers):
    """SIGKILL of one writer between or inside its commits (a lock it held is cleared 60 s after its last heartbeat):
    the others commit all theirs, the killed one's commits are in the table once (the one under way at most once)."""
    processes, barrier = writers
    victim = processes[0]
    (barrier / f"go-{KILLED}").touch()
    for line in victim.stdout:  # its sixth commit
        if line.startswith(f"committed {KILLED} 0 5"):
            break
    victim.send_signal(signal.SIGKILL)
    printed = 6 + sum(line.startswith("committed") for line in victim.communicate()[0].splitlines())
    release(processes, barrier, KILLED)
    totals, snapshots = table_state(catalog, KILLED)
    killed = totals["rows"] - (WRITERS - 1) * COMMITS
    assert printed <= killed <= printed + 1 and totals["distinct_rows"] == totals["rows"]
    assert_one_chain_of_single_row_commits(snapshots, totals["rows"])
