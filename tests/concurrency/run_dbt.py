"""`dbt` commands on the `team` target in a process of its own, started with others at a barrier
(harness.start_at_barrier): it opens Spark and the catalog and parses the project once (process 0 in full, the
others reusing its parse, as writer.py's writers do), says it is ready, then runs
each case's command when the test releases that case (harness.release), given that one parse, and prints `exit 0`
(or 1) and `done <case>` after dbt's own output. Each run's first statement waits until <delay> seconds after the
release (the project's pre-hook reads that moment), so the writes of runs released together overlap however long
each took to begin (where the test released more than this process).

A case `<case>=sql <statement>` runs the statement on another session of this process's Spark (one application, as
every client of the Thrift Server is), in a thread of its own: the test releases it (`go-<case>`) while a dbt command
of this process waits, and reads `done-<case>` (`ok`, or the error). It takes no Hive lock: the test holds back the
waiting command's commit under it (test_same_application's UnlockGate).

    python run_dbt.py <n> <project folder> <barrier folder> <delay> <case>=<dbt command> [<case>=<dbt command> ...]
"""

import os
import sys
import threading
from pathlib import Path

from pyspark.sql import SparkSession

from harness import WAIT
from writer import parsed_once, released

BARRIER_VALUE = "LAKEPLAN_TEST_BARRIER"  # what the pre-hook waits for: tests/conftest.py's env_value('barrier', 0)


def run(manifest, own: list[str], command: str, go: Path, delay: float) -> None:
    from dbt.cli.main import dbtRunner

    waits = go.read_text() == WAIT  # by default a process released alone does not (harness.release)
    os.environ[BARRIER_VALUE] = str(int((go.stat().st_mtime + (delay if waits else 0)) * 1000))
    result = dbtRunner(manifest=manifest).invoke([*command.split(), *own])
    print(f"exit {int(not result.success)}", flush=True)


def other_session(spark, barrier: Path, case: str, statement: str) -> None:
    """Runs `statement` on a new session of this application once `case` is released; says how in done-<case>."""
    session = spark.newSession()  # its catalog is its own, made on first use with these settings
    session.conf.set("spark.sql.catalog.spark_catalog.hadoop.iceberg.engine.hive.lock-enabled", "false")
    released(barrier, [case])
    try:
        session.sql(statement).collect()
        said = "ok"
    except Exception as error:  # the test shows it
        said = str(error)[-3000:]
    (barrier / f"done-{case}").write_text(said)


def main(n: int, project: Path, barrier: Path, delay: float, cases: list[str]) -> None:
    commands = dict(case.split("=", 1) for case in cases)
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    spark.sql("show databases").collect()  # open before the barrier
    (barrier / f"application-{n}").write_text(spark.sparkContext.applicationId)  # the sentences name it
    for case in [case for case, command in commands.items() if command.startswith("sql ")]:
        threading.Thread(target=other_session, args=(spark, barrier, case, commands.pop(case)[4:]),
                         daemon=True).start()
    manifest, own = parsed_once(project, n, barrier)
    (barrier / f"ready-{n}").touch()
    while commands:
        case = released(barrier, list(commands))
        run(manifest, own, commands.pop(case), barrier / f"go-{case}", delay)
        print(f"done {case}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]), sys.argv[5:])
