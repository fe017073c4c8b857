"""Who holds the embedded catalog's metastore: read from the lock Derby takes on dbex.lck, as /proc/locks lists it
(here a real POSIX lock of another process, as Derby's JVM takes it; the whole path with Spark is
tests/integration/test_metastore_in_use.py)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dbt_lakeplan.metastore_lock import (catalog_full, embedded_metastore, lock_holder, metastore_in_use,
                                        shared_catalog_down)

LOCKER = """
import fcntl, sys, time
lock = open(sys.argv[1], "a")
fcntl.lockf(lock, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(120)
"""


@pytest.fixture
def database(tmp_path):
    database = tmp_path / "metastore" / "metastore_db"
    database.mkdir(parents=True)
    (database / "dbex.lck").touch()
    return database


def test_the_settings_name_the_embedded_metastore_or_another_catalog(tmp_path):
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions   -Dderby.system.home=/x/metastore\n")
    assert embedded_metastore(str(conf), tmp_path) == Path("/x/metastore/metastore_db")
    assert embedded_metastore(None, tmp_path) == tmp_path / "metastore_db"  # Derby's default: the current directory
    (conf / "spark-defaults.conf").write_text("spark.hadoop.javax.jdo.option.ConnectionURL jdbc:postgresql://h/db\n")
    assert embedded_metastore(str(conf), tmp_path) is None  # a shared catalog: not Derby's lock


def test_another_process_holding_the_lock_is_named_with_its_command_line(database):
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(database / "dbex.lck")], text=True,
                              stdout=subprocess.PIPE)
    try:
        assert locker.stdout.readline().strip() == "locked"
        holder = lock_holder(database, os.getpid())
        assert holder is not None and holder.pid == locker.pid
        assert holder.command.startswith(f"{sys.executable} -c import fcntl, sys, time lock = open(")
        assert lock_holder(database, locker.pid) is None  # the lock of this process's own JVM: nothing to say
    finally:
        locker.kill()
        locker.wait()
    assert lock_holder(database, os.getpid()) is None  # released: the file stays, nobody holds it


def test_a_metastore_never_opened_has_no_holder(tmp_path):
    assert lock_holder(tmp_path / "metastore_db", os.getpid()) is None
    assert metastore_in_use(None, tmp_path, os.getpid()) is None


def test_a_shared_catalog_is_told_down_only_while_its_address_refuses(tmp_path):
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        (tmp_path / "spark-defaults.conf").write_text(
            f"spark.hadoop.javax.jdo.option.ConnectionURL  jdbc:postgresql://127.0.0.1:{port}/lakeplan_metastore\n")
        assert shared_catalog_down(str(tmp_path)) is None
    said = shared_catalog_down(str(tmp_path))
    assert said.startswith(f"The shared catalog's metastore database at 127.0.0.1:{port} (the ConnectionURL in ")
    assert "Fix: start it with `make catalog-up`" in said
    assert shared_catalog_down(None) is None  # the embedded default names no address


# the cause under Hive's "Unable to instantiate ...SessionHiveMetaStoreClient" when every connection is taken
NO_SLOT = ("Caused by: org.postgresql.util.PSQLException: FATAL: remaining connection slots are reserved for "
           "non-replication superuser connections\n\tat org.postgresql.core.v3.ConnectionFactoryImpl.doAuthentication(")


def test_a_catalog_with_no_connection_left_is_told_with_its_reason_and_the_fix(tmp_path):
    (tmp_path / "spark-defaults.conf").write_text(
        "spark.hadoop.javax.jdo.option.ConnectionURL  jdbc:postgresql://127.0.0.1:5433/lakeplan_metastore\n")
    said = catalog_full(str(tmp_path), "Unable to instantiate x\n" + NO_SLOT, "`wide`")
    assert said.startswith("The shared catalog's metastore database at 127.0.0.1:5433 (the ConnectionURL in ")
    assert ("refused Spark a connection because all of its connections are in use (PostgreSQL: remaining connection "
            "slots are reserved for non-replication superuser connections), and every Spark session holds about 10; "
            "`wide` stopped (no write of it is half-done") in said
    assert "LAKEPLAN_CATALOG_MAX_CONNECTIONS=<n> make catalog-down catalog-up" in said
    before_any_model = catalog_full(str(tmp_path), 'FATAL: sorry, too many clients already', None)
    assert "(PostgreSQL: sorry, too many clients already)" in before_any_model
    assert "Spark could not open the catalog, so nothing was written. Fix:" in before_any_model
    role = catalog_full(str(tmp_path), 'FATAL: too many connections for role "lakeplan"', None)
    assert '(PostgreSQL: too many connections for role "lakeplan")' in role
    assert catalog_full(str(tmp_path), "FATAL: password authentication failed", "`wide`") is None  # another reason
    assert catalog_full(None, NO_SLOT, "`wide`") is None  # the embedded catalog names no database of PostgreSQL's
