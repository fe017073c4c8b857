"""lakeplan installed into another dbt project as a package (integration_tests/, `local: ../`), with the
plugin pip-installed: the project builds its partial-update target, changelog upsert and keyed model, and
every data test on them passes."""

from tests.conftest import REPO, DbtProject, snapshots


def test_integration_tests_project_builds_with_lakeplan_as_a_package(spark):
    project = DbtProject(REPO / "integration_tests")
    project.run("deps")
    assert (project.path / "dbt_packages" / "lakeplan" / "macros" / "partial_update").is_dir()
    spark.sql("drop schema if exists lakeplan_integration cascade")
    result = project.run("build")
    # The three members are compiled into their target's one write (they become ephemeral).
    built = {r.node.name for r in result.result.results if r.node.resource_type == "model"}
    assert built == {"account_wide", "account_status", "payments_by_account"}
    tests = [r for r in result.result.results if r.node.resource_type == "test"]
    assert len(tests) >= 12 and all(r.status == "pass" for r in tests)
    assert snapshots(spark, "lakeplan_integration.account_wide") == 1  # three members, one unioned write
    assert spark.sql("select count(*) from lakeplan_integration.account_status").first()[0] == 30
    # `dbt compile` shows the target's write, rendered by the package's macros
    compiled = project.run("compile", "--select", "account_wide").result.results[0].node.compiled_code
    assert "-- write group 1 of 1 of `account_wide`: " in compiled and "merge into lakeplan_integration.account_wide" in compiled
    assert snapshots(spark, "lakeplan_integration.account_wide") == 1
