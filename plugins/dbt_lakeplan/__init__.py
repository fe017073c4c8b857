"""lakeplan's dbt plugin. dbt finds it as a top-level module named `dbt_*` with `plugins = [...]`.

It also fixes two things in dbt-spark's adapter: quoting, and Iceberg tables' format (spark_adapter.py).

dbt calls a plugin's `get_manifest_artifacts` only when it writes JSON, after manifest.json is written, and
not at all for `docs generate` or `--no-write-json`. lakeplan's rewrite must reach every command, so the
plugin wraps the one function all of them load the manifest through; the hook writes lakeplan's reports.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from dbt.parser.manifest import ManifestLoader
from dbt.plugins.manager import dbt_hook, dbtPlugin

from dbt_common.exceptions import CompilationError

from dbt_lakeplan.artifacts import FINGERPRINTS_FILE, SINK_REUSE_FILE, SQL_CACHE_FILE, JsonArtifact, read_cache, write_cache
from dbt_lakeplan.fingerprint import VERSIONS
from dbt_lakeplan.manifest_fingerprints import apply_fingerprints
from dbt_lakeplan import spark_adapter
from dbt_lakeplan.rewrite import PartialUpdateConfigError, apply_sink_reuse

REPORTS_ATTRIBUTE = "_lakeplan_reports"


class FingerprintConfigError(CompilationError):
    """The fingerprint settings name no fingerprint lakeplan can compute."""


def project_default_vars(config) -> dict[str, Any]:
    """The vars dbt_project.yml sets for the root project (never --vars: those change from run to run)."""
    declared = config.vars.to_dict()
    scoped = declared.get(config.project_name, {})
    return {**{k: v for k, v in declared.items() if not isinstance(v, dict)}, **scoped}


def project_var(config, name: str, default: Any) -> Any:
    """A var as the project sees it: --vars first, then the project's own, then the default."""
    return config.cli_vars.get(name, project_default_vars(config).get(name, default))


def _with_lakeplan(load):
    @functools.wraps(load)
    def get_full_manifest(cls, config, **kwargs):
        manifest = load(cls, config, **kwargs)
        reuse_enabled = project_var(config, "reuse_sink_enabled", True)
        if not isinstance(reuse_enabled, bool):
            raise PartialUpdateConfigError(
                f"var reuse_sink_enabled is {reuse_enabled!r}; it must be true or false.\n"
                "Fix: `--vars '{reuse_sink_enabled: false}'` or `vars: {reuse_sink_enabled: true}` in dbt_project.yml."
            )
        version = project_var(config, "fingerprint_version", "v3")
        if version not in VERSIONS:
            raise FingerprintConfigError(
                f"var fingerprint_version is {version!r}; lakeplan computes {' or '.join(VERSIONS)} fingerprints.\n"
                "Fix: set `fingerprint_version: v3` (the default: chaining-agnostic) or `v2` in dbt_project.yml vars."
            )
        cache_path = os.path.join(config.project_target_path, SQL_CACHE_FILE)
        sql_cache = read_cache(cache_path)
        cached = dict(sql_cache)
        reports = {
            SINK_REUSE_FILE: apply_sink_reuse(manifest, reuse_enabled),
            FINGERPRINTS_FILE: apply_fingerprints(manifest, version, project_default_vars(config), sql_cache),
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
        load = ManifestLoader.get_full_manifest.__func__
        if not getattr(load, "lakeplan", False):
            ManifestLoader.get_full_manifest = classmethod(_with_lakeplan(load))

    @dbt_hook
    def get_manifest_artifacts(self, manifest):
        target_path, reports = getattr(manifest, REPORTS_ATTRIBUTE)
        return {os.path.join(target_path, name): JsonArtifact(data) for name, data in reports.items()}


plugins = [LakeplanPlugin]
