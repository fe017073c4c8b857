"""Benchmark: what lakeplan's dbt plugin adds to parsing a large project.

A generated project of MODELS models: GROUPS partial-update targets with MEMBERS members each, and plain views
for the rest (every member reads one). Figures, each in a fresh Python process (no Spark needed):
  postprocess  the plugin's manifest post-processing alone (the planner + fingerprints) on a parsed manifest,
               cold and with every node's SQL in the plugin's cache (target/lakeplan_sql_cache.json)
  parse        `dbt parse --no-partial-parse` without the plugin (plugins/ off sys.path: the parse the post-processing
               process times before it post-processes), and with it, cache removed (cold) and as a later run finds it

  python bench/plugin_overhead.py [--models 2000] [--groups 200] [--repeats 3] | --smoke
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from common import RESULTS, ROOT, arguments, bar_chart, markdown_table, medians, record, write_project

MEMBERS = 4
PLUGINS = str(ROOT / "plugins")

# Runs in a child process: parse with the plugin, or without it and then time the post-processing alone.
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
figures = {mode: seconds}
if mode == "without_plugin":  # then the post-processing alone, on the manifest just parsed without the plugin
    sys.path.insert(0, plugins)
    from dbt_lakeplan.planner import plan_project
    from dbt_lakeplan.manifest_fingerprints import apply_fingerprints
    manifest, sql_cache = result.result, {}
    for name in ("postprocess_cold", "postprocess_cached"):  # the second pass finds every node's SQL in the cache
        start = time.perf_counter()
        plan_project(manifest, {})
        apply_fingerprints(manifest, "v3", {}, sql_cache)
        figures[name] = time.perf_counter() - start
    assert manifest.nodes["model.lakeplan.target_000"].config["lakeplan_plan"]["partial_update"]["groups"]
print(json.dumps(figures))
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


def measure(project, mode: str) -> dict[str, float]:
    """Seconds per measure, from a fresh Python process (`without_plugin`'s also times the post-processing)."""
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    if mode == "with_plugin_cold":
        (project / "target" / "lakeplan_sql_cache.json").unlink(missing_ok=True)
    worker_mode = "with_plugin" if mode.startswith("with_plugin") else mode
    out = subprocess.run([sys.executable, "-c", WORKER, PLUGINS, worker_mode, str(project)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    return {mode if name == worker_mode else name: seconds for name, seconds in figures.items()}


def main(argv: list[str] | None = None) -> dict:
    args = arguments(__doc__, argv, models=(2000, 6), groups=(200, 1))
    project = generate(args.models, args.groups)
    runs = [
        {"measure": name, "repeat": repeat, "seconds": round(seconds, 4)}
        for repeat in range(args.repeats)
        for mode in ("without_plugin", "with_plugin_cold", "with_plugin")
        for name, seconds in measure(project, mode).items()
    ]
    rows = medians(runs, ("measure",), ("seconds",))
    result = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "models": args.models, "groups": args.groups,
              "members_per_group": MEMBERS, "runs": runs, "medians": rows}  # fmt: skip
    if not args.smoke:
        by = {r["measure"]: r["seconds"] for r in rows}

        def slower(mode: str) -> float:
            return (by[mode] / by["without_plugin"] - 1) * 100

        record("plugin_overhead", result, markdown_table(
            ["models", "groups", "post-processing s (cold / SQL cached)", "dbt parse without plugin s",
             "with plugin s (cold / SQL cached)", "parse slower by (cold / SQL cached)"],
            [[f"{args.models:,}", args.groups, f"{by['postprocess_cold']:.3f} / {by['postprocess_cached']:.3f}",
              f"{by['without_plugin']:.1f}", f"{by['with_plugin_cold']:.1f} / {by['with_plugin']:.1f}",
              f"{slower('with_plugin_cold'):.1f}% / {slower('with_plugin'):.1f}%"]]))  # fmt: skip
        bar_chart(RESULTS / "plugin_overhead.png", f"dbt parse, {args.models:,} models, {args.groups} groups (median s)",
                  "seconds", {"post-processing": by["postprocess_cold"], "parse without plugin": by["without_plugin"],
                              "parse with plugin": by["with_plugin_cold"], "... SQL cached": by["with_plugin"]})  # fmt: skip
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
