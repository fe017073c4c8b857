"""lakeplan's dbt plugin package. dbt finds it as a top-level module named `dbt_*` and reads its `plugins`.

The plugin and its dbt glue live in plugin.py and are imported only when something reads `plugins` (dbt's
PluginManager does, with `hasattr`), so the pure modules (settings, merge rules, digests, fingerprints, explain)
import and are tested without dbt; tests/unit/test_pure_modules.py holds them to it.
"""


def __getattr__(name: str):
    if name == "plugins":
        from dbt_lakeplan.plugin import LakeplanPlugin

        return [LakeplanPlugin]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
