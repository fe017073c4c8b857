"""One writer of the concurrency test (tests/integration/test_concurrent_commits.py), run as its own process:
starts Spark with the SPARK_CONF_DIR it is given, says it is ready, waits at the barrier, then commits `commits`
times to one plain Iceberg table, one row per INSERT statement (one Iceberg commit each).

    python plain_writer.py <table> <writer> <commits> <barrier folder>
"""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession


def wait_at_barrier(barrier: Path, writer: int) -> None:
    (barrier / f"ready-{writer}").touch()
    while not (barrier / "go").exists():
        time.sleep(0.05)


def main(table: str, writer: int, commits: int, barrier: Path) -> None:
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    spark.sql(f"select count(*) from {table}").collect()  # catalog and table open before the barrier
    wait_at_barrier(barrier, writer)
    for commit in range(commits):
        spark.sql(f"insert into {table} values ({writer}, {commit}, {writer * 1000 + commit})")
        print(f"committed {writer} {commit}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
