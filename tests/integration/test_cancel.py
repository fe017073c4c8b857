"""Ctrl-C during a write: the run either stops before the write's commit, leaving the table as it was and the model
reported as an error, or the commit is past its point of no return and dbt reports the model written (OK, no
`CANCEL query` line). Never both cancelled and committed.

SIGINT needs a dbt process of its own, and the embedded Derby metastore takes one process at a time (this test
session's SparkSession holds its own): one long-lived dbt process (`dbt_worker.py`: one dbt command per line, one
JVM for all of them) has a metastore and warehouse of its own, with the project's Spark settings otherwise, and is
sent a real SIGINT at each moment. The tables are read by that process itself, in an on-run-start hook of each
command before it writes anything, and after the last moment by a `dbt run-operation` of that hook's macro."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tests.integration.dbt_worker import DONE
from tests.integration.test_partial_update import member, target_yml

WORKER = Path(__file__).with_name("dbt_worker.py")
ROWS = 1000
TABLES = ("wide", "current")


def query(model: str, value: str) -> str:
    """`ROWS` keys with `value`, whatever the range read: 1,000,000 rows when `model` is the var `slow` (enough work that
    a group's statement runs for seconds and the Ctrl-C lands inside it), else `ROWS` (the statements a moment does
    not interrupt)."""
    rows = f"{{{{ 1000000 if var('slow', '') == '{model}' else {ROWS} }}}}"
    return (f"select k as id, {value} from (select id % {ROWS} as k, max(sha2(cast(id as string), 256)) as h "
            f"from range(0, {rows}) group by 1) where h > ''")


FILES = {
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint", "c": "bigint"},
                                  rules={"a": "sum"}, partial_update_on_delete="ignore"),
    # three write groups (their write_options differ), so the write is three statements on a branch, then its commit
    "models/adds.sql": member("wide", query("adds", "1 as a"), write_options={"spark.sql.shuffle.partitions": 3}),
    "models/bees.sql": member("wide", query("bees", "k as b"), write_options={"spark.sql.shuffle.partitions": 4}),
    "models/sees.sql": member("wide", query("sees", "2 * k as c"), write_options={"spark.sql.shuffle.partitions": 5}),
    # an upsert: its tombstones, then one MERGE that is its commit
    "models/current.sql": "{{ config(materialized='upsert', unique_key='id', sequence_by='seq', op_column='op') }}\n"
    + query("current", "'+U' as op, k as seq, cast(k as string) as val"),
    # what each table holds, as one line: the on-run-start hook of every dbt process here prints it before any write
    "test_macros/print_state.sql": """{% macro print_state() %}
  {%- set state = {} -%}
  {%- for name in """ + repr(list(TABLES)) + """ if execute and adapter.get_relation(none, 'lakeplan_cancel', name) -%}
    {%- set table = 'lakeplan_cancel.' ~ name -%}
    {%- set main = run_query('select cast(snapshot_id as string) from ' ~ table ~ ".refs where name = 'main'") -%}
    {%- set changes = run_query('select count(*) from ' ~ table ~ '.history') -%}
    {%- set rows = run_query('select to_json(struct(*)) from ' ~ table ~ ' order by id') -%}
    {%- set branches = run_query('select name from ' ~ table ~ ".refs where type = 'BRANCH' order by name") -%}
    {%- do state.update({table: {'main': main.columns[0].values()[0], 'changes': changes.columns[0].values()[0] | int,
                                 'rows': rows.columns[0].values() | list,
                                 'branches': branches.columns[0].values() | list}}) -%}
  {%- endfor -%}
  {%- if execute %}{% do print('LAKEPLAN_STATE ' ~ tojson(state)) %}{% endif -%}
{% endmacro %}
""",
}  # fmt: skip
PROJECT = {"macro-paths": ["macros", "test_macros"], "on-run-start": ["{{ print_state() }}"]}


def own_metastore(root: Path) -> dict[str, str]:
    """The environment of a dbt process with lakeplan's Spark settings, its metastore and warehouse under `root`."""
    home = os.environ["LAKEPLAN_HOME"]
    conf = root / "spark-conf"
    shutil.copytree(os.environ["SPARK_CONF_DIR"], conf)
    defaults = conf / "spark-defaults.conf"
    defaults.write_text(defaults.read_text().replace(home, str(root)))
    return {**os.environ, "SPARK_CONF_DIR": str(conf), "LAKEPLAN_HOME": str(root), "PYTHONUNBUFFERED": "1"}


class DbtWorker:
    """`dbt_worker.py` on a project: each `run` is one dbt command in that one process, optionally sent SIGINT."""

    def __init__(self, project, env):
        self.project = project
        self.process = subprocess.Popen([sys.executable, str(WORKER)], env=env, text=True, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def run(self, *args: str, interrupt_when: str | None = None) -> tuple[bool, str]:
        """`dbt <args>`, sent SIGINT once a printed line contains `interrupt_when`; whether dbt succeeded, what it
        printed."""
        self.process.stdin.write(json.dumps([*args, "--project-dir", str(self.project.path)]) + "\n")
        self.process.stdin.flush()
        printed = []
        for line in self.process.stdout:
            if line.startswith(DONE):
                return line.split()[1] == "ok", "".join(printed)
            printed.append(line)
            if interrupt_when and interrupt_when in line:
                self.process.send_signal(signal.SIGINT)
                interrupt_when = None  # once
        raise AssertionError(f"the dbt process stopped:\n{''.join(printed)[-4000:]}")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=120)


def dbt(worker: DbtWorker, *args: str) -> str:
    succeeded, output = worker.run(*args)
    assert succeeded, output[-4000:]
    return output


def interrupted(worker: DbtWorker, selector: str, when: str, slow: str) -> str:
    """`dbt run -s <selector>` with `slow` the model whose query runs for seconds, sent SIGINT once its debug log
    shows a statement containing `when` has started; what dbt printed."""
    _, output = worker.run("--debug", "run", "-s", selector, "--vars", json.dumps({"slow": slow}),
                           interrupt_when=when)
    assert when in output, f"dbt never started the statement:\n{output[-4000:]}"
    return output


def state(output: str) -> dict:
    """The tables as the hook printed them (before the process wrote anything)."""
    [line] = [line for line in output.splitlines() if line.startswith("LAKEPLAN_STATE ")]
    return json.loads(line.split(" ", 1)[1])


def column_a(table_state: dict) -> list:
    return [json.loads(row)["a"] for row in table_state["rows"]]


def reported(output: str, model: str) -> tuple[bool, bool]:
    """Whether dbt reported `model` written (OK) and whether it said it cancelled it."""
    written = any(" OK created " in line and f".{model} " in line for line in output.splitlines())
    return written, f"CANCEL query model.lakeplan.{model}" in output


# (the model, the statement whose start the SIGINT follows, the model whose query is slow, whether the write commits).
# A SIGINT during an earlier group of `wide` takes the same path as during its last: the running statement's jobs are
# stopped and every later statement is refused, the last group's next one being the commit itself.
MOMENTS = [
    ("wide", "-- write group 3 of 3", "sees", False),  # during the last group, before the commit
    ("current", "merge into lakeplan_cancel.current as", "current", False),  # during the upsert's MERGE: its jobs are stopped, so it does not commit
    ("wide", "call system.fast_forward", "", True),  # the commit has started: it completes, the model is written
]


def test_ctrl_c_stops_a_write_before_its_commit_or_reports_it_written(make_project, tmp_path):
    project = make_project("cancel", FILES, PROJECT)
    worker = DbtWorker(project, own_metastore(tmp_path))
    try:
        dbt(worker, "run")
        outputs = [interrupted(worker, model, when, slow) for model, when, slow, _ in MOMENTS]
        # the tables before each moment (as the moment's command found them) and after the last
        states = [state(output) for output in outputs] + [state(dbt(worker, "run-operation", "print_state"))]
    finally:
        worker.close()
    assert column_a(states[0]["lakeplan_cancel.wide"]) == [1] * ROWS

    for (model, when, _, commits), output, before, after in zip(MOMENTS, outputs, states, states[1:]):
        table = f"lakeplan_cancel.{model}"
        written, cancelled = reported(output, model)
        assert (written, cancelled) == (commits, not commits), f"{when}:\n{output[-5000:]}"
        if commits:  # the run applied once: the sum column counts it, and main moved once (the fast-forward)
            assert after[table]["changes"] == before[table]["changes"] + 1
            assert column_a(after[table]) == [a + 1 for a in column_a(before[table])]
        else:  # the same rows, snapshot and branches: a cancelled write through its run's branch removes it
            assert after == before, f"{when}: the table changed although dbt cancelled {model}:\n{output[-5000:]}"
            # on the console too, not only in the debug log: dbt's log file tells an event's level
            sentence = f"`{model}` was cancelled before its write committed"
            logged = (project.path / "logs" / "dbt.log").read_text().splitlines()
            assert any(sentence in line and "[info " in line for line in logged), [l for l in logged if sentence in l]
    # dbt's stack of the KeyboardInterrupt, one per Ctrl-C, in the debug log only (before: errors, on the console)
    stacks = [line for line in (project.path / "logs" / "dbt.log").read_text().splitlines()
              if line.endswith("Traceback (most recent call last):")]
    assert len(stacks) == len(MOMENTS) and all("[debug]" in line for line in stacks), stacks
