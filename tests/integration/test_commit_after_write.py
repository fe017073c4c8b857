"""A write that has landed stays landed when another run commits to its table before lakeplan's records of it
(its `lakeplan_applied` tag, its consumed record, its branch's removal): on the shared catalog (target `team`), a
second process commits between the write's data commit and the next metadata commit lakeplan makes, with no timing
luck (tests/concurrency/lock_holder.py --between queues every commit of the table behind its Hive lock)."""

import re
import subprocess
import sys

import pytest

from tests.concurrency.harness import HERE, environment, release, start_at_barrier
from tests.conftest import REPO, write_files
from tests.integration.test_overlapping_runs import FILES, dbt_process
from tests.integration.test_same_application import GROUPED

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

SCHEMA = "lakeplan_between"
TARGET = f"{SCHEMA}.totals"
READ = {"tags": f"select name, snapshot_id from {TARGET}.refs where type = 'TAG'",
        "snapshots": f"select snapshot_id, parent_id from {TARGET}.snapshots",
        "main": f"select snapshot_id from {TARGET}.refs where name = 'main'",
        "properties": f"show tblproperties {TARGET}",
        "spent": f"select sum(spent) as spent from {TARGET} where customer < 99"}


RUN = "run --select spent totals"
RUNS = ("tag", "unmade", "prior", "stale")  # each test's run of the target; `prior`: the stale-tag test's first
WIDE_RUN = "run --select wide_spent wide_top wide"  # two write groups, through the run's branch
WIDE_RUNS = ("wide_prior", "forward")


@pytest.fixture(scope="module")
def dbt_run(shared_catalog, tmp_path_factory):
    """One dbt process for every test's runs (tests/concurrency/run_dbt.py: Spark started and the project parsed
    while the first test sets up): `dbt_run(case)` runs one of RUNS and returns whether it succeeded and what it
    said on its output and its error output."""
    project, barrier = tmp_path_factory.mktemp("project"), tmp_path_factory.mktemp("barrier")
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, {name: text.replace("overlap", "between") for name, text in FILES.items()} | GROUPED)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LAKEPLAN_SCHEMA", "lakeplan")
        cases = [f"{run}={RUN}" for run in RUNS] + [f"{run}={WIDE_RUN}" for run in WIDE_RUNS]
        [process] = start_at_barrier([dbt_process(0, project, barrier, 0, *cases)], shared_catalog, barrier)
    errors = (barrier / "0.log").open()

    def run(case: str) -> tuple[bool, str]:
        said = release([process], barrier, case)[0]
        return said[-1] == "exit 0", "\n".join(said) + errors.read()

    yield run
    process.kill()
    errors.close()


def run_between(reader, dbt_run, tmp_path, case: str, times: int, *statements: str, after: int = 1,
                second: bool = False) -> tuple:
    """The first `dbt run` of the target (its CREATE, then its tag), or with `second` the one after it (on a new
    event), with `statements` committed by another process before each of the first `times` attempts of the
    `after`-th metadata commit after the write: whether the run succeeded and what it said, what READ reads
    afterwards, and the write's snapshot."""
    reader(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}",
           f"create table {SCHEMA}.events (customer int, amount bigint) using iceberg",
           f"insert into {SCHEMA}.events values (1, 10), (2, 20)")
    if second:
        landed, said = dbt_run("prior")
        assert landed, said[-4000:]
        reader(f"insert into {SCHEMA}.events values (3, 30)")
    holder = subprocess.Popen(  # after the drop: it notes main's head when it starts
        [sys.executable, str(HERE / "lock_holder.py"), SCHEMA, "totals", "--between", str(after), str(times),
         *statements], env=environment(reader.conf_dir), stdout=subprocess.PIPE, text=True,
        stderr=(tmp_path / "holder.log").open("w"))
    try:
        assert holder.stdout.readline().startswith("locked "), (tmp_path / "holder.log").read_text()[-3000:]
        landed, said = dbt_run(case)
        try:
            interposed = holder.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:  # it never saw the commits it waits for
            interposed = ""
        assert interposed.strip() == "interposed", (tmp_path / "holder.log").read_text()[-3000:]
        read = dict(zip(READ, reader(*READ.values())))
    finally:
        holder.kill()
    [written] = [s["snapshot_id"] for s in read["snapshots"] if s["parent_id"] is None]  # the first run's CREATE
    if second:
        [written] = [s["snapshot_id"] for s in read["snapshots"] if s["parent_id"] == written]  # its MERGE
    return landed, said, read, written


def test_a_landed_write_whose_tag_meets_another_commit_is_landed_and_tags_its_own_snapshot(reader, dbt_run, tmp_path):
    """The other process's commit (a property, as a pending record's ALTER, and a row) lands between the write's
    CREATE and its tag: Iceberg's retry of the tag then fails ('Table metadata refresh is required'). The run still
    succeeds, and the tag names the write's own snapshot, not the other process's, which main is at."""
    landed, said, read, written = run_between(
        reader, dbt_run, tmp_path, "tag", 1,
        f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = 'yes')",
        f"insert into {TARGET} values (99, 1)")
    assert landed, said[-4000:]
    [tag] = read["tags"]
    assert tag["name"].startswith("lakeplan_applied_") and tag["snapshot_id"] == written
    assert read["main"][0]["snapshot_id"] != written  # the other process's row moved main; the tag stayed
    assert {"key": "lakeplan.test.between", "value": "yes"} in read["properties"]  # the other commit is kept


def test_a_landed_write_whose_records_stay_unmade_is_told_naming_the_table_and_the_statements(reader, dbt_run,
                                                                                              tmp_path):
    """Another commit before each of the tag's 10 attempts: the run stops with one sentence naming the target, the
    write's snapshot and the tag statement to run, shown as a failure of the run (dbt's `Runtime Error`, as a beaten
    write's sentence), not a `Compilation Error`; the write stays (no stack trace, no Iceberg message alone)."""
    landed, said, read, written = run_between(
        reader, dbt_run, tmp_path, "unmade", 10,
        f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = '{{n}}')")
    assert not landed
    told = re.search(rf"`totals`'s write landed in {TARGET} \(snapshot {written}\), but other runs' commits to "
                     rf"{TARGET} kept lakeplan from recording it, so these were not made: `alter table {TARGET} "
                     rf"create or replace tag lakeplan_applied_\w+ as of version {written}` \(Table metadata refresh "
                     rf"is required\)\. Fix: once no other run writes {TARGET}, run them in that order, before "
                     "`totals` runs again.", " ".join(said.split()))
    assert told, said[-4000:]
    assert "\tat " not in said and "Traceback" not in said
    assert "Runtime Error in model totals" in said and "Compilation Error" not in said
    assert read["spent"] == [{"spent": 30}] and read["tags"] == []  # the write landed; its tag was not made


def test_a_landed_write_whose_stale_tag_drop_meets_another_commit_is_landed_and_drops_it(reader, dbt_run, tmp_path):
    """A sibling: the second run's fourth metadata commit after its MERGE (its consumed record, its pending record's
    removal, its tag, then the first run's tag dropped, a SnapshotManager change as the tag is) meets another commit."""
    landed, said, read, written = run_between(
        reader, dbt_run, tmp_path, "stale", 1,
        f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = 'yes')", after=4, second=True)
    assert landed, said[-4000:]
    [tag] = read["tags"]  # the first run's is gone
    assert tag["name"].startswith("lakeplan_applied_") and tag["snapshot_id"] == written
    assert read["spent"] == [{"spent": 60}] and {"key": "lakeplan.test.between", "value": "yes"} in read["properties"]


def test_a_fast_forward_met_by_another_run_s_metadata_commit_is_sent_again_and_lands(reader, dbt_run, tmp_path):
    """Two write groups go through the run's branch; while main's fast-forward to it waits for the table's lock, having
    read the table, another process commits a property (no data: main stays an ancestor of the branch). Iceberg's
    retry of the fast-forward fails ('Table metadata refresh is required'); sent again, fresh, it lands: every event
    once, the other commit kept, no branch left (before: told as beaten by another run, nothing of it written)."""
    wide = f"{SCHEMA}.wide"
    reader(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}",
           f"create table {SCHEMA}.events (customer int, amount bigint) using iceberg",
           f"insert into {SCHEMA}.events values (1, 10), (2, 20)")
    landed, said = dbt_run("wide_prior")
    assert landed, said[-4000:]
    reader(f"insert into {SCHEMA}.events values (3, 30)")
    holder = subprocess.Popen(
        [sys.executable, str(HERE / "lock_holder.py"), SCHEMA, "wide", "--fast-forward", "2", "1",
         f"alter table {wide} set tblproperties ('lakeplan.test.between' = 'yes')"],
        env=environment(reader.conf_dir), stdout=subprocess.PIPE, text=True,
        stderr=(tmp_path / "holder.log").open("w"))
    try:
        assert holder.stdout.readline().startswith("locked "), (tmp_path / "holder.log").read_text()[-3000:]
        landed, said = dbt_run("forward")
        interposed = holder.communicate(timeout=60)[0]
    finally:
        holder.kill()
    assert interposed.strip() == "interposed", (tmp_path / "holder.log").read_text()[-3000:]
    assert landed, said[-4000:]
    spent, properties, refs = reader(f"select sum(spent) as spent from {wide}", f"show tblproperties {wide}",
                                     f"select name from {wide}.refs where name like 'lakeplan_write_%'")
    assert spent == [{"spent": 60}] and refs == []
    assert {"key": "lakeplan.test.between", "value": "yes"} in properties
