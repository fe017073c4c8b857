"""A write that has landed stays landed when another run commits to its table before lakeplan's records of it
(its `lakeplan_applied` tag, its consumed record, its branch's removal): on the shared catalog (target `team`), a
second process commits between the write's data commit and the next metadata commit lakeplan makes, with no timing
luck (tests/concurrency/lock_holder.py --between queues every commit of the table behind its Hive lock)."""

import subprocess
import sys

from tests.concurrency.harness import HERE, SparkSql, environment
from tests.conftest import REPO, write_files
from tests.integration.test_overlapping_runs import FILES, dbt

SCHEMA = "lakeplan_between"
TARGET = f"{SCHEMA}.totals"


def test_a_landed_write_whose_tag_meets_another_commit_is_landed_and_tags_its_own_snapshot(shared_catalog,
                                                                                            tmp_path):
    """The other process's commit (a property, as a pending record's ALTER, and a row) lands between the write's
    CREATE and its tag: Iceberg's retry of the tag then fails ('Table metadata refresh is required'). The run still
    succeeds, and the tag names the write's own snapshot, not the other process's, which main is at."""
    spark = SparkSql(shared_catalog, tmp_path / "spark_sql.log")
    holder = None
    try:
        spark(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}",
              f"create table {SCHEMA}.events (customer int, amount bigint) using iceberg",
              f"insert into {SCHEMA}.events values (1, 10), (2, 20)")
        holder = subprocess.Popen(
            [sys.executable, str(HERE / "lock_holder.py"), SCHEMA, "totals", "--between", "1",
             f"alter table {TARGET} set tblproperties ('lakeplan.test.between' = 'yes')",
             f"insert into {TARGET} values (99, 1)"],
            env=environment(shared_catalog), stdout=subprocess.PIPE, stderr=(tmp_path / "holder.log").open("w"),
            text=True)
        assert holder.stdout.readline().startswith("locked "), (tmp_path / "holder.log").read_text()[-3000:]
        (tmp_path / "macros").symlink_to(REPO / "macros")
        write_files(tmp_path, {name: text.replace("overlap", "between") for name, text in FILES.items()})
        run = dbt(tmp_path, "run", "--select", "spent", "totals")
        said = run.communicate(timeout=600)[0]
        try:
            interposed = holder.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:  # it never saw the commit it waits for
            interposed = ""
        assert interposed.strip() == "interposed", (tmp_path / "holder.log").read_text()[-3000:]
        assert run.returncode == 0, said[-4000:]
        tags, snapshots, main, properties = spark(
            f"select name, snapshot_id from {TARGET}.refs where type = 'TAG'",
            f"select snapshot_id, parent_id from {TARGET}.snapshots",
            f"select snapshot_id from {TARGET}.refs where name = 'main'", f"show tblproperties {TARGET}")
    finally:
        if holder is not None:
            holder.kill()
        spark.close()
    [written] = [s["snapshot_id"] for s in snapshots if s["parent_id"] is None]  # the write's CREATE
    [tag] = tags
    assert tag["name"].startswith("lakeplan_applied_") and tag["snapshot_id"] == written
    assert main[0]["snapshot_id"] != written  # the other process's row moved main; the tag stayed on the write
    assert {"key": "lakeplan.test.between", "value": "yes"} in properties  # the other commit is kept
