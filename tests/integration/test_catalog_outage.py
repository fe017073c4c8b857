"""The shared catalog's PostgreSQL stops while a `dbt run` on the `team` target works (issue 46: the run waited in
silence for as long as it was down, 3 m 45 s seen). Spark now waits for it a bounded time (shared-catalog.conf), the
run says so as it waits (the address, that it retries, until when), and then either goes on, once the database
answers again within that time, or stops in one sentence naming the model, the address and the fix, with its target
as it was; a rerun then applies the events whole and leaves no branch or staging table."""

import glob
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from dbt_lakeplan.catalog_watch import shared_catalog as catalog_of
from tests.concurrency.harness import OwnCatalog, SparkSql, environment, own_catalog, release, start_at_barrier
from tests.conftest import JAVA_FRAME, REPO, write_files
from tests.integration.test_overlapping_runs import EVENTS, FILES, SCHEMA, TARGET_RUN, add_events, dbt_process, landed

pytestmark = pytest.mark.team_catalog  # a stage of its own: `make test-team` (docs/testing.md)

# the line a partial-update run logs just before its MERGE, which reads and commits the target through the catalog
BEFORE_THE_WRITE = "lands its change copy-on-write"
SLACK_S = 90  # dbt's own steps after the failure, on a loaded machine
LONG_OUTAGE_S = 300  # an outage longer than any bound the test accepts
TOTALS = f"select sum(spent) as spent, count(*) as customers from {SCHEMA}.totals"


@pytest.fixture(scope="module")
def own():
    """A catalog of this module's own: stopping (or restarting) the clone's would stop the team stage's modules on the
    other worker."""
    with own_catalog("outage-catalog-test") as catalog:
        yield catalog


def switch(catalog: OwnCatalog, command: str) -> None:
    done = catalog.script(command)
    assert done.returncode == 0, f"scripts/catalog.sh {command} failed:\n{done.stdout}{done.stderr}"


def stop_catalog_while_it_runs(catalog: OwnCatalog, log: Path, back: threading.Event,
                               back_after_s: float) -> float | None:
    """Stops PostgreSQL as the released run begins its write (its log says so once more), and starts it again
    `back_after_s` later or when `back` is set (the run ended); returns when it was stopped, None if the run ended
    before its write."""
    before = log.read_text().count(BEFORE_THE_WRITE)
    while log.read_text().count(BEFORE_THE_WRITE) == before:
        if back.wait(0.1):
            return None
    stopped = time.time()
    switch(catalog, "down")
    back.wait(back_after_s)
    switch(catalog, "up")
    return stopped


def release_with_outage(catalog: OwnCatalog, runs, barrier: Path, case: str,
                        back_after_s: float) -> tuple[list[str], float]:
    """Releases `case` with the catalog stopped under it, back after `back_after_s` or once the run ended; what the
    run said and seconds from the stop to its end."""
    stopped, back = [], threading.Event()
    log = barrier.parent / "project" / "logs-0" / "dbt.log"
    stopper = threading.Thread(target=lambda: stopped.append(stop_catalog_while_it_runs(catalog, log, back, back_after_s)))
    stopper.start()
    try:
        said = release(runs, barrier, case)[0]
        ended = time.time()
    finally:
        back.set()
        stopper.join()
    assert stopped[0] is not None, "the run ended before its write began:\n" + "\n".join(said)
    return said, ended - stopped[0]


def test_a_run_whose_catalog_goes_down_waits_a_bounded_time_told_and_goes_on_if_it_comes_back(
        own, tmp_path, monkeypatch):
    conf = own.conf_dir
    monkeypatch.setenv("LAKEPLAN_SCHEMA", "lakeplan")
    watched = catalog_of(str(conf))
    address = f"{watched.host}:{watched.port}"
    project, barrier = tmp_path / "project", tmp_path / "barrier"
    project.mkdir()
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, FILES)
    sql = SparkSql(conf, tmp_path / "spark_sql.log")
    runs = []
    try:
        sql(f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}",
            f"create table {EVENTS} (customer int, amount bigint) using iceberg")
        add_events(sql, 1, 10)
        runs = start_at_barrier([dbt_process(0, project, barrier, 0, f"first={TARGET_RUN}",
                                             f"lost={TARGET_RUN}", f"rerun={TARGET_RUN}", f"back={TARGET_RUN}")],
                                conf, barrier)
        [first] = release(runs, barrier, "first").values()
        landed(first, barrier, 0)
        [before] = sql(TOTALS)
        add_events(sql, 11, 10)

        # down for longer than the bound (back once the run ended; without a bound it waited for that)
        said, took = release_with_outage(own, runs, barrier, "lost", back_after_s=LONG_OUTAGE_S)
        shown = "\n".join(said)
        print(f"the run ended {took:.0f} s after its catalog stopped (bound {watched.bound_s} s)")
        assert not landed(said, barrier, 0, must=False), shown  # failed, without a Java stack or a traceback
        assert watched.bound_s is not None and watched.bound_s <= 120, watched  # a bound is set, and a short one
        assert re.search(rf"The shared catalog's metastore database at {re.escape(address)} \(the ConnectionURL in "
                         rf"{re.escape(str(conf))}/spark-defaults.conf\) does not answer; Spark retries "
                         r"`totals`'s calls to it until \d\d:\d\d:\d\d \(\d+ s\), then `totals` stops\.", shown), shown
        assert (f"`totals` stopped: the shared catalog's metastore database at {address} (the ConnectionURL in "
                f"{conf}/spark-defaults.conf) stopped answering while it ran and did not answer again "
                f"within {watched.bound_s:g} s") in shown, shown
        assert "Fix: start it with `make catalog-up` (or point that URL at a running PostgreSQL), then rerun." in shown
        assert took <= watched.bound_s + SLACK_S, shown
        switch(own, "up")
        [after] = sql(TOTALS)
        assert after == before  # the target as it was

        [rerun] = release(runs, barrier, "rerun").values()  # applies the events whole, leaves nothing behind
        landed(rerun, barrier, 0)
        totals, refs, tables = sql(TOTALS, f"select name from {SCHEMA}.totals.refs where type = 'BRANCH'",
                                   f"show tables in {SCHEMA}")
        assert totals == [{"spent": sum(range(1, 21)), "customers": 5}]
        assert [ref["name"] for ref in refs] == ["main"]
        assert sorted(t["tableName"] for t in tables) == ["events", "totals"]

        add_events(sql, 21, 10)  # down for less than the bound: the run waits, is told, and goes on
        said, took = release_with_outage(own, runs, barrier, "back", back_after_s=min(20.0, watched.bound_s / 3))
        shown = "\n".join(said)
        landed(said, barrier, 0)
        assert "does not answer; Spark retries `totals`'s calls to it until" in shown, shown
        assert re.search(rf"The shared catalog's metastore database at {re.escape(address)} .* answers again after "
                         r"\d+ s; `totals` goes on\.", shown), shown
        assert sql(TOTALS) == [[{"spent": sum(range(1, 31)), "customers": 5}]]
    finally:
        switch(own, "up")  # for the reader's last statements
        for process in runs:
            process.kill()
        sql.close()


def psql(catalog: OwnCatalog, *arguments: str, **popen) -> subprocess.Popen:
    """A psql client of the catalog's metastore database as lakeplan's role (Spark's), over TCP as Spark connects."""
    [binary] = glob.glob("/usr/lib/postgresql/*/bin/psql")[-1:]
    env = {**os.environ, "PGPASSWORD": "lakeplan"}
    return subprocess.Popen([binary, "-h", "127.0.0.1", "-p", str(catalog.port), "-U", "lakeplan", "-d",
                             "lakeplan_metastore", "-X", *arguments], env=env, text=True, **popen)


def test_a_run_on_a_catalog_with_no_connection_left_is_told_the_reason_and_the_fix(own, tmp_path, monkeypatch):
    """Every connection of the catalog's PostgreSQL taken (a team's 41st Spark session; the 10th with PostgreSQL's
    default limit): dbt showed Hive's "Unable to instantiate ...SessionHiveMetaStoreClient", PostgreSQL's reason far
    down the Java stack, and no fix. The catalog restarts with the least limit it takes, 13 (3 kept for PostgreSQL's
    superuser), and ten psql clients hold the connections left for users."""
    monkeypatch.setenv("LAKEPLAN_CATALOG_MAX_CONNECTIONS", "4")  # admits no session: refused before anything stops
    refused = own.script("down")
    monkeypatch.delenv("LAKEPLAN_CATALOG_MAX_CONNECTIONS")
    assert refused.returncode == 1 and own.script("status").returncode == 0, refused.stderr  # still running
    assert ("LAKEPLAN_CATALOG_MAX_CONNECTIONS is '4'; set a whole number from 13 (one Spark session's 10 connections "
            "and PostgreSQL's 3 for its superuser) to 262143, or unset it for 400. Nothing was started or stopped."
            ) in refused.stderr
    monkeypatch.setenv("LAKEPLAN_CATALOG_MAX_CONNECTIONS", "13")
    holders = []
    try:
        switch(own, "down")
        switch(own, "up")
        deadline = time.time() + 90
        while True:  # held once one more client is refused for want of a slot, while every holder stays
            holders = [holder for holder in holders if holder.poll() is None]  # a probe may have taken a slot first
            if len(holders) < 10:
                holders += [psql(own, "-c", "select pg_sleep(600)", stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) for _ in range(10 - len(holders))]
                time.sleep(3)
            probe = psql(own, "-c", "select 1", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            refused = "remaining connection slots are reserved" in probe.communicate(timeout=30)[0]
            if refused and all(holder.poll() is None for holder in holders):
                break
            assert time.time() < deadline, "ten clients could not take the catalog's connections"
        project = tmp_path / "project"
        write_files(project, {"dbt_project.yml": "name: full\nversion: '1.0'\nconfig-version: 2\nprofile: lakeplan\n",
                              "models/one.sql": "select 1 as one"})
        run = subprocess.run(["dbt", "run", "--target", "team"], env=environment(own.conf_dir), cwd=project, text=True,
                             capture_output=True, timeout=600)
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
        monkeypatch.delenv("LAKEPLAN_CATALOG_MAX_CONNECTIONS")
        switch(own, "down")
        switch(own, "up")
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert (f"The shared catalog's metastore database at 127.0.0.1:{own.port} (the ConnectionURL in {own.conf_dir}/"
            "spark-defaults.conf) refused Spark a connection because all of its connections are in use (PostgreSQL: "
            "remaining connection slots are reserved for non-replication superuser connections), and every Spark "
            "session holds about 10; Spark could not open the catalog, so nothing was written. Fix: end the sessions "
            "on this catalog that are not needed") in said, said
    assert "SessionHiveMetaStoreClient" not in said and not JAVA_FRAME.search(run.stdout + run.stderr)
