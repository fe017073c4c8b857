"""Benchmark: lakeplan's fixed work per write (issue 30), one set of macros against another, side by side.

Variant d of bench/small_updates.py (members read `lakeplan.new_rows`, `change_mode: auto`, maintenance) twice in one
Spark session, over the same inputs and batches: `new` with this checkout's macros, `old` with the macros of another
checkout (`--old-macros`, e.g. a worktree of main), in an order that turns each run; then e, the hand-written MERGE.
Per run and variant: dbt's wall time, the target's own time, the MERGE's time, the statements the write sent (from the
project's dbt log) and a checksum of the table (all three must hold the same rows).

  python bench/write_overhead.py --old-macros /path/to/main/macros [--keys 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import small_updates as su
from common import ROOT, WORK, spark_session
from common import write_project as write_project_files

MEMBERS = 10
CONFIG = {"unique_key": "k", "change_mode": "auto", "maintenance": su.MAINTENANCE}
# a statement in dbt's debug log: the node it ran for, its text, and Spark's time for it
STATEMENT = re.compile(r"On model\.lakeplan\.(\w+): /\*[^\n]*\*/\n(.*?)\n\S*\d\d:\d\d:\d\d\.\d+ \[debug\] \[[^]]*\]: "
                       r"SQL status: OK in ([\d.]+) seconds", re.S)


def first_clause(sql: str) -> str:
    """A statement's first line that is neither blank nor a comment (its settings header, its labels)."""
    return next((line.strip() for line in sql.splitlines() if line.strip() and not line.strip().startswith(("--", "/*"))), "")


def write_project(name: str, macros: Path) -> Path:
    """A project whose target `name` is d's, with `macros` as its lakeplan macros."""
    project = WORK / name
    project.mkdir(parents=True, exist_ok=True)
    if not (project / "macros").exists():
        (project / "macros").symlink_to(macros)
    columns = "\n".join(f"      - {{name: {n}, data_type: bigint}}" for n in ["k", *su.names(MEMBERS)])
    settings = ", ".join(f"{key}: {value}" for key, value in CONFIG.items())
    tables = ", ".join(f"{{name: src_{m:02d}}}" for m in range(MEMBERS))
    files = {
        "models/schema.yml": f"version: 2\nsources:\n  - name: bench\n    schema: {su.SCHEMA}\n    tables: [{tables}]\n"
        f"models:\n  - name: {name}\n    config: {{{settings}}}\n    columns:\n{columns}\n",
        f"models/{name}.sql": "{{ partial_update_target() }}\n",
        **{f"models/{name}_m{m:02d}.sql": su.member_sql(name, m, "new") for m in range(MEMBERS)},
    }  # fmt: skip
    return write_project_files(name, files)


def run(project: Path, name: str) -> dict:
    """One `dbt run --select name`: its times and the statements its write sent, read from the dbt log."""
    log = project / "logs" / "dbt.log"
    start = log.stat().st_size if log.exists() else 0
    wall, model = su.run_dbt(project, name)
    with log.open(errors="replace") as text:
        text.seek(start)
        sent = [(first_clause(sql), float(seconds)) for node, sql, seconds in STATEMENT.findall(text.read()) if node == name]
    merge = sum(seconds for sql, seconds in sent if sql.startswith("merge into"))
    return {"seconds": round(wall, 3), "model_seconds": round(model, 3), "merge_seconds": round(merge, 3),
            "statements": len(sent),
            "metadata_reads": sum(sql.startswith(("show tblproperties", "describe", "select")) for sql, _ in sent)}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old-macros", type=Path, required=True)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    spark = spark_session()
    projects = {"new": write_project("overhead_new", ROOT / "macros"),
                "old": write_project("overhead_old", args.old_macros.resolve())}
    from common import dbt

    su.create_inputs(spark, MEMBERS)
    su.append_batch(spark, MEMBERS, args.keys, 0, 1.0)
    su.create_handwritten(spark, MEMBERS)
    spark.sql(su.handwritten_merge(MEMBERS, 0))
    for variant, project in projects.items():
        dbt(project, "parse")
        su.run_dbt(project, f"overhead_{variant}", "--full-refresh")
    for batch in range(1, args.runs + 1):
        su.append_batch(spark, MEMBERS, args.keys, batch, 0.01)
        order = ["new", "old"] if batch % 2 else ["old", "new"]
        results = {variant: run(projects[variant], f"overhead_{variant}") for variant in order}
        results["e"] = su.run_variant(spark, None, MEMBERS, "e", batch, None)
        found = {variant: su.scan(spark, f"{su.SCHEMA}.overhead_{variant}", MEMBERS)[1] for variant in projects}
        found["e"] = su.scan(spark, f"{su.SCHEMA}.wide_e", MEMBERS)[1]
        same = found["new"] == found["old"] == found["e"]
        print(f"write_overhead run {batch}:", json.dumps({**results, "same_contents": same}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
