"""Ctrl-C during a write: the run either stops before the write's commit, leaving the table as it was and the model
reported as an error, or the commit is past its point of no return and dbt reports the model written (OK, no
`CANCEL query` line). Never both cancelled and committed.

SIGINT needs a dbt process of its own, and the embedded Derby metastore takes one process at a time (this test
session's SparkSession holds its own): the dbt processes here, and the one reading the table after each, share a
metastore and warehouse of their own, with the project's Spark settings otherwise."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tests.integration.test_partial_update import member, target_yml

BIN = Path(sys.executable).parent
ROWS = 1000
# work enough that a group's statement runs for seconds: Ctrl-C lands inside it
SLOW = ("select k as id, {value} from (select id % " + str(ROWS) + " as k, max(sha2(cast(id as string), 256)) as h "
        "from range(0, 1000000) group by 1) where h > ''")
FILES = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint", "c": "bigint"},
                                  rules={"a": "sum"}, partial_update_on_delete="ignore"),
    # three write groups (their write_options differ), so the write is three statements on a branch, then its commit
    "models/adds.sql": member("wide", SLOW.format(value="1 as a"), write_options={"spark.sql.shuffle.partitions": 3}),
    "models/bees.sql": member("wide", SLOW.format(value="k as b"), write_options={"spark.sql.shuffle.partitions": 4}),
    "models/sees.sql": member("wide", SLOW.format(value="2 * k as c"), write_options={"spark.sql.shuffle.partitions": 5}),
    # an upsert: its tombstones, then one MERGE that is its commit
    "models/current.sql": "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
    + SLOW.format(value="'+U' as op, k as seq, cast(k as string) as val"),
}  # fmt: skip
READ = """
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.enableHiveSupport().getOrCreate()
state = {}
for table in sys.argv[1:]:
    state[table] = {
        "main": spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").collect()[0][0],
        "changes": spark.sql(f"select count(*) from {table}.history").collect()[0][0],
        "rows": [list(row) for row in spark.sql(f"select * from {table} order by id").collect()],
    }
print("LAKEPLAN_STATE " + json.dumps(state))
"""


def own_metastore(root: Path) -> dict[str, str]:
    """The environment of a dbt process with lakeplan's Spark settings, its metastore and warehouse under `root`."""
    home = os.environ["LAKEPLAN_HOME"]
    conf = root / "spark-conf"
    shutil.copytree(os.environ["SPARK_CONF_DIR"], conf)
    defaults = conf / "spark-defaults.conf"
    defaults.write_text(defaults.read_text().replace(home, str(root)))
    return {**os.environ, "SPARK_CONF_DIR": str(conf), "LAKEPLAN_HOME": str(root), "PYTHONUNBUFFERED": "1"}


def dbt(project, env, *args: str) -> str:
    run = subprocess.run([str(BIN / "dbt"), *args, "--project-dir", str(project.path)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:]
    return run.stdout


def interrupted(project, env, selector: str, when: str) -> str:
    """`dbt run -s <selector>`, sent SIGINT once its debug log shows a statement containing `when` has started;
    what dbt printed."""
    command = [str(BIN / "dbt"), "--debug", "run", "-s", selector, "--project-dir", str(project.path)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    printed = []
    for line in process.stdout:
        printed.append(line)
        if when in line and process.returncode is None:
            process.send_signal(signal.SIGINT)
            when = "\0"  # once
    process.wait(timeout=600)
    output = "".join(printed)
    assert when == "\0", f"dbt never started the statement:\n{output[-4000:]}"
    return output


def state(env, *tables: str) -> dict:
    run = subprocess.run([sys.executable, "-c", READ, *tables], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    [line] = [line for line in run.stdout.splitlines() if line.startswith("LAKEPLAN_STATE ")]
    return json.loads(line.split(" ", 1)[1])


def reported(output: str, model: str) -> tuple[bool, bool]:
    """Whether dbt reported `model` written (OK) and whether it said it cancelled it."""
    written = any(" OK created " in line and f".{model} " in line for line in output.splitlines())
    return written, f"CANCEL query model.lakeplan.{model}" in output


# (the model, the statement whose start the SIGINT follows, whether the write commits)
MOMENTS = [
    ("wide", "-- write group 1 of 3", False),  # during the first group
    ("wide", "-- write group 3 of 3", False),  # during the last group, before the commit
    ("current", "merge into lakeplan_cancel.current as", False),  # during the upsert's MERGE: its jobs are stopped, so it does not commit
    ("wide", "call system.fast_forward", True),  # the commit has started: it completes, the model is written
]


def test_ctrl_c_stops_a_write_before_its_commit_or_reports_it_written(make_project, tmp_path):
    project = make_project("cancel", FILES)
    env = own_metastore(tmp_path)
    dbt(project, env, "run")
    tables = ["lakeplan_cancel.wide", "lakeplan_cancel.current"]
    before = state(env, *tables)
    assert [row[1] for row in before["lakeplan_cancel.wide"]["rows"]] == [1] * ROWS

    for model, when, commits in MOMENTS:
        output = interrupted(project, env, model, when)
        after = state(env, *tables)
        table = f"lakeplan_cancel.{model}"
        written, cancelled = reported(output, model)
        assert (written, cancelled) == (commits, not commits), f"{when}:\n{output[-5000:]}"
        if commits:  # the run applied once: the sum column counts it, and main moved once (the fast-forward)
            assert after[table]["changes"] == before[table]["changes"] + 1
            assert [row[1] for row in after[table]["rows"]] == [row[1] + 1 for row in before[table]["rows"]]
        else:
            assert after == before, f"{when}: the table changed although dbt cancelled {model}:\n{output[-5000:]}"
            assert f"`{model}` was cancelled before its write committed" in output
        before = after
