"""Benchmark: `lakeplan explain` of the whole example against what it saves a user doing by hand, `dbt compile` of
the example plus Spark's EXPLAIN of the same statements (issue 31: explain within 1.5x of that).

  explain  `lakeplan explain --no-progress` of the example (cli.main in this process: dbt's parse and compile,
           lakeplan's macro per model, Spark's EXPLAIN of each statement, the terminal table, JSON and HTML)
  floor    `dbt compile` of the example, then each statement explain's report lists, in the same Spark session
           and order: the temporary views created, every other statement planned with `EXPLAIN` under its own
           Spark settings, nothing sent that explain does not send
Both in this process (one JVM, the session dbt-spark uses), after one unrecorded round of each, alternating
(explain, floor, then floor, explain, ...) so a load on the machine meets both. The example is built first
(seeds, models and the snapshot of SF 0.01 in schema lakeplan_explain_bench) so that its stateful models have
tables, as when a user explains a change: upserts plan their MERGE, every state check reads its table. The smoke test
gives `main` a copy of the example built already instead (`project`, `built_schema`: the TPC-H benchmark's build), so
the example is built once.

  python bench/explain.py [--repeats 3] | --smoke
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, arguments, dbt, environment, exchanges, machine, markdown_table, medians, record, spark_session
from dbt_lakeplan import cli, explain
from dbt_lakeplan.explain_dbt import _session_options  # explain's own way of applying a statement's settings

SCHEMA = "lakeplan_explain_bench"


def run_explain(project: Path) -> tuple[float, dict]:
    """`lakeplan explain` of the whole example: its wall time and its report."""
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["explain", "--no-progress", "--project-dir", str(project)])
    seconds = time.perf_counter() - start
    report = json.loads((project / "target" / "lakeplan_explain.json").read_text())
    if code != 0:
        raise SystemExit(f"lakeplan explain exited with {code}: {report['errors']}")
    return seconds, report


def sent(report: dict) -> list[explain.Statement]:
    """The statements explain sent to Spark, in its order: temp views run, the rest planned."""
    return [explain.statement(s["sql"]) for model in report["models"] for s in model["statements"] if s["action"] != "skip"]


def run_floor(spark, statements: list[explain.Statement], project: Path) -> dict:
    """`dbt compile` of the example, then Spark's planning of the statements; seconds of each and the Exchanges of
    each plan."""
    compile_seconds = dbt(project, "compile", "--log-level", "none")
    plans, start = [], time.perf_counter()
    for one in statements:
        with _session_options(spark, one.options):
            if one.action == "run":
                spark.sql(one.sql)
            else:
                plans.append(spark.sql("EXPLAIN " + one.sql).collect()[0][0])
    planning_seconds = time.perf_counter() - start
    return {"compile": compile_seconds, "planning": planning_seconds, "exchanges": [len(exchanges(p)) for p in plans]}


def floor_run(floor: dict, repeat: int) -> dict:
    return {"variant": "floor", "repeat": repeat, "seconds": floor["compile"] + floor["planning"],
            "compile_seconds": floor["compile"], "planning_seconds": floor["planning"]}


def revision() -> str:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    return head.stdout.strip() + (" + uncommitted changes" if dirty else "")


def main(argv: list[str] | None = None, spark=None, built_schema: str | None = None, project: Path = ROOT) -> dict:
    """`project`: the example explained, this repository's or a copy; `built_schema`: the schema where this process
    built that project already (the tests: the TPC-H benchmark's build of its copy): explain reads its tables instead
    of building the example again."""
    args = arguments(__doc__, argv)
    data = ROOT / ".lakeplan" / "data" / "tpch" / "sf0.01"
    subprocess.run([str(ROOT / "scripts" / "tpch_data.sh"), "0.01", str(data)], check=True)
    spark = spark_session(spark)
    load_before = os.getloadavg()
    runs = []
    with environment(LAKEPLAN_TPCH_DIR=str(data), LAKEPLAN_SCHEMA=built_schema or SCHEMA):
        if not built_schema:
            dbt(project, "build", "--exclude-resource-type", "test")
        seconds, report = run_explain(project)  # the first round; its report names the statements the floor plans
        statements = sent(report)
        floor = run_floor(spark, statements, project)
        if args.smoke:  # the first round is the only one: the figures are not what the smoke checks
            runs = [{"variant": "explain", "repeat": 0, "seconds": seconds}, floor_run(floor, 0)]
        for repeat in range(0 if args.smoke else args.repeats):  # else the first round is a warm-up, unrecorded
            for variant in ("explain", "floor") if repeat % 2 == 0 else ("floor", "explain"):
                if variant == "explain":
                    seconds, report = run_explain(project)
                    runs.append({"variant": "explain", "repeat": repeat, "seconds": seconds})
                else:
                    floor = run_floor(spark, statements, project)
                    runs.append(floor_run(floor, repeat))
    explained = [s for m in report["models"] for s in m["statements"] if s["action"] == "plan"]
    rows = medians(runs, ("variant",), ("seconds",))
    by = {r["variant"]: r["seconds"] for r in rows}
    parts = medians([r for r in runs if r["variant"] == "floor"], ("variant",), ("compile_seconds", "planning_seconds"))[0]
    result = {
        "machine": {**machine(spark), "load_before": load_before, "load_after": os.getloadavg()},
        "revision": revision(), "command": "python bench/explain.py " + " ".join(argv or []),
        "models": len(report["models"]), "statements_sent": len(statements), "statements_planned": len(explained),
        "exchanges_explain": [len(exchanges(s["plan"])) for s in explained], "exchanges_floor": floor["exchanges"],
        "runs": runs, "medians": rows, "floor_parts": parts, "ratio": by["explain"] / by["floor"],
    }  # fmt: skip
    if not args.smoke:
        record("explain", result, markdown_table(
            ["models", "statements planned (+ temp views)", "lakeplan explain s", "dbt compile s", "Spark EXPLAIN s",
             "floor s", "explain / floor"],
            [[result["models"], f"{len(explained)} (+{len(statements) - len(explained)})", f"{by['explain']:.2f}",
              f"{parts['compile_seconds']:.2f}", f"{parts['planning_seconds']:.2f}", f"{by['floor']:.2f}",
              f"{result['ratio']:.2f}x"]]))  # fmt: skip
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
