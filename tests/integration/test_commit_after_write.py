"""A write that has landed stays landed when another run commits to its table before lakeplan's records of it
(its `lakeplan_applied` tag, its consumed record, its branch's removal): on the shared catalog (target `team`), a
second process commits between the write's data commit and the next metadata commit lakeplan makes, with no timing
luck (tests/concurrency/lock_holder.py --between queues every commit of the table behind its Hive lock)."""

import re
import subprocess
import sys

import pytest

from tests.concurrency.harness import HERE, SparkSql, environment
from tests.conftest import REPO, write_files
from tests.integration.test_overlapping_runs import FILES, dbt

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

SCHEMA = "lakeplan_between"
TARGET = f"{SCHEMA}.totals"
READ = {"tags": f"select name, snapshot_id from {TARGET}.refs where type = 'TAG'",
        "snapshots": f"select snapshot_id, parent_id from {TARGET}.snapshots",
        "main": f"select snapshot_id from {TARGET}.refs where name = 'main'",
        "properties": f"show tblproperties {TARGET}",
        "spent": f"select sum(spent) as spent from {TARGET} where customer < 99"}


def run_between(shared_catalog, tmp_path, times: int, *statements: str, after: int = 1, second: bool = False) -> tuple:
    """The first `dbt run` of the target (its CREATE, then its tag), or with `second` the one after it (on a new
    event), with `statements` committed by another process before each of the first `times` attempts of the
    `after`-th metadata commit after the write: dbt's exit code and output, what READ reads afterwards, and the
    write's snapshot."""
    spark = SparkSql(shared_catalog, tmp_path / "spark_sql.log")
    holder = None
    try:
        spark(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}",
              f"create table {SCHEMA}.events (customer int, amount bigint) using iceberg",
              f"insert into {SCHEMA}.events values (1, 10), (2, 20)")
        (tmp_path / "macros").symlink_to(REPO / "macros")
        write_files(tmp_path, {name: text.replace("overlap", "between") for name, text in FILES.items()})
        if second:
            assert dbt(tmp_path, "run", "--select", "spent", "totals").wait(timeout=600) == 0
            spark(f"insert into {SCHEMA}.events values (3, 30)")
        holder = subprocess.Popen(  # after the drop: it notes main's head when it starts
            [sys.executable, str(HERE / "lock_holder.py"), SCHEMA, "totals", "--between", str(after), str(times),
             *statements], env=environment(shared_catalog), stdout=subprocess.PIPE, text=True,
            stderr=(tmp_path / "holder.log").open("w"))
        assert holder.stdout.readline().startswith("locked "), (tmp_path / "holder.log").read_text()[-3000:]
        run = dbt(tmp_path, "run", "--select", "spent", "totals")
        said = run.communicate(timeout=600)[0]
        try:
            interposed = holder.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:  # it never saw the commits it waits for
            interposed = ""
        assert interposed.strip() == "interposed", (tmp_path / "holder.log").read_text()[-3000:]
        read = dict(zip(READ, spark(*READ.values())))
    finally:
        if holder is not None:
            holder.kill()
        spark.close()
    [written] = [s["snapshot_id"] for s in read["snapshots"] if s["parent_id"] is None]  # the first run's CREATE
    if second:
        [written] = [s["snapshot_id"] for s in read["snapshots"] if s["parent_id"] == written]  # its MERGE
    return run.returncode, said, read, written


def test_a_landed_write_whose_tag_meets_another_commit_is_landed_and_tags_its_own_snapshot(shared_catalog,
                                                                                            tmp_path):
    """The other process's commit (a property, as a pending record's ALTER, and a row) lands between the write's
    CREATE and its tag: Iceberg's retry of the tag then fails ('Table metadata refresh is required'). The run still
    succeeds, and the tag names the write's own snapshot, not the other process's, which main is at."""
    code, said, read, written = run_between(
        shared_catalog, tmp_path, 1, f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = 'yes')",
        f"insert into {TARGET} values (99, 1)")
    assert code == 0, said[-4000:]
    [tag] = read["tags"]
    assert tag["name"].startswith("lakeplan_applied_") and tag["snapshot_id"] == written
    assert read["main"][0]["snapshot_id"] != written  # the other process's row moved main; the tag stayed
    assert {"key": "lakeplan.test.between", "value": "yes"} in read["properties"]  # the other commit is kept


def test_a_landed_write_whose_records_stay_unmade_is_told_naming_the_table_and_the_statements(shared_catalog,
                                                                                              tmp_path):
    """Another commit before each of the tag's 10 attempts: the run stops with one sentence naming the target, the
    write's snapshot and the tag statement to run; the write stays (no stack trace, no Iceberg message alone)."""
    code, said, read, written = run_between(
        shared_catalog, tmp_path, 10, f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = '{{n}}')")
    assert code != 0
    told = re.search(rf"`totals`'s write landed in {TARGET} \(snapshot {written}\), but other runs' commits to "
                     rf"{TARGET} kept lakeplan from recording it, so these were not made: `alter table {TARGET} "
                     rf"create or replace tag lakeplan_applied_\w+ as of version {written}` \(Table metadata refresh "
                     rf"is required\)\. Fix: once no other run writes {TARGET}, run them in that order, before "
                     "`totals` runs again.", " ".join(said.split()))
    assert told, said[-4000:]
    assert "\tat " not in said and "Traceback" not in said
    assert read["spent"] == [{"spent": 30}] and read["tags"] == []  # the write landed; its tag was not made


def test_a_landed_write_whose_stale_tag_drop_meets_another_commit_is_landed_and_drops_it(shared_catalog, tmp_path):
    """A sibling: the second run's fourth metadata commit after its MERGE (its consumed record, its pending record's
    removal, its tag, then the first run's tag dropped, a SnapshotManager change as the tag is) meets another commit."""
    code, said, read, written = run_between(
        shared_catalog, tmp_path, 1, f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = 'yes')",
        after=4, second=True)
    assert code == 0, said[-4000:]
    [tag] = read["tags"]  # the first run's is gone
    assert tag["name"].startswith("lakeplan_applied_") and tag["snapshot_id"] == written
    assert read["spent"] == [{"spent": 60}] and {"key": "lakeplan.test.between", "value": "yes"} in read["properties"]
