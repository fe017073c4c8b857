"""A column's `data_type` is parsed as Spark 3.5 parses a data type (its grammar's `dataType` rule and the checks
its AstBuilder adds), at parse time and without a JVM."""

import pytest

from dbt_lakeplan.fingerprint import digest, earlier_parts, short, target_parts
from dbt_lakeplan.spark_types import normal_type, promoted_from, stored_alike, stored_type, type_problem

SPARK_TYPES = [
    "bigint", "BIGINT", " int ", "integer", "long", "short", "byte", "real", "double", "boolean", "date", "timestamp",
    "timestamp_ntz", "timestamp_ltz", "string", "binary", "void", "char(3)", "character(2)", "varchar(10)",
    "decimal", "dec(5,2)", "numeric(5)", "Decimal(38, 6)", "array<int>", "map<string,int>",
    "map<string, array<decimal(5,2)>>", "struct<>", "struct< >", "struct<a:int,b:string>",
    "struct<a int, `b c`: string>", "struct<a:int not null comment 'why'>", "array<struct<a:map<int,int>>>",
    "interval", "interval year", "interval year to month", "interval day to second", "interval hour",
]  # fmt: skip


@pytest.mark.parametrize("data_type", SPARK_TYPES)
def test_every_form_of_sparks_type_grammar_parses(data_type):
    assert type_problem(data_type) is None


@pytest.mark.parametrize("data_type, reason", [
    ("decimal(38,6", "`)` expected at the end"),
    ("decimall(5,2)", "`decimall` is no Spark type; did you mean decimal?"),
    ("strin", "`strin` is no Spark type; did you mean string?"),
    ("array<int", "`>` expected at the end"),
    ("int)", "`)` follows a complete type"),
    ("bigint bigint", "`bigint` follows a complete type"),
    ("text", "`text` is no Spark type"),  # sqlglot's Spark dialect takes these three
    ("json", "`json` is no Spark type"),
    ("datetime", "`datetime` is no Spark type"),
    ("varchar", "`varchar` takes 1 parameter(s), not 0"),
    ("int(5)", "`int` takes 0 parameter(s), not 1"),
    ("decimal(39,0)", "a precision of at most 38"),
    ("decimal(5,6)", "a scale of at most the precision"),
    ("array", "`array` needs its element types in `<...>`"),
    ("map<int>", "`,` expected before `>`"),
    ("struct<a:int,>", "a field expected after `,`"),
    ("struct<a:int b:int>", "`>` expected before `b`"),
    ("interval day to month", "`interval day to` takes one of hour, minute, second"),
    ("bigint;", "`;` is no part of a type"),
], ids=lambda value: value if " " not in value else None)  # fmt: skip
def test_text_spark_would_refuse_says_where_and_why(data_type, reason):
    assert reason in type_problem(data_type)


@pytest.mark.parametrize("written, printed", [
    ("INTEGER", "int"), ("long", "bigint"), ("Decimal(8, 2)", "decimal(8,2)"), ("numeric(5,1)", "decimal(5,1)"),
    ("dec", "decimal(10,0)"), ("timestamp_ltz", "timestamp"), ("array<int>", "array<int>"),
])  # fmt: skip
def test_a_type_is_named_as_spark_prints_it(written, printed):
    assert normal_type(written) == printed


def test_iceberg_promotes_ints_floats_and_a_decimals_precision_at_its_scale():
    assert promoted_from("BIGINT") == ["int"]
    assert promoted_from("double") == ["float"]
    assert promoted_from("decimal(5, 2)") == ["decimal(2,2)", "decimal(3,2)", "decimal(4,2)"]
    assert promoted_from("string") == promoted_from("int") == promoted_from("decimal(1,0)") == []


def test_a_column_part_declared_narrower_is_known_in_every_spelling():
    """The state check takes a column whose type was widened for the same column: its part as stored (the type
    spelled as the YAML had it) is among today's widened parts."""
    rule = {"merge": "sum"}
    columns = (["c", "bigint", rule], ["s", "string"], ["d", "decimal(3,1)"])
    widened = {f"column:{column[0]}": earlier_parts(column) for column in columns}
    for spelling in ("int", "INT", "integer", "INTEGER"):
        assert widened["column:c"][short(digest(["c", spelling, rule]))] == "int"
    # a tinyint and a smallint are stored as an int: the overflow error's fix for them (declare bigint) widens too
    for spelling in ("tinyint", "TINYINT", "smallint"):
        assert widened["column:c"][short(digest(["c", spelling, rule]))] == spelling.lower()
    assert short(digest(["c", "int", {"merge": "max"}])) not in widened["column:c"]  # a changed rule is a change
    assert short(digest(["c", "bigint", rule])) not in widened["column:c"]  # today's part is not an earlier one
    assert short(digest(["d", "decimal(2,1)"])) in widened["column:d"]
    assert set(widened["column:s"].values()) == {"string"}  # a string: only its other spelling, STRING


def test_a_column_part_counts_the_type_the_table_stores():
    """A varchar's length, a tinyint for an int and a type's other spelling store the same values: the same part.
    A table recorded before the part counted the stored type (its part holds the type as its YAML spelled it) still
    fits the same declaration."""
    def part(data_type):
        return target_parts({}, {"c": ["c", data_type]}, {})["column:c"]

    assert part("varchar(10)") == part("varchar(20)") == part("STRING") == part("char(3)")
    assert part("tinyint") == part("smallint") == part("INTEGER") == part("int") != part("bigint")
    assert stored_type("Varchar(10)") == "string" and stored_alike("smallint") == ["int", "smallint", "tinyint"]
    for spelled in ("varchar(10)", "Decimal(10, 2)", "TINYINT"):
        assert short(digest(["c", spelled])) in earlier_parts(["c", spelled])
