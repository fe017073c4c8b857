"""Who holds the embedded catalog's metastore, asked before Spark starts.

The `local` target's catalog keeps its tables in an embedded Derby database (`<LAKEPLAN_HOME>/metastore/metastore_db`),
which one process at a time can open. A second dbt process on it used to retry inside Hive's client for 60-90 s and
then stop with "Unable to instantiate org.apache.hadoop.hive.ql.metadata.SessionHiveMetaStoreClient", naming neither
the database nor the process. While Derby has a database open, it holds a POSIX lock on its `dbex.lck`, which
/proc/locks lists with the holder's PID: read, never taken, so no lock of this process is touched (closing a file
this process had locked would drop its JVM's lock).

A shared catalog (a metastore database named in the settings) that does not answer made Spark retry for about 52 s
and then stop with the same Hive sentence: its address is tried first, and a refusal is told naming it. One whose
PostgreSQL has no connection left (its max_connections taken by other Spark sessions) stopped with that sentence too,
PostgreSQL's own reason far down the Java stack: it is told as that, with the fix.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

DERBY_HOME = re.compile(r"-Dderby\.system\.home=(\S+)")
# a metastore database named in the settings (a shared catalog): not the embedded default
CONNECTION_URL = re.compile(r"^\s*spark\.hadoop\.javax\.jdo\.option\.ConnectionURL\s", re.MULTILINE)
# PostgreSQL's refusals of a connection for want of a free one (SQLSTATE 53300): max_connections taken (less the
# superusers' reserve), or a role's or database's own CONNECTION LIMIT
NO_FREE_CONNECTION = re.compile(r"sorry, too many clients already|remaining connection slots are reserved for [\w -]+"
                                r"|too many connections for (?:role|database) \"[^\"\n]*\"")
SHARED_URL = re.compile(r"^\s*spark\.hadoop\.javax\.jdo\.option\.ConnectionURL\s+jdbc:\w+://([^/:\s]+):(\d+)/", re.M)
PROC_LOCKS = Path("/proc/locks")
JAVA = re.compile(r"^(?:\S*/)?java(?:\s|$)")


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str


def spark_settings(conf_dir: str | None) -> str:
    """The text of `conf_dir`'s spark-defaults.conf; empty where there is none."""
    conf = Path(conf_dir or "") / "spark-defaults.conf"
    return conf.read_text() if conf_dir and conf.is_file() else ""


def embedded_metastore(conf_dir: str | None, cwd: Path) -> Path | None:
    """The Derby database the Spark settings in `conf_dir` (SPARK_CONF_DIR) open; None where they name another."""
    text = spark_settings(conf_dir)
    if CONNECTION_URL.search(text):
        return None
    home = DERBY_HOME.search(text)
    return (Path(home.group(1)) if home else cwd) / "metastore_db"  # Derby's default: the current directory


def lock_holder(database: Path, own_pid: int, locks: Path = PROC_LOCKS) -> Holder | None:
    """The other process that has `database` open (its lock on dbex.lck in /proc/locks), if any."""
    try:
        status = (database / "dbex.lck").stat()
        lines = locks.read_text().splitlines()
    except OSError:  # never opened, or no /proc (not Linux): nothing to say
        return None
    key = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for fields in map(str.split, lines):  # "1: POSIX  ADVISORY  WRITE 17645 fe:00:5727495 0 EOF"
        if key in fields and fields[fields.index(key) - 1].isdigit():
            holder = owner(int(fields[fields.index(key) - 1]))
            if holder.pid != own_pid:  # this process's own JVM has it: nothing to say
                return holder
    return None


def owner(pid: int) -> Holder:
    """The process a user knows as the holder: pyspark's JVM (`java ...`) is the child of the Python process (dbt)
    that started it, and ends with it."""
    command = command_line(pid)
    parent = parent_pid(pid)
    if JAVA.match(command) and parent > 1:
        return Holder(parent, command_line(parent))
    return Holder(pid, command)


def parent_pid(pid: int) -> int:
    """The parent's PID from /proc/<pid>/stat (its fourth field, after the command in parentheses); -1 if unknown."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def command_line(pid: int, limit: int = 160) -> str:
    """A process's command line as `ps` shows it, clipped; '?' where /proc does not say."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return "?"
    text = " ".join(" ".join(word.decode(errors="replace").split()) for word in words)  # one line
    return text if len(text) <= limit else text[: limit - 3] + "..."


def held_sentence(database: Path, holder: Holder) -> str:
    """What a user is told when another process holds the embedded catalog's metastore."""
    home = database.parent.parent
    return (f"The embedded catalog's metastore {database} is open in another process, PID {holder.pid} "
            f"(`{holder.command}`), and embedded Derby lets one process at a time open it. Fix: wait for that "
            f"process to end or stop it (`kill {holder.pid}`), or run this one on a catalog of its own: a shared "
            f"catalog, or a separate LAKEPLAN_HOME (`lakeplan setup-spark --conf-only --home <dir>`, then "
            f"`export SPARK_CONF_DIR=<dir>/spark-conf`; its tables are not those of {home}).")


def metastore_in_use(conf_dir: str | None, cwd: Path, own_pid: int) -> str | None:
    """The sentence for a metastore another process holds, or None where this process may open it."""
    database = embedded_metastore(conf_dir, cwd)
    holder = lock_holder(database, own_pid) if database else None
    return held_sentence(database, holder) if holder else None


def shared_catalog_address(conf_dir: str | None) -> tuple[str, int] | None:
    """The host and port of the metastore database the settings in `conf_dir` name; None for the embedded default."""
    url = SHARED_URL.search(spark_settings(conf_dir))
    return (url.group(1), int(url.group(2))) if url else None


def answers(host: str, port: int, timeout_s: float = 5) -> bool:
    """Whether a connection to host:port is accepted."""
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def catalog_named(host: str, port: int, conf_dir: str | None) -> str:
    """The shared catalog's database as the sentences name it, after "the": its address and where that is set."""
    return (f"shared catalog's metastore database at {host}:{port} (the ConnectionURL in {conf_dir}/"
            "spark-defaults.conf)")


CATALOG_FIX = "Fix: start it with `make catalog-up` (or point that URL at a running PostgreSQL), then rerun."


def shared_catalog_down(conf_dir: str | None, timeout_s: float = 5) -> str | None:
    """The sentence for a shared catalog whose metastore database refuses a connection; None where it answers or the
    settings name none."""
    address = shared_catalog_address(conf_dir)
    if address is None or answers(*address, timeout_s=timeout_s):
        return None
    return (f"The {catalog_named(*address, conf_dir)} does not answer, so Spark cannot open the catalog. "
            f"{CATALOG_FIX}")


def catalog_full(conf_dir: str | None, error: str, model: str | None) -> str | None:
    """The sentence for a statement that failed because the shared catalog's database had no connection left for
    Spark (`error`, the whole error text, holds PostgreSQL's reason); `model` is the model whose statement it was
    (None: dbt's own, before any model). None for any other error."""
    address = shared_catalog_address(conf_dir)
    refused = NO_FREE_CONNECTION.search(error)
    if address is None or refused is None:
        return None
    stopped = (f"{model} stopped (no write of it is half-done: each table is as it was or holds its write whole)"
               if model else "Spark could not open the catalog, so nothing was written")
    return (f"The {catalog_named(*address, conf_dir)} refused Spark a connection because all of its connections are "
            f"in use (PostgreSQL: {refused.group(0)}), and every Spark session holds about 10; {stopped}. Fix: end "
            "the sessions on this catalog that are not needed (a notebook, an idle Thrift Server), or raise its "
            "PostgreSQL's max_connections (the template's catalog: LAKEPLAN_CATALOG_MAX_CONNECTIONS=<n> make "
            "catalog-down catalog-up; 400 unless set), then rerun.")
