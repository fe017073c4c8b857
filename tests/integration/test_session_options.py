"""The Spark settings lakeplan sets for one statement (a member's `write_options`, the MERGE's
`full_rewrite_max_mib` choice) are the session's own again after it, whether the statement succeeds or fails:
dbt runs every model of a project in one Spark session, so a setting left behind changes the models after it."""

import pytest

from tests.conftest import env_value
from tests.integration.test_merge_rewrite import GROUP_FILTER
from tests.integration.test_partial_update import member, rows, target_yml

PARTITIONS = "spark.sql.shuffle.partitions"
TIME_ZONE = "spark.sql.session.timeZone"
ZONES = {"tokyo": "Asia/Tokyo", "la": "America/Los_Angeles"}
# the second run sends a value lakeplan's row checks refuse: the statement stops inside Spark, mid-write
BROKEN = f"{env_value('broken', 'false')} == 'true'"
VALUE = f"{{{{ \"case when id = 7 then 'seven' else string(id) end\" if {BROKEN} else 'id' }}}}"
OP = f"{{{{ \"case when id = 7 then 'X' else '+U' end\" if {BROKEN} else \"'+U'\" }}}}"
FAILING_WRITE = {
    "partial_update": {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint"}),
        "models/writer.sql": member("wide", f"select id, {VALUE} as a from range(0, 10)",
                                    write_options={PARTITIONS: 3}),
    },
    "upsert": {
        "models/wide.sql": "{{ config(materialized='upsert', unique_key='id', op_column='op') }}\n"
                           f"select id, id as a, {OP} as op from range(0, 10)",
    },
}  # fmt: skip


def session(spark) -> dict:
    return {key: spark.conf.get(key, None) for key in (PARTITIONS, GROUP_FILTER, "spark.sql.ansi.enabled")}


@pytest.mark.parametrize("materialization", FAILING_WRITE)
def test_a_write_that_fails_leaves_the_session_as_it_found_it(make_project, spark, materialization):
    project = make_project(f"session_{materialization}", FAILING_WRITE[materialization])
    project.run("run")
    before = session(spark)

    log = project.fail("run", broken="true")

    assert ("the value seven" if materialization == "partial_update" else "Invalid changelog op 'X'") in log
    assert session(spark) == before


def test_a_bad_setting_of_a_later_group_leaves_the_session_as_it_found_it(make_project, spark):
    files = {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint", "b": "bigint"}),
        "models/m1.sql": member("wide", "select id, id as a from range(0, 10)", write_options={PARTITIONS: 5}),
        # Spark refuses the second setting when it is set, after the first one was
        "models/m2.sql": member("wide", "select id, id as b from range(0, 10)",
                                write_options={PARTITIONS: 4, "spark.sql.ansi.enabled": "maybe"}),
    }  # fmt: skip
    project = make_project("session_bad_setting", files)
    before = session(spark)

    log = project.fail("run")

    assert "Spark refuses `spark.sql.ansi.enabled: maybe` (in the write_options of `m2`): " \
           "spark.sql.ansi.enabled should be boolean, but was maybe. Fix: give it a value Spark accepts" in log
    assert session(spark) == before
    assert not spark.catalog.tableExists("lakeplan_session_bad_setting.wide")


def test_a_write_that_succeeds_leaves_the_session_as_it_found_it(make_project, spark):
    project = make_project("session_success", FAILING_WRITE["partial_update"])
    before = session(spark)
    project.run("run")
    project.run("run")  # the MERGE, under `full_rewrite_max_mib`'s setting
    assert session(spark) == before
    assert rows(spark, "lakeplan_session_success.wide") == [(i, i) for i in range(10)]


def test_a_members_write_options_govern_its_own_query(make_project, spark):
    # under ANSI, a value that cannot be cast is an error; without the setting in the member's own query,
    # Spark's default makes it NULL in silence and the row keeps its old value
    value = f"{{{{ \"cast('abc' as int)\" if {BROKEN} else 'cast(id as int)' }}}}"
    files = {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "int"}),
        "models/writer.sql": member("wide", f"select id, {value} as a from range(0, 10)",
                                    write_options={"spark.sql.ansi.enabled": "true"}),
    }  # fmt: skip
    project = make_project("session_member_ansi", files)
    project.run("run")
    project.run("run")  # lakeplan's own MERGE runs under ANSI too
    before = session(spark)

    log = project.fail("run", broken="true")

    assert "CAST_INVALID_INPUT" in log
    assert session(spark) == before
    assert rows(spark, "lakeplan_session_member_ansi.wide") == [(i, i) for i in range(10)]


@pytest.mark.parametrize("key", ["spark.sql.shuffle.partition", "Spark.SQL.Shuffle.Partitions"])
def test_a_misspelt_spark_setting_stops_the_run_with_the_setting_it_means(make_project, spark, key):
    # Spark's SET takes any key, and its keys are case-sensitive: a typo would write with the default in silence
    files = {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint"}),
        "models/writer.sql": member("wide", "select id, id as a from range(0, 10)", write_options={key: 4}),
    }
    project = make_project("session_misspelt", files)

    log = project.fail("run")

    assert f"Spark has no setting `{key}` (in the write_options of `writer`); did you mean " \
           "`spark.sql.shuffle.partitions`? Fix: correct the key" in log
    assert not spark.catalog.tableExists("lakeplan_session_misspelt.wide")


def test_a_static_spark_setting_is_refused_with_its_members_name(make_project, spark):
    files = {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint"}),
        "models/writer.sql": member("wide", "select id, id as a from range(0, 10)",
                                    write_options={"spark.sql.warehouse.dir": "/tmp/elsewhere"}),
    }  # fmt: skip
    project = make_project("session_static", files)
    warehouse = spark.conf.get("spark.sql.warehouse.dir")

    log = project.fail("run")

    assert "Spark refuses `spark.sql.warehouse.dir: /tmp/elsewhere` (in the write_options of `writer`): " in log
    assert "Cannot modify the value of a static config: spark.sql.warehouse.dir. Fix: remove it, and set it where " \
           "the Spark session starts (spark-defaults.conf, the cluster's settings). Nothing was written." in log
    assert spark.conf.get("spark.sql.warehouse.dir") == warehouse
    assert not spark.catalog.tableExists("lakeplan_session_static.wide")


def test_every_refused_setting_of_a_member_is_named_in_one_error(make_project, spark):
    files = {
        "models/wide.sql": "{{ partial_update_target() }}",
        "models/wide.yml": target_yml("wide", {"id": "bigint", "a": "bigint"}),
        "models/writer.sql": member("wide", "select id, id as a from range(0, 10)", write_options={
            "spark.sql.shuffle.partition": 4, "spark.sql.ansi.enabled": "true",
            "spark.sql.warehouse.dir": "/tmp/elsewhere", "shuffle.partitions": 4}),
    }  # fmt: skip
    project = make_project("session_refused_twice", files)
    ansi = spark.conf.get("spark.sql.ansi.enabled")

    log = project.fail("run")

    assert "1. Spark has no setting `spark.sql.shuffle.partition` (in the write_options of `writer`); did you mean " \
           "`spark.sql.shuffle.partitions`? Fix: correct the key, or remove it. 2. Spark refuses " \
           "`spark.sql.warehouse.dir: /tmp/elsewhere` (in the write_options of `writer`): " in log
    assert "3. `shuffle.partitions` is not a Spark setting (in the write_options of `writer`): Spark's start with " \
           "`spark.`; did you mean `spark.sql.shuffle.partitions`? Fix: correct the key, or remove it." in log
    message = next(line for line in log.splitlines() if "1. Spark has no setting" in line)
    assert message.count("Nothing was written.") == 1
    assert spark.conf.get("spark.sql.ansi.enabled") == ansi  # the accepted setting is put back
    assert not spark.catalog.tableExists("lakeplan_session_refused_twice.wide")


def test_with_threads_the_settings_of_one_statement_reach_no_other(make_project, spark):
    # dbt threads share the Spark session: each target's write sleeps 2 s under its time zone, while the other
    # target and a plain model run beside it
    def writer(zone):
        return member(zone, "select id, concat(left(reflect('java.lang.Thread', 'sleep', bigint(2000)), 0), "
                            "current_timezone()) as tz from range(0, 1)", write_options={TIME_ZONE: ZONES[zone]})

    files = {"models/plain.sql": "select current_timezone() as tz"}
    for zone in ZONES:
        files.update({f"models/{zone}.sql": "{{ partial_update_target() }}",
                      f"models/{zone}.yml": target_yml(zone, {"id": "bigint", "tz": "string"}),
                      f"models/{zone}_writer.sql": writer(zone)})  # fmt: skip
    project = make_project("session_threads", files)
    own = spark.conf.get(TIME_ZONE)

    project.run("run", "--threads", "2")

    assert spark.conf.get(TIME_ZONE) == own
    for zone, name in ZONES.items():
        assert rows(spark, f"lakeplan_session_threads.{zone}") == [(0, name)]
    assert rows(spark, "lakeplan_session_threads.plain") == [(own,)]
