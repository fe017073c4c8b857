"""Takes the Hive lock Iceberg takes for a commit (an exclusive table lock in the shared catalog's metastore, as
Iceberg's MetastoreLock asks for it), prints `locked <lock id>` and heartbeats it every 5 s as a live commit does,
until the test kills it with SIGKILL, leaving the lock behind as a writer killed mid-commit does.

With `--between <n> <times> <statement> ...` it puts another run's commit between a write's data commit and its n-th
metadata commit after it, with no timing luck: each commit of the table waits in the lock's queue behind this
process, which lets every commit pass (it gives the lock up and asks again, behind the waiting one) until the table's
`main` has moved and n commits have waited since; the n-th has then read the table, and this process commits the
statements without the lock (its own commit, under the lock it holds; `{n}` in them: how many times it did so
before) before giving the lock up. It does that for `times` commits in a row (a retried one's attempts), then
prints `interposed` and ends.

With `--fast-forward <groups> <times> <statement> ...` it does the same before the commit that waits once a run's
branch (`lakeplan_write_*`) holds `groups` snapshots past main: main's fast-forward to it, which has read the table.

    python lock_holder.py <database> <table> [--between | --fast-forward] <n> <times> <statement> ...
"""

import contextlib
import sys
import threading
import time

from pyspark.sql import SparkSession


class Lock:
    """An exclusive Hive lock on one table, asked for in the metastore's queue, heartbeated while it is held."""

    def __init__(self, spark, database: str, table: str):
        jvm, self.api = spark._jvm, spark._jvm.org.apache.hadoop.hive.metastore.api
        conf = jvm.org.apache.hadoop.hive.conf.HiveConf(spark._jsc.hadoopConfiguration(),
                                                        jvm.org.apache.hadoop.hive.conf.HiveConf._java_lang_class)
        self.client = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
        self.component = self.api.LockComponent(self.api.LockType.EXCLUSIVE, self.api.LockLevel.TABLE, database)
        self.component.setTablename(table)
        self.jvm, self.database, self.table = jvm, database, table
        # heartbeats from a thread, on a client of its own (a Thrift client serves one call at a time): a slow
        # statement, or a long wait in the queue on a busy machine, must not let the catalog's dead-lock trigger
        # (60 s without a heartbeat) remove this lock, waiting or held
        self.current, beats = None, jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
        threading.Thread(target=self.heartbeat, args=(beats,), daemon=True).start()

    def heartbeat(self, beats) -> None:
        while True:
            time.sleep(5)
            own = self.current
            if own is not None:
                with contextlib.suppress(Exception):  # released between the read and the beat
                    beats.heartbeat(0, own)

    def take(self) -> int:
        """Asks for the lock and waits in the queue until it is granted; its id."""
        request = self.api.LockRequest(self.jvm.java.util.Collections.singletonList(self.component), "lakeplan",
                                       "holder")
        response = self.client.lock(request)
        self.current = response.getLockid()
        while str(response.getState()) != "ACQUIRED":
            time.sleep(0.05)
            response = self.client.checkLock(response.getLockid())
        return response.getLockid()

    def others_waiting(self, own: int) -> set[int]:
        request = self.api.ShowLocksRequest()
        request.setDbname(self.database)
        request.setTablename(self.table)
        return {lock.getLockid() for lock in self.client.showLocks(request).getLocks()
                if lock.getLockid() != own and str(lock.getState()) == "WAITING"}


def between(spark, lock: Lock, own: int, ready, times: int, statements: list[str]) -> None:
    """Lets the table's commits pass until one waits when `ready()`; then commits `statements` before each of the
    next `times` commits."""
    done = 0
    while done < times:
        if not lock.others_waiting(own):
            time.sleep(0.05)
            continue
        if done or ready():
            for statement in statements:
                spark.sql(statement.replace("{n}", str(done))).collect()
            done += 1
        lock.client.unlock(own)  # the waiting commit goes first; this process asks again behind it
        own = lock.take()
    lock.client.unlock(own)
    print("interposed", flush=True)


def after_main_moved(spark, name: str, commits: int):
    """Whether main has moved since this process started and `commits` commits have waited since (each call: one)."""
    start, counted = head(spark, name), []

    def ready() -> bool:
        counted.append(head(spark, name) != start)
        return sum(counted) >= commits
    return ready


def branch_ahead(spark, name: str, groups: int):
    """Whether a run's branch holds `groups` snapshots past main."""
    def ready() -> bool:
        refs = {row.name: row.snapshot_id for row in spark.sql(f"select name, snapshot_id from {name}.refs").collect()}
        parents = dict(spark.sql(f"select snapshot_id, parent_id from {name}.snapshots").collect())
        at, ahead = next((s for n, s in refs.items() if n.startswith("lakeplan_write_")), None), 0
        while at is not None and at != refs.get("main"):
            at, ahead = parents.get(at), ahead + 1
        return ahead >= groups
    return ready


def head(spark, name: str):
    if not spark.catalog.tableExists(name):
        return None
    rows = spark.sql(f"select snapshot_id from {name}.refs where name = 'main'").collect()
    return rows[0][0] if rows else None


def main(database: str, table: str, options: list[str]) -> None:
    builder = SparkSession.builder.enableHiveSupport()
    if options:  # this process commits under the lock it holds itself
        builder = builder.config("spark.hadoop.iceberg.engine.hive.lock-enabled", "false")
    spark = builder.getOrCreate()
    lock = Lock(spark, database, table)
    own = lock.take()
    print(f"locked {own}", flush=True)
    if options:
        name, n = f"{database}.{table}", int(options[1])
        ready = after_main_moved(spark, name, n) if options[0] == "--between" else branch_ahead(spark, name, n)
        between(spark, lock, own, ready, int(options[2]), options[3:])
        return
    while True:  # held (and heartbeated) until this process is killed
        time.sleep(5)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
