"""The `lakeplan` console command (pyproject.toml `[project.scripts]`): subcommands over lakeplan's dbt project.

    lakeplan explain [--select ...] [--exclude ...] [--target T] [--vars '{...}'] [--project-dir D] [--target-path D]
                     [--state DIR] [--width N]
    lakeplan setup-spark [--home DIR] [--conf-only] [--settings FILE] [--export NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbt_lakeplan.explain_render import CELL_WIDTH


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakeplan", description="lakeplan's tools for a dbt project on Spark.")
    commands = parser.add_subparsers(dest="command", required=True)
    explain = commands.add_parser(
        "explain", help="how the selected models would run on Spark, and what a change would rebuild; writes nothing",
    )
    explain.add_argument("-s", "--select", nargs="+", default=[], help="dbt's selection")
    explain.add_argument("--exclude", nargs="+", default=[], help="dbt's exclusion")
    explain.add_argument("--target", "-t", help="the profile's target (dbt's --target)")
    explain.add_argument("--vars", help="dbt's --vars, YAML")
    explain.add_argument("--project-dir", help="the dbt project (default: the current folder)")
    explain.add_argument("--target-path", help="where dbt's artifacts and explain's files go (dbt's --target-path; "
                         "default: DBT_TARGET_PATH, else dbt_project.yml's target-path, else target/)")
    explain.add_argument("--state", help="a folder with a previous manifest.json: what the change would rebuild")
    explain.add_argument("--no-progress", action="store_true", help="no progress bar")
    explain.add_argument("--width", type=int, default=CELL_WIDTH, metavar="N",
                         help=f"characters of a table cell before it is cut with `...` (default {CELL_WIDTH}; 0: all)")
    setup = commands.add_parser("setup-spark", help="install lakeplan's Spark jars and settings for this project")
    setup.add_argument("--home", type=Path, default=Path(".lakeplan"),
                       help="where the Spark settings, warehouse and metastore live (default: ./.lakeplan)")
    setup.add_argument("--conf-only", action="store_true", help="write <home>/spark-conf only (no jars, no activation)")
    setup.add_argument("--settings", type=Path,
                       help="Spark settings that override lakeplan's (e.g. a shared catalog's metastore and locks)")
    setup.add_argument("--export", action="append", default=[], metavar="NAME=VALUE",
                       help="one more variable for the activate script's block (repeatable)")
    return parser


def explain_command(args: argparse.Namespace) -> int:
    from dbt_lakeplan import explain_render
    from dbt_lakeplan.explain_dbt import ExplainError, Options, explain_project, target_dir
    from dbt_lakeplan.explain_layout import NoGraphviz

    options = Options(select=args.select, exclude=args.exclude, target=args.target, vars=args.vars,
                      project_dir=args.project_dir, target_path=args.target_path, state=args.state,
                      progress=not args.no_progress)  # fmt: skip
    try:
        report = explain_project(options)
    except (ExplainError, ValueError) as error:
        print(f"lakeplan explain: {error}", file=sys.stderr)
        stale = target_dir()
        for name in (explain_render.JSON_FILE, explain_render.HTML_FILE) if stale else ():  # read as this one's
            (stale / name).unlink(missing_ok=True)
        return 2
    target = target_dir()
    print(explain_render.terminal_table(report, args.width))
    written = [explain_render.write_json(report, target)]
    try:
        written.append(explain_render.write_html(report, target))
    except NoGraphviz as missing:  # the page only: the table and the JSON need no layout
        (target / explain_render.HTML_FILE).unlink(missing_ok=True)
        print(f"lakeplan explain: {missing}", file=sys.stderr)
    print("\nwrote " + " and ".join(str(path) for path in written))
    return 1 if report["errors"] or any(model["error"] for model in report["models"]) else 0


def setup_spark_command(args: argparse.Namespace) -> int:
    from dbt_lakeplan.spark_setup import SetupError, setup_spark

    try:
        for line in setup_spark(args.home, args.conf_only, args.export, args.settings):
            print(f"lakeplan setup-spark: {line}")
    except SetupError as error:
        print(f"lakeplan setup-spark: {error}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return {"explain": explain_command, "setup-spark": setup_spark_command}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
