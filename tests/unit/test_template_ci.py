"""The CI workflow and pre-commit hooks a project made from the template gets."""

import yaml

from tests.conftest import REPO


def test_the_workflow_sets_up_lints_builds_and_tests_in_the_activated_venv():
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    commands = [step["run"] for step in workflow["jobs"]["build"]["steps"] if "run" in step]
    assert "make setup" in commands
    for command in ("sqlfluff lint models macros", "dbt build", 'pytest -m "not team_catalog"'):
        assert f"source .venv/bin/activate && {command}" in commands
    # the shared catalog's tests need PostgreSQL, which make test-team starts: never in the plain pytest step
    assert "make test-team" in commands
    packages = next(c for c in commands if "apt-get install" in c).split()
    assert {"postgresql", "libpostgresql-jdbc-java"} <= set(packages)


def test_pre_commit_runs_sqlfluffs_own_hooks_at_the_pinned_version():
    [repo] = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())["repos"]
    pinned = next(line.split("==")[1] for line in (REPO / "requirements.txt").read_text().splitlines() if line.startswith("sqlfluff=="))
    assert repo["repo"] == "https://github.com/sqlfluff/sqlfluff" and repo["rev"] == pinned
    assert {hook["id"] for hook in repo["hooks"]} == {"sqlfluff-lint", "sqlfluff-fix"}
