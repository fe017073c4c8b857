"""lakeplan's dbt plugin: the dbt glue behind the package's `plugins` (__init__.py loads it when dbt asks).

It also fixes dbt-spark's adapter: quoting, Iceberg tables' format, missing columns' names, errors (spark_adapter.py),
makes `dbt compile` of a partial-update target show its write (compiled_write.py), and keeps a package's YAML on that
package's own nodes (package_yaml.py); a manifest handed to dbt again is compiled afresh (manifest_reuse.py).

dbt calls a plugin's `get_manifest_artifacts` only when it writes JSON, after manifest.json is written, and
not at all for `docs generate` or `--no-write-json`. lakeplan's rewrite must reach every command, so the
plugin wraps the one function all of them load the manifest through; the hook writes lakeplan's reports.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from dbt.events.types import JinjaLogWarning
from dbt.parser.manifest import ManifestLoader
from dbt.plugins.manager import dbt_hook, dbtPlugin
from dbt_common.events.functions import warn_or_error

from dbt_lakeplan.artifacts import FINGERPRINTS_FILE, SINK_REUSE_FILE, SQL_CACHE_FILE, JsonArtifact, read_cache, write_cache
from dbt_lakeplan.manifest_fingerprints import apply_fingerprints
from dbt_lakeplan import compiled_write, manifest_reuse, package_yaml, session_catalog, spark_adapter
from dbt_lakeplan.planner import plan_project

REPORTS_ATTRIBUTE = "_lakeplan_reports"
LAKEPLANS_INCREMENTAL = "lakeplan.materialization_incremental_spark"  # what a project's own override returns
# dbt's artifact folder for the project loaded last in this process, as dbt resolved it (flag, env, dbt_project.yml,
# rendered): explain writes beside it, also when the load then fails
loaded_target_path: str | None = None


def project_default_vars(config) -> dict[str, Any]:
    """The vars dbt_project.yml sets for the root project (never --vars: those change from run to run)."""
    declared = config.vars.to_dict()
    scoped = declared.get(config.project_name, {})
    return {**{k: v for k, v in declared.items() if not isinstance(v, dict)}, **scoped}


def warn_without_lakeplans_incremental(manifest, project_name: str) -> None:
    """A project that has lakeplan as a package runs its incremental models on dbt-spark's materialization unless
    its own macros name lakeplan's: dbt 1.11 takes a package's materialization of a built-in name only from the root
    project (require_explicit_package_overrides_for_builtin_materializations), and says nothing. Without lakeplan's,
    two overlapping runs of an `append` model on a shared catalog store the new rows twice (docs/team.md)."""
    found = manifest.find_materialization_macro_by_name(project_name, "incremental", "spark")
    if found is None or found.package_name == "lakeplan" or LAKEPLANS_INCREMENTAL in found.macro_sql:
        return
    models = sorted(node.name for node in manifest.nodes.values() if node.resource_type == "model"
                    and node.config.materialized == "incremental" and node.config.enabled)  # fmt: skip
    if models:
        warn_or_error(JinjaLogWarning(msg=(
            f"lakeplan: incremental model{'s' if len(models) > 1 else ''} {', '.join(f'`{m}`' for m in models)} "
            f"run{'' if len(models) > 1 else 's'} on dbt-spark's incremental materialization, not lakeplan's, so on a "
            "shared catalog (targets team, cluster) two overlapping runs of an append model store the new rows "
            "twice. Fix: add macros/lakeplan_incremental.sql holding `{% materialization incremental, adapter='spark', "
            "supported_languages=['sql', 'python'] %}{{ return(lakeplan.materialization_incremental_spark()) }}"
            "{% endmaterialization %}` (README, \"lakeplan in an existing dbt project\").")))


def warn_without_lakeplans_ref(manifest, project_name: str) -> None:
    """`ref()` of a target in `change_mode: delta` reads it merged with its delta rows only through lakeplan's `ref`
    (macros/utils/ref.sql), and dbt takes a `ref` macro from the root project alone: a project that has lakeplan as
    a package would read the table's stored and delta rows side by side (a key twice, changes not applied)."""
    found = manifest.macros.get(f"macro.{project_name}.ref")
    if found is not None and ("lakeplan.ref(" in found.macro_sql or "lakeplan_merged_relation" in found.macro_sql):
        return
    models = sorted(node.name for node in manifest.nodes.values() if node.resource_type == "model"
                    and node.config.get("change_mode") == "delta" and node.config.enabled)  # fmt: skip
    if models:
        warn_or_error(JinjaLogWarning(msg=(
            f"lakeplan: {', '.join(f'`{m}`' for m in models)} {'are' if len(models) > 1 else 'is'} in change_mode "
            f"delta, but this project's `ref()` is dbt's, not lakeplan's, so a model that reads "
            f"{'them' if len(models) > 1 else 'it'} would read the stored rows and the delta rows side by side. Fix: "
            "add macros/lakeplan_ref.sql holding `{% macro ref() %}{{ return(lakeplan.ref(*varargs, **kwargs)) }}"
            "{% endmacro %}` (README, \"lakeplan in an existing dbt project\").")))


def _with_lakeplan(load):
    @functools.wraps(load)
    def get_full_manifest(cls, config, **kwargs):
        global loaded_target_path
        loaded_target_path = config.project_target_path
        manifest = load(cls, config, **kwargs)
        defaults = project_default_vars(config)
        cache_path = os.path.join(config.project_target_path, SQL_CACHE_FILE)
        sql_cache = read_cache(cache_path)
        cached = dict(sql_cache)
        settings, sink_reuse = plan_project(manifest, {**defaults, **config.cli_vars})
        warn_without_lakeplans_incremental(manifest, config.project_name)
        warn_without_lakeplans_ref(manifest, config.project_name)
        reports = {
            SINK_REUSE_FILE: sink_reuse,
            FINGERPRINTS_FILE: apply_fingerprints(manifest, settings.fingerprint_version, defaults, sql_cache),
        }
        manifest.build_flat_graph()  # `graph` in macros (the state check) reads the configs set above
        if sql_cache != cached:
            write_cache(cache_path, sql_cache)
        setattr(manifest, REPORTS_ATTRIBUTE, (config.project_target_path, reports))
        return manifest

    get_full_manifest.lakeplan = True
    return get_full_manifest


class LakeplanPlugin(dbtPlugin):
    def initialize(self) -> None:
        spark_adapter.install()
        session_catalog.install()
        compiled_write.install()
        package_yaml.install()
        manifest_reuse.install()
        load = ManifestLoader.get_full_manifest.__func__
        if not getattr(load, "lakeplan", False):
            ManifestLoader.get_full_manifest = classmethod(_with_lakeplan(load))

    @dbt_hook
    def get_manifest_artifacts(self, manifest):
        target_path, reports = getattr(manifest, REPORTS_ATTRIBUTE)
        return {os.path.join(target_path, name): JsonArtifact(data) for name, data in reports.items()}
