"""`make new-project` starts a project from the template without the TPC-H example, keeping the rest."""

import re
import shutil
import subprocess

from tests.conftest import REPO, DbtProject, snapshots

KEPT = [
    "Makefile", "profiles/profiles.yml", "pyproject.toml", ".sqlfluff", ".pre-commit-config.yaml",
    ".github/workflows/ci.yml",
    "macros/sources/scan_source.sql", "plugins/dbt_lakeplan/__init__.py", "models/staging/cdc/customer_order_status.sql",
    "tests/unit/test_sqlfluff_macros.py", "tests/integration/test_partial_update.py", "integration_tests/dbt_project.yml",
    "scripts/sqlfluff_library/lakeplan.py",
]
REMOVED = ["models/staging/tpch", "models/marts", "models/intermediate", "seeds/market_segments.csv", "bench", "scripts/tpch_data.sh"]


def test_a_new_project_has_no_example_and_builds(tmp_path, spark, monkeypatch):
    new = tmp_path / "my_lakehouse"
    subprocess.run([str(REPO / "scripts" / "new_project.sh"), str(new)], check=True)
    assert [path for path in KEPT if not (new / path).exists()] == []
    assert [path for path in REMOVED if (new / path).exists()] == []
    readme = (new / "README.md").read_text()
    assert readme.startswith("> **Started from the lakeplan template (`make new-project`), without its TPC-H example.**")
    assert readme.endswith((REPO / "README.md").read_text())  # the template's README follows, whole
    needs_example = re.compile(r"def test_\w+\([^)]*\b(built|example)\b")
    assert [test.name for test in (new / "tests").rglob("test_*.py") if needs_example.search(test.read_text())] == []
    monkeypatch.setenv("LAKEPLAN_SCHEMA", "lakeplan_new_project")
    spark.sql("drop schema if exists lakeplan_new_project cascade")
    project = DbtProject(new)
    result = project.run("build")
    assert "unused configuration paths" not in project.shown  # dbt warned on every command (marts, seeds, snapshots)
    assert {r.node.name for r in result.result.results if r.node.resource_type == "model"} == {
        "stg_customer_order_status_changes", "customer_order_status"}
    assert snapshots(spark, "lakeplan_new_project.customer_order_status") >= 1


def test_a_new_project_takes_the_files_git_tracks_and_no_stray_output(tmp_path):
    """A dbt run's artifacts under a --target-path of its own, untracked and not ignored, stayed in the new project
    (a new user's trial: manifest.json and compiled SQL came along)."""
    template = tmp_path / "template"
    subprocess.run(["git", "clone", "-q", str(REPO), str(template)], check=True)
    shutil.copy(REPO / "scripts" / "new_project.sh", template / "scripts")  # this checkout's script, committed or not
    (template / "my_artifacts").mkdir()
    (template / "my_artifacts" / "manifest.json").write_text("{}")
    (template / "models" / "staging" / "cdc" / "scratch.sql").write_text("select 1 as id")  # not git-added
    new = tmp_path / "my_lakehouse"
    subprocess.run([str(template / "scripts" / "new_project.sh"), str(new)], check=True, capture_output=True)
    assert not (new / "my_artifacts").exists() and not (new / "models" / "staging" / "cdc" / "scratch.sql").exists()
    assert (new / "models" / "staging" / "cdc" / "customer_order_status.sql").exists()
