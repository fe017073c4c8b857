"""Plain dbt from the project root: outside the activated venv it stops with one sentence, before Spark starts.
(The activated case, `dbt build` and `sqlfluff lint` in a shell with only PATH and HOME, ends `make test`.)"""

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_dbt_outside_the_activated_venv_names_what_is_missing():
    dbt = Path(sys.executable).parent / "dbt"  # the venv's dbt, without the activate script's environment
    scrubbed = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ["HOME"]}
    run = subprocess.run([str(dbt), "parse"], cwd=REPO, env=scrubbed, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "Env var required but not provided: 'SPARK_CONF_DIR'" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr and "java" not in (run.stdout + run.stderr).lower()


def test_the_activate_script_carries_lakeplans_environment():
    script = f"source {REPO}/.venv/bin/activate && env"
    scrubbed = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ["HOME"]}
    env = subprocess.run(["bash", "-c", script], env=scrubbed, capture_output=True, text=True, check=True).stdout
    values = dict(line.split("=", 1) for line in env.splitlines() if "=" in line)
    assert values["SPARK_CONF_DIR"] == f"{REPO}/.lakeplan/spark-conf"
    assert values["DBT_PROFILES_DIR"] == str(REPO / "profiles")
    assert values["LAKEPLAN_TPCH_DIR"] == f"{REPO}/.lakeplan/data/tpch/sf0.01"
    assert (Path(values["SPARK_CONF_DIR"]) / "spark-defaults.conf").read_text().count("IcebergSparkSessionExtensions") == 1


def test_the_session_runs_with_lakeplans_spark_settings(spark):
    # What SPARK_CONF_DIR carries counts only when the JVM starts: read it back from the running JVM.
    conf = spark.sparkContext.getConf()
    assert spark.conf.get("spark.sql.catalog.spark_catalog") == "org.apache.iceberg.spark.SparkSessionCatalog"
    assert "IcebergSparkSessionExtensions" in spark.conf.get("spark.sql.extensions")
    assert f"-Dderby.system.home={os.environ['LAKEPLAN_HOME']}/metastore" in conf.get("spark.driver.extraJavaOptions")
    assert spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory() > 3 * 1024**3  # driver memory 4g
