"""A process killed (SIGKILL) while it holds the Hive lock of a commit does not hang the next writer: the lock stops
being heartbeated, and the next writer's lock check deletes it once 60 s have passed (profiles/hive-locks.sql),
within the time a writer waits for a lock (120 s). A lock still held is told naming the table and the fix."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.concurrency.harness import HERE, environment, spark_sql, with_settings
from tests.conftest import write_files

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

TABLE = "lakeplan_concurrency.locked"
WAIT_5_S = "spark.hadoop.iceberg.hive.lock-timeout-ms 5000\n"


def test_a_lock_left_by_a_killed_process_is_cleared_and_the_next_commit_lands(shared_catalog):
    spark_sql(shared_catalog, "create database if not exists lakeplan_concurrency", f"drop table if exists {TABLE}",
              f"create table {TABLE} (n int) using iceberg")
    holder = subprocess.Popen([sys.executable, str(HERE / "lock_holder.py"), *TABLE.split(".")],
                              env=environment(shared_catalog), stdout=subprocess.PIPE, text=True)
    line = holder.stdout.readline()
    assert line.startswith("locked "), line
    holder.send_signal(signal.SIGKILL)
    holder.wait()

    started = time.monotonic()
    [rows] = spark_sql(shared_catalog, f"insert into {TABLE} values (1)", f"select count(*) as n from {TABLE}")[1:]
    waited = time.monotonic() - started
    assert rows == [{"n": 1}]
    assert waited < 120 + 90, f"the next commit waited {waited:.0f} s"  # lock wait 120 s at most, plus a JVM start


def test_a_lock_still_held_is_told_naming_the_table_and_the_fix(shared_catalog, tmp_path):
    """A lock a live process holds (and heartbeats) past the writer's lock wait (5 s here; no commit retries) stops
    the dbt run with lakeplan's sentence, not Iceberg's exception."""
    spark_sql(shared_catalog, "create database if not exists lakeplan_concurrency", f"drop table if exists {TABLE}",
              f"create table {TABLE} (n int) using iceberg tblproperties ('commit.retry.num-retries' = '0')")
    home = tmp_path / "home"
    conf = with_settings(shared_catalog, home / "catalog" / "spark-conf", WAIT_5_S)  # locks on; wait 5 s
    holder = subprocess.Popen([sys.executable, str(HERE / "lock_holder.py"), *TABLE.split(".")],
                              env=environment(shared_catalog), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().startswith("locked ")
        project = tmp_path / "project"
        write_files(project, {
            "dbt_project.yml": "name: lakeplan\nversion: '0.1.0'\nconfig-version: 2\nprofile: lakeplan\n",
            "models/locked.sql": "{{ config(materialized='incremental', incremental_strategy='append', "
                                 "file_format='iceberg', schema='concurrency') }}\nselect 1 as n"})
        done = subprocess.run([str(Path(sys.executable).parent / "dbt"), "run", "--target", "team", "--project-dir",
                               str(project)], env={**environment(conf), "LAKEPLAN_SCHEMA": "lakeplan"},
                              capture_output=True, text=True, timeout=900)
    finally:
        holder.kill()
    assert done.returncode != 0
    told = re.search(rf"{TABLE} stayed locked by another process for \d+ s, so this run wrote nothing to it\. Fix: if "
                     rf"no other run writes {TABLE}, the lock is a killed process's", done.stdout)  # Iceberg's wait
    assert told, done.stdout[-4000:]
    assert "\tat " not in done.stdout
