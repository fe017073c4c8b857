"""Benchmark: pre-keyed data (lakeplan `keyed_by`) against the same data unbucketed.

dbt builds a fact table (ROWS rows over KEYS keys) and a dimension (KEYS rows) twice: keyed (`keyed_by: k`,
`key_groups: 8`: Iceberg tables bucketed on k) and plain. Then, in the same Spark session, a GROUP BY on k and a
JOIN on k run to the end over each pair. Figures per query: wall time, Exchanges in the final plan, bytes the
shuffles wrote (Spark's metrics).

  python bench/prekeyed.py [--rows 20000000] [--keys 2000000] [--repeats 3] | --smoke
"""

from __future__ import annotations

import sys

from common import (
    RESULTS,
    SCHEMA,
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

QUERIES = {
    "group_by": "select k, count(*) as n, sum(v) as total from {schema}.facts_{layout} group by k",
    "join": "select f.k, f.v, d.name from {schema}.facts_{layout} as f join {schema}.dim_{layout} as d on f.k = d.k",
}


def build(rows: int, keys: int) -> float:
    keyed = "{{ config(materialized='table', keyed_by='k', key_groups=8) }}\n"
    plain = "{{ config(materialized='table') }}\n"
    facts = f"select id % {keys} as k, id as v from range(0, {rows})"
    dim = f"select id as k, concat('name ', id) as name from range(0, {keys})"
    project = write_project("prekeyed", {
        "models/facts_keyed.sql": keyed + facts, "models/facts_plain.sql": plain + facts,
        "models/dim_keyed.sql": keyed + dim, "models/dim_plain.sql": plain + dim,
    })  # fmt: skip
    return dbt(project, "run")


def summary(result: dict) -> str:
    by = {(r["query"], r["layout"]): r for r in result["medians"]}

    def cell(query: str, layout: str, figure: str) -> float:
        return by[(query, layout)][figure]

    return markdown_table(
        ["query", "rows", "Exchanges keyed", "Exchanges plain", "shuffle MiB keyed", "shuffle MiB plain", "keyed s",
         "plain s", "plain / keyed"],
        [[query, f"{result['rows']:,}", int(cell(query, "keyed", "exchanges")), int(cell(query, "plain", "exchanges")),
          f"{cell(query, 'keyed', 'shuffle_bytes') / 2**20:.1f}", f"{cell(query, 'plain', 'shuffle_bytes') / 2**20:.1f}",
          f"{cell(query, 'keyed', 'seconds'):.2f}", f"{cell(query, 'plain', 'seconds'):.2f}",
          f"{cell(query, 'plain', 'seconds') / cell(query, 'keyed', 'seconds'):.2f}x"] for query in QUERIES],
    )  # fmt: skip


def main(argv: list[str] | None = None, spark=None) -> dict:
    args = arguments(__doc__, argv, rows=(20_000_000, 2_000), keys=(2_000_000, 200))
    spark = spark_session(spark)
    build_seconds = build(args.rows, args.keys)
    runs = [
        {"query": query, "layout": layout, "repeat": repeat,
         **run_query(spark, sql.format(schema=SCHEMA, layout=layout))}
        for repeat in range(args.repeats) for query, sql in QUERIES.items() for layout in ("keyed", "plain")
    ]  # fmt: skip
    rows = medians(runs, ("query", "layout"), ("seconds", "exchanges", "shuffle_bytes"))
    result = {"machine": machine(spark), "rows": args.rows, "keys": args.keys, "build_seconds": round(build_seconds, 1),
              "runs": runs, "medians": rows}  # fmt: skip
    if not args.smoke:
        record("prekeyed", result, summary(result))
        by = {(r["query"], r["layout"]): r for r in rows}
        bar_chart(RESULTS / "prekeyed.png", f"Pre-keyed vs plain, {args.rows:,} rows (median s)", "seconds",
                  {f"{q} {layout}": by[(q, layout)]["seconds"] for q in QUERIES for layout in ("keyed", "plain")})  # fmt: skip
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
