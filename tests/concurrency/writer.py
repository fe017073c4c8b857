"""One writer of the concurrency test (tests/integration/test_concurrent_commits.py), run as its own process with one
Spark for every case: it says it is ready once Spark and the catalog are open, then for each case the test releases
(a file `go-<case>` in the barrier folder, in any order) commits `commits` times and prints `done <case>`.

- a table name: one row per INSERT statement (one Iceberg commit each), row (writer, commit, writer * 1000 + commit);
- `target`: `dbt run` of the lakeplan target in the project folder, in this process on this Spark, until `commits`
  runs of this writer have landed; a run another run's commit beat stops with lakeplan's sentence and is run again.

    python writer.py <writer> <commits> <barrier folder> <project folder> <case> [<case> ...]
"""

import os
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

BEATEN = "was changed by the run of Spark application"  # lakeplan's sentence for a write another run's commit beat


def released(barrier: Path, cases: list[str]) -> str:
    """The first of `cases` the test has released (in any order: a test left out releases none)."""
    while True:
        for case in cases:
            if (barrier / f"go-{case}").exists():
                return case
        time.sleep(0.02)


def insert_rows(spark, table: str, writer: int, commits: int) -> None:
    for commit in range(commits):
        spark.sql(f"insert into {table} values ({writer}, {commit}, {writer * 1000 + commit})")
        print(f"committed {table} {writer} {commit}", flush=True)


def parsed(project: Path, writer: int) -> tuple:
    """The project parsed once, before the barrier, into this writer's own target folder; writer 0 then runs it
    once as writer 4 (one row, one commit), so the target exists before the writers race to create it."""
    from dbt.cli.main import dbtRunner

    own = ["--project-dir", str(project), "--target", "team", "--target-path", f"target-{writer}",
           "--log-path", str(project / f"logs-{writer}")]
    os.environ.update(WRITER=str(writer), COMMIT="0")
    manifest = dbtRunner().invoke(["parse", *own]).result
    if writer == 0:
        os.environ["WRITER"] = "4"
        assert dbtRunner(manifest=manifest).invoke(["run", *own]).success, "the run creating the target failed"
        os.environ["WRITER"] = "0"
    return manifest, own


def dbt_runs(manifest, own: list[str], writer: int, commits: int) -> None:
    """Each run compiles the target's member with this writer's WRITER and COMMIT (env_var): a landed run adds one
    commit and writer * 1000 + commit to the writer's row."""
    from dbt.cli.main import dbtRunner

    commit = 0
    while commit < commits:
        os.environ["COMMIT"] = str(commit)
        events: list = []
        result = dbtRunner(manifest=manifest, callbacks=[events.append]).invoke(["run", *own])
        said = "\n".join(event.info.msg for event in events)
        if result.success:
            print(f"committed target {writer} {commit}", flush=True)
            commit += 1
        elif BEATEN in said:
            print(f"beaten target {writer} {commit}", flush=True)
        else:
            raise SystemExit(f"dbt run of writer {writer} failed:\n{said[-4000:]}")


def main(writer: int, commits: int, barrier: Path, project: Path, cases: list[str]) -> None:
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    spark.sql("show databases").collect()  # the catalog open before the barrier
    manifest, own = parsed(project, writer) if "target" in cases else (None, [])
    (barrier / f"ready-{writer}").touch()
    while cases:
        case = released(barrier, cases)
        cases.remove(case)
        if case == "target":
            dbt_runs(manifest, own, writer, commits)
        else:
            insert_rows(spark, case, writer, commits)
        print(f"done {case}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:])
