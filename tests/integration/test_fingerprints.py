"""Chaining-agnostic fingerprints (FLIP-411) through dbt, and the state check on a real Iceberg table."""

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO, DbtProject, write_files

SOURCES = """
version: 2
sources:
  - name: lake
    schema: {schema}
    tables:
      - {{name: events, meta: {{scan_parallelism: {parallelism}}}}}
"""
UPSTREAM = "{{{{ config(materialized='{materialized}') }}}}\nselect id, amount{extra} from {{{{ scan_source('lake', 'events') }}}}"
TOTALS = (
    "{{{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id'{policy}) }}}}\n"
    "select id, sum(amount) as total from {{{{ ref('upstream') }}}}\n"
    "where amount > {{{{ var('threshold', 0) }}}}\ngroup by id"
)


SCHEMA = "lakeplan_prints"  # every test's project writes here, one test at a time


def files(materialized="view", parallelism=2, extra="", policy=""):
    return {
        "seeds/events.csv": "id,amount\n1,10\n2,20\n2,5\n",  # loaded in the module's project only
        "models/sources.yml": SOURCES.format(schema=SCHEMA, parallelism=parallelism),
        "models/upstream.sql": UPSTREAM.format(materialized=materialized, extra=extra),
        "models/totals.sql": TOTALS.format(policy=policy),
    }


@pytest.fixture(scope="module")
def seeded(make_project):
    """One project and one seed for the module (a project and a seed per test cost a full parse and a seed each)."""
    dbt = make_project("prints", files())
    dbt.run("seed")
    return dbt


@pytest.fixture(scope="module")
def v2_project(make_project):
    """A project whose dbt_project.yml sets `fingerprint_version: v2`, for the v2 fingerprints of the module's models
    (`--vars` on the module's project would make dbt parse it in full each time the version changes)."""
    return make_project("prints_v2", files(), {"vars": {"fingerprint_version": "v2"}})


CLI_VARS = "{threshold: 15, predicate: 'id > 1'}"  # the same in every command: a new --vars is a full parse


@pytest.fixture(scope="module")
def cli_vars_project(make_project):
    """A project every command of which gives `CLI_VARS`, for the fingerprints of the module's models under them."""
    return make_project("prints_cli_vars", files())


@pytest.fixture
def project(seeded, spark):
    """The module's project as a new one is: the models of `files()` and none of their tables (a test edits them)."""
    shutil.rmtree(seeded.path / "models")
    write_files(seeded.path, files())
    spark.sql(f"drop table if exists {SCHEMA}.totals")
    spark.sql(f"drop view if exists {SCHEMA}.upstream")
    return seeded


def prints(project, *args):
    project.run("parse", "--write-json", *args)
    nodes = json.loads((project.path / "target" / "lakeplan_fingerprints.json").read_text())["nodes"]
    return {uid.split(".")[-1]: entry["fingerprint"] for uid, entry in nodes.items()}


def with_models_of(project, other):
    """`other` with the models of `project` (unchanged files are not parsed again)."""
    shutil.rmtree(other.path / "models")
    shutil.copytree(project.path / "models", other.path / "models")
    return other


def both(project, v2_project):
    """The v3 and the v2 fingerprints of the project's models."""
    return prints(project), prints(with_models_of(project, v2_project))


def prints_under_cli_vars(project, cli_vars_project):
    return prints(with_models_of(project, cli_vars_project), "--vars", CLI_VARS)


def test_ephemeral_upstream_changes_v2_but_not_v3(project, v2_project):
    v3, v2 = both(project, v2_project)
    write_files(project.path, files(materialized="ephemeral"))
    v3_after, v2_after = both(project, v2_project)
    assert v3_after == v3
    assert v2_after["totals"] != v2["totals"] and v2_after["upstream"] != v2["upstream"]


def test_tuning_knobs_moved_files_and_cli_vars_change_nothing(project, v2_project, cli_vars_project):
    v3, v2 = both(project, v2_project)
    write_files(project.path, files(parallelism=8))
    assert both(project, v2_project) == (v3, v2)
    for name, folder in [("upstream", "staging"), ("totals", "marts/nested")]:  # other paths, same models
        (project.path / "models" / folder).mkdir(parents=True)
        (project.path / "models" / f"{name}.sql").rename(project.path / "models" / folder / f"{name}.sql")
    assert both(project, v2_project) == (v3, v2)
    assert prints_under_cli_vars(project, cli_vars_project) == v3  # `threshold` among them


def test_a_logic_change_upstream_changes_both_and_stops_the_incremental_model(project, v2_project, spark):
    v3, v2 = both(project, v2_project)
    project.run("run", "--select", "upstream", "totals")
    before = sorted(spark.sql("select * from lakeplan_prints.totals").collect())

    write_files(project.path, files(extra=" * 2 as doubled, amount"))
    v3_after, v2_after = both(project, v2_project)
    assert v3_after["totals"] != v3["totals"] and v2_after["totals"] != v2["totals"]

    log = project.fail("run", "--select", "upstream", "totals")  # upstream is rebuilt, totals stops
    assert "Compilation Error in model totals" in log
    assert f"the table records fingerprint {v3['totals']} (v3), its logic is now {v3_after['totals']} (v3)" in log
    assert "What changed: model `upstream` changed its own SQL, columns or configs." in log
    assert "accept the current logic: dbt run -s totals --vars '{lakeplan_accept_state: [totals]}'" in log
    assert "to rebuild it from scratch: dbt run --full-refresh -s totals" in log
    assert sorted(spark.sql("select * from lakeplan_prints.totals").collect()) == before

    project.run("run", "--select", "totals", "--full-refresh")  # records the new fingerprint
    project.run("run", "--select", "totals")


def test_full_refresh_and_ignore_policies(project, spark):
    project.run("run", "--select", "upstream", "totals")
    write_files(project.path, {**files(extra=" * 0 as zero, amount", policy=", on_state_mismatch='full_refresh'")})
    result, log = project.invoke("run", "--select", "upstream", "totals")
    assert result.success and "Rebuilding it (on_state_mismatch: full_refresh)" in log

    write_files(project.path, {**files(extra=" * 3 as tripled, amount", policy=", on_state_mismatch='ignore'")})
    result, log = project.invoke("run", "--select", "upstream", "totals")
    assert result.success and "Keeping the table (on_state_mismatch: ignore)" in log


def test_bad_fingerprint_settings_are_errors(project, make_project):
    v4 = make_project("prints_v4", files())  # a project of its own: the module's never changes its --vars
    assert "the project sets `fingerprint_version: 'v4'`" in v4.fail("parse", "--vars", "{fingerprint_version: v4}")
    project.run("run", "--select", "upstream", "totals")
    write_files(project.path, files(extra=" + 1 as more, amount", policy=", on_state_mismatch='retry'"))
    log = project.fail("run", "--select", "totals")
    assert "model `totals` sets `on_state_mismatch: 'retry'`" in log and "Fix: one of `fail`, `full_refresh`" in log


def test_a_cli_var_in_a_result_config_changes_nothing(project, cli_vars_project):
    write_files(project.path, {"models/totals.yml": (
        "version: 2\nmodels:\n  - name: totals\n    config: {incremental_predicates: [\"{{ var('predicate', 'true') }}\"]}\n"
    )})
    assert prints(project) == prints_under_cli_vars(project, cli_vars_project)  # `predicate` among them


def test_the_sql_cache_gives_the_same_fingerprints_and_keeps_only_current_entries(project):
    cache = project.path / "target" / "lakeplan_sql_cache.json"
    # the plugin fingerprints at every manifest load, a partial parse's too: no `--no-partial-parse` needed
    first = prints(project)
    entries = json.loads(cache.read_text())
    assert len(entries) == 2  # upstream and totals (a seed counts by its file, not by SQL)
    cache.write_text(json.dumps({key: {"sql": "select 'tampered'"} for key in entries}))
    assert prints(project) != first  # the cache is read, not recomputed...
    cache.unlink()
    assert prints(project) == first  # ...and rebuilt from scratch when missing
    write_files(project.path, files(extra=", id * 2 as twice"))
    changed = prints(project)
    assert changed["upstream"] != first["upstream"]
    assert len(json.loads(cache.read_text())) == len(entries)  # the old upstream entry is gone


CYCLES = {
    "two_models": {"models/a.sql": "select * from {{ ref('b') }}", "models/b.sql": "select * from {{ ref('a') }}"},
    "member_reads_its_target": {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": "version: 2\nmodels:\n  - name: wide\n    config: {unique_key: id}\n"
        "    columns: [{name: id, data_type: int}, {name: a, data_type: int}]\n",
        "models/m.sql": "{{ config(partial_update_target='wide') }}\nselect id, a + 1 as a from {{ ref('wide') }}",
    },
}
# `dbt parse` and `dbt ls` of each project given, in one process (a dbt process per command cost its start-up each):
# prints {project: {command: [succeeded, what dbt said]}}
PARSE_AND_LIST = """
import json, sys
from dbt.cli.main import dbtRunner

def said(command, path):
    events = []
    result = dbtRunner(callbacks=[events.append]).invoke([command, "--project-dir", path])
    return [result.success, "\\n".join([event.info.msg for event in events] + [str(result.exception or "")])]

print(json.dumps({path: {command: said(command, path) for command in ("parse", "ls")} for path in sys.argv[1:]}))
"""


@pytest.fixture(scope="module")
def cycles(make_project):
    """What dbt parse and dbt ls said on each project of CYCLES. dbt runs in a subprocess with a time limit, so a
    hang fails the tests instead of hanging the suite."""
    paths = {case: str(make_project(f"cycle_{case}", models).path) for case, models in CYCLES.items()}
    done = subprocess.run([sys.executable, "-c", PARSE_AND_LIST, *paths.values()], capture_output=True, text=True,
                          timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.splitlines()[-1])
    return {case: said[path] for case, path in paths.items()}


@pytest.mark.parametrize("case", sorted(CYCLES, reverse=True))
def test_a_ref_cycle_is_dbts_cycle_error_at_once(cycles, case):
    """Issue 16, case 7: the fingerprints looped forever on a cycle (`dbt parse` never ended)."""
    (parsed, parse_log), (listed, list_log) = cycles[case]["parse"], cycles[case]["ls"]
    assert parsed, parse_log  # as without the plugin: dbt parse does not look for cycles
    assert not listed
    assert "Found a cycle: model.lakeplan." in list_log


C360 = "models/marts/customer_360/"
RESULT_SETTINGS = {  # issue 16, case 4: each edit must change customer_360's fingerprint
    "merge_rule": [(C360 + "_customer_360.yml", "meta: {merge: sum}", "meta: {merge: max}")],
    "sequence_group": [(C360 + "_customer_360.yml", "[latest_order_status, latest_order_amount]", "[latest_order_status]")],
    "on_delete": [(C360 + "_customer_360.yml", "partial_update_on_delete: ignore", "partial_update_on_delete: remove_record")],
    "key": [(C360 + "_customer_360.yml", "unique_key: customer_key", "unique_key: [customer_key, nation_key]")],
    "type": [(C360 + "_customer_360.yml", "data_type: decimal(12,2)", "data_type: decimal(14,2)")],
    "write_mode": [(C360 + "c360_geography.sql", "target='customer_360'", "target='customer_360', write_mode='overwrite'")],
    "static_partition": [(
        C360 + "c360_geography.sql", "target='customer_360'",
        "target='customer_360', write_mode='overwrite', static_partition={'region_key': 1}",
    )],  # fmt: skip
    "sequence_by": [(C360 + "c360_order_status.sql", "sequence_by='_seq'", "sequence_by='customer_key'")],
    "op_column": [(C360 + "c360_order_status.sql", "op_column='_op'", "op_column='status'")],
}
TUNING_KNOBS = [  # ... and these together must not
    (C360 + "c360_geography.sql", "target='customer_360'", "target='customer_360', parallelism=4, write_options={'spark.sql.shuffle.partitions': '4'}"),
    ("models/intermediate/orders_by_customer.sql", "key_groups=8", "key_groups=4"),
    ("models/staging/tpch/__sources.yml", "scan_parallelism: 4", "scan_parallelism: 2"),
    ("dbt_project.yml", "      +materialized: view", "      +materialized: ephemeral"),
    ("dbt_project.yml", "flags:", "vars: {reuse_sink_enabled: false}\nflags:"),
]  # fmt: skip


def example_prints(path, edits=()):
    """customer_360's fingerprint in a fresh copy of the example project after `edits` (file, old, new)."""
    if not (path / "models").exists():
        for name in ("models", "seeds", "snapshots", "tests/singular"):
            shutil.copytree(REPO / name, path / name)
        shutil.copy(REPO / "dbt_project.yml", path)
        (path / "macros").symlink_to(REPO / "macros")
    for name, old, new in edits:
        text = (path / name).read_text()
        assert old in text, f"{old!r} not in {name}"
        (path / name).write_text(text.replace(old, new, 1))
    DbtProject(path).run("parse", "--write-json")  # a partial parse after edits: the plugin fingerprints at every load
    nodes = json.loads((path / "target" / "lakeplan_fingerprints.json").read_text())["nodes"]
    return nodes["model.lakeplan.customer_360"]["fingerprint"]


@pytest.fixture(scope="module")
def example_copy(tmp_path_factory):
    """One copy of the example for the module's tests, and customer_360's fingerprint in it unchanged (parsed once)."""
    path = tmp_path_factory.mktemp("example_prints")
    return path, example_prints(path)


def edited_prints(path, edits) -> str:
    """customer_360's fingerprint in the copy after `edits`; the copy's files are restored afterwards."""
    originals = {name: (path / name).read_text() for name, _, _ in edits}
    try:
        return example_prints(path, edits)
    finally:
        for name, text in originals.items():
            (path / name).write_text(text)


@pytest.mark.parametrize("setting", sorted(RESULT_SETTINGS))
def test_every_result_setting_of_a_partial_update_changes_the_targets_fingerprint(example_copy, setting):
    path, before = example_copy
    assert edited_prints(path, RESULT_SETTINGS[setting]) != before


def test_tuning_knobs_of_a_partial_update_keep_the_targets_fingerprint(example_copy, tmp_path_factory):
    _, before = example_copy
    # a copy of its own: an edited dbt_project.yml makes dbt parse a project in full (again when it is restored)
    assert example_prints(tmp_path_factory.mktemp("example_knobs"), TUNING_KNOBS) == before
