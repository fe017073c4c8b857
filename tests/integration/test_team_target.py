"""The `team` target names its own Spark settings folder (the shared catalog's); a process whose Spark already runs
on another catalog refuses it in one sentence instead of writing to the wrong metastore."""


def test_a_spark_started_on_another_catalog_refuses_the_team_target(make_project):
    project = make_project("team_target", {"models/one.sql": "select 1 as one"})  # this process's Spark: embedded
    project.fail("run", "--target", "team")
    assert "this process's Spark already runs with the settings in" in project.shown
    assert "Fix: run dbt for that target in a process of its own." in project.shown
