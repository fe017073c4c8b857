"""dbt behaviours that break on Spark's session catalog with Iceberg unless lakeplan fixes them."""

from tests.conftest import write_files


def test_a_changed_view_returns_its_new_rows(make_project, spark):
    # Iceberg's `create or replace view` keeps the old query text; lakeplan drops and creates instead.
    project = make_project("views", {"models/answer.sql": "select 1 as answer"})
    project.run("run")
    write_files(project.path, {"models/answer.sql": "select 2 as answer"})
    project.run("run")
    assert spark.sql("select answer from lakeplan_views.answer").collect()[0].answer == 2

    write_files(project.path, {"models/answer.sql": "select 3 as renamed"})
    project.run("run")
    assert spark.sql("select * from lakeplan_views.answer").columns == ["renamed"]
