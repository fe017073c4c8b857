"""Benchmark: lakeplan's generated statements at a base revision and in the working tree, side by side.

The sink-reuse write (K = 10 members x 12 columns, initial load and update, with and without merge rules, as
bench/sink_reuse.py) and the changelog upsert (as bench/changelog_distribution.py) run in one JVM with the
macros of `--base` (taken with `git archive`) and of the working tree, alternately: A B, then B A, so a drift of
the machine's speed touches both alike. The figure per workload is the median of the per-pair ratios
head / base; the tables both sides leave are compared after every pair (they must hold the same rows).
Both sides run under the working tree's plugin, so the base must read the same plan: a revision before the planner
(2315d91) expects settings the plugin no longer hands its macros.

  .venv/bin/python bench/macros_ab.py --base 3d91392 [--keys 100000 1000000] [--changelog-keys 500000] [--pairs 3]
  --smoke: tiny sizes, one pair, nothing recorded (run by the tests)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from changelog_distribution import LAKEPLAN as UPSERT_MODEL
from changelog_distribution import SOURCES as CHANGELOG_SOURCES
from changelog_distribution import make_changes
from common import ROOT, SCHEMA, WORK, dbt, machine, markdown_table, record, spark_session
from common import write_project as write_project_files
from sink_reuse import write_project as write_sink_project


def base_macros(revision: str) -> Path:
    """The base revision's macros/ under bench/work/base-<commit>/macros (by commit: `HEAD` moves)."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", revision], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    target = WORK / f"base-{commit}"
    if not (target / "macros").exists():
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "-C", str(ROOT), "archive", revision, "macros"], stdout=archive, check=True)
            archive.seek(0)
            tarfile.open(fileobj=archive).extractall(target, filter="data")
    return target / "macros"


def contents(spark, table: str) -> tuple:
    """A table's rows as a count and an order-free checksum."""
    return tuple(spark.sql(f"select count(*), sum(xxhash64(*)) from {table}").first())


def sink_reuse_runs(spark, macros: Path, keys: int, rules: bool) -> dict[str, float]:
    project = write_sink_project(10, keys, rules=rules, macros=macros)
    initial = dbt(project, "run", "--vars", "{phase: 0}", "--full-refresh")
    update = dbt(project, "run", "--vars", "{phase: 1}")
    return {"initial": initial, "update": update, "contents": contents(spark, f"{SCHEMA}.wide")}


def changelog_runs(spark, macros: Path) -> dict[str, float]:
    project = write_project_files(f"changelog_{macros.parent.name}",
                                  {"models/sources.yml": CHANGELOG_SOURCES, "models/upsert_hash.sql": UPSERT_MODEL},
                                  macros=macros)  # fmt: skip
    initial = dbt(project, "run", "--full-refresh")
    again = dbt(project, "run")
    return {"initial": initial, "again": again, "contents": contents(spark, f"{SCHEMA}.upsert_hash")}


def main(argv: list[str] | None = None, spark=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the git revision to compare against")
    parser.add_argument("--keys", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--changelog-keys", type=int, default=500_000, help="x 4 versions")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.keys, args.changelog_keys, args.pairs = [200], 100, 1
    spark = spark or spark_session()
    sides = {"base": base_macros(args.base), "head": ROOT / "macros"}
    workloads = [(f"sink_reuse{' rules' if rules else ''} {keys:,} keys",
                  lambda macros, keys=keys, rules=rules: sink_reuse_runs(spark, macros, keys, rules))
                 for keys in args.keys for rules in (False, True)]  # fmt: skip
    make_changes(spark, args.changelog_keys, 4)
    workloads.append((f"changelog {args.changelog_keys * 4:,} rows", lambda macros: changelog_runs(spark, macros)))
    if not args.smoke:  # warm-up, not recorded: a JVM's first statements of a shape pay for JIT and codegen
        for side in sides.values():
            sink_reuse_runs(spark, side, 2000, False)
    runs = []
    for name, workload in workloads:
        for pair in range(args.pairs):
            order = ("base", "head") if pair % 2 == 0 else ("head", "base")
            measured = {side: workload(sides[side]) for side in order}
            same = measured["base"].pop("contents") == measured["head"].pop("contents")
            for phase in measured["base"]:
                runs.append({"workload": name, "phase": phase, "pair": pair, "same_rows": same,
                             "base": round(measured["base"][phase], 3), "head": round(measured["head"][phase], 3)})  # fmt: skip
    rows = summarize(runs)
    result = {"machine": machine(spark), "base": args.base, "runs": runs, "medians": rows}
    if not args.smoke:
        record("macros_ab", result, markdown_table(
            ["workload", "phase", "pairs", "base s (median)", "head s (median)", "head / base (median of pairs)",
             "same rows"], [[r["workload"], r["phase"], r["pairs"], r["base"], r["head"], f"{r['ratio']:.2f}x",
                             r["same_rows"]] for r in rows]))  # fmt: skip
    return result


def summarize(runs: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault((run["workload"], run["phase"]), []).append(run)
    return [{"workload": workload, "phase": phase, "pairs": len(group),
             "base": statistics.median(r["base"] for r in group), "head": statistics.median(r["head"] for r in group),
             "ratio": statistics.median(r["head"] / r["base"] for r in group),
             "same_rows": all(r["same_rows"] for r in group)}
            for (workload, phase), group in groups.items()]  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
