"""Creates the shared catalog's whole Hive metastore schema in PostgreSQL, once (scripts/catalog.sh up), before any
process writes to it. DataNucleus (autoCreateAll on in this session alone) creates each class's table, columns and
foreign keys the first time a JVM uses the class; inside a write, that DDL runs on a second connection and waits on
the write's own open transaction (a foreign key to "TBLS" while a new table's row is uncommitted): a wait PostgreSQL
sees no deadlock in, so it hangs for good. So every class the metastore maps (hive-metastore's package.jdo) is read
here first, outside any transaction, and then every kind of object a user makes is made and dropped to prove it."""

import re
import zipfile
from pathlib import Path

import pyspark
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


def mapped_classes() -> list[str]:
    """The classes DataNucleus maps to the metastore's tables, from hive-metastore's own package.jdo."""
    [jar] = (Path(pyspark.__file__).parent / "jars").glob("hive-metastore-*.jar")
    jdo = zipfile.ZipFile(jar).read("package.jdo").decode()
    package = re.search(r'<package name="([\w.]+)"', jdo).group(1)
    return [f"{package}.{name}" for name in re.findall(r'<class name="(\w+)"', jdo)]


def create_every_table(spark) -> None:
    """Each mapped class read once, outside a transaction: DataNucleus creates its table and constraints now."""
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf(spark.sparkContext._jsc.hadoopConfiguration(),
                                                    jvm.java.lang.Class.forName("org.apache.hadoop.hive.conf.HiveConf"))
    store = jvm.org.apache.hadoop.hive.metastore.ObjectStore()
    store.setConf(conf)
    manager = store.getPersistenceManager()
    for name in mapped_classes():
        print("reading", name, flush=True)
        query = manager.newQuery(jvm.java.lang.Class.forName(name))
        query.setRange(0, 1)
        query.execute()
    manager.close()


spark = (SparkSession.builder.enableHiveSupport()
         .config("spark.hadoop.datanucleus.schema.autoCreateAll", "true").getOrCreate())
spark.sql("show databases").collect()  # the metastore's own start (its default database and roles)
create_every_table(spark)
for statement in OBJECTS:
    print(statement, flush=True)
    spark.sql(statement).collect()
