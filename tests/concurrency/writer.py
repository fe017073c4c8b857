"""One writer of the concurrency test (tests/integration/test_concurrent_commits.py), run as its own process with one
Spark for every case: it says it is ready once Spark and the catalog are open, then for each case the test releases
(a file `go-<case>` in the barrier folder, in any order) commits and prints `done <case>`.

- a table name: `commits` INSERT statements of one row each (one Iceberg commit each), row (writer, commit,
  writer * 1000 + commit);
- `target:<events>:<first round>:<rounds>`: per round, one event (writer, round, writer * 1000 + round) into the
  lakeplan target's input `<events>`, then, once every writer has added its own (a barrier per round), one `dbt run`
  of the target in the project folder, in this process on this Spark; it prints `landed target <writer> <round>`, or
  `beaten target <writer> <round>` for a run another run's commit beat (stopped with lakeplan's sentence alone).

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


def parsed(project: Path, name: str, reusing: str = "") -> tuple:
    """The project parsed once, before the barrier, into this process's own target and log folders (or, `reusing`
    the parse another process saved in its target folder, only checked: no full parse): the manifest every run of
    this process is given, and the arguments naming the folders."""
    from dbt.cli.main import dbtRunner

    own = ["--project-dir", str(project), "--target", "team", "--target-path", f"target-{name}",
           "--log-path", str(project / f"logs-{name}")]
    saved = ["--partial-parse-file-path", str(project / f"target-{reusing}" / "partial_parse.msgpack")]
    return dbtRunner().invoke(["parse", *own, *(saved if reusing else [])]).result, own


def parsed_once(project: Path, n: int, barrier: Path) -> tuple:
    """`parsed` by process 0 alone, the others reusing its parse (4 full parses at once on 2 cores were most of the
    writers' start)."""
    if n:
        reached(barrier, "parsed", 1)
        return parsed(project, str(n), reusing="0")
    manifest, own = parsed(project, "0")
    (barrier / "parsed-0").touch()
    return manifest, own


def created(project: Path, writer: int, barrier: Path) -> tuple:
    """The project `parsed_once`; writer 0 then runs it once (it consumes the event the test wrote first), so the
    target exists before the writers race to create it."""
    from dbt.cli.main import dbtRunner

    manifest, own = parsed_once(project, writer, barrier)
    if writer == 0:
        assert dbtRunner(manifest=manifest).invoke(["run", *own]).success, "the run creating the target failed"
    return manifest, own


def dbt_rounds(spark, manifest, own: list[str], writer: int, case: str, barrier: Path) -> None:
    """Each round's run reads the events not yet consumed (new_rows): one landed run of the round adds them to the
    target; a beaten one leaves them for a later run."""
    from dbt.cli.main import dbtRunner

    _, events, first, rounds = case.split(":")
    for round_ in range(int(first), int(first) + int(rounds)):
        spark.sql(f"insert into {events} values ({writer}, {round_}, {writer * 1000 + round_})")
        meet(barrier, f"round-{round_}")
        said: list = []
        result = dbtRunner(manifest=manifest, callbacks=[said.append]).invoke(["run", *own])
        text = "\n".join(event.info.msg for event in said if event.info.level != "debug")  # what dbt shows
        if result.success:
            print(f"landed target {writer} {round_}", flush=True)
        elif BEATEN in text and "\tat " not in text and "Traceback" not in text:
            print(f"beaten target {writer} {round_}", flush=True)
        else:
            raise SystemExit(f"dbt run of writer {writer} failed:\n{text[-4000:]}")


def meet(barrier: Path, name: str) -> None:
    """Waits until every writer (each touched `ready-<writer>`) has reached `name`."""
    (barrier / f"{name}-{os.getpid()}").touch()
    reached(barrier, name, len(list(barrier.glob("ready-*"))))


def reached(barrier: Path, name: str, writers: int, timeout: float = 600) -> None:
    """Waits until `writers` writers have touched `<name>-*`; stops at once when the test has seen a writer end
    (`stop`: that writer will never reach it)."""
    deadline = time.monotonic() + timeout
    while len(list(barrier.glob(f"{name}-*"))) < writers:
        if (barrier / "stop").exists():
            raise SystemExit(f"stopped at {name}: another writer ended")
        if time.monotonic() > deadline:
            raise SystemExit(f"not every writer reached {name} within {timeout} s")
        time.sleep(0.02)


def main(writer: int, commits: int, barrier: Path, project: Path, cases: list[str]) -> None:
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    spark.sql("show databases").collect()  # the catalog open before the barrier
    manifest, own = created(project, writer, barrier) if any(c.startswith("target:") for c in cases) else (None, [])
    (barrier / f"ready-{writer}").touch()
    while cases:
        case = released(barrier, cases)
        cases.remove(case)
        if case.startswith("target:"):
            dbt_rounds(spark, manifest, own, writer, case, barrier)
        else:
            insert_rows(spark, case, writer, commits)
        print(f"done {case}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:])
