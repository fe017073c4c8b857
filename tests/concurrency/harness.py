"""Processes started together at a barrier, each with its own Spark, on one catalog: the concurrency tests' harness.
Each process touches `<barrier>/ready-<n>` once its Spark and catalog are open and then waits for `<barrier>/go`, so
the commits overlap instead of queueing behind JVM starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
LOCKS_OFF = "spark.hadoop.iceberg.engine.hive.lock-enabled false\n"


def environment(conf_dir: Path) -> dict[str, str]:
    return {**os.environ, "SPARK_CONF_DIR": str(conf_dir)}


def spark_sql(conf_dir: Path, *statements: str) -> list[list[dict]]:
    """Each statement's rows, from a Spark process of its own on the catalog of `conf_dir`."""
    done = subprocess.run([sys.executable, str(HERE / "spark_sql.py"), *statements], env=environment(conf_dir),
                          capture_output=True, text=True, timeout=900)
    rows = [line for line in done.stdout.splitlines() if line.startswith("ROWS ")]
    assert done.returncode == 0 and rows, f"spark_sql failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return json.loads(rows[-1][len("ROWS "):])


def start_at_barrier(commands: list[list[str]], conf_dir: Path, barrier: Path, timeout: int = 900) -> list:
    """Starts every command (its last argument is the barrier folder), waits until all are ready, lets them go
    together; returns the running processes."""
    barrier.mkdir(parents=True, exist_ok=True)
    processes = [subprocess.Popen(command, env=environment(conf_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for command in commands]
    deadline = time.monotonic() + timeout
    while len(list(barrier.glob("ready-*"))) < len(commands):
        failed = [p for p in processes if p.poll() not in (None, 0)]
        assert not failed and time.monotonic() < deadline, [p.communicate() for p in failed]
        time.sleep(0.2)
    (barrier / "go").touch()
    return processes


def finished(processes: list, timeout: int = 1800) -> list[tuple[int, str, str]]:
    """Each process's return code, output and error output once it ends."""
    return [(p.wait(timeout=timeout), *p.communicate()) for p in processes]


def failures(results: list[tuple[int, str, str]]) -> list[str]:
    """What each process that failed said: its error lines without the Java stack."""
    return ["\n".join(line for line in err.splitlines() if "Exception" in line or "Error" in line)[-3000:]
            for code, _, err in results if code != 0]


def with_settings(conf_dir: Path, folder: Path, settings: str) -> Path:
    """A copy of the settings folder with `settings` (Spark properties lines) overriding its own."""
    shutil.copytree(conf_dir, folder)
    with open(folder / "spark-defaults.conf", "a") as defaults:
        defaults.write(settings)
    return folder


def without_locks(conf_dir: Path, folder: Path) -> Path:
    """A copy of the settings folder with Iceberg's Hive locks off (today's embedded settings): the negative control."""
    return with_settings(conf_dir, folder, LOCKS_OFF)


def snapshot_chain(snapshots: list[dict]) -> list[dict]:
    """The table's snapshots from its first to its current one, following each snapshot's parent: one unbroken chain
    holds every snapshot the table has, so no commit was overwritten by another from the same base."""
    by_parent = {snapshot["parent_id"]: snapshot for snapshot in snapshots}
    chain, current = [], by_parent.get(None)
    while current is not None:
        chain.append(current)
        current = by_parent.get(current["snapshot_id"])
    return chain
