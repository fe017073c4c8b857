"""docs/errors.md names, for every misconfiguration, the test that triggers it: those tests must exist; and no fix it
lists loses a value."""

import re
from pathlib import Path

from dbt_lakeplan import spark_types

REPO = Path(__file__).resolve().parents[2]
CATALOGUE = REPO / "docs" / "errors.md"
ROW = re.compile(r"^\| (\d+) \|.*\| (test_\w+\.py)::(test_\w+)(?:\[(\w+)\])? \|$", re.MULTILINE)


def test_every_catalogued_error_has_its_test():
    rows = ROW.findall(CATALOGUE.read_text())
    assert len(rows) >= 20
    assert [int(number) for number, *_ in rows] == list(range(1, len(rows) + 1))
    for _, module, function, case in rows:
        source = (REPO / "tests" / "integration" / module).read_text()
        assert f"def {function}(" in source, f"{module}::{function} does not exist"
        if case:
            assert f'"{case}"' in source, f"{module}::{function} has no case {case!r}"


# What a row says of a column's types: (the type its values have now, the type the table stores).
NOW_AND_STORED = [
    re.compile(r"stored as ([\w(),<>]+), but its (?:query now gives|YAML now declares) ([\w(),<>]+?),"),
    re.compile(r"selects `\w+` as ([\w(),<>]+) where its table .*? holds ([\w(),<>]+?),"),
    re.compile(r"declaring `\w+` ([\w(),<>]+), but its table .*? holds `\w+` as ([\w(),<>]+)"),
]
# A fix telling the user to cast a column (or a version) into a type.
CAST_INTO = re.compile(r"\bcast (?:`\w+`|it|them|both) (?:back )?to (?:an? )?([\w(),<>]+)")
# A fix setting on_schema_change to sync_all_columns, which drops the columns a query no longer selects.
SETS_SYNC = re.compile(r"set `?on_schema_change:? (?:to )?[^.;]*sync_all_columns")


def _types_now_and_stored(error: str) -> list[tuple[str, str]]:
    pairs = [(now, stored) for stored, now in NOW_AND_STORED[0].findall(error)]
    return pairs + [pair for pattern in NOW_AND_STORED[1:] for pair in pattern.findall(error)]


def test_no_catalogued_fix_loses_a_value():
    """A fix must keep every value: it casts only into a type that holds every value the column has now (text, or a
    type Iceberg widens the column's type into); where Iceberg widens the stored column in place, it names that way,
    not a cast back or a rebuild alone; and a fix that sets sync_all_columns says that it drops columns."""
    for number, error in re.findall(r"^\| (\d+) \|[^|]*\| (.*) \| test_\w+\.py::", CATALOGUE.read_text(), re.M):
        fix = error.partition("Fix:")[2]
        pairs = _types_now_and_stored(error)
        for into in CAST_INTO.findall(fix):
            assert pairs, f"row {number}: a fix casts into {into}; say which type the values have now"
            for now, _ in pairs:
                keeps = spark_types.normal_type(into) == "string" or spark_types.normal_type(now) in (
                    [spark_types.normal_type(into)] + spark_types.promoted_from(into))
                assert keeps, f"row {number}: its fix casts {now} into {into}, which cannot hold every {now}"
        for now, stored in pairs:
            if spark_types.normal_type(stored) in spark_types.promoted_from(now):
                assert "sync_all_columns" in fix or "widen" in fix, \
                    f"row {number}: Iceberg widens {stored} to {now} in place, which its fix does not name"
        if SETS_SYNC.search(fix):
            assert "drop" in fix, f"row {number}: its fix sets sync_all_columns without saying that it drops columns"
