"""Benchmark: sink reuse for partial updates (FLIP-506) against what a user would do instead.

K members of 12 columns each write a (1 + 12 K)-column Iceberg table keyed by `k`. Two phases: the initial load
into an empty table, then an update in which 10% of the keys change in every member. Variants, same run:
  lakeplan    the unioned write (one MERGE per run)
  rules       the same with per-column merge rules (sum, max, min, first_non_null, last_non_null in turn)
  separate    var reuse_sink_enabled: false (K MERGEs, what K stock dbt-spark models amount to)
  bare        lakeplan's own generated statement (as the `lakeplan` variant's dbt run logged it in target/run/),
              run bare in PySpark on the same members (temp views), under the settings its header asks for,
              into its own table: the second floor
  handwritten one UNION ALL + collapse + MERGE written by hand in plain Spark SQL (the first floor)
Figures per run: wall time, snapshots created, bytes written (Iceberg snapshot summaries), and whether the table
holds what the hand-written statement's table holds after the same phase (a checksum of every column with its
key; the `rules` variant is compared after the initial load only: its update adds, keeps the least, ...).

  python bench/sink_reuse.py [--keys 100000 1000000] [--members 10] [--vary-members 2 5 10 20]
      [--vary-keys 20000] [--variants lakeplan bare separate handwritten] [--repeats 3] [--record-as NAME]
  make bench (all sizes) / --smoke (tiny, no warm-up runs; run by the tests)
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from common import RESULTS, SCHEMA, dbt, drop_table, machine, markdown_table, medians, record, spark_session
from common import write_project as write_project_files
from dbt.adapters.spark.session import Cursor
from dbt_lakeplan import statement_options

COLUMNS_PER_MEMBER = 12
VARIANTS = ("lakeplan", "bare", "rules", "separate", "handwritten")
TABLES = {"handwritten": f"{SCHEMA}.wide_handwritten", "bare": f"{SCHEMA}.wide_bare"}
RULES = ("sum", "max", "min", "first_non_null", "last_non_null")
# The phase reaches dbt's members as a Spark SQL variable, set before each run: the project stays the same from run
# to run, as a scheduled pipeline's does, so dbt parses it partially. A `--vars` that changes every run would make
# dbt parse the whole project again each time (0.9 s here), which no production run pays.
PHASE = "lakeplan_bench.phase"


def member_query(member: int, keys: int, phase: str) -> str:
    """Member `member`'s 12 columns for every key; in phase 1, 10% of the keys get new values."""
    changed = f"(case when k % 10 = {member % 10} then {phase} else 0 end)"
    columns = ", ".join(f"k * {c + 1} + {member} + {changed} as m{member}_c{c}" for c in range(COLUMNS_PER_MEMBER))
    return f"select k, {columns} from (select id as k from range(0, {keys})) as keys"


def member_sql(member: int, keys: int) -> str:
    return f"{{{{ config(partial_update_target='wide') }}}}\n" + member_query(member, keys, f"${{{PHASE}}}")


def write_project(members: int, keys: int, rules: bool = False, reuse: bool = True) -> Path:
    """The project of one dbt variant, in a directory of its own (so that nothing changes between its runs)."""
    columns = ["      - {name: k, data_type: bigint}"] + [
        f"      - {{name: m{m}_c{c}, data_type: bigint"
        + (f", meta: {{merge: {RULES[c % len(RULES)]}}}}}" if rules else "}")
        for m in range(members) for c in range(COLUMNS_PER_MEMBER)
    ]
    files = {
        "models/wide.sql": "{{ partial_update_target() }}\n",
        "models/wide.yml": "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: k}\n    columns:\n"
        + "\n".join(columns) + "\n",
        **{f"models/member_{m:02d}.sql": member_sql(m, keys) for m in range(members)},
    }
    name = f"k{members}_n{keys}{'_rules' if rules else ''}{'' if reuse else '_separate'}"
    settings = {"wide": {"on_state_mismatch": "full_refresh"}}
    return write_project_files(name, files, settings, project_vars={"reuse_sink_enabled": reuse})


def handwritten_merge(members: int, keys: int, phase: int) -> str:
    """The floor: what a careful engineer writes by hand for the same write."""
    branches = []
    for m in range(members):
        values = []
        for other in range(members):
            for c in range(COLUMNS_PER_MEMBER):
                if other == m:
                    changed = f"(case when k % 10 = {m % 10} then {phase} else 0 end)"
                    values.append(f"k * {c + 1} + {m} + {changed} as m{other}_c{c}")
                else:
                    values.append(f"cast(null as bigint) as m{other}_c{c}")
        branches.append(f"select k, {', '.join(values)} from (select id as k from range(0, {keys})) as keys")
    names = [f"m{m}_c{c}" for m in range(members) for c in range(COLUMNS_PER_MEMBER)]
    collapse = ", ".join(f"max({n}) as {n}" for n in names)  # one value per key: max keeps one buffer slot
    updates = ", ".join(f"{n} = coalesce(s.{n}, t.{n})" for n in names)
    return (
        f"merge into {SCHEMA}.wide_handwritten as t using (select k, {collapse} from ({' union all '.join(branches)})"
        f" as u group by k) as s on t.k = s.k when matched then update set {updates} when not matched then insert *"
    )


def snapshots(spark, table: str) -> dict[int, int]:
    """Snapshot id -> bytes it added, for every snapshot of the table (none if it does not exist yet)."""
    if not spark.catalog.tableExists(table):
        return {}
    rows = spark.sql(f"select snapshot_id, summary['added-files-size'] as added from {table}.snapshots").collect()
    return {r.snapshot_id: int(r.added or 0) for r in rows}


def run_variant(spark, variant: str, members: int, keys: int, phase: int, statements: dict) -> dict:
    table = TABLES.get(variant, f"{SCHEMA}.wide")
    if phase == 0:  # every variant's table starts without history, whatever ran before
        drop_table(spark, table)
    if variant == "handwritten" and phase == 0:
        columns = ", ".join(["k bigint"] + [f"m{m}_c{c} bigint" for m in range(members) for c in range(COLUMNS_PER_MEMBER)])
        spark.sql(f"create or replace table {table} ({columns}) using iceberg")
    if variant == "bare":
        statement = bare_statement(spark, statements[(members, keys, phase)], members, keys, phase)
    before = snapshots(spark, table)
    start = time.perf_counter()
    if variant == "handwritten":
        spark.sql(handwritten_merge(members, keys, phase))
    elif variant == "bare":
        # under the settings lakeplan's run set for it (its header: plugins/dbt_lakeplan/statement_options.py)
        with statement_options.applied(Cursor, statement_options.options_of(statement)):
            spark.sql(statement)
    else:
        project = write_project(members, keys, rules=variant == "rules", reuse=variant != "separate")
        spark.conf.set(PHASE, str(phase))
        dbt(project, "run", *(["--full-refresh"] if phase == 0 else []))
    seconds = time.perf_counter() - start
    if variant == "lakeplan":
        statements[(members, keys, phase)] = (project / "target/run/lakeplan/models/wide.sql").read_text()
    added = {sid: size for sid, size in snapshots(spark, table).items() if sid not in before}
    return {"variant": variant, "members": members, "keys": keys, "phase": ["initial", "update"][phase],
            "seconds": round(seconds, 3), "snapshots": len(added), "bytes_written": sum(added.values()),
            "contents": contents(spark, table, members)}


def bare_statement(spark, statement: str, members: int, keys: int, phase: int) -> str:
    """lakeplan's logged statement, on temp views of the same members (as dbt stages them), into wide_bare."""
    for m in range(members):
        spark.sql(f"create or replace temporary view wide__lakeplan_member_member_{m:02d} as "
                  + member_query(m, keys, str(phase)))  # fmt: skip
    return re.sub(rf"\b{SCHEMA}\.wide\b", TABLES["bare"], statement)


def contents(spark, table: str, members: int) -> list:
    """The row count and, per column, a checksum of (column name, key, value) over all rows: equal lists, equal
    tables (up to hash collisions), whatever the row order."""
    names = [f"m{m}_c{c}" for m in range(members) for c in range(COLUMNS_PER_MEMBER)]
    sums = ", ".join(f"sum(xxhash64('{n}', k, {n}))" for n in names)
    return list(spark.sql(f"select count(*), {sums} from {table}").first())


def check_contents(runs: list[dict]) -> None:
    """Marks each run with whether its table equals the hand-written one after the same phase (`rules`: after
    the initial load only); drops the checksums."""
    floor = {(r["members"], r["keys"], r["phase"], r["repeat"]): r["contents"] for r in runs if r["variant"] == "handwritten"}
    for run in runs:
        expected = floor.get((run["members"], run["keys"], run["phase"], run["repeat"]))
        compared = expected is not None and not (run["variant"] == "rules" and run["phase"] == "update")
        run["same_as_handwritten"] = run.pop("contents") == expected if compared else None


def measure(spark, members: int, keys: int, repeats: int, variants: list[str], warm: bool = True) -> list[dict]:
    """Every variant's initial load and update, per repeat, in the order of VARIANTS and reversed every other
    repeat (a variant that follows another of the same shape finds Spark warmer); `bare` runs the statements
    `lakeplan` logged in this or the previous repeat. `warm`: first the untimed runs that only steady the figures."""
    if "bare" in variants and "lakeplan" not in variants:
        raise SystemExit("--variants bare needs lakeplan: it runs the statement lakeplan's dbt run generated")
    runs, statements = [], {}
    if warm:
        for variant in set(variants) - {"bare", "handwritten"}:  # a scheduled pipeline has its previous run's manifest:
            dbt(write_project(members, keys, rules=variant == "rules", reuse=variant != "separate"), "parse")  # untimed
        # Unrecorded: the first full-size run in a JVM is 3-5 s slower at 1M keys whatever it runs (heap growth; a
        # 2,000-key warm-up does not cover it), and without this the first variant of the first repeat pays it alone.
        for phase in (0, 1):
            run_variant(spark, sorted(variants, key=VARIANTS.index)[0], members, keys, phase, statements)
    for repeat in range(repeats):
        for variant in sorted(variants, key=VARIANTS.index, reverse=repeat % 2 == 1):
            for phase in (0, 1):
                runs.append({**run_variant(spark, variant, members, keys, phase, statements), "repeat": repeat})
    check_contents(runs)
    return runs


def summary_table(rows: list[dict], runs: list[dict]) -> str:
    """One line per (K, keys, phase); a variant that did not run shows "-"."""
    cells: dict[tuple, dict] = {}
    for row in rows:
        cells.setdefault((row["members"], row["keys"], row["phase"]), {})[row["variant"]] = row
    lines = []
    for (members, keys, phase), by in sorted(cells.items()):
        seconds = {variant: by[variant]["seconds"] if variant in by else None for variant in VARIANTS}
        lakeplan, bare, rules, separate, handwritten = (seconds[v] for v in VARIANTS)

        def each(field: str, variants: tuple[str, ...], show) -> str:
            return " / ".join(show(by[v][field]) if v in by else "-" for v in variants)

        same = [r["same_as_handwritten"] for r in runs if (r["members"], r["keys"], r["phase"]) == (members, keys, phase)
                and r["same_as_handwritten"] is not None]  # fmt: skip
        lines.append([
            members, f"{keys:,}", phase, figure(lakeplan), figure(bare), figure(handwritten), figure(separate),
            ratio(lakeplan, handwritten), ratio(lakeplan, bare), ratio(separate, lakeplan),
            each("snapshots", ("lakeplan", "separate"), lambda n: f"{n:g}"),
            each("bytes_written", ("lakeplan", "separate", "handwritten"), lambda n: f"{n / 2**20:.1f}"),
            figure(rules), ratio(rules, lakeplan), "-" if not same else "yes" if all(same) else "NO",
        ])  # fmt: skip
    return markdown_table(
        ["K", "keys", "phase", "lakeplan s", "bare s", "handwritten s", "separate s", "lakeplan / handwritten",
         "lakeplan / bare", "separate / lakeplan", "snapshots (lakeplan / separate)",
         "MiB written (lakeplan / separate / handwritten)", "with rules s", "rules / lakeplan",
         "tables equal handwritten's"], lines)  # fmt: skip


def figure(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    return "-" if numerator is None or denominator is None else f"{numerator / denominator:.2f}x"


def chart(rows: list[dict], keys: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    for variant in VARIANTS:
        points = sorted((r["members"], r["seconds"]) for r in rows if r["variant"] == variant and r["keys"] == keys and r["phase"] == "update")
        axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=variant)
    axis.set(xlabel="members K (12 columns each)", ylabel="update phase, seconds", title=f"Sink reuse: time vs K ({keys:,} keys)")
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None, spark=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--vary-members", type=int, nargs="*", default=[2, 5, 10, 20])
    parser.add_argument("--vary-keys", type=int, default=20_000, help="key count for the K sweep")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS),
                        help="for the --keys sizes (the K sweep always runs all five)")
    parser.add_argument("--record-as", default="sink_reuse",
                        help="bench/results/<name>.json/.md: a run of some sizes only, recorded beside the full one")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat, nothing recorded")
    args = parser.parse_args(argv)
    if args.smoke:
        args.keys, args.members, args.vary_members, args.vary_keys, args.repeats = [200], 2, [], 200, 1
    spark = spark_session(spark)
    if not args.smoke:  # warm-up, not recorded: the first statements of a shape in a JVM pay for JIT and codegen
        measure(spark, args.members, 2000, 1, list(VARIANTS))
    runs = [run for keys in args.keys
            for run in measure(spark, args.members, keys, args.repeats, args.variants, warm=not args.smoke)]
    runs += [run for members in args.vary_members if members != args.members or args.vary_keys not in args.keys
             for run in measure(spark, members, args.vary_keys, args.repeats, list(VARIANTS))]
    rows = medians(runs, ("members", "keys", "phase", "variant"), ("seconds", "snapshots", "bytes_written"))
    result = {"machine": machine(spark), "runs": runs, "medians": rows}
    if not args.smoke:
        record(args.record_as, result, summary_table(rows, runs))
        if args.vary_members:
            chart(rows, args.vary_keys, RESULTS / "sink_reuse_vs_k.png")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
