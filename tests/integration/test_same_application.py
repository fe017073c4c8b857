"""Two sessions of one Spark application write one partial-update target (every client of the cluster's Thrift
Server is a session of its one application): each run's `lakeplan_applied` tag names that write's own snapshot, never
the other session's, or where which is the write's cannot be told the run says so in one sentence and tags none. On
the shared catalog (target `team`), with no timing luck: the other session (tests/concurrency/run_dbt.py `sql`
cases, in the dbt process) commits after the write's data commit and before lakeplan looks for its snapshot, while
a PostgreSQL trigger holds the write's release of its Hive lock (UnlockGate)."""

import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.concurrency.harness import release, start_at_barrier
from tests.conftest import REPO, write_files
from tests.integration.test_overlapping_runs import FILES, dbt_process

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

SCHEMA = "lakeplan_same_app"
GROUPED = {  # a target of two write groups (the second member's write options), written through its run's branch
    "models/wide.yml": """
version: 2
models:
  - name: wide
    config: {unique_key: customer}
    columns:
      - {name: customer, data_type: int}
      - {name: spent, data_type: bigint, meta: {merge: sum}}
      - {name: top, data_type: bigint}
""",
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide_spent.sql": "{{ config(partial_update_target='wide') }}\n"
                             "select customer, amount as spent from {{ lakeplan.new_rows(source('raw', 'events')) }}",
    "models/wide_top.sql": "{{ config(partial_update_target='wide', write_options={'spark.sql.shuffle.partitions': "
                           "'3'}) }}\nselect customer, max(amount) as top from {{ source('raw', 'events') }} "
                           "group by 1",
}
CASES = {"prior": "run", "direct": "run --select spent totals", "branch": "run --select wide_spent wide_top wide",
         "other_totals": f"sql insert into {SCHEMA}.totals values (99, 1)",
         "other_wide": f"sql insert into {SCHEMA}.wide values (99, 1, 1)"}
KEY = 4646  # the advisory lock the gate's trigger waits on


class UnlockGate:
    """Holds back each release of a Hive lock on one table (the DELETE of its `hive_locks` row that ends a commit,
    once the commit's new metadata is in the catalog) until the test lets it pass: a trigger on `hive_locks` waits
    for an advisory lock this holds, in the shared catalog's PostgreSQL."""

    def __init__(self, conf_dir: Path, table: str):
        url = (conf_dir / "spark-defaults.conf").read_text()
        port = re.search(r"jdbc:postgresql://127\.0\.0\.1:(\d+)/", url).group(1)
        psql = sorted(Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
        self.psql = [str(psql), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", port, "-U",
                     "lakeplan", "lakeplan_metastore"]
        self.holder = subprocess.Popen(self.psql, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.send(f"select pg_advisory_lock({KEY});")
        self.sql("create or replace function lakeplan_test_gate() returns trigger language plpgsql as $$ begin "
                 f"perform pg_advisory_xact_lock_shared({KEY}); return old; end $$; "
                 "create or replace trigger lakeplan_test_gate before delete on hive_locks for each row when "
                 f"(old.hl_db = '{SCHEMA}' and old.hl_table = '{table}' and old.hl_lock_state = 'a') "
                 "execute function lakeplan_test_gate();")

    def sql(self, statement: str) -> str:
        return subprocess.run([*self.psql, "-c", statement], capture_output=True, text=True, check=True).stdout

    def send(self, statement: str) -> None:
        """Runs `statement` in the session holding the advisory lock, until it has ended."""
        self.holder.stdin.write(f"{statement}\n\\echo lakeplan-gate\n")
        self.holder.stdin.flush()
        while self.holder.stdout.readline().strip() != "lakeplan-gate":
            pass

    def holds(self, running: threading.Thread, timeout: float = 600) -> bool:
        """Waits until a commit's release of its lock waits at the gate; false if `running` ended first."""
        deadline = time.monotonic() + timeout
        while running.is_alive() and time.monotonic() < deadline:
            if self.sql(f"select count(*) from pg_locks where locktype = 'advisory' and objid = {KEY} "
                        "and not granted").strip() != "0":
                return True
            time.sleep(0.2)
        return False

    def let_one_pass(self) -> None:
        self.send(f"select pg_advisory_unlock({KEY}); select pg_advisory_lock({KEY});")  # again once it has passed

    def open(self) -> None:
        self.send("select pg_advisory_unlock_all();")
        self.holder.stdin.close()
        self.holder.wait(timeout=60)
        self.sql("drop trigger if exists lakeplan_test_gate on hive_locks; drop function if exists lakeplan_test_gate;")


@pytest.fixture(scope="module")
def dbt_run(shared_catalog, reader, tmp_path_factory):
    """One dbt process (run_dbt.py) for every run of CASES, the targets made by its first run: `dbt_run(case)` runs
    one and returns whether it succeeded and what it said; `dbt_run.other(case)` runs an `sql` case on another
    session of its Spark application."""
    project, barrier = tmp_path_factory.mktemp("project"), tmp_path_factory.mktemp("barrier")
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, {**{name: text.replace("overlap", "same_app") for name, text in FILES.items()}, **GROUPED})
    reader(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}",
           f"create table {SCHEMA}.events (customer int, amount bigint) using iceberg",
           f"insert into {SCHEMA}.events values (1, 10), (2, 20)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LAKEPLAN_SCHEMA", "lakeplan")
        [process] = start_at_barrier([dbt_process(0, project, barrier, 0, *(f"{c}={run}" for c, run in CASES.items()))],
                                     shared_catalog, barrier)
    errors = (barrier / "0.log").open()

    def run(case: str) -> tuple[bool, str]:
        said = release([process], barrier, case)[0]
        return said[-1] == "exit 0", "\n".join(said) + errors.read()

    def other(case: str) -> None:
        (barrier / f"go-{case}").touch()
        done = barrier / f"done-{case}"
        deadline = time.monotonic() + 300
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.exists() and done.read_text() == "ok", done.read_text() if done.exists() else "no answer"

    run.other = other
    landed, said = run("prior")
    assert landed, said[-4000:]
    reader(f"insert into {SCHEMA}.events values (3, 30)")
    yield run
    process.kill()
    errors.close()


def head(reader, table: str):
    return reader(f"select snapshot_id from {table}.refs where name = 'main'")[0][0]["snapshot_id"]


def run_beside_another_session(shared_catalog, reader, dbt_run, case: str, table: str) -> tuple:
    """Runs `case` on `table`; once its write has moved main, and before its commit has released its lock, another
    session of its application inserts a row (`other_<table>`). Whether the run succeeded, what it said, the tags,
    the write's own snapshot and the other session's, with the application of each."""
    name, start, outcome = f"{SCHEMA}.{table}", head(reader, f"{SCHEMA}.{table}"), {}
    gate = UnlockGate(shared_catalog, table)
    running = threading.Thread(target=lambda: outcome.update(zip(("landed", "said"), dbt_run(case))))
    try:
        running.start()
        while True:
            assert gate.holds(running), f"the run ended before its write: {outcome}"
            if head(reader, name) != start:
                break
            gate.let_one_pass()  # a commit before its write (its branch, a record): not yet
        dbt_run.other(f"other_{table}")
    finally:
        gate.open()
        running.join(timeout=600)
    tags, snapshots = reader(f"select name, snapshot_id from {name}.refs where type = 'TAG'",
                             f"select snapshot_id, parent_id, summary['spark.app.id'] as app from {name}.snapshots")
    [other] = [s for s in snapshots if s["snapshot_id"] == head(reader, name)]  # its row is main's last commit
    [written] = [s for s in snapshots if s["snapshot_id"] == other["parent_id"]]
    return outcome["landed"], outcome["said"], tags, written, other


def test_a_write_through_its_branch_tags_its_own_snapshot_beside_another_session(shared_catalog, reader, dbt_run):
    """Two write groups go through the run's branch, fast-forwarded onto main; the other session's row lands on top
    before lakeplan looks: the tag names the branch's head, the write's, not main's head of the same application
    (what the tag named before: the latest snapshot of the application on main)."""
    landed, said, tags, written, other = run_beside_another_session(shared_catalog, reader, dbt_run, "branch", "wide")
    assert landed, said[-4000:]
    assert written["app"] == other["app"]  # one application
    applied = [tag["snapshot_id"] for tag in tags if tag["name"].startswith("lakeplan_applied_")]
    assert applied == [written["snapshot_id"]]


def test_a_write_to_main_beside_another_session_of_its_application_is_told_not_guessed(shared_catalog, reader,
                                                                                       dbt_run):
    """One write group's MERGE goes straight to main; the other session's row lands on top before lakeplan looks:
    both snapshots since the write began are of the one application, so the run tags neither and says so in one
    sentence, naming both (before: it tagged the other session's, as this write's)."""
    landed, said, tags, written, other = run_beside_another_session(shared_catalog, reader, dbt_run, "direct",
                                                                    "totals")
    assert written["app"] == other["app"]  # one application
    assert not landed
    table, own, others = f"{SCHEMA}.totals", written["snapshot_id"], other["snapshot_id"]
    told = re.search(rf"`totals`'s write landed in {table}, but other runs' commits to {table} kept lakeplan from "
                     rf"recording it, so these were not made: `alter table {table} create or replace tag "
                     rf"lakeplan_applied_\w+ as of version <the snapshot this write committed>` \(snapshots {own}, "
                     rf"{others} of {table} since this write began are all this Spark application's",
                     " ".join(said.split()))
    assert told, said[-4000:]
    assert "Runtime Error in model totals" in said and "Compilation Error" not in said
    assert "\tat " not in said and "Traceback" not in said
    assert not [tag for tag in tags if tag["snapshot_id"] == others]  # the other session's is not tagged as this one
