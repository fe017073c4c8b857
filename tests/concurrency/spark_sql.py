"""Runs SQL statements in a Spark process of its own (SPARK_CONF_DIR: the catalog to use) and prints each one's rows
as one JSON list: the concurrency tests read the shared catalog with it (pytest's own Spark runs on the embedded one).

    python spark_sql.py <statement> [<statement> ...]
"""

import json
import sys

from pyspark.sql import SparkSession

if __name__ == "__main__":
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    results = [[row.asDict(recursive=True) for row in spark.sql(statement).collect()] for statement in sys.argv[1:]]
    print("ROWS " + json.dumps(results, default=str))
