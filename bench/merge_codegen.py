"""Benchmark: Spark's whole-stage code generation in lakeplan's MERGE, on and off, side by side (issue 30).

lakeplan runs a merge-on-read MERGE without whole-stage code generation (macros/utils/session_options.sql). This
measures why. The MERGE that variant d of bench/small_updates.py sends for a change of `--change` of the keys
(members read only what is new, merge-on-read) and the one variant a sends (every key recomputed, copy-on-write)
are taken from dbt's log and replayed in the benchmark's Spark session with `spark.sql.codegen.wholeStage` true and
false in turn, on the same table and the same change (replaying a change leaves the same rows: every column is
last_non_null). Per statement and setting: the MERGE's seconds in each repeat, and the median.

  python bench/merge_codegen.py [--keys 1000000] [--change 0.01] [--repeats 3] [--full-repeats 1]
"""

from __future__ import annotations

import argparse
import re
import sys
import time

import small_updates as su
from common import RESULTS, bar_chart, dbt, machine, markdown_table, record, spark_session
from write_overhead import STATEMENT

MEMBERS = 10
SETTING = "spark.sql.codegen.wholeStage"
LOG_LINE = re.compile(r"\S*\d\d:\d\d:\d\d\.\d+ \[debug\]")


def logged_merge(spark, project, target: str) -> str:
    """The MERGE of the last `dbt run` of `target`, after re-creating the views it reads (members, changelogs)."""
    log = (project / "logs" / "dbt.log").read_text()
    merge = None
    for node, sql, _ in STATEMENT.findall(log[log.rfind("Running with dbt="):]):
        body = "\n".join(line for line in sql.splitlines()  # no comments, no log line between text and status
                         if not line.strip().startswith("--") and not LOG_LINE.match(line))
        if node != target:
            continue
        if body.lstrip().startswith(("create or replace temporary view", "call system.create_changelog_view")):
            spark.sql(body)
        elif body.lstrip().startswith("merge into"):
            merge = body
    if merge is None:
        raise SystemExit(f"no MERGE of {target} in {project}/logs/dbt.log")
    return merge


def replay(spark, merge: str, repeats: int) -> dict[str, list[float]]:
    """The MERGE's seconds with code generation on and off, in an order that turns each repeat."""
    seconds: dict[str, list[float]] = {"true": [], "false": []}
    for repeat in range(repeats):
        for setting in ("true", "false") if repeat % 2 == 0 else ("false", "true"):
            spark.conf.set(SETTING, setting)
            start = time.perf_counter()
            spark.sql(merge)
            seconds[setting].append(round(time.perf_counter() - start, 3))
    spark.conf.unset(SETTING)
    return seconds


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--change", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=3, help="replays of d's MERGE per setting")
    parser.add_argument("--full-repeats", type=int, default=1, help="replays of a's MERGE per setting")
    parser.add_argument("--record-as", default="merge_codegen")
    args = parser.parse_args(argv)
    spark = spark_session()
    project = su.write_project(MEMBERS)
    dbt(project, "parse")
    su.create_inputs(spark, MEMBERS)
    su.append_batch(spark, MEMBERS, args.keys, 0, 1.0)
    for variant in "da":
        su.run_dbt(project, su.TARGETS[variant][0], "--full-refresh")
    changed = su.append_batch(spark, MEMBERS, args.keys, 1, args.change)
    runs = []
    for variant, repeats in (("d", args.repeats), ("a", args.full_repeats)):
        target = su.TARGETS[variant][0]
        su.run_dbt(project, target)
        seconds = replay(spark, logged_merge(spark, project, target), repeats)
        runs += [{"variant": variant, "wholestage_codegen": setting == "true", "seconds": values,
                  "median": su.median(values)} for setting, values in seconds.items()]  # fmt: skip
        print("merge_codegen:", runs[-2:], flush=True)
    result = {"machine": machine(spark), "keys": args.keys, "changed_keys": changed, "runs": runs}
    rows = [[run["variant"], "on" if run["wholestage_codegen"] else "off", ", ".join(map(str, run["seconds"])),
             run["median"]] for run in runs]  # fmt: skip
    summary = (f"{args.keys} keys, K = {MEMBERS} x {su.COLUMNS} columns, {changed} keys changed; d: members read what "
               "is new, merge-on-read; a: every key recomputed, copy-on-write.\n\n"
               + markdown_table(["MERGE of", "whole-stage codegen", "seconds", "median"], rows))
    record(args.record_as, result, summary)
    bar_chart(RESULTS / f"{args.record_as}.png", "A MERGE with whole-stage code generation on and off", "seconds (median)",
              {f"{run['variant']} {'on' if run['wholestage_codegen'] else 'off'}": run["median"] for run in runs})
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
