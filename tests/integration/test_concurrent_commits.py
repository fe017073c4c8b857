"""Several processes commit to one Iceberg table at once, on the shared catalog (a Hive metastore in PostgreSQL,
Iceberg's Hive locks on): every commit lands once, in one unbroken chain of snapshots; so do lakeplan's own writes of
one target, run by dbt in each process. Without the lock (a table with `engine.hive.lock-enabled` false, today's
embedded settings on a metastore without HIVE-26882) the same writers lose commits while each reports success.

The writers start once for the module (one JVM each, tests/concurrency/writer.py) and run each test's case together
at a barrier; the test that kills one of them comes last.

The lakeplan target is counted by rounds, not by landed runs: each writer makes COMMITS attempts, one per round, all
four started together. Its runs MERGE copy-on-write into one data file, so of the runs that meet one lands and the
others are beaten (by design: the issue lets the later run stop with lakeplan's sentence); rerunning each beaten run
until 100 had landed cost about 100 rounds. A round still makes four commits race, which is what could lose or double
one: each round adds an event per writer to the target's input, read through new_rows, so a lost commit leaves events
out of the target and a doubled one counts them twice against the record of what was consumed."""

import json
import signal
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.concurrency.harness import HERE, SparkSql, release, snapshot_chain, spark_sql, start_at_barrier
from tests.conftest import REPO, write_files

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

WRITERS, COMMITS = 4, 25
SCHEMA = "lakeplan_concurrent_commits"  # its own: it drops it, and test_stale_lock.py uses lakeplan_concurrency
PLAIN, UNLOCKED, KILLED = f"{SCHEMA}.plain", f"{SCHEMA}.unlocked", f"{SCHEMA}.killed"
TARGET, EVENTS = f"{SCHEMA}.totals", f"{SCHEMA}.events"
ROUNDS_PER_TEST = 5  # the target's COMMITS rounds, in tests of 5 (each test within 120 s)
EXPECTED_TOTAL = sum(writer * 1000 + commit for writer in range(WRITERS) for commit in range(COMMITS))
PROJECT = {  # a lakeplan target that sums, per writer, the events its member reads with new_rows
    "dbt_project.yml": "name: lakeplan\nversion: '0.1.0'\nconfig-version: 2\nprofile: lakeplan\n"
                       "models:\n  lakeplan: {+schema: concurrent_commits, +file_format: iceberg}\n",
    "models/totals.yml": f"""
version: 2
sources:
  - {{name: raw, schema: {SCHEMA}, tables: [{{name: events}}]}}
models:
  - name: totals
    config: {{unique_key: writer}}
    columns:
      - {{name: writer, data_type: int}}
      - {{name: events, data_type: bigint, meta: {{merge: sum}}}}
      - {{name: total, data_type: bigint, meta: {{merge: sum}}}}
""",
    "models/totals.sql": "{{ partial_update_target() }}",
    "models/added.sql": "{{ config(partial_update_target='totals') }}\nselect writer, cast(1 as bigint) as events, "
                        "value as total from {{ lakeplan.new_rows(source('raw', 'events')) }}",
}


@pytest.fixture(scope="module")
def catalog(shared_catalog, tmp_path_factory):
    """The shared catalog's reader, with fresh tables for every case."""
    sql = SparkSql(shared_catalog, tmp_path_factory.mktemp("reader") / "spark.log")
    columns = "(writer int, commit int, value bigint) using iceberg"
    sql(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}", f"create table {PLAIN} {columns}",
        f"create table {KILLED} {columns}", f"create table {EVENTS} {columns}",
        f"insert into {EVENTS} values (4, 0, 4000)",  # what the run creating the target consumes
        f"create table {UNLOCKED} {columns} tblproperties ('engine.hive.lock-enabled' = 'false')")
    yield sql
    sql.close()


@pytest.fixture(scope="module")
def writers(shared_catalog, catalog, tmp_path_factory):
    """WRITERS processes, Spark started and the target's project parsed, waiting at the barrier."""
    project, barrier = tmp_path_factory.mktemp("project"), tmp_path_factory.mktemp("barrier")
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, PROJECT)
    cases = [PLAIN, UNLOCKED, *(target_case(first) for first in range(0, COMMITS, ROUNDS_PER_TEST)), KILLED]
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


def target_case(first: int) -> str:
    return f"target:{EVENTS}:{first}:{ROUNDS_PER_TEST}"


@pytest.fixture(scope="module")
def landed_runs(catalog, writers) -> list:
    """How many runs of the target have landed so far in the module, after the snapshots the first run made."""
    return [len(main_chain(catalog))]


def main_chain(catalog) -> list[dict]:
    """The target's snapshots on main, first to current; fails unless they form one unbroken chain."""
    snapshots, ancestors = catalog(f"select snapshot_id, parent_id from {TARGET}.snapshots",
                                   f"select snapshot_id from {TARGET}.history where is_current_ancestor")
    on_main = {row["snapshot_id"] for row in ancestors}
    chain = snapshot_chain([snapshot for snapshot in snapshots if snapshot["snapshot_id"] in on_main])
    assert len(chain) == len(on_main)
    return chain


def test_a_process_started_while_runs_write_opens_the_catalog_and_reads(shared_catalog, catalog, writers,
                                                                        landed_runs):
    """Issue 46's 0 XSDB6: a Spark process started as the writers' first rounds of dbt runs begin opens the shared
    catalog and reads the target while they write (it ends before they do); the runs end as the rounds' test below
    checks."""
    with ThreadPoolExecutor(1) as pool:
        reading = pool.submit(spark_sql, shared_catalog, f"select count(*) as writers from {TARGET}")
        said = release(*writers, target_case(0))
        assert reading.done(), "the reading process did not end while the runs wrote"
        [[read]] = reading.result()  # fails with the process's output if it could not open the catalog
    assert 1 <= read["writers"] <= WRITERS + 1
    assert_rounds_end_right(catalog, said, 0, landed_runs)


@pytest.mark.parametrize("first", range(ROUNDS_PER_TEST, COMMITS, ROUNDS_PER_TEST))
def test_every_attempt_at_one_lakeplan_target_lands_once_or_is_told_and_leaves_nothing(catalog, writers, first,
                                                                                       landed_runs):
    """ROUNDS_PER_TEST rounds of the four writers' runs at once; the first rounds are the test above's."""
    assert_rounds_end_right(catalog, release(*writers, target_case(first)), first, landed_runs)


def assert_rounds_end_right(catalog, said: dict[int, list[str]], first: int, landed_runs: list[int]) -> None:
    """Each attempt of the rounds from `first` landed or was beaten (told lakeplan's sentence alone), at least one
    landed per round, each landed run is one snapshot on main's unbroken chain, every event is in the target once,
    the consumed record is the input's head, and no run left a pending record, branch or staging table."""
    told = [line.split() for lines in said.values() for line in lines  # [landed | beaten, target, writer, round]
            if line.startswith(("landed target ", "beaten target "))]  # not dbt's own output
    rounds = range(first, first + ROUNDS_PER_TEST)
    assert sorted((int(w), int(r)) for _, _, w, r in told) == [(w, r) for w in range(WRITERS) for r in rounds]
    landed = [int(r) for outcome, _, _, r in told if outcome == "landed"]
    assert set(landed) == set(rounds)  # each round one run at least lands
    landed_runs.append(len(landed))
    rows, events, properties, head, branches, tables = catalog(
        f"select writer, events, total from {TARGET} order by writer",
        f"select writer, count(*) as events, sum(value) as total from {EVENTS} group by writer order by writer",
        f"show tblproperties {TARGET}", f"select snapshot_id from {EVENTS}.refs where name = 'main'",
        f"select name from {TARGET}.refs where type = 'BRANCH'", f"show tables in {SCHEMA}")
    assert rows == events  # every event counted once: none lost, none twice
    record = {row["key"]: row["value"] for row in properties}
    assert json.loads(record["lakeplan.consumed"]) == {EVENTS: head[0]["snapshot_id"]}
    assert "lakeplan.consumed.pending" not in record
    assert [ref["name"] for ref in branches] == ["main"]  # no run's branch left
    assert not [t["tableName"] for t in tables if "staging" in t["tableName"]]  # nor its staging copy
    assert len(main_chain(catalog)) == sum(landed_runs)  # one snapshot per landed run
    print(f"lakeplan target, rounds {first}-{first + ROUNDS_PER_TEST - 1}: {len(landed)} runs landed, "
          f"{len(told) - len(landed)} beaten and told")


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
