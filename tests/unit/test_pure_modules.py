"""lakeplan's pure modules import without dbt (and without Spark): only the glue behind the plugin needs them."""

import json
import subprocess
import sys
from pathlib import Path

import dbt_lakeplan
from tests.conftest import REPO

# Each module of the package is one or the other; a new module must be placed here.
WITHOUT_DBT = (
    "artifacts", "cancel", "catalog_watch", "concurrency", "digest", "explain", "explain_layout", "explain_render",
    "explain_state", "fingerprint", "grouping", "jvm_stopped", "manifest_fingerprints", "materializations",
    "merge_rules", "metastore_lock", "node_plan", "normalize", "partial_update", "sequence_groups", "settings",
    "spark_setup", "spark_types", "statement_options",
)  # fmt: skip
DBT_GLUE = ("cli", "compiled_write", "explain_dbt", "manifest_reuse", "package_yaml", "planner", "plugin",
            "session_catalog", "spark_adapter")

# Runs in a fresh interpreter: importing dbt, any dbt_* distribution but lakeplan's, or pyspark fails there.
IMPORT_WITHOUT_DBT = """
import importlib, importlib.abc, json, sys

class NoDbt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in ("dbt", "pyspark") or (top.startswith("dbt_") and top != "dbt_lakeplan"):
            raise ImportError(f"{name} is not importable here")

sys.meta_path.insert(0, NoDbt())
failed = {}
for module in json.loads(sys.argv[1]):
    try:
        importlib.import_module(module)
    except ImportError as error:
        failed[module] = str(error)
print(json.dumps(failed))
"""


def test_every_module_is_either_pure_or_dbt_glue():
    package = Path(dbt_lakeplan.__file__).parent
    modules = {path.stem for path in package.glob("*.py")} - {"__init__"}
    assert modules == set(WITHOUT_DBT) | set(DBT_GLUE)
    assert not set(WITHOUT_DBT) & set(DBT_GLUE)


def test_the_pure_modules_import_where_dbt_cannot():
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_WITHOUT_DBT, json.dumps(["dbt_lakeplan", *(f"dbt_lakeplan.{m}" for m in WITHOUT_DBT)])],
        capture_output=True, text=True, cwd=REPO, check=True,
    )  # fmt: skip
    assert json.loads(run.stdout) == {}


def test_the_blocker_does_block_dbt():
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_WITHOUT_DBT, json.dumps(["dbt_lakeplan.plugin"])],
        capture_output=True, text=True, cwd=REPO, check=True,
    )  # fmt: skip
    assert "dbt" in json.loads(run.stdout)["dbt_lakeplan.plugin"]
