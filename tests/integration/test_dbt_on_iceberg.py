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


# Issue 16, case 6: empty cells of every type, a quote, a decimal and a date (dbt-spark #901 loaded '' as 'None').
SEED_WITH_EMPTY_CELLS = "id,name,score,flag,day\n1,,1.5,true,2020-01-02\n2,b,,,\n3,it's,2.25,false,\n"
SEED_ROWS = [
    (1, None, 1.5, True, "2020-01-02"),
    (2, "b", None, None, None),
    (3, "it's", 2.25, False, None),
]


def seed_rows(spark, table):
    """A seed table's rows, the date as text (so the same rows compare over Thrift)."""
    return sorted(tuple(row) for row in spark.sql(f"select id, name, score, flag, cast(day as string) from {table}").collect())


def test_empty_seed_cells_load_as_null(make_project, spark):
    project = make_project("seed_nulls", {"seeds/cells.csv": SEED_WITH_EMPTY_CELLS})
    project.run("seed")
    assert seed_rows(spark, "lakeplan_seed_nulls.cells") == SEED_ROWS
    assert spark.sql("select count(*) from lakeplan_seed_nulls.cells where name = 'None'").first()[0] == 0


def metastore_connection_factory(spark) -> int:
    """The identity of the JVM's metastore connection factory (Hive 2.3's ObjectStore keeps it in a static field)."""
    field = spark._jvm.java.lang.Class.forName("org.apache.hadoop.hive.metastore.ObjectStore").getDeclaredField("pmf")
    field.setAccessible(True)
    return spark._jvm.java.lang.System.identityHashCode(field.get(None))


def test_a_run_keeps_the_metastore_connection_factory(make_project, spark):
    # Spark's Hive client and Iceberg's must give the metastore equal settings: Hive replaces the factory (its jar
    # scan, its schema checks and DataNucleus' full GC) whenever a thread's settings differ from the last ones.
    project = make_project("one_factory", {"models/numbers.sql": "{{ config(materialized='table') }}\n"
                                                                 "select id from range(0, 3)"})
    project.run("run")
    before = metastore_connection_factory(spark)
    project.run("run")
    assert metastore_connection_factory(spark) == before
