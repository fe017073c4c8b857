"""Benchmark: what lakeplan's dbt plugin adds to parsing a large project.

A generated project of MODELS models: GROUPS partial-update targets with MEMBERS members each, and plain views
for the rest (every member reads one). Figures, each in a fresh Python process (no Spark needed):
  postprocess  the plugin's manifest post-processing alone (sink reuse + fingerprints) on a parsed manifest
  parse        `dbt parse --no-partial-parse` with the plugin, and without it (plugins/ off sys.path)

  .venv/bin/python bench/plugin_overhead.py [--models 2000] [--groups 200] [--repeats 3] | --smoke
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import RESULTS, ROOT, bar_chart, markdown_table, medians, record, write_project

MEMBERS = 4
PLUGINS = str(ROOT / "plugins")

# Runs in a child process: parse with or without the plugin, or time the post-processing alone.
WORKER = """
import json, os, sys, time
plugins = sys.argv[1]
mode = sys.argv[2]
sys.path[:] = [p for p in sys.path if os.path.abspath(p) != plugins]
from dbt.cli.main import dbtRunner
args = ["parse", "--no-partial-parse", "--project-dir", sys.argv[3]]
if mode == "with_plugin":
    sys.path.insert(0, plugins)
start = time.perf_counter()
result = dbtRunner().invoke(args)
seconds = time.perf_counter() - start
assert result.success, result.exception
if mode == "postprocess":
    sys.path.insert(0, plugins)
    from dbt_lakeplan.rewrite import apply_sink_reuse
    from dbt_lakeplan.manifest_fingerprints import apply_fingerprints
    manifest = result.result
    start = time.perf_counter()
    apply_sink_reuse(manifest, True)
    apply_fingerprints(manifest, "v3", {})
    seconds = time.perf_counter() - start
    assert manifest.nodes["model.lakeplan.target_000"].config["lakeplan_write_groups"]
print(json.dumps({"seconds": seconds}))
"""


def generate(models: int, groups: int) -> object:
    files = {}
    bases = models - groups * (MEMBERS + 1)
    if bases < 1:
        raise SystemExit(f"--models {models} leaves no room for {groups} targets of {MEMBERS} members each")
    for b in range(bases):
        source = "select id as k, id * 2 as v from range(0, 100)" if b == 0 else f"select k, v + {b} as v from {{{{ ref('base_{b - 1:04d}') }}}}"
        files[f"models/base/base_{b:04d}.sql"] = "{{ config(materialized='view') }}\n" + source
    for g in range(groups):
        columns = ["      - {name: k, data_type: bigint}"]
        for m in range(MEMBERS):
            base = (g * MEMBERS + m) % bases
            files[f"models/wide/member_{g:03d}_{m}.sql"] = (
                f"{{{{ config(partial_update_target='target_{g:03d}') }}}}\n"
                f"select k, v * {m + 1} as c{m} from {{{{ ref('base_{base:04d}') }}}}"
            )
            columns.append(f"      - {{name: c{m}, data_type: bigint}}")
        files[f"models/wide/target_{g:03d}.sql"] = "{{ partial_update_target() }}\n"
        files[f"models/wide/target_{g:03d}.yml"] = (
            f"version: 2\nmodels:\n  - name: target_{g:03d}\n    config: {{unique_key: k}}\n    columns:\n" + "\n".join(columns) + "\n"
        )
    return write_project(f"plugin_overhead_{models}", files)


def measure(project, mode: str) -> float:
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    out = subprocess.run([sys.executable, "-c", WORKER, PLUGINS, mode, str(project)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=2000)
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat, nothing recorded")
    args = parser.parse_args(argv)
    if args.smoke:
        args.models, args.groups, args.repeats = 30, 3, 1
    project = generate(args.models, args.groups)
    runs = [
        {"measure": mode, "repeat": repeat, "seconds": round(measure(project, mode), 4)}
        for repeat in range(args.repeats) for mode in ("postprocess", "with_plugin", "without_plugin")
    ]  # fmt: skip
    rows = medians(runs, ("measure",), ("seconds",))
    result = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "models": args.models, "groups": args.groups,
              "members_per_group": MEMBERS, "runs": runs, "medians": rows}  # fmt: skip
    if not args.smoke:
        by = {r["measure"]: r["seconds"] for r in rows}
        record("plugin_overhead", result, markdown_table(
            ["models", "partial-update groups", "post-processing s", "dbt parse with plugin s", "dbt parse without s",
             "parse slower by"],
            [[f"{args.models:,}", args.groups, f"{by['postprocess']:.3f}", f"{by['with_plugin']:.1f}",
              f"{by['without_plugin']:.1f}", f"{(by['with_plugin'] / by['without_plugin'] - 1) * 100:.1f}%"]]))  # fmt: skip
        bar_chart(RESULTS / "plugin_overhead.png", f"dbt parse, {args.models:,} models, {args.groups} groups (median s)",
                  "seconds", {"post-processing": by["postprocess"], "parse with plugin": by["with_plugin"],
                              "parse without plugin": by["without_plugin"]})  # fmt: skip
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
