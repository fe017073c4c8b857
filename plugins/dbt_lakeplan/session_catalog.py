"""A session target names its Spark settings folder (`spark.lakeplan.conf_dir` in its `server_side_parameters`):
`local` the activated venv's SPARK_CONF_DIR (Derby), `team` the shared catalog's. dbt-spark's session method starts
Spark inside dbt's process on its first statement, and Spark reads SPARK_CONF_DIR only then; so before that
statement the folder the target names becomes SPARK_CONF_DIR, and a Spark already started with another folder stops
the statement with one sentence (spark_setup.conf_dir_to_start) instead of writing to the wrong catalog."""

from __future__ import annotations

import functools
import os

from dbt_lakeplan.spark_setup import CONF_DIR_SETTING, conf_dir_to_start


def running_conf_dir() -> str | None:
    """The settings folder this process's Spark started with, or None while no Spark runs here."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    return None if active is None else _started_with(active)


@functools.lru_cache(maxsize=1)
def _started_with(context) -> str | None:
    """The settings folder `context` started with. A running context's settings do not change, so each context's are
    read once: `getConf()` copies every setting through py4j, 18 ms before each of a write's ~60 statements."""
    return context.getConf().get(CONF_DIR_SETTING, os.environ.get("SPARK_CONF_DIR"))


def _with_targets_conf_dir(execute):
    @functools.wraps(execute)
    def execute_with_conf_dir(self, sql, *parameters):
        requested = self.server_side_parameters.get(CONF_DIR_SETTING)
        start_with = requested and conf_dir_to_start(requested, running_conf_dir())
        if start_with:
            os.environ["SPARK_CONF_DIR"] = start_with
        return execute(self, sql, *parameters)

    execute_with_conf_dir.lakeplan = True
    return execute_with_conf_dir


def install() -> None:
    """Wraps dbt-spark's session cursor once per process (a missing `session` extra leaves nothing to wrap)."""
    try:
        from dbt.adapters.spark.session import Cursor
    except ImportError:
        return
    if not getattr(Cursor.execute, "lakeplan", False):
        Cursor.execute = _with_targets_conf_dir(Cursor.execute)
