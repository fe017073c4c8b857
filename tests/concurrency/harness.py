"""Processes started together at a barrier, each with its own Spark, on one catalog: the concurrency tests' harness.
Each process touches `<barrier>/ready-<n>` once its Spark and catalog are open and then waits for `<barrier>/go`, so
the commits overlap instead of queueing behind JVM starts."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
REPO = HERE.parent.parent
# what `go-<case>` holds where run_dbt.py's runs wait for their moment (harness.release)
WAIT = "wait"


def environment(conf_dir: Path) -> dict[str, str]:
    """A process on the catalog of `conf_dir`: the `team` target names `$LAKEPLAN_HOME/catalog/spark-conf`, so
    LAKEPLAN_HOME is that catalog's home (a pytest-xdist worker's own LAKEPLAN_HOME would name another folder, and
    dbt would refuse the target on the Spark started here)."""
    return {**os.environ, "SPARK_CONF_DIR": str(conf_dir), "LAKEPLAN_HOME": str(conf_dir.parent.parent)}


@dataclass(frozen=True)
class OwnCatalog:
    """A shared catalog of a test's own: its settings file (profiles/shared-catalog.conf on its own port) and its
    home in `root`. A test that stops its catalog, or needs it new, has one, so the team stage's other modules on
    the clone's catalog (`make test-team` runs them on two workers) never meet that."""

    root: Path
    port: int

    @property
    def settings(self) -> Path:
        return self.root / "shared-catalog.conf"

    @property
    def conf_dir(self) -> Path:
        return self.root / "catalog" / "spark-conf"

    def script(self, command: str) -> subprocess.CompletedProcess:
        """`scripts/catalog.sh <command>` on this catalog."""
        env = {**os.environ, "LAKEPLAN_CATALOG_HOME": str(self.root / "catalog"),
               "LAKEPLAN_CATALOG_SETTINGS": str(self.settings)}
        return subprocess.run([str(REPO / "scripts" / "catalog.sh"), command], env=env, capture_output=True,
                              text=True, timeout=900)

    def remove(self) -> None:
        if self.settings.exists():
            self.script("down")
        shutil.rmtree(self.root, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def settings_on_port(port: int) -> str:
    """profiles/shared-catalog.conf with its PostgreSQL on `port`."""
    text = (REPO / "profiles" / "shared-catalog.conf").read_text()
    return re.sub(r"jdbc:postgresql://127\.0\.0\.1:\d+/", f"jdbc:postgresql://127.0.0.1:{port}/", text)


def new_catalog(name: str, port: int) -> OwnCatalog:
    """An empty folder `.lakeplan/<name>` (PostgreSQL's own user must reach it, not pytest's tmp) with the settings of
    a catalog on `port`, not started."""
    catalog = OwnCatalog(REPO / ".lakeplan" / name, port)
    catalog.remove()
    catalog.root.mkdir(parents=True)
    catalog.settings.write_text(settings_on_port(port))
    return catalog


@contextmanager
def own_catalog(name: str):
    """A catalog of its own (`new_catalog` on a free port), started; stopped and removed after."""
    catalog = new_catalog(name, free_port())
    try:
        started = catalog.script("up")
        assert started.returncode == 0, f"catalog.sh up failed:\n{started.stdout}{started.stderr}"
        yield catalog
    finally:
        catalog.remove()


def spark_sql(conf_dir: Path, *statements: str) -> list[list[dict]]:
    """Each statement's rows, from a Spark process of its own on the catalog of `conf_dir`."""
    done = subprocess.run([sys.executable, str(HERE / "spark_sql.py"), *statements], env=environment(conf_dir),
                          capture_output=True, text=True, timeout=900)
    rows = [line for line in done.stdout.splitlines() if line.startswith("ROWS ")]
    assert done.returncode == 0 and rows, f"spark_sql failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return json.loads(rows[-1][len("ROWS "):])


class SparkSql:
    """A Spark process of its own on the catalog of `conf_dir` that stays up (spark_sql.py --serve): a call runs
    statements and returns each one's rows, without a JVM start each."""

    def __init__(self, conf_dir: Path, log: Path):
        self.conf_dir, self.log = conf_dir, log
        self.process = subprocess.Popen([sys.executable, str(HERE / "spark_sql.py"), "--serve"], text=True,
                                        env=environment(conf_dir), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=log.open("w"))

    def __call__(self, *statements: str) -> list[list[dict]]:
        self.process.stdin.write(json.dumps(statements) + "\n")
        self.process.stdin.flush()
        for line in self.process.stdout:
            if line.startswith("ROWS "):
                return json.loads(line[len("ROWS "):])
        raise AssertionError(f"spark_sql failed on {statements}:\n{self.log.read_text()[-4000:]}")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=120)


def start_at_barrier(commands: list[list[str]], conf_dir: Path, barrier: Path, timeout: int = 900) -> list:
    """Starts every command (each error output into `<barrier>/<n>.log`), waits until each has touched
    `<barrier>/ready-<n>` (Spark started, catalog open); returns the running processes. One that ends first, the
    timeout or an interrupt stops every one of them before the failure is raised: the caller never gets them to
    stop (a Python process's Spark JVM ends with it: py4j's gateway exits when its parent's pipe closes)."""
    barrier.mkdir(parents=True, exist_ok=True)
    processes = []
    try:
        for n, command in enumerate(commands):
            processes.append(subprocess.Popen(command, env=environment(conf_dir), stdout=subprocess.PIPE, text=True,
                                              stderr=(barrier / f"{n}.log").open("w")))
        deadline = time.monotonic() + timeout
        while len(list(barrier.glob("ready-*"))) < len(commands):
            failed = [n for n, p in enumerate(processes) if p.poll() is not None]
            assert not failed and time.monotonic() < deadline, [errors(barrier, n) for n in failed]
            time.sleep(0.2)
    except BaseException:
        for process in processes:
            process.kill()
            process.wait()
        raise
    return processes


def errors(barrier: Path, n: int) -> str:
    """What process `n` said on its error output, without the Java stack."""
    said = (barrier / f"{n}.log").read_text().splitlines()
    return "\n".join(line for line in said if "Exception" in line or "Error" in line)[-3000:]


def release(processes: list, barrier: Path, case: str, wait: bool | None = None) -> dict[int, list[str]]:
    """Lets every process still running (not one the test killed) go on with `case` at once; returns the lines of
    each until it says `done <case>`. The first that ends before stops the others at once (`<barrier>/stop`, which
    writer.meet reads, so none waits for it at a round's barrier) and fails the test naming it, with its last lines;
    every later release then fails at once with that. run_dbt.py's runs wait for their moment (their delay after the
    release) where `wait`, by default where more than one process is released."""
    stop = barrier / "stop"
    if stop.exists():
        raise AssertionError(f"the writers stopped in an earlier case: {stop.read_text()}")
    running = {n: process for n, process in enumerate(processes) if process.poll() is None}
    staged = barrier / f".go-{case}"  # renamed into place: a process reads it whole or not at all
    staged.write_text(WAIT if (len(running) > 1 if wait is None else wait) else "")
    staged.rename(barrier / f"go-{case}")
    lines, said = {n: [] for n in running}, queue.Queue()
    for n, process in running.items():
        threading.Thread(target=forward, args=(n, process, f"done {case}", said), daemon=True).start()
    while len([n for n in lines if lines[n][-1:] == [f"done {case}"]]) < len(running):
        n, line = said.get()
        if line is None:
            stop.write_text(f"process {n} ended (code {running[n].wait()}) in {case}, before 'done {case}'; its "
                            "last lines:\n" + "\n".join(lines[n][-20:]) + f"\n{errors(barrier, n)}")
            raise AssertionError(stop.read_text())
        lines[n].append(line)
    return {n: said_lines[:-1] for n, said_lines in lines.items()}


def forward(n: int, process, last: str, said: queue.Queue) -> None:
    """Puts each line process `n` prints on `said` up to `last`; (n, None) when it ends first."""
    for line in process.stdout:
        said.put((n, line.strip()))
        if line.strip() == last:
            return
    said.put((n, None))


def with_settings(conf_dir: Path, folder: Path, settings: str) -> Path:
    """A copy of the settings folder with `settings` (Spark properties lines) overriding its own."""
    shutil.copytree(conf_dir, folder)
    with open(folder / "spark-defaults.conf", "a") as defaults:
        defaults.write(settings)
    return folder


def snapshot_chain(snapshots: list[dict]) -> list[dict]:
    """The table's snapshots from its first to its current one, following each snapshot's parent: one unbroken chain
    holds every snapshot the table has, so no commit was overwritten by another from the same base."""
    by_parent = {snapshot["parent_id"]: snapshot for snapshot in snapshots}
    chain, current = [], by_parent.get(None)
    while current is not None:
        chain.append(current)
        current = by_parent.get(current["snapshot_id"])
    return chain
