"""Benchmark: lakeplan at a base revision and in this checkout, side by side, whole (plugin, macros, setup).

The sink-reuse write (K = 10 members x 12 columns, initial load and update, as bench/sink_reuse.py; as it is,
with merge rules, and with its last member a changelog: op +U, sequenced by the phase) and the changelog upsert
(as bench/changelog_distribution.py) run on both sides, alternately: A B, then B A, so a drift of the machine's
speed touches both alike. Each side is a worker process in its own checkout, with that checkout's virtualenv,
plugin, macros, Spark settings and warehouse, and its own benchmark code writing the projects (so a revision
runs its workloads exactly as it recorded them). The base checkout is `git archive`d under
bench/work/tree-<commit> and set up there once (`make setup`, a few minutes).
The figure per workload is the median of the per-pair ratios head / base; the tables both sides leave are
compared after every pair (they must hold the same rows).

  python bench/revision_ab.py --base 3d91392 [--keys 100000 1000000] [--changelog-keys 500000] [--pairs 2]
      [--only 'changelog member']   (the workloads whose name holds it; recorded as revision_ab_<it>.json/.md)
  --smoke: tiny sizes (2 members), one pair, both sides in this process and checkout, nothing recorded (run by the tests)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()


def run_workload(spark, workload: dict) -> dict:
    """One workload in this process, with the benchmark modules of the checkout on sys.path: the seconds of
    each dbt run and the rows the table holds after it (a count and an order-free checksum)."""
    common = importlib.import_module("common")
    if workload["kind"] == "machine":
        return common.machine(spark)
    if workload["kind"] == "sink_reuse":
        sink_reuse = importlib.import_module("sink_reuse")
        last = workload.get("members", 10) - 1
        project = sink_reuse.write_project(last + 1, workload["keys"], rules=workload["rules"])
        # this revision reads the phase from a Spark variable (an unchanged project: dbt parses it partially), older
        # ones from --vars (a new value makes dbt parse the whole project again)
        by_variable = hasattr(sink_reuse, "PHASE")
        if workload.get("changelog"):  # written here, not by the revision's benchmark: both sides have member_sql
            query = sink_reuse.member_sql(last, workload["keys"]).split("\n", 1)[1]
            seq = f"${{{sink_reuse.PHASE}}}" if by_variable else "{{ var('phase', 0) }}"
            (project / f"models/member_{last:02d}.sql").write_text(
                "{{ config(partial_update_target='wide', op_column='op', sequence_by='seq') }}\n"
                f"select '+U' as op, {seq} as seq, m.* from ({query}) as m")
            target = project / "models/wide.yml"  # a changelog member needs the target to say what a -D does
            target.write_text(
                target.read_text().replace("{unique_key: k}", "{unique_key: k, partial_update_on_delete: ignore}"))

        def phase(number: int, *args: str) -> float:
            if by_variable:
                spark.conf.set(sink_reuse.PHASE, str(number))
                return common.dbt(project, "run", *args)
            return common.dbt(project, "run", "--vars", f"{{phase: {number}}}", *args)

        seconds = {"initial": phase(0, "--full-refresh"), "update": phase(1)}
        table = "wide"
    else:
        changelog = importlib.import_module("changelog_distribution")
        changelog.make_changes(spark, workload["keys"], 4)
        project = common.write_project("changelog_ab", {"models/sources.yml": changelog.SOURCES,
                                                        "models/upsert_hash.sql": changelog.LAKEPLAN})  # fmt: skip
        seconds = {"initial": common.dbt(project, "run", "--full-refresh"), "again": common.dbt(project, "run")}
        table = "upsert_hash"
    rows = spark.sql(f"select count(*), sum(xxhash64(*)) from {common.SCHEMA}.{table}").first()
    return {"seconds": seconds, "contents": list(rows)}


def serve() -> None:
    """The worker: reads one workload a line from stdin, answers one JSON line. dbt and the JVM print to stdout,
    so the answers go to a copy of the original stdout and everything else to stderr."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spark = importlib.import_module("common").spark_session()
    for line in sys.stdin:
        answers.write(json.dumps(run_workload(spark, json.loads(line))) + "\n")
        answers.flush()


def checkout_environment(tree: Path) -> dict[str, str]:
    """What `make` (the base revision's only entry point) and the activated venv export for a checkout."""
    home = tree / ".lakeplan"
    profiles = tree if (tree / "profiles.yml").exists() else tree / "profiles"
    return {**os.environ, "LAKEPLAN_HOME": str(home), "SPARK_CONF_DIR": str(home / "spark-conf"),
            "DBT_PROFILES_DIR": str(profiles), "VIRTUAL_ENV": str(tree / ".venv"),
            "PATH": f"{tree / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}  # fmt: skip


class Worker:
    """One side: a long-lived process (one JVM, warmed up like the other side) in its own checkout."""

    def __init__(self, tree: Path):
        code = (f"import sys; sys.path[:0] = [{str(tree / 'bench')!r}]; "
                f"import runpy; runpy.run_path({str(HERE)!r}, run_name='worker')")  # fmt: skip
        self.process = subprocess.Popen([str(tree / ".venv" / "bin" / "python"), "-c", code], cwd=tree,
                                        env=checkout_environment(tree), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)  # fmt: skip

    def __call__(self, workload: dict) -> dict:
        self.process.stdin.write(json.dumps(workload) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit(f"the worker in {self.process.args} stopped during {workload}: see its output above")
        return json.loads(answer)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def base_checkout(revision: str, root: Path) -> Path:
    """The base revision, exported under bench/work/tree-<commit> (by commit: `HEAD` moves) and set up there."""
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", revision], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    tree = root / "bench" / "work" / f"tree-{commit}"
    if not (tree / "Makefile").exists():
        tree.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "-C", str(root), "archive", revision], stdout=archive, check=True)
            archive.seek(0)
            tarfile.open(fileobj=archive).extractall(tree, filter="data")
    subprocess.run(["make", "-C", str(tree), "setup"], check=True, stdout=sys.stderr)
    return tree


def workloads(keys: list[int], changelog_keys: int, only: str, members: int = 10) -> list[tuple[str, dict]]:
    """The workloads whose name holds `only`, by name."""
    kinds = {"": {}, " rules": {"rules": True}, " changelog member": {"changelog": True}}
    sink = [(f"sink_reuse{kind} {n:,} keys", {"kind": "sink_reuse", "keys": n, "members": members, "rules": False, **extra})
            for n in keys for kind, extra in kinds.items()]  # fmt: skip
    every = [*sink, (f"changelog {changelog_keys * 4:,} rows", {"kind": "changelog", "keys": changelog_keys})]
    return [(name, workload) for name, workload in every if only in name]


def compare(sides: dict, work: list[tuple[str, dict]], pairs: int) -> list[dict]:
    runs = []
    for name, workload in work:
        for pair in range(pairs):
            order = ("base", "head") if pair % 2 == 0 else ("head", "base")
            measured = {side: sides[side](workload) for side in order}
            same = measured["base"]["contents"] == measured["head"]["contents"]
            for phase, base_seconds in measured["base"]["seconds"].items():
                runs.append({"workload": name, "phase": phase, "pair": pair, "same_rows": same,
                             "base": round(base_seconds, 3), "head": round(measured["head"]["seconds"][phase], 3)})  # fmt: skip
    return runs


def summarize(runs: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault((run["workload"], run["phase"]), []).append(run)
    return [{"workload": workload, "phase": phase, "pairs": len(group),
             "base": round(statistics.median(r["base"] for r in group), 1),
             "head": round(statistics.median(r["head"] for r in group), 1),
             "ratio": statistics.median(r["head"] / r["base"] for r in group),
             "same_rows": all(r["same_rows"] for r in group)}
            for (workload, phase), group in groups.items()]  # fmt: skip


def main(argv: list[str] | None = None, spark=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the git revision to compare against")
    parser.add_argument("--keys", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--changelog-keys", type=int, default=500_000, help="x 4 versions")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--only", default="", help="run the workloads whose name holds this text")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    from common import ROOT, markdown_table, record, spark_session

    if args.smoke:  # the workloads and the comparison, without a second checkout: both sides are this one
        spark = spark_session(spark)
        both = dict.fromkeys(("base", "head"), lambda w: run_workload(spark, w))
        runs = compare(both, workloads([200], 100, args.only, members=2), 1)
        return {"base": args.base, "runs": runs, "medians": summarize(runs)}
    sides = {"base": Worker(base_checkout(args.base, ROOT)), "head": Worker(ROOT)}
    try:
        for side in sides.values():  # warm-up, not recorded: a JVM's first statements pay for JIT and codegen
            side({"kind": "sink_reuse", "keys": 2000, "rules": False})
        runs = compare(sides, workloads(args.keys, args.changelog_keys, args.only), args.pairs)
        machines = {name: side({"kind": "machine"}) for name, side in sides.items()}
    finally:
        for side in sides.values():
            side.close()
    rows = summarize(runs)
    result = {"machine": machines, "base": args.base, "runs": runs, "medians": rows}
    record("revision_ab" + (f"_{args.only.replace(' ', '_')}" if args.only else ""), result, markdown_table(
        ["workload", "phase", "pairs", "base s (median)", "head s (median)", "head / base (median of pairs)",
         "same rows"], [[r["workload"], r["phase"], r["pairs"], r["base"], r["head"], f"{r['ratio']:.2f}x",
                         r["same_rows"]] for r in rows]))  # fmt: skip
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
elif __name__ == "worker":
    serve()
