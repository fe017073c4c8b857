"""A FRESH shared catalog (`scripts/catalog.sh up` on an empty folder) takes Hive objects at once. With DataNucleus's
autoCreateAll on in every process, the first Hive table or view hung for good: Hive created it in an open transaction
on one connection while DataNucleus added a missing foreign key (ALTER TABLE "TBL_PRIVS") on a second connection of
the same JVM, which waited on the first; PostgreSQL saw no deadlock. `up` now creates the whole schema once and the
other processes never change it."""

import glob
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as Timeout
from pathlib import Path

import pytest

from tests.concurrency.harness import SparkSql, environment, new_catalog, own_catalog
from tests.conftest import REPO, write_files

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

BOUND_S = 300  # a JVM start, dbt's parse and two Hive objects on a loaded machine; a hang is forever
IDLE_IN_TRANSACTION = "select count(*) from pg_stat_activity where state = 'idle in transaction'"


@pytest.fixture(scope="module")
def fresh_catalog():
    """A shared catalog of this module's own, started on an empty folder and a free port: its Spark settings folder
    and its port."""
    with own_catalog("fresh-catalog-test") as catalog:
        yield catalog.conf_dir, catalog.port


def postgres(port: int, query: str) -> str:
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    return subprocess.run([psql, "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d",
                           "lakeplan_metastore", "-tAc", query], capture_output=True, text=True, check=True).stdout


def sessions(port: int) -> str:
    return postgres(port, "select state, left(query, 100) from pg_stat_activity where datname = 'lakeplan_metastore'")


def test_dbt_creates_a_parquet_table_and_a_view_on_a_fresh_catalog_at_once(fresh_catalog, tmp_path):
    conf, port = fresh_catalog
    project = tmp_path / "project"
    write_files(project, {
        "dbt_project.yml": "name: lakeplan\nversion: '0.1.0'\nconfig-version: 2\nprofile: lakeplan\n",
        "models/plain.sql": "{{ config(materialized='table', file_format='parquet', schema='fresh') }}\nselect 1 as a",
        "models/over_plain.sql": "{{ config(materialized='view', schema='fresh') }}\nselect a from {{ ref('plain') }}"})
    dbt = subprocess.Popen([str(Path(sys.executable).parent / "dbt"), "run", "--target", "team", "--project-dir",
                            str(project)], env={**environment(conf), "LAKEPLAN_SCHEMA": "lakeplan"},
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = dbt.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        seen = sessions(port)
        dbt.kill()
        pytest.fail(f"dbt run --target team still ran after {BOUND_S} s; the metastore's sessions:\n{seen}")
    assert dbt.returncode == 0, output[-4000:]


def test_a_spark_session_leaves_no_metastore_transaction_open_after_hive_ddl(fresh_catalog, tmp_path):
    conf, port = fresh_catalog
    spark = SparkSql(conf, tmp_path / "spark.log")
    try:
        with ThreadPoolExecutor(1) as pool:
            done = pool.submit(spark, "create database if not exists fresh_ddl",
                               "create table fresh_ddl.parted (a int, b int) using parquet partitioned by (b)",
                               "insert into fresh_ddl.parted values (1, 1)",
                               "create view fresh_ddl.over_parted as select a from fresh_ddl.parted")
            try:
                done.result(timeout=BOUND_S)
            except Timeout:
                seen = sessions(port)
                spark.process.kill()
                pytest.fail(f"Hive DDL still ran after {BOUND_S} s; the metastore's sessions:\n{seen}")
        assert postgres(port, IDLE_IN_TRANSACTION).strip() == "0", sessions(port)  # while that Spark is still up
    finally:
        spark.process.kill()


def test_up_refuses_another_clones_postgresql_on_its_port(fresh_catalog):
    """Another clone's catalog (here: this module's) holds the port the settings name: `up` stops in one sentence
    instead of using that PostgreSQL (same role and database, trust) in silence."""
    _, port = fresh_catalog
    other = new_catalog("other-clone-test", port)
    try:
        refused = other.script("up")
    finally:
        other.remove()
    root = other.root
    assert refused.returncode != 0
    assert (f"lakeplan catalog: the PostgreSQL on 127.0.0.1:{port} is not this clone's (its data: "
            f"{REPO}/.lakeplan/fresh-catalog-test/catalog/pgdata; this clone's: {root}/catalog/pgdata): choose a free "
            f"port in the ConnectionURL of {root}/shared-catalog.conf (docs/team.md) and rerun.") in refused.stderr, \
        refused.stdout + refused.stderr
