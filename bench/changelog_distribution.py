"""Benchmark: a changelog source hash-distributed on its primary key (lakeplan) against round-robin.

A changelog of KEYS keys x VERSIONS versions (+I, then +U) is an Iceberg table. Two dbt models apply it to a
table, in the same run:
  lakeplan     the `upsert` materialization over `scan_source` (scan_parallelism 4, hashed on the key), one MERGE
  round_robin  what a user writes with stock dbt-spark: an incremental merge model whose source is spread
               round-robin (REPARTITION(4)) and deduplicated with row_number() over the key
Figures: `dbt run` wall time of each model (full load, then the same changes again), and the Exchanges and
shuffle bytes of the query that feeds each MERGE (read from Spark's executed plan).

  python bench/changelog_distribution.py [--keys 1000000] [--versions 4] [--repeats 3] | --smoke
"""

from __future__ import annotations

import sys

from common import (
    RESULTS,
    SCHEMA,
    WORK,
    arguments,
    bar_chart,
    dbt,
    machine,
    markdown_table,
    medians,
    record,
    run_query,
    spark_session,
    write_project,
)

SOURCES = f"""version: 2
sources:
  - name: cdc
    schema: {SCHEMA}
    tables:
      - name: changes
        meta: {{scan_parallelism: 4, changelog_mode: upsert, primary_key: [k], sequence_by: seq, op_column: op}}
"""
LAKEPLAN = """{{ config(materialized='upsert', unique_key='k', sequence_by='seq', op_column='op') }}
select k, op, seq, v, label from {{ scan_source('cdc', 'changes') }}
"""
ROUND_ROBIN = """{{ config(materialized='incremental', incremental_strategy='merge', unique_key='k') }}
select k, seq, v, label
from (
    select *, row_number() over (partition by k order by seq desc) as version_rank
    from (select /*+ REPARTITION(4) */ * from {{ source('cdc', 'changes') }}) as spread
) as ranked
where version_rank = 1
"""


def make_changes(spark, keys: int, versions: int) -> None:
    spark.sql(
        f"create or replace table {SCHEMA}.changes using iceberg as "
        f"select id % {keys} as k, case when id < {keys} then '+I' else '+U' end as op, id div {keys} as seq, "
        f"id * 7 as v, concat('label ', id) as label from range(0, {keys * versions})"
    )


MODELS = {"lakeplan": "upsert_hash", "round_robin": "merge_round_robin"}  # variant -> model


def feeding_query(variant: str) -> str:
    """The query each MERGE reads: lakeplan stages it as a temp view; the stock model's is its compiled SQL."""
    if variant == "lakeplan":
        return f"select * from {MODELS[variant]}__lakeplan_changes"
    return (WORK / "changelog" / "target" / "compiled" / "lakeplan" / "models" / f"{MODELS[variant]}.sql").read_text()


def main(argv: list[str] | None = None, spark=None) -> dict:
    args = arguments(__doc__, argv, keys=(1_000_000, 500), versions=(4, 2))
    spark = spark_session(spark)
    make_changes(spark, args.keys, args.versions)
    project = write_project("changelog", {"models/sources.yml": SOURCES, "models/upsert_hash.sql": LAKEPLAN,
                                          "models/merge_round_robin.sql": ROUND_ROBIN})  # fmt: skip
    for model in [] if args.smoke else MODELS.values():  # warm-up, not recorded: a JVM's first runs pay for its JIT
        dbt(project, "run", "--select", model, "--full-refresh")
    runs = []
    for repeat in range(args.repeats):
        for variant, model in MODELS.items():
            for phase, flags in (("initial", ["--full-refresh"]), ("again", [])):
                seconds = dbt(project, "run", "--select", model, *flags)
                plan = run_query(spark, feeding_query(variant))
                runs.append({"variant": variant, "phase": phase, "repeat": repeat, "seconds": round(seconds, 3),
                             "exchanges": plan["exchanges"], "shuffle_bytes": plan["shuffle_bytes"]})  # fmt: skip
    same = spark.sql(f"select k, v, label from {SCHEMA}.upsert_hash except all select k, v, label from {SCHEMA}.merge_round_robin").count()
    rows = medians(runs, ("variant", "phase"), ("seconds", "exchanges", "shuffle_bytes"))
    result = {"machine": machine(spark), "keys": args.keys, "versions": args.versions, "rows": args.keys * args.versions,
              "tables_differ_in_rows": same, "runs": runs, "medians": rows}  # fmt: skip
    if not args.smoke:
        by = {(r["variant"], r["phase"]): r for r in rows}
        table = [
            [phase, f"{args.keys * args.versions:,}", by[("lakeplan", phase)]["exchanges"], by[("round_robin", phase)]["exchanges"],
             f"{by[('lakeplan', phase)]['shuffle_bytes'] / 2**20:.1f}", f"{by[('round_robin', phase)]['shuffle_bytes'] / 2**20:.1f}",
             f"{by[('lakeplan', phase)]['seconds']:.1f}", f"{by[('round_robin', phase)]['seconds']:.1f}",
             f"{by[('round_robin', phase)]['seconds'] / by[('lakeplan', phase)]['seconds']:.2f}x"]
            for phase in ("initial", "again")
        ]  # fmt: skip
        record("changelog_distribution", result, markdown_table(
            ["phase", "changelog rows", "Exchanges hash", "Exchanges round-robin", "shuffle MiB hash",
             "shuffle MiB round-robin", "hash s", "round-robin s", "round-robin / hash"], table))  # fmt: skip
        bar_chart(RESULTS / "changelog_distribution.png", f"Changelog upsert, {args.keys * args.versions:,} rows (median dbt run s)",
                  "seconds", {f"{v} {p}": by[(v, p)]["seconds"] for p in ("initial", "again") for v in ("lakeplan", "round_robin")})  # fmt: skip
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
