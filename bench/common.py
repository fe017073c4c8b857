"""What every lakeplan benchmark shares: the Spark session, dbt runs in-process, physical-plan figures read
from Spark's own metrics, medians, and the recorded results (bench/results/<name>.json, .md, .png). Each runs in the
activated venv (`source .venv/bin/activate`, or `make bench BENCH=<name>`), whose environment names Spark's settings,
dbt's profiles and the example's data."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
# The benchmarks' projects; the tests give each benchmark a directory of its own (LAKEPLAN_BENCH_WORK), so that
# two of them can run at once, on two workers, without sharing a project's target/.
WORK = Path(os.environ.get("LAKEPLAN_BENCH_WORK", ROOT / "bench" / "work"))
RESULTS = ROOT / "bench" / "results"
SCHEMA = "lakeplan_bench"
sys.path.insert(0, str(ROOT))

from tests.spark_plans import exchanges  # noqa: E402  (the tests read plans the same way)


def arguments(doc: str, argv: list[str] | None, **sizes: tuple) -> argparse.Namespace:
    """A benchmark's options: each size as `--name` (default, value under --smoke), --repeats, and --smoke
    (tiny sizes, one repeat, nothing recorded: what the tests run)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, (default, _) in sizes.items():
        parser.add_argument(f"--{name}", type=type(default), default=default)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat, nothing recorded")
    args = parser.parse_args(argv)
    if "SPARK_CONF_DIR" not in os.environ:  # else Spark starts without Iceberg, and dbt looks for ~/.dbt's profiles
        raise SystemExit("lakeplan's benchmarks run in the activated venv: `source .venv/bin/activate` first, or run "
                         "`make bench BENCH=<name> BENCH_ARGS='...'`.")
    if args.smoke:
        for name, (_, smoke) in sizes.items():
            setattr(args, name, smoke)
        args.repeats = 1
    return args


def spark_session(spark=None):
    """The session a benchmark runs in (the caller's, as the tests give theirs, or this process's own), with the
    benchmarks' schema in it: a benchmark may create its inputs before any dbt run creates the schema, and on a fresh
    catalog (a new test worker's) nothing else has."""
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    spark.sql(f"create schema if not exists {SCHEMA}")
    return spark


def drop_table(spark, table: str) -> None:
    """`drop table if exists <table> purge` in a tenth of the time: Iceberg's purge finds the table's files with Spark
    jobs (2 s for a table of one file here); the benchmarks' warehouse is a local directory, removed with the table."""
    if not spark.catalog.tableExists(table):
        return
    location = spark.sql(f"describe table extended {table}").where("col_name = 'Location'").first().data_type
    spark.sql(f"drop table {table}")
    shutil.rmtree(urlparse(location).path, ignore_errors=True)


def machine(spark) -> dict:
    import dbt.version

    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "spark": spark.version, "dbt": dbt.version.__version__}  # fmt: skip


def write_project(name: str, files: dict[str, str], models: dict | None = None,
                  project_vars: dict | None = None) -> Path:
    """A dbt project under WORK/<name> (bench/work/<name>) with lakeplan's macros and `project_vars`; models in schema
    lakeplan_bench."""
    project = WORK / name
    for path, text in files.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    if not (project / "macros").exists():
        (project / "macros").symlink_to(ROOT / "macros")
    settings = {"+schema": "bench", "+file_format": "iceberg", **(models or {})}
    (project / "dbt_project.yml").write_text(
        "name: lakeplan\nversion: '1.0.0'\nconfig-version: 2\nprofile: lakeplan\n"
        f"models:\n  lakeplan: {json.dumps(settings)}\nvars: {json.dumps(project_vars or {})}\n"
    )
    return project


EXAMPLE = WORK / "example"
EXAMPLE_FILES = ("dbt_project.yml", "models", "seeds", "snapshots", "tests/singular")


def copy_example(project: Path = EXAMPLE) -> Path:
    """A copy of the repository's example project: the benchmark's builds write its target/ and logs/, never the
    repository's (where the tests or `make run` may build at the same time)."""
    for name in EXAMPLE_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, project / name, dirs_exist_ok=True)
        else:
            project.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, project / name)
    if not (project / "macros").exists():
        (project / "macros").symlink_to(ROOT / "macros")
    return project


@contextlib.contextmanager
def environment(**values: str):
    """Environment variables for the dbt runs (source location, schema), restored afterwards."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def dbt(project: Path, *args: str) -> float:
    """Runs dbt in-process (the benchmark's Spark session) and returns its wall time in seconds."""
    from dbt.cli.main import dbtRunner

    start = time.perf_counter()
    result = dbtRunner().invoke([*args, "--project-dir", str(project)])
    if not result.success:
        raise SystemExit(f"dbt {' '.join(args)} failed in {project}: {result.exception}")
    return time.perf_counter() - start


def _shuffle_bytes(node) -> int:
    """Bytes written by the shuffles of an executed plan (Spark's `shuffleBytesWritten` metric)."""
    name = node.getClass().getSimpleName()
    if name == "AdaptiveSparkPlanExec":
        return _shuffle_bytes(node.executedPlan())
    if name.endswith("QueryStageExec"):
        return _shuffle_bytes(node.plan())
    written = node.metrics().get("shuffleBytesWritten")
    total = written.get().value() if written.isDefined() else 0
    children = node.children()
    return total + sum(_shuffle_bytes(children.apply(i)) for i in range(children.size()))


def run_query(spark, sql: str) -> dict:
    """Executes a query to the end inside the JVM (no rows to Python) and reads what really ran: wall time,
    the final adaptive plan's Exchanges and the bytes its shuffles wrote."""
    execution = spark.sql(sql)._jdf.queryExecution()
    start = time.perf_counter()
    plan = execution.executedPlan()
    plan.execute().count()
    seconds = time.perf_counter() - start
    text = plan.toString()
    if "== Final Plan ==" in text:
        text = text.split("== Final Plan ==", 1)[1].split("== Initial Plan ==", 1)[0]
    return {"seconds": round(seconds, 3), "exchanges": len(exchanges(text)), "shuffle_bytes": _shuffle_bytes(plan)}


def medians(runs: list[dict], keys: tuple[str, ...], values: tuple[str, ...]) -> list[dict]:
    """One row per combination of `keys`: the median of each of `values` over the repeats."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault(tuple(run[k] for k in keys), []).append(run)
    return [
        {**dict(zip(keys, group)), **{v: statistics.median(r[v] for r in rows) for v in values}, "repeats": len(rows)}
        for group, rows in sorted(groups.items(), key=lambda item: tuple(map(str, item[0])))
    ]


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def record(name: str, result: dict, summary: str) -> None:
    """Writes bench/results/<name>.json (everything) and <name>.md (the summary table), and prints the table."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    (RESULTS / f"{name}.md").write_text(summary)
    print(summary)


def bar_chart(path: Path, title: str, ylabel: str, bars: dict[str, float], note: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    drawn = axis.bar(list(bars), list(bars.values()), color=["#4c72b0", "#dd8452", "#55a868", "#c44e52"][: len(bars)])
    axis.bar_label(drawn, fmt="%.2f")
    axis.set(ylabel=ylabel, title=title)
    if note:
        axis.set_xlabel(note)
    axis.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
