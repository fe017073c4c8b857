"""Benchmark: the shared catalog (target `team`: a Hive metastore in PostgreSQL, Iceberg's Hive locks on) against the
embedded one (target `local`: Derby, locks off), side by side in one run (issue 46's target: at most 1.1x).

Each repeat runs both catalogs, in an order that turns each repeat, each in a fresh Python process of its own (a
Spark started on that catalog's settings, then timed in-process, the JVM start excluded):
  build         `dbt build` of the example (the project at the repository root), as `make run` does
  small update  a partial-update target of --keys rows written once, then --updates runs each changing 0.1% of the
                keys (one lakeplan MERGE per run); the median run
Needs `make catalog-up`; the embedded catalog is one of its own under bench/work/.

  python bench/shared_catalog.py [--keys 100000] [--updates 5] [--repeats 3] | --smoke
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from common import ROOT, WORK, arguments, markdown_table, record, write_project

# the embedded catalog a home of its own (its own Derby, so a test session on .lakeplan/ does not hold it); the shared
# one `make catalog-up`'s, under .lakeplan/ (the team target's settings folder is $LAKEPLAN_HOME/catalog/spark-conf)
HOMES = {"embedded": WORK / "embedded_home", "shared": ROOT / ".lakeplan"}
CATALOGS = {"embedded": HOMES["embedded"] / "spark-conf", "shared": HOMES["shared"] / "catalog" / "spark-conf"}
TARGETS = {"embedded": "local", "shared": "team"}
SMALL_UPDATE = {  # the target's one member: every key once, then 0.1% of them with a new value per round
    "models/updated.yml": "version: 2\nmodels:\n  - name: updated\n    config: {unique_key: k}\n    columns:\n"
                          "      - {name: k, data_type: bigint}\n      - {name: v, data_type: bigint}\n",
    "models/updated.sql": "{{ partial_update_target() }}",
    "models/changes.sql": "{{ config(partial_update_target='updated') }}\n"
                          "select id as k, {{ var('round') }} as v from range({{ var('keys') }})\n"
                          "where {{ var('round') }} = 0 or id % 1000 = {{ var('round') }}",
}

# Runs in a child process with SPARK_CONF_DIR set to the catalog's settings: Spark first, then the timed dbt runs.
WORKER = """
import json, os, statistics, sys, time
from pyspark.sql import SparkSession
from dbt.cli.main import dbtRunner
SparkSession.builder.enableHiveSupport().getOrCreate().sql("show databases").collect()
target, project, keys, updates = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def dbt(*args):
    start = time.perf_counter()
    result = dbtRunner().invoke([*args, "--target", target])
    assert result.success, f"dbt {args} failed: {result.exception}"
    return time.perf_counter() - start
build = dbt("build", "--project-dir", os.environ["LAKEPLAN_ROOT"])
runs = [dbt("run", "--project-dir", project, "--full-refresh", "--vars", json.dumps({"round": 0, "keys": keys}))]
runs += [dbt("run", "--project-dir", project, "--vars", json.dumps({"round": r, "keys": keys}))
         for r in range(1, updates + 1)]
print("RESULT " + json.dumps({"build": build, "small_update": statistics.median(runs[1:])}))
"""


def measure(catalog: str, project, keys: int, updates: int) -> dict:
    env = {**os.environ, "SPARK_CONF_DIR": str(CATALOGS[catalog]), "LAKEPLAN_ROOT": str(ROOT),
           "LAKEPLAN_HOME": str(HOMES[catalog])}
    done = subprocess.run([sys.executable, "-c", WORKER, TARGETS[catalog], str(project), str(keys), str(updates)],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the {catalog} catalog's run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return {"catalog": catalog, **json.loads(lines[-1][len("RESULT "):])}


def main(argv: list[str] | None = None) -> dict:
    args = arguments(__doc__, argv, keys=(100_000, 2_000), updates=(5, 1))
    if subprocess.run([str(ROOT / "scripts" / "catalog.sh"), "status"]).returncode != 0:
        raise SystemExit("the shared catalog is not running: run `make catalog-up` first.")
    subprocess.run(["lakeplan", "setup-spark", "--conf-only", "--home", str(HOMES["embedded"])], check=True,
                   capture_output=True)
    project = write_project("shared_catalog", SMALL_UPDATE)
    runs = []
    for repeat in range(args.repeats):
        order = ["embedded", "shared"] if repeat % 2 == 0 else ["shared", "embedded"]
        runs += [{"repeat": repeat, **measure(catalog, project, args.keys, args.updates)} for catalog in order]
    median = {catalog: {figure: statistics.median(run[figure] for run in runs if run["catalog"] == catalog)
                        for figure in ("build", "small_update")} for catalog in CATALOGS}
    rows = [[figure, f"{median['embedded'][figure]:.2f}", f"{median['shared'][figure]:.2f}",
             f"{median['shared'][figure] / median['embedded'][figure]:.2f}x"] for figure in ("build", "small_update")]
    command = "make catalog-up && python bench/shared_catalog.py " + " ".join(argv or sys.argv[1:])
    summary = (f"Shared vs embedded catalog (median of {args.repeats} repeats, seconds; {args.keys} keys, "
               f"{args.updates} small updates per repeat)\n\n"
               + markdown_table(["figure", "embedded (local)", "shared (team)", "shared / embedded"], rows)
               + f"\nCommand: `{command.strip()}`\n")
    if not args.smoke:
        record("shared_catalog", {"runs": runs, "median": median, "command": command}, summary)
    else:
        print(summary)
    return {"runs": runs, "median": median}


if __name__ == "__main__":
    main()
