"""Benchmark: the TPC-H example end to end, `dbt build` against the same work as one plain PySpark script.

  lakeplan       `dbt build --full-refresh` of a copy of the example (bench/work/example: all models, seed, snapshot,
                 41+ data tests), and the
                 same without tests (`--exclude-resource-type test`), in schema lakeplan_e2e
  plain_pyspark  the same SQL dbt compiled (target/compiled), run by PySpark alone in DAG order into schema
                 lakeplan_e2e_script: views as views, tables as CREATE TABLE AS (orders_by_customer bucketed as
                 lakeplan keys it), the changelog upsert as one row_number() query, customer_360 as one join of
                 its members' queries, the snapshot as its first version; no dbt, no data tests. The lower bound
                 of what Spark does here.
Both read the TPC-H parquet of scale factor SF (written by tpchgen-cli on first use).

  python bench/tpch_e2e.py [--sf 1] [--repeats 3] | --smoke
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from common import (EXAMPLE, RESULTS, ROOT, arguments, bar_chart, copy_example, dbt, environment, machine,
                    markdown_table, medians, record, spark_session)

DBT_SCHEMA, SCRIPT_SCHEMA = "lakeplan_e2e", "lakeplan_e2e_script"


def compiled(node: dict) -> str:
    """The SQL dbt compiled for the node in the last build, reading the script's own tables."""
    sql = node.get("compiled_code") or (EXAMPLE / "target/compiled/lakeplan" / node["original_file_path"]).read_text()
    return sql.replace(f"{DBT_SCHEMA}.", f"{SCRIPT_SCHEMA}.")


def latest_rows(spark, sql: str, key: str, op: str, sequence: str, keep: list[str] | None = None, deletes: bool = True) -> str:
    """A changelog's latest row per key: what an upsert leaves (a delete removes the key), or with
    `deletes=False` what a changelog member under `partial_update_on_delete: ignore` writes."""
    columns = keep or [c for c in spark.sql(sql).columns if c != op]
    ops = "'+I', '+U', '-D'" if deletes else "'+I', '+U'"
    return (
        f"select {', '.join(columns)} from (select *, row_number() over (partition by {key} order by {sequence} desc)"
        f" as latest from ({sql}) as changes where {op} in ({ops})) as ranked where latest = 1 and {op} != '-D'"
    )


def customer_360(spark, manifest: dict, target: dict) -> str:
    """The partial-update target as one join of its members on the key (a fresh build: each column one writer)."""
    key = target["config"]["unique_key"]
    selects, joins = [f"keys.{key}"], []
    groups = target["config"]["lakeplan_plan"]["partial_update"]["groups"]
    for position, group in enumerate(m for g in groups for m in g["members"]):
        node = manifest["nodes"][group["unique_id"]]
        sql = compiled(node)
        if group["op_column"]:
            written = [c for c in spark.sql(sql).columns if c.lower() in target["columns"]]
            deletes = target["config"].get("partial_update_on_delete") == "remove_record"
            sql = latest_rows(spark, sql, key, group["op_column"], group["sequence_by"], written, deletes)
        alias = f"m{position}"
        columns = [c for c in spark.sql(sql).columns if c != key and c.lower() in target["columns"]]
        selects += [f"{alias}.{c}" for c in columns]
        joins.append(f"left join ({sql}) as {alias} on keys.{key} = {alias}.{key}")
    members = [manifest["nodes"][m["unique_id"]] for g in groups for m in g["members"]]
    keys = " union ".join(f"select {key} from ({compiled(m)}) as k" for m in members if not m["config"].get("op_column"))
    return f"select {', '.join(selects)} from ({keys}) as keys {' '.join(joins)}"


def plain_pyspark(spark) -> float:
    """Runs the example's compiled SQL with PySpark alone; returns its wall time."""
    manifest = json.loads((EXAMPLE / "target" / "manifest.json").read_text())
    start = time.perf_counter()
    spark.sql(f"drop schema if exists {SCRIPT_SCHEMA} cascade")
    spark.sql(f"create schema {SCRIPT_SCHEMA}")
    for unique_id in topological(manifest):
        node = manifest["nodes"][unique_id]
        name, config = f"{SCRIPT_SCHEMA}.{node['name']}", node["config"]
        materialized = config["materialized"]
        if node["resource_type"] == "seed":
            frame = spark.read.csv(str(EXAMPLE / node["original_file_path"]), header=True, inferSchema=True)
            frame.writeTo(name).using("iceberg").create()
        elif materialized == "view":
            spark.sql(f"create view {name} as {compiled(node)}")
        elif materialized in ("table", "incremental"):
            layout = f"partitioned by (bucket({config['key_groups']}, {config['keyed_by'][0]}))" if config.get("keyed_by") else ""
            spark.sql(f"create table {name} using iceberg {layout} as {compiled(node)}")
        elif materialized == "upsert":
            sql = latest_rows(spark, compiled(node), config["unique_key"], config.get("op_column", "_op"), config["sequence_by"])
            spark.sql(f"create table {name} using iceberg as {sql}")
        elif materialized == "partial_update":
            spark.sql(f"create table {name} using iceberg as {customer_360(spark, manifest, node)}")
        elif materialized == "snapshot":
            spark.sql(
                f"create table {name} using iceberg as select *, md5(cast({config['unique_key']} as string)) as dbt_scd_id,"
                f" current_timestamp() as dbt_updated_at, current_timestamp() as dbt_valid_from,"
                f" cast(null as timestamp) as dbt_valid_to from ({compiled(node)}) as snapshot_query"
            )
    return time.perf_counter() - start


def topological(manifest: dict) -> list[str]:
    """Models, seeds and snapshots in an order where every node comes after what it reads (ephemerals skipped)."""
    nodes = {u: n for u, n in manifest["nodes"].items() if n["resource_type"] in ("model", "seed", "snapshot")}
    order, done = [], set()

    def visit(unique_id: str) -> None:
        if unique_id in done or unique_id not in nodes:
            return
        done.add(unique_id)
        for parent in nodes[unique_id]["depends_on"].get("nodes", []):
            visit(parent)
        if nodes[unique_id]["config"]["materialized"] != "ephemeral":
            order.append(unique_id)

    for unique_id in sorted(nodes):
        visit(unique_id)
    return order


def main(argv: list[str] | None = None, spark=None) -> dict:
    args = arguments(__doc__, argv, sf=("1", "0.01"))
    data = ROOT / ".lakeplan" / "data" / "tpch" / f"sf{args.sf}"
    subprocess.run([str(ROOT / "scripts" / "tpch_data.sh"), args.sf, str(data)], check=True)
    spark = spark_session(spark)
    copy_example()
    builds = {"dbt build": [], "dbt build, no tests": ["--exclude-resource-type", "test"]}
    if args.smoke:
        del builds["dbt build"]
    runs = []
    with environment(LAKEPLAN_TPCH_DIR=str(data), LAKEPLAN_SCHEMA=DBT_SCHEMA):
        for repeat in range(args.repeats):
            for variant, flags in builds.items():
                seconds = dbt(EXAMPLE, "build", "--full-refresh", *flags)
                runs.append({"variant": variant, "repeat": repeat, "seconds": seconds})
            runs.append({"variant": "plain PySpark", "repeat": repeat, "seconds": plain_pyspark(spark)})
    same = {}
    for table in ("dim_customer", "fct_daily_revenue", "customer_order_status", "orders_by_customer", "customer_360"):
        columns = ", ".join(spark.table(f"{DBT_SCHEMA}.{table}").columns)
        same[table] = spark.sql(
            f"select {columns} from {DBT_SCHEMA}.{table} except all select {columns} from {SCRIPT_SCHEMA}.{table}"
        ).count()
    rows = medians(runs, ("variant",), ("seconds",))
    result = {"machine": machine(spark), "scale_factor": args.sf, "rows_only_in_dbt_tables": same, "runs": runs, "medians": rows}
    if not args.smoke:
        by = {r["variant"]: r["seconds"] for r in rows}
        floor = by["plain PySpark"]
        record("tpch_e2e", result, markdown_table(
            ["scale factor", "dbt build s", "dbt build without tests s", "plain PySpark s", "build / plain", "no tests / plain"],
            [[args.sf, f"{by['dbt build']:.1f}", f"{by['dbt build, no tests']:.1f}", f"{floor:.1f}",
              f"{by['dbt build'] / floor:.2f}x", f"{by['dbt build, no tests'] / floor:.2f}x"]]))  # fmt: skip
        bar_chart(RESULTS / "tpch_e2e.png", f"TPC-H example end to end, SF {args.sf} (median s)", "seconds", by)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
