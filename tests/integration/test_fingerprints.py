"""Chaining-agnostic fingerprints (FLIP-411) through dbt, and the state check on a real Iceberg table."""

import json

import pytest

from tests.conftest import write_files

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
        "models/sources.yml": SOURCES.format(schema=SCHEMA, parallelism=parallelism),
        "models/upstream.sql": UPSTREAM.format(materialized=materialized, extra=extra),
        "models/totals.sql": TOTALS.format(policy=policy),
    }


@pytest.fixture
def project(make_project):
    dbt = make_project("prints", {"seeds/events.csv": "id,amount\n1,10\n2,20\n2,5\n", **files()})
    dbt.run("seed")
    return dbt


def prints(project, *args):
    project.run("parse", *args)
    nodes = json.loads((project.path / "target" / "lakeplan_fingerprints.json").read_text())["nodes"]
    return {uid.split(".")[-1]: entry["fingerprint"] for uid, entry in nodes.items()}


def both(project):
    return prints(project), prints(project, "--vars", "{fingerprint_version: v2}")


def test_ephemeral_upstream_changes_v2_but_not_v3(project):
    v3, v2 = both(project)
    write_files(project.path, files(materialized="ephemeral"))
    v3_after, v2_after = both(project)
    assert v3_after == v3
    assert v2_after["totals"] != v2["totals"] and v2_after["upstream"] != v2["upstream"]


def test_tuning_knobs_moved_files_and_cli_vars_change_nothing(project):
    v3, v2 = both(project)
    write_files(project.path, files(parallelism=8))
    assert both(project) == (v3, v2)
    for name, folder in [("upstream", "staging"), ("totals", "marts/nested")]:  # other paths, same models
        (project.path / "models" / folder).mkdir(parents=True)
        (project.path / "models" / f"{name}.sql").rename(project.path / "models" / folder / f"{name}.sql")
    assert both(project) == (v3, v2)
    assert prints(project, "--vars", "{threshold: 15}") == v3


def test_a_logic_change_upstream_changes_both_and_stops_the_incremental_model(project, spark):
    v3, v2 = both(project)
    project.run("run", "--select", "upstream", "totals")
    before = sorted(spark.sql("select * from lakeplan_prints.totals").collect())

    write_files(project.path, files(extra=" * 2 as doubled, amount"))
    v3_after, v2_after = both(project)
    assert v3_after["totals"] != v3["totals"] and v2_after["totals"] != v2["totals"]

    project.run("run", "--select", "upstream")
    log = project.fail("run", "--select", "totals")
    assert "Compilation Error in model totals" in log
    assert f"the table records fingerprint {v3['totals']} (v3), its logic is now {v3_after['totals']} (v3)" in log
    assert "What changed: input `model.lakeplan.upstream`" in log
    assert "Fix: dbt run --full-refresh -s totals" in log
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


def test_bad_fingerprint_settings_are_errors(project):
    assert "var fingerprint_version is 'v4'" in project.fail("parse", "--vars", "{fingerprint_version: v4}")
    project.run("run", "--select", "upstream", "totals")
    write_files(project.path, files(extra=" + 1 as more, amount", policy=", on_state_mismatch='retry'"))
    log = project.fail("run", "--select", "totals")
    assert 'Unknown on_state_mismatch "retry" for model `totals`' in log


def test_a_cli_var_in_a_result_config_changes_nothing(project):
    write_files(project.path, {"models/totals.yml": (
        "version: 2\nmodels:\n  - name: totals\n    config: {incremental_predicates: [\"{{ var('predicate', 'true') }}\"]}\n"
    )})
    assert prints(project) == prints(project, "--vars", "{predicate: 'id > 1'}")


def test_the_sql_cache_gives_the_same_fingerprints_and_keeps_only_current_entries(project):
    cache = project.path / "target" / "lakeplan_sql_cache.json"
    cold = prints(project, "--no-partial-parse")
    entries = json.loads(cache.read_text())
    assert len(entries) == 2  # upstream and totals (a seed counts by its file, not by SQL)
    cache.write_text(json.dumps({key: {"sql": "select 'tampered'"} for key in entries}))
    assert prints(project, "--no-partial-parse") != cold  # the cache is read, not recomputed...
    cache.unlink()
    assert prints(project, "--no-partial-parse") == cold  # ...and rebuilt from scratch when missing
    write_files(project.path, files(extra=", id * 2 as twice"))
    changed = prints(project)
    assert changed["upstream"] != cold["upstream"]
    assert len(json.loads(cache.read_text())) == len(entries)  # the old upstream entry is gone
