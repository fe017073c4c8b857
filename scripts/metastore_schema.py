"""Creates the shared catalog's whole Hive metastore schema in PostgreSQL, once (scripts/catalog.sh up): one Spark
session with DataNucleus's autoCreateAll on makes and drops every kind of object a user makes, so that DataNucleus
creates each table, column and constraint it maps now, alone. Every other process runs with autoCreateAll off and
never changes the schema (it would wait on its own JVM's open transaction, forever)."""

from pyspark.sql import SparkSession

SCRATCH = "lakeplan_schema_setup"
OBJECTS = [
    f"drop database if exists {SCRATCH} cascade",
    f"create database {SCRATCH}",
    f"create table {SCRATCH}.plain (a int, b string) using parquet",
    f"insert into {SCRATCH}.plain values (1, 'x')",
    f"create table {SCRATCH}.parted (a int, b int) using parquet partitioned by (b)",
    f"insert into {SCRATCH}.parted values (1, 1)",
    f"create table {SCRATCH}.hive_text (a int) stored as textfile",
    f"create table {SCRATCH}.iceberg (a int) using iceberg",
    f"insert into {SCRATCH}.iceberg values (1)",
    f"create view {SCRATCH}.a_view as select a from {SCRATCH}.plain",
    f"alter table {SCRATCH}.plain set tblproperties ('lakeplan' = 'schema')",
    f"analyze table {SCRATCH}.plain compute statistics for columns a, b",
    f"analyze table {SCRATCH}.parted partition (b = 1) compute statistics for columns a",
    f"create function {SCRATCH}.an_upper as 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'",
    f"drop function {SCRATCH}.an_upper",
    f"drop database {SCRATCH} cascade",
]

spark = (SparkSession.builder.enableHiveSupport()
         .config("spark.hadoop.datanucleus.schema.autoCreateAll", "true").getOrCreate())
for statement in OBJECTS:
    print(statement, flush=True)
    spark.sql(statement).collect()
