"""Takes the Hive lock Iceberg takes for a commit (an exclusive table lock in the shared catalog's metastore, as
Iceberg's MetastoreLock asks for it), prints `locked <lock id>` and heartbeats it every 5 s as a live commit does,
until the test kills it with SIGKILL, leaving the lock behind as a writer killed mid-commit does.

    python lock_holder.py <database> <table>
"""

import sys
import time

from pyspark.sql import SparkSession


def main(database: str, table: str) -> None:
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    jvm, api = spark._jvm, spark._jvm.org.apache.hadoop.hive.metastore.api
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf(spark._jsc.hadoopConfiguration(),
                                                    jvm.org.apache.hadoop.hive.conf.HiveConf._java_lang_class)
    client = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
    component = api.LockComponent(api.LockType.EXCLUSIVE, api.LockLevel.TABLE, database)
    component.setTablename(table)
    response = client.lock(api.LockRequest(jvm.java.util.Collections.singletonList(component), "lakeplan", "holder"))
    assert str(response.getState()) == "ACQUIRED", response
    print(f"locked {response.getLockid()}", flush=True)
    while True:
        time.sleep(5)
        client.heartbeat(0, response.getLockid())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
