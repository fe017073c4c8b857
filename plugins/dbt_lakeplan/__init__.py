"""lakeplan's dbt plugin. dbt finds it as a top-level module named `dbt_*` with `plugins = [...]`.

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

from dbt_lakeplan.artifacts import SINK_REUSE_FILE, JsonArtifact
from dbt_lakeplan.rewrite import PartialUpdateConfigError, apply_sink_reuse

REPORTS_ATTRIBUTE = "_lakeplan_reports"


def project_var(config, name: str, default: Any) -> Any:
    """A var as the project sees it: --vars first, then the project's own, then the default."""
    if name in config.cli_vars:
        return config.cli_vars[name]
    project_vars = config.vars.to_dict()
    return project_vars.get(config.project_name, {}).get(name, project_vars.get(name, default))


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
        reports = {SINK_REUSE_FILE: apply_sink_reuse(manifest, reuse_enabled)}
        setattr(manifest, REPORTS_ATTRIBUTE, (config.project_target_path, reports))
        return manifest

    get_full_manifest.lakeplan = True
    return get_full_manifest


class LakeplanPlugin(dbtPlugin):
    def initialize(self) -> None:
        load = ManifestLoader.get_full_manifest.__func__
        if not getattr(load, "lakeplan", False):
            ManifestLoader.get_full_manifest = classmethod(_with_lakeplan(load))

    @dbt_hook
    def get_manifest_artifacts(self, manifest):
        target_path, reports = getattr(manifest, REPORTS_ATTRIBUTE)
        return {os.path.join(target_path, name): JsonArtifact(data) for name, data in reports.items()}


plugins = [LakeplanPlugin]
