"""A tool that writes tables never loses a value in silence: a value the target type cannot hold stops the
write with one sentence naming the model, member, column, value and type, and nothing is written."""

import os
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import given, snapshots
from tests.integration.test_merge_rules import by_step, select
from tests.integration.test_partial_update import member, rows, target_yml

PRICES = {
    "models/prices.sql": "{{ partial_update_target() }}",
    "models/prices.yml": target_yml("prices", {"id": "bigint", "b": "decimal(5,2)", "n": "int", "m": "int", "r": "float",
                                        "q": "int", "t": "int", "dt": "date", "w": "decimal(38,0)"}),
    "models/good.sql": member("prices", "select cast(1 as bigint) as id, 7 as n"),
    # Step 2 sends a value of `b` (text), of `m` (a bigint), of `r` and of `q` (doubles), of `t`, `dt` and `w` (text)
    # for key `key`: values each run gives (`env_value`).
    "models/bad.sql": member("prices", by_step(
        "select cast(1 as bigint) as id, '1.50' as b, cast(1 as bigint) as m, cast(1 as double) as r, 1.0D as q, "
        "'2' as t, '2024-01-02' as dt, '7' as w",
        f"select cast({given('key', 1)} as bigint) as id, '{given('b', '12abc')}' as b, "
        f"cast({given('m', 1)} as bigint) as m, cast({given('r', 1)} as double) as r, "
        f"cast('{given('q', 1)}' as double) as q, '{given('t', 2)}' as t, '{given('dt', '2024-01-02')}' as dt, "
        f"'{given('w', 7)}' as w",
    )),  # fmt: skip
}
STORED = [(1, Decimal("1.50"), 7, 1, 1.0, 1, 2, date(2024, 1, 2), Decimal(7))]
FIX = "convert or filter the value in `bad`, or widen the target column's data_type."
TEXT_FIX = "convert or filter the value in `bad`, or, for a number too large, widen the target column's data_type."


@pytest.fixture(scope="module")
def prices(make_project, spark):
    project = make_project("lossless", PRICES)
    project.run("run")
    assert rows(spark, "lakeplan_lossless.prices") == STORED
    return project


@pytest.mark.parametrize(
    "values, value, column, held",
    [
        ({"step": 2, "b": "12abc"}, "12abc", "b", f"decimal(5,2) cannot hold; {{}}{TEXT_FIX}"),  # 12abc would be lost
        ({"step": 2, "b": "123456.789", "key": 3}, "123456.789", "b",  # a new key would get NULL
         f"decimal(5,2) cannot hold; {{}}{TEXT_FIX}"),
        ({"step": 2, "b": 1, "m": 3000000000}, "3000000000", "m", f"int cannot hold; {{}}{FIX}"),
        ({"step": 2, "b": 1, "r": "1e300"}, "1.0E300", "r", f"float cannot hold; {{}}{FIX}"),  # a float would hold infinity
        # Spark's cast would store 1.24 and 2: rounded in silence
        ({"step": 2, "b": "1.235"}, "1.235", "b", "decimal(5,2) cannot hold exactly: it would store 1.24; {}round it "
         "where it is computed (`round(..., 2)`), or declare the column with more digits after the point."),
        ({"step": 2, "b": 1, "q": "2.5"}, "2.5", "q", "int cannot hold exactly: it would store 2; {}round it where it is "
         "computed (`round(..., 0)`), or declare the column with a decimal type."),
        # no int, however wide, holds NaN: widening is no fix
        ({"step": 2, "b": 1, "q": "NaN"}, "NaN", "q", "int cannot hold; {}replace NaN and infinity where the value is "
         "computed (`nanvl(...)`, a `case`), or filter the row out."),
        ({"step": 2, "b": 1, "t": "2.5"}, "2.5", "t", "int cannot hold exactly: it would store 2; {}round it where it is "
         "computed (`round(..., 0)`), or declare the column with a decimal type."),
        # decimal(38,0) leaves the text no digits after the point to be compared in
        ({"step": 2, "b": 1, "w": "1.5"}, "1.5", "w", "decimal(38,0) cannot hold exactly: it would store 2; {}round it where "
         "it is computed (`round(..., 0)`), or declare the column with more digits after the point."),
        ({"step": 2, "b": 1, "dt": "2024-01-02 10:30:00"}, "2024-01-02 10:30:00", "dt", "date cannot hold exactly: it "
         "would store 2024-01-02; {}take its date where it is computed (`to_date(...)`), or declare the column a "
         "timestamp."),
        ({"step": 2, "b": 1, "key": 2, "t": "2.0", "w": "12.0"}, None, None, None),  # control: values that fit, text 2.0 too
    ],
    ids=["text", "too_wide", "int_overflow", "float_overflow", "rounded_text", "rounded_double", "nan_into_int", "rounded_text_int",
         "rounded_text_wide", "text_time_into_date", "control"],
)
def test_a_value_the_target_cannot_hold_stops_the_write(prices, spark, values, value, column, held):
    table = "lakeplan_lossless.prices"
    before, contents = snapshots(spark, table), rows(spark, table)
    if value is None:
        prices.run("run", **values)
        assert rows(spark, table) == STORED + [(2, Decimal("1.00"), None, 1, 1.0, 1, 2, date(2024, 1, 2), Decimal(12))]
        spark.sql(f"delete from {table} where id = 2")
        return
    log = prices.fail("run", **values)
    # Spark's own report of the failed task, with its Java stack, goes to Spark's log file, not the terminal.
    assert value in (Path(os.environ["LAKEPLAN_HOME"]) / "logs" / "spark.log").read_text()
    sentence = f"lakeplan: member `bad` of `prices` sends in column `{column}` the value {value}, which " + held.format(
        "this write stopped and committed nothing. Fix: ")
    assert sentence in log
    assert (snapshots(spark, table), rows(spark, table)) == (before, contents)


COUNTER = {
    "models/counter.sql": "{{ partial_update_target() }}",
    "models/counter.yml": target_yml(
        "counter", {"id": "bigint", "total": "decimal(5,2)", "hits": "bigint"}, rules={"total": "sum", "hits": "sum"}
    ),
    "models/adds.sql": member("counter", f"select cast(1 as bigint) as id, cast({given('add', '999.00')} as decimal(5,2)) "
                              f"as total, cast({given('hits', 1)} as bigint) as hits"),  # fmt: skip
    "models/more.sql": member("counter", f"select cast(1 as bigint) as id, cast({given('more', 1)} as bigint) as hits"),
}


def test_a_sum_that_overflows_stops_the_write_instead_of_restarting_the_counter(make_project, spark):
    project = make_project("overflow", COUNTER)
    table = "lakeplan_overflow.counter"
    project.run("run")
    assert rows(spark, table) == [(1, Decimal("999.00"), 2)]
    before = snapshots(spark, table)

    log = project.fail("run", add="5.00")  # 999.00 stored + 5.00 does not fit decimal(5,2)
    assert (
        "lakeplan: `counter`.`total` (merge rule sum) would become 999.00 + 5.00 for key {\"id\":1}, which "
        "decimal(5,2) cannot hold; this write stopped and committed nothing. Fix: declare `total` as decimal(38,2) in "
        "`counter`'s YAML; the next run widens the stored column in place, keeping every value."
    ) in log
    assert (snapshots(spark, table), rows(spark, table)) == (before, [(1, Decimal("999.00"), 2)])

    # Within one run: two members' bigints add up past bigint's range.
    log = project.fail("run", add=0, hits=9223372036854775807, more=1)
    assert "lakeplan: `counter`.`hits` (merge rule sum): the sum of this run's values for key {\"id\":1}" in log
    assert ("which bigint cannot hold; this write stopped and committed nothing. Fix: declare `hits` as decimal(38,0) in "
            "`counter`'s YAML and rebuild the table: dbt run -s counter --full-refresh (Iceberg does not change bigint to "
            "it in place).") in log
    assert (snapshots(spark, table), rows(spark, table)) == (before, [(1, Decimal("999.00"), 2)])

    # Against the stored value: 2 + 9223372036854775806 + 1 overflows bigint.
    log = project.fail("run", add=0, hits=9223372036854775806, more=0)
    assert "would become 2 + 9223372036854775806 for key {\"id\":1}, which bigint cannot hold" in log
    assert (snapshots(spark, table), rows(spark, table)) == (before, [(1, Decimal("999.00"), 2)])

    project.run("run", add="-9.00")  # and the counter still counts
    assert rows(spark, table) == [(1, Decimal("990.00"), 4)]


def test_a_failed_first_run_leaves_no_table_and_a_failed_full_refresh_keeps_the_old_one(make_project, spark):
    project = make_project("first_run", PRICES)
    table = "lakeplan_first_run.prices"
    log = project.fail("run", step=2)  # the first run already sends '12abc'
    assert "sends in column `b` the value 12abc" in log
    assert not spark.catalog.tableExists(table)

    project.run("run")
    before = snapshots(spark, table), rows(spark, table)
    log = project.fail("run", "--full-refresh", step=2)
    assert "sends in column `b` the value 12abc" in project.shown
    assert (snapshots(spark, table), rows(spark, table)) == before
