"""The Spark JVM of a dbt process killed (`kill -9`) while an `upsert` writes: dbt says so in one sentence naming the
model, where to look and what a rerun finds (not Py4J's bare "Error while sending or receiving"), the table is as
the run found it (an Iceberg commit is whole or absent), and a rerun in a new process writes it.

The dbt process (tests/integration/dbt_worker.py) has a metastore and warehouse of its own, as in test_cancel.py:
this session's Spark holds its own embedded Derby. Its JVM is killed once the debug log shows the upsert's MERGE
started, over a query slow enough to be running then. A second dbt process, with a JVM of its own, reads the table
and reruns the model. Two JVM starts, about a minute: the team stage (docs/testing.md), which runs the tests that
start processes of their own, keeps `make test` within its 20 minutes."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import REPO, write_files
from tests.integration.test_cancel import DbtWorker, own_metastore, state

pytestmark = pytest.mark.team_catalog  # several JVMs, about a minute: `make test-team` (docs/testing.md)

ROWS = 1000
ADD = "{{ var('add', 0) }}"
PROJECT_YML = """
name: lakeplan
version: '0.1.0'
config-version: 2
profile: lakeplan
macro-paths: [macros, test_macros]
on-run-start: ["{{ print_state() }}"]
models:
  lakeplan: {+schema: %s, +file_format: iceberg}
"""


def own_project(root: Path, schema: str, files: dict[str, str]) -> Path:
    """A project under `root` with lakeplan's macros and the models of `files` in schema `lakeplan_<schema>`, whose
    every command's on-run-start hook prints the tables (its test_macros/print_state.sql) before it writes."""
    project = root / "project"
    project.mkdir()
    (project / "macros").symlink_to(REPO / "macros")
    write_files(project, {"dbt_project.yml": PROJECT_YML % schema, **files})
    return project


FILES = {
    # `ROWS` keys whose value is the key plus the var `add`; 1,000,000 rows under the var `slow`, so that the MERGE
    # runs for seconds
    "models/current.sql": "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
    f"select k as id, '+U' as op, k + {ADD} as seq, cast(k + {ADD} as string) as val from (\n"
    f"  select id % {ROWS} as k, max(sha2(cast(id as string), 256)) as h\n"
    f"  from range(0, {{{{ 1000000 if var('slow', false) else {ROWS} }}}}) group by 1) where h > ''",
    # the table as one line (test_cancel's state), printed by every command's on-run-start hook before it writes
    "test_macros/print_state.sql": """{% macro print_state() %}
  {%- if execute and adapter.get_relation(none, 'lakeplan_killed', 'current') -%}
    {%- set rows = run_query('select to_json(struct(*)) from lakeplan_killed.current order by id') -%}
    {%- set changes = run_query('select count(*) from lakeplan_killed.current.history') -%}
    {%- do print('LAKEPLAN_STATE ' ~ tojson({'lakeplan_killed.current': {'rows': rows.columns[0].values() | list,
        'changes': changes.columns[0].values()[0] | int}})) -%}
  {%- endif -%}
{% endmacro %}
""",
}
MERGE_STARTED = "merge into lakeplan_killed.current as"


def values(output: str) -> tuple[dict[int, str], int]:
    """The table as the hook printed it: each key's value, and how many commits it has had."""
    table = state(output)["lakeplan_killed.current"]
    return {json.loads(row)["id"]: json.loads(row)["val"] for row in table["rows"]}, table["changes"]


def written(add: int) -> dict[int, str]:
    return {k: str(k + add) for k in range(ROWS)}


def java_child(pid: int) -> int:
    """The Spark JVM that the process `pid` started (pyspark's gateway: spark-submit's java, a descendant)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # a process that ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    below = list(children.get(pid, []))
    while below:
        one = below.pop()
        if (Path("/proc") / str(one) / "comm").read_text().strip() == "java":
            return one
        below += children.get(one, [])
    raise AssertionError(f"no Spark JVM below process {pid}")


def killed_while(worker: DbtWorker, when: str, *args: str) -> tuple[bool, str]:
    """`dbt <args>` whose Spark JVM is killed (`kill -9`) once its debug log shows a statement containing `when`
    started; whether dbt succeeded, what it printed."""
    worker.process.stdin.write(json.dumps(["--debug", *args, "--project-dir", str(worker.project.path)]) + "\n")
    worker.process.stdin.flush()
    printed, jvm = [], java_child(worker.process.pid)
    for line in worker.process.stdout:
        if line.startswith("DBT_WORKER_DONE"):
            return line.split()[1] == "ok", "".join(printed)
        printed.append(line)
        if when and when in line:
            os.kill(jvm, signal.SIGKILL)
            when = None
    raise AssertionError(f"the dbt process stopped:\n{''.join(printed)[-4000:]}")


def summary(output: str) -> str:
    """dbt's summary of a failed command, which shows each failed model's error (the rest of its --debug output is
    the debug log's)."""
    return output[output.index("Completed with "):]


def test_a_killed_spark_jvm_is_told_in_one_sentence_and_the_rerun_finds_the_table_whole(tmp_path):
    project = own_project(tmp_path, "killed", FILES)
    env = own_metastore(tmp_path / "home")
    worker = DbtWorker(SimpleNamespace(path=project), env)
    try:
        succeeded, first = worker.run("run")
        assert succeeded, first[-4000:]
        succeeded, output = killed_while(worker, MERGE_STARTED, "run", "--vars", json.dumps({"add": 1, "slow": True}))
    finally:
        worker.process.kill()
        worker.process.wait()
    assert MERGE_STARTED in output and not succeeded, output[-4000:]
    told = summary(output)
    assert ("The Spark JVM of this dbt process stopped while `current` ran: it was killed (`kill -9`, or the kernel's "
            "out-of-memory killer: `dmesg` says) or ran out of memory") in told, told[-4000:]
    assert re.search(r"the whole error is in \S*logs/dbt\.log\), so no statement of this run can run any more\. Fix: "
                     r"run again", told), told[-4000:]
    assert ("the rerun finds lakeplan_killed.current either as this run found it or with this run's write, never "
            "half of it") in told, told[-4000:]
    assert not re.search(r"Error while sending|Connection refused|Traceback|^\s+at [\w$.]+\(", told, re.M), told

    rerun = DbtWorker(SimpleNamespace(path=project), env)  # a new process, a new JVM, on the same metastore
    try:
        succeeded, again = rerun.run("run", "--vars", json.dumps({"add": 1}))
        assert succeeded, again[-4000:]
        succeeded, after = rerun.run("run-operation", "print_state")
        assert succeeded, after[-4000:]
    finally:
        rerun.close()
    before, changes = values(output)  # as the killed run found it
    found, found_changes = values(again)  # as the rerun found it: whole, before or after the killed write
    assert (found, found_changes) in [(before, changes), (written(1), changes + 1)], found_changes
    assert before == written(0) and values(after) == (written(1), found_changes + (found == before))
