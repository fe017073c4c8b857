"""`dbt` commands on the `team` target in a process of its own, started with others at a barrier
(harness.start_at_barrier): it opens Spark and the catalog and parses the project once (process 0 in full, the
others reusing its parse, as writer.py's writers do), says it is ready, then runs
each case's command when the test releases that case (harness.release), given that one parse, and prints `exit 0`
(or 1) and `done <case>` after dbt's own output. Each run's first statement waits until <delay> seconds after the
release (the project's pre-hook reads that moment), so the writes of runs released together overlap however long
each took to begin.

    python run_dbt.py <n> <project folder> <barrier folder> <delay> <case>=<dbt command> [<case>=<dbt command> ...]
"""

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from writer import parsed_once, released

BARRIER_VALUE = "LAKEPLAN_TEST_BARRIER"  # what the pre-hook waits for: tests/conftest.py's env_value('barrier', 0)


def run(manifest, own: list[str], command: str, go: Path, delay: float) -> None:
    from dbt.cli.main import dbtRunner

    os.environ[BARRIER_VALUE] = str(int((go.stat().st_mtime + delay) * 1000))
    result = dbtRunner(manifest=manifest).invoke([*command.split(), *own])
    print(f"exit {int(not result.success)}", flush=True)


def main(n: int, project: Path, barrier: Path, delay: float, cases: list[str]) -> None:
    commands = dict(case.split("=", 1) for case in cases)
    SparkSession.builder.enableHiveSupport().getOrCreate().sql("show databases").collect()  # open before the barrier
    manifest, own = parsed_once(project, n, barrier)
    (barrier / f"ready-{n}").touch()
    while commands:
        case = released(barrier, list(commands))
        run(manifest, own, commands.pop(case), barrier / f"go-{case}", delay)
        print(f"done {case}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]), sys.argv[5:])
