"""Runs SQL statements in a Spark process of its own (SPARK_CONF_DIR: the catalog to use) and prints each one's rows
as one JSON list: the concurrency tests read the shared catalog with it (pytest's own Spark runs on the embedded one).
With `--serve` it stays up and answers each line of its input (a JSON list of statements) the same way, so a test
module starts its JVM once.

    python spark_sql.py <statement> [<statement> ...]
    python spark_sql.py --serve
"""

import json
import sys

from pyspark.sql import SparkSession


def answer(spark, statements: list[str]) -> None:
    results = [[row.asDict(recursive=True) for row in spark.sql(statement).collect()] for statement in statements]
    print("ROWS " + json.dumps(results, default=str), flush=True)


if __name__ == "__main__":
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    if sys.argv[1:] != ["--serve"]:
        answer(spark, sys.argv[1:])
    else:
        for line in sys.stdin:
            answer(spark, json.loads(line))
