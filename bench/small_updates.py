"""Benchmark: small changes cost small (issue 30). A run that changes 1% of the keys, 20 runs in a row.

K = 10 members of 12 columns each write a (1 + 12 K)-column Iceberg table keyed by `k`. Member m reads its own
input, an Iceberg event log `src_m` (k, batch, c0..c11): batch 0 holds every key, each later batch a share of
the keys spread over the key space (a hash of key and batch; member m's slice is `k % 10 = m`), and a member's
value for a key is its newest row's (`max_by(c, batch)`). Variants, side by side in one run:
  a  today's: every member reads its whole input and recomputes every key; copy-on-write
  b  members read only what is new (`lakeplan.new_rows`); copy-on-write
  c  the same, `change_mode: merge_on_read`, maintenance by threshold after the write
  d  the same, `change_mode: auto`, the same maintenance
  e  the floor a careful engineer writes by hand: one MERGE of the batch's rows (they know its number) into a
     merge-on-read table, compacted in the runs where c compacted, by the same procedures
  f  d's target with `change_mode: delta` (issue 47): a run appends its collapsed change to the table as delta rows,
     readers read `<target>__lakeplan_merged`; the same maintenance, whose `delta_runs` (10) folds them; the table
     bucketed by the key (`bucket(8, k)` at 1M keys), the layout docs/delta-mode.md asks for
Per run and variant: wall time (dbt's whole `dbt run --select <target>`, maintenance included), Iceberg's bytes
and files added by the write and by maintenance (snapshot summaries), the time of a full scan afterwards (the
checksum query: every column of every row; f's of its merged view, and of its stored rows alone,
`<target>__lakeplan_base`), and whether every variant's table holds the same rows (a checksum of each column with
its key; f's merged view). f's fold of its delta rows (an `insert overwrite`) counts as maintenance. After the
runs, c's and d's full scan against the same table freshly compacted.
Then `auto` against forced copy-on-write and forced merge-on-read at change fractions (--fractions): three
targets fed the same batches, each compacted (untimed) before every batch so that they start alike.

  python bench/small_updates.py [--keys 1000000] [--runs 20] [--change 0.01]
      [--fractions 0.0001 0.01 0.1 0.5] [--repeats 3] [--record-as small_updates]
  --keys 1000000 3000000 --changed-keys 10000 --variants de: the same number of changed keys at each size, and a
      table of how each variant's run grows with the table (the cost follows the change)
  --smoke: tiny sizes, nothing recorded (run by the tests)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from common import RESULTS, SCHEMA, drop_table, machine, markdown_table, record, spark_session
from common import write_project as write_project_files

COLUMNS = 12
SERIES = ("a", "b", "c", "d", "e", "f")
MODES = {"copy_on_write": "sw_cow", "merge_on_read": "sw_mor", "auto": "sw_auto", "delta": "sw_delta"}
# the sweep's delta target folds only when the bench asks (lakeplan_maintain, untimed, before each batch): its write
# is timed alone, as the other targets' writes without their compaction
SWEEP_DELTA = {"change_mode": "delta", "maintenance": {"after_write": False, "delta_runs": 1}}
# c's and d's upkeep, what a team would set for a table written 1% at a time: apply the deletes once they hide 10%
# of the rows (with keys spread over the table every data file holds some), merge delete files once there are 10
MAINTENANCE = {"deleted_share": 0.1, "delete_files": 10, "small_files": 10, "target_file_mib": 128}
TARGETS = {  # dbt variant -> (its target, how its members read their input, its config)
    "a": ("wide_a", "whole", {}),
    "b": ("wide_b", "new", {}),
    "c": ("wide_c", "new", {"change_mode": "merge_on_read", "maintenance": MAINTENANCE}),
    "d": ("wide_d", "new", {"change_mode": "auto", "maintenance": MAINTENANCE}),
    "f": ("wide_f", "new", {"change_mode": "delta", "maintenance": MAINTENANCE}),
    **{mode: (table, "new", SWEEP_DELTA if mode == "delta" else {"change_mode": mode}) for mode, table in MODES.items()},
}
MOR = {f"write.{action}.mode": "merge-on-read" for action in ("merge", "update", "delete")}


def source(member: int) -> str:
    return f"{SCHEMA}.src_{member:02d}"


def names(members: int) -> list[str]:
    """The target's columns besides `k`: member m's are m<m>_c0 .. m<m>_c11."""
    return [f"m{m}_c{c}" for m in range(members) for c in range(COLUMNS)]


def member_sql(target: str, member: int, reads: str) -> str:
    relation = f"source('bench', 'src_{member:02d}')"
    relation = f"lakeplan.new_rows({relation})" if reads == "new" else relation
    columns = ", ".join(f"max_by(c{c}, batch) as m{member}_c{c}" for c in range(COLUMNS))
    return (f"{{{{ config(partial_update_target='{target}') }}}}\n"
            f"select k, {columns} from {{{{ {relation} }}}} group by k\n")  # fmt: skip


def write_project(members: int, keys: int) -> Path:
    """One project holding every dbt variant's target and members (one parse, `--select` per variant). The delta
    target is bucketed by its key, as docs/delta-mode.md asks (its merged read joins bucket by bucket): 8 buckets at
    1M keys, fewer below (`keys`: the largest size), so that a small run writes a file or two, not eight."""
    columns = "\n".join(f"      - {{name: {n}, data_type: bigint}}" for n in ["k", *names(members)])
    models = []
    for target, _, config in TARGETS.values():
        if config.get("change_mode") == "delta":
            config = {**config, "partition_by": f"['bucket({min(8, max(1, keys // 125_000))}, k)']"}
        settings = ", ".join(f"{key}: {value}" for key, value in {"unique_key": "k", **config}.items())
        models.append(f"  - name: {target}\n    config: {{{settings}}}\n    columns:\n{columns}")
    tables = ", ".join(f"{{name: src_{m:02d}}}" for m in range(members))
    files = {
        "models/schema.yml": f"version: 2\nsources:\n  - name: bench\n    schema: {SCHEMA}\n    tables: [{tables}]\n"
        "models:\n" + "\n".join(models) + "\n",
        **{f"models/{target}.sql": "{{ partial_update_target() }}\n" for target, _, _ in TARGETS.values()},
        **{f"models/{target}_m{m:02d}.sql": member_sql(target, m, reads)
           for target, reads, _ in TARGETS.values() for m in range(members)},
    }  # fmt: skip
    return write_project_files(f"small_updates_k{members}", files)


def append_batch(spark, members: int, keys: int, batch: int, fraction: float) -> int:
    """Batch `batch` into every input: all keys for batch 0, else the keys whose hash with the batch falls in
    `fraction`, each to the member whose slice it is. Returns the number of keys changed."""
    chosen = "true" if batch == 0 else f"pmod(xxhash64(k, {batch}), 1000000) < {round(fraction * 1_000_000)}"
    for m in range(members):
        values = ", ".join(f"k * {c + 1} + {m} + {batch} * 7 as c{c}" for c in range(COLUMNS))
        slice_ = "true" if batch == 0 else f"k % {members} = {m}"
        spark.sql(f"insert into {source(m)} select k, {batch} as batch, {values} "
                  f"from (select id as k from range(0, {keys})) where {chosen} and {slice_}")  # fmt: skip
    return spark.sql(f"select count(*) from (select id as k from range(0, {keys})) where {chosen}").first()[0]


def create_inputs(spark, members: int) -> None:
    for m in range(members):
        drop_table(spark, source(m))
        columns = ", ".join(f"c{c} bigint" for c in range(COLUMNS))
        spark.sql(f"create table {source(m)} (k bigint, batch int, {columns}) using iceberg")


def handwritten_merge(members: int, batch: int) -> str:
    """The floor: the batch's rows of every input, one row per key, merged into the merge-on-read table."""
    columns = names(members)
    branches = []
    for m in range(members):
        values = [f"c{n.split('_c')[1]} as {n}" if n.startswith(f"m{m}_") else f"cast(null as bigint) as {n}"
                  for n in columns]  # fmt: skip
        branches.append(f"select k, {', '.join(values)} from {source(m)} where batch = {batch}")
    collapse = ", ".join(f"max({n}) as {n}" for n in columns)  # one row per key and member in a batch
    updates = ", ".join(f"{n} = coalesce(s.{n}, t.{n})" for n in columns)
    return (f"merge into {SCHEMA}.wide_e as t using (select k, {collapse} from ({' union all '.join(branches)})"
            f" group by k) as s on t.k = s.k when matched then update set {updates} when not matched then insert *")


def create_handwritten(spark, members: int) -> None:
    drop_table(spark, f"{SCHEMA}.wide_e")
    properties = ", ".join(f"'{key}' = '{value}'" for key, value in MOR.items())
    spark.sql(f"create table {SCHEMA}.wide_e (k bigint, {', '.join(f'{n} bigint' for n in names(members))}) using iceberg "
              f"tblproperties ({properties})")  # fmt: skip


def compact(spark, table: str, options: dict | None = None, data: bool = True) -> None:
    """Every delete applied and every delete file dropped: what lakeplan's maintenance runs once the deleted share
    is crossed (macros/maintenance/maintain.sql), here with `options` for rewrite_data_files; without `data`, only
    the delete files are rewritten."""
    pairs = ", ".join(f"'{key}', '{value}'" for key, value in {"delete-file-threshold": 1, **(options or {})}.items())
    if data:
        spark.sql(f"call system.rewrite_data_files(table => '{table}', options => map({pairs}))").collect()
    spark.sql(f"call system.rewrite_position_delete_files(table => '{table}', options => map('rewrite-all', 'true'))"
              ).collect()  # fmt: skip


def snapshots(spark, table: str) -> list:
    return spark.sql(
        f"select snapshot_id, operation, cast(coalesce(summary['added-files-size'], '0') as bigint) as bytes, "
        f"cast(coalesce(summary['added-data-files'], '0') as int) + cast(coalesce(summary['added-delete-files'], '0') "
        f"as int) as files from {table}.snapshots").collect()  # fmt: skip


def run_dbt(project: Path, target: str, *args: str) -> tuple[float, float]:
    """`dbt run --select target`: its wall time and the target's own execution time (dbt's run_results)."""
    from dbt.cli.main import dbtRunner

    start = time.perf_counter()
    result = dbtRunner().invoke(["run", "--select", target, "--project-dir", str(project), *args])
    wall = time.perf_counter() - start
    if not result.success:
        raise SystemExit(f"dbt run --select {target} failed: {result.exception or result.result}")
    return wall, sum(r.execution_time for r in result.result.results)


def scan(spark, table: str, members: int) -> tuple[float, list]:
    """A full scan (every column of every row) and what it found: the count and, per column, an order-free
    checksum of (name, key, value)."""
    sums = ", ".join(f"sum(xxhash64('{n}', k, {n}))" for n in names(members))
    start = time.perf_counter()
    found = list(spark.sql(f"select count(*), {sums} from {table}").first())
    return time.perf_counter() - start, found


def written(spark, table: str, before: set, upkeep_operations: tuple = ("replace",)) -> dict:
    """Bytes and files the run's snapshots added: by the write (`append`, `overwrite`, `delete`) and by upkeep
    (`replace`: compaction; in delta mode also `overwrite`, the fold of the delta rows, since its writes append)."""
    added = [s for s in snapshots(spark, table) if s.snapshot_id not in before]
    write = [s for s in added if s.operation not in upkeep_operations]
    upkeep = [s for s in added if s.operation in upkeep_operations]
    return {"bytes_written": sum(s.bytes for s in write), "files_written": sum(s.files for s in write),
            "maintenance_bytes": sum(s.bytes for s in upkeep), "maintenance_commits": len(upkeep)}  # fmt: skip


def table_of(variant: str) -> str:
    return f"{SCHEMA}.{TARGETS[variant][0] if variant in TARGETS else 'wide_' + variant}"


def delta_mode(variant: str) -> bool:
    return TARGETS.get(variant, (None, None, {}))[2].get("change_mode") == "delta"


def read_of(variant: str) -> str:
    """What a reader reads: the table, or a delta-mode target's merged view."""
    return f"{table_of(variant)}__lakeplan_merged" if delta_mode(variant) else table_of(variant)


def write_mode(spark, table: str) -> str:
    properties = {r.key: r.value for r in spark.sql(f"show tblproperties {table}").collect()}
    return properties.get("write.merge.mode", "copy-on-write")


def run_variant(spark, project: Path, members: int, variant: str, batch: int, c_upkeep: dict | None) -> dict:
    table = table_of(variant)
    before = {s.snapshot_id for s in snapshots(spark, table)}
    start = time.perf_counter()
    if variant == "e":
        spark.sql(handwritten_merge(members, batch))
        if c_upkeep and c_upkeep["maintenance_commits"]:  # the same schedule and procedures as c's maintenance
            compact(spark, table, {"target-file-size-bytes": MAINTENANCE["target_file_mib"] * 2**20},
                    data=c_upkeep["maintenance_bytes"] > 0)  # c rewrote data files, not only delete files
        wall = model = time.perf_counter() - start
    else:
        wall, model = run_dbt(project, TARGETS[variant][0])
    upkeep = ("replace", "overwrite") if delta_mode(variant) else ("replace",)
    return {"variant": variant, "seconds": round(wall, 3), "model_seconds": round(model, 3),
            "mode": "delta" if delta_mode(variant) else write_mode(spark, table),
            **written(spark, table, before, upkeep)}  # fmt: skip


def series(spark, project: Path, members: int, keys: int, runs: int, change: float,
           variants: str = "".join(SERIES)) -> tuple[list[dict], dict]:
    """The 20 runs: each appends a batch changing `change` of the keys, then runs every variant (the dbt ones in an
    order that turns each run, e right after c, or d without c, whose compaction it copies) and scans every table."""
    dbt_variants = [v for v in variants if v != "e"]
    schedule = "c" if "c" in variants else "d"  # whose compaction e copies
    if "e" in variants:
        create_handwritten(spark, members)
        spark.sql(handwritten_merge(members, 0))
    for variant in dbt_variants:  # the initial load, untimed: every table built anew from batch 0
        drop_table(spark, table_of(variant))  # another size buckets f into another count, which no rebuild changes
        run_dbt(project, TARGETS[variant][0], "--full-refresh")
    results = []
    for run in range(1, runs + 1):
        changed = append_batch(spark, members, keys, run, change)
        order = dbt_variants[run % len(dbt_variants):] + dbt_variants[: run % len(dbt_variants)]
        if "e" in variants:
            order.insert(order.index(schedule) + 1, "e")
        by, found = {}, {}
        for variant in order:
            by[variant] = run_variant(spark, project, members, variant, run, by[schedule] if variant == "e" else None)
        for variant in variants:
            by[variant]["scan_seconds"], found[variant] = scan(spark, read_of(variant), members)
            if delta_mode(variant):  # its stored rows alone, what other engines read
                by[variant]["base_scan_seconds"] = scan(spark, f"{table_of(variant)}__lakeplan_base", members)[0]
        same = all(found[v] == found[variants[0]] for v in variants)
        results += [{**by[v], "run": run, "keys": keys, "changed_keys": changed, "same_contents": same} for v in variants]
        print(f"small_updates run {run}:", json.dumps(results[-len(variants):]), flush=True)  # kept if a later run fails
    compacted = {}
    for variant in [v for v in ("c", "d") if v in variants]:  # the scan after the runs against the table compacted
        table = table_of(variant)
        after, _ = scan(spark, table, members)
        compact(spark, table, {"target-file-size-bytes": MAINTENANCE["target_file_mib"] * 2**20, "rewrite-all": "true"})
        fresh, _ = scan(spark, table, members)
        compacted[variant] = {"scan_after_runs": round(after, 3), "scan_compacted": round(fresh, 3)}
    return results, compacted


def sweep(spark, project: Path, members: int, keys: int, fractions: list[float], repeats: int,
          first_batch: int) -> list[dict]:
    """`auto` against both forced modes and the delta mode: per fraction and repeat, a batch of that share of the
    keys into four targets that start alike (each compacted, untimed, before the batch; the delta target's rows
    folded); a delta target's scan reads its merged view."""
    from common import dbt

    for table in MODES.values():
        drop_table(spark, f"{SCHEMA}.{table}")
        run_dbt(project, table, "--full-refresh")
    results, batch = [], first_batch
    for fraction in fractions:
        for repeat in range(repeats):
            for mode, table in MODES.items():
                if delta_mode(mode):
                    dbt(project, "run-operation", "lakeplan_maintain", "--args", f"{{select: {table}}}")
                else:
                    compact(spark, f"{SCHEMA}.{table}")
            changed = append_batch(spark, members, keys, batch, fraction)
            order = list(MODES)[repeat % len(MODES):] + list(MODES)[: repeat % len(MODES)]
            by = {mode: run_variant(spark, project, members, mode, batch, None) for mode in order}
            scanned = {mode: scan(spark, read_of(mode), members) for mode in MODES}
            same = len({tuple(found) for _, found in scanned.values()}) == 1
            results += [{**by[mode], "fraction": fraction, "repeat": repeat, "keys": keys, "changed_keys": changed,
                         "scan_seconds": round(scanned[mode][0], 3), "same_contents": same} for mode in MODES]  # fmt: skip
            print(f"small_updates sweep {fraction}:", json.dumps(results[-len(MODES):]), flush=True)
            batch += 1
    return results


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def series_table(runs: list[dict], compacted: dict) -> str:
    lines = []
    variants = [v for v in SERIES if any(r["variant"] == v for r in runs)]
    base = variants[0]  # a, where it ran
    for keys in sorted({r["keys"] for r in runs}):
        of = {v: [r for r in runs if r["keys"] == keys and r["variant"] == v] for v in variants}
        a = median([r["seconds"] for r in of[base]])
        a_bytes = median([r["bytes_written"] for r in of[base]])
        for v in variants:
            rows = of[v]
            seconds = median([r["seconds"] for r in rows])
            mib = median([r["bytes_written"] for r in rows]) / 2**20
            scans = compacted.get(keys, {}).get(v)
            base_scans = [r["base_scan_seconds"] for r in rows if "base_scan_seconds" in r]  # delta mode's stored rows
            lines.append([
                f"{keys:,}", v, f"{seconds:.1f}", f"{sum(r['seconds'] for r in rows) / len(rows):.1f}",
                f"{median([r['model_seconds'] for r in rows]):.1f}", f"{a / seconds:.1f}x", f"{mib:.2f}",
                f"{100 * median([r['bytes_written'] for r in rows]) / a_bytes:.1f}%",
                f"{median([r['files_written'] for r in rows]):g}",
                f"{sum(r['maintenance_commits'] for r in rows)} ({sum(r['maintenance_bytes'] for r in rows) / 2**20:.0f} MiB)",
                f"{median([r['scan_seconds'] for r in rows]):.2f}",
                f"{median(base_scans):.2f}" if base_scans else "-",
                f"{scans['scan_after_runs']:.2f} / {scans['scan_compacted']:.2f}" if scans else "-",
                "yes" if all(r["same_contents"] for r in rows) else "NO",
            ])  # fmt: skip
    return markdown_table(
        ["keys", "variant", "run s (median)", "run s (mean)", "model s (median)", f"{base} / variant",
         "MiB written (median)", f"bytes vs {base}", "files written (median)", "maintenance commits (MiB)",
         "full scan s (median)", "stored rows alone, scan s (median)", "scan after the runs / compacted s",
         f"same rows as {base}, every run"], lines)  # fmt: skip


def growth_table(runs: list[dict]) -> str:
    """The cost follows the change: per variant, its median run at each size against the smallest size's (the same
    number of changed keys at every size, --changed-keys)."""
    sizes = sorted({r["keys"] for r in runs})
    lines = []
    for v in [v for v in SERIES if any(r["variant"] == v for r in runs)]:
        seconds = [median([r["seconds"] for r in runs if (r["keys"], r["variant"]) == (keys, v)]) for keys in sizes]
        changed = [median([r["changed_keys"] for r in runs if (r["keys"], r["variant"]) == (keys, v)]) for keys in sizes]
        lines.append([v, *(f"{s:.1f} s ({c:,.0f} changed)" for s, c in zip(seconds, changed)),
                      f"{seconds[-1] / seconds[0]:.2f}x"])  # fmt: skip
    return markdown_table(["variant", *(f"{keys:,} keys" for keys in sizes), f"{sizes[-1]:,} / {sizes[0]:,}"], lines)


def sweep_table(runs: list[dict]) -> str:
    lines = []
    for keys in sorted({r["keys"] for r in runs}):
        for fraction in sorted({r["fraction"] for r in runs}):
            of = {m: [r for r in runs if (r["keys"], r["fraction"], r["variant"]) == (keys, fraction, m)] for m in MODES}
            seconds = {m: median([r["seconds"] for r in rows]) for m, rows in of.items()}
            scans = {m: median([r["scan_seconds"] for r in rows]) for m, rows in of.items()}
            best = min(seconds["copy_on_write"], seconds["merge_on_read"])
            chose = sorted({r["mode"] for r in of["auto"]})
            lines.append([
                f"{keys:,}", f"{100 * fraction:g}%", f"{of['auto'][0]['changed_keys']:,}", f"{seconds['copy_on_write']:.1f}",
                f"{seconds['merge_on_read']:.1f}", f"{seconds['auto']:.1f}", " / ".join(chose),
                f"{seconds['auto'] / best:.2f}x", f"{seconds['delta']:.1f}", f"{seconds['delta'] / best:.2f}x",
                f"{scans['copy_on_write']:.1f} / {scans['merge_on_read']:.1f} / {scans['delta']:.1f}",
                "yes" if all(r["same_contents"] for rows in of.values() for r in rows) else "NO",
            ])  # fmt: skip
    return markdown_table(
        ["keys", "changed", "changed keys", "copy_on_write s", "merge_on_read s", "auto s", "auto chose",
         "auto / better forced", "delta s (write, no fold)", "delta / better forced",
         "scan after, copy_on_write / merge_on_read / delta (merged) s", "same rows"], lines)  # fmt: skip


def chart(runs: list[dict], change: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({r["keys"] for r in runs})
    figure, axes = plt.subplots(len(sizes), 3, figsize=(14, 4 * len(sizes)), squeeze=False)
    for row, keys in zip(axes, sizes):
        for variant in [v for v in SERIES if any(r["variant"] == v for r in runs)]:
            points = [r for r in runs if r["keys"] == keys and r["variant"] == variant]
            for axis, field, scale in zip(row, ("seconds", "bytes_written", "scan_seconds"), (1, 2**-20, 1)):
                axis.plot([r["run"] for r in points], [r[field] * scale for r in points], marker=".", label=variant)
        for axis, label in zip(row, ("run, seconds", "MiB written by the write", "full scan after the run, seconds")):
            axis.set(xlabel="run", ylabel=label, title=f"{keys:,} keys, {change} changed per run", yscale="log")
            axis.grid(alpha=0.3)
        row[0].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str] | None = None, spark=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--members", type=int, default=10, help="K, 12 columns each")
    parser.add_argument("--runs", type=int, default=20, help="runs of the series (0: the auto sweep alone)")
    parser.add_argument("--change", type=float, default=0.01, help="share of the keys a run changes")
    parser.add_argument("--changed-keys", type=int, default=None,
                        help="keys a run changes, the same at every size (in place of --change)")
    parser.add_argument("--variants", default="".join(SERIES), help="the series' variants, e.g. de")
    parser.add_argument("--fractions", type=float, nargs="*", default=[0.0001, 0.01, 0.1, 0.5])
    parser.add_argument("--sweep-keys", type=int, default=None, help="key count of the auto sweep (first --keys)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats per fraction in the auto sweep")
    parser.add_argument("--record-as", default="small_updates")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, nothing recorded")
    args = parser.parse_args(argv)
    if args.smoke:  # two sizes where the same number of keys changes at each
        args.keys, args.members, args.runs, args.change, args.fractions = [2000], 2, 1, 0.02, []
        args.keys = [2000, 4000] if args.changed_keys else [2000]
    spark = spark_session(spark)
    project = write_project(args.members, max(args.keys))
    from common import dbt

    dbt(project, "parse")  # a scheduled pipeline has its previous run's manifest
    runs, compacted, swept = [], {}, []
    for keys in args.keys:
        create_inputs(spark, args.members)
        append_batch(spark, args.members, keys, 0, 1.0)
        if args.runs:
            change = args.changed_keys / keys if args.changed_keys else args.change
            measured, compacted[keys] = series(spark, project, args.members, keys, args.runs, change, args.variants)
            runs += measured
        if keys == (args.sweep_keys or args.keys[0]) and args.fractions:
            swept += sweep(spark, project, args.members, keys, args.fractions, args.repeats, args.runs + 1)
    tables = [series_table(runs, compacted)] if runs else []
    if runs and args.changed_keys and len(args.keys) > 1:
        tables.append(growth_table(runs))
    summary = "\n".join([*tables, sweep_table(swept)] if swept else tables)
    result = {"machine": machine(spark), "runs": runs, "compacted": compacted, "sweep": swept}
    if not args.smoke:
        record(args.record_as, result, summary)
        if runs:
            per_run = f"{args.changed_keys:,} keys" if args.changed_keys else f"{100 * args.change:g}%"
            chart(runs, per_run, RESULTS / f"{args.record_as}.png")
    return {**result, "summary": summary}


if __name__ == "__main__":
    main(sys.argv[1:])
