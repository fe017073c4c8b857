"""Spark's data types by family, declared once: the merge rules check a column's type against its rule with
them at parse time, and the plan hands them to the macros, which check members' real types at run time."""

from __future__ import annotations

import difflib
import re

FAMILIES = {
    **dict.fromkeys(
        ["tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long", "float", "real", "double",
         "decimal", "dec", "numeric"], "numeric"),
    **dict.fromkeys(["string", "varchar", "char"], "string"),
    **dict.fromkeys(["timestamp", "timestamp_ntz", "timestamp_ltz"], "timestamp"),
    **{name: name for name in ["boolean", "date", "binary", "void"]},
    **dict.fromkeys(["array", "map", "struct"], "complex"),
}  # fmt: skip

# Which families Spark's default (non-ANSI) cast turns a family into; a cast that may lose a value is checked
# row by row (macros/utils/checked_cast.sql).
CASTS = {
    "numeric": ["numeric", "boolean", "timestamp", "string"],
    "string": ["string", "numeric", "boolean", "date", "timestamp", "binary"],
    "boolean": ["boolean", "numeric", "string"],
    "date": ["date", "timestamp", "string"],
    "timestamp": ["timestamp", "date", "numeric", "string"],
    "binary": ["binary", "string"],
    "void": ["numeric", "string", "boolean", "date", "timestamp", "binary", "complex"],
    "complex": ["string"],  # beyond the same type
}


# Other names of a type, and the parameters a bare `decimal` takes: a type as Spark prints it
# (macros/utils/checked_cast.sql, lakeplan_normal_type).
ALIASES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "real": "float",
           "timestamp_ltz": "timestamp", "dec": "decimal", "numeric": "decimal"}  # fmt: skip
BARE = {"decimal": "decimal(10,0)"}

# A cast that never loses a value, beyond the same type and anything into string: integers into an integer or
# decimal with as many digits, a decimal into one with as many digits on both sides of the point, and these pairs.
INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}
# The largest magnitude a number type holds (a decimal's follows from its precision and scale).
LARGEST = {"tinyint": 2**7 - 1, "smallint": 2**15 - 1, "int": 2**31 - 1, "bigint": 2**63 - 1,
           "float": 3.4028234663852886e38, "double": 1.7976931348623157e308}  # fmt: skip
LOSSLESS = [("tinyint", "double"), ("smallint", "double"), ("int", "double"), ("float", "double"),
            ("date", "timestamp"), ("varchar", "string"), ("char", "string")]  # fmt: skip

# Iceberg's type promotions (a column's type changed in place, its stored values kept): these pairs, and a
# decimal's precision widened at the same scale (macros/utils/checked_cast.sql, lakeplan_iceberg_widens).
PROMOTIONS = [("int", "bigint"), ("float", "double")]
# The types Iceberg has none of its own for -> the type it stores them as, which Spark then shows for the column
# (macros/utils/checked_cast.sql, lakeplan_iceberg_type).
STORED_AS = {"tinyint": "int", "smallint": "int", "varchar": "string", "char": "string"}
DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")


def normal_type(data_type: str) -> str:
    """A type name as Spark prints it: lower case, no spaces, aliases resolved (`Integer` -> `int`)."""
    name = data_type.lower().replace(" ", "")
    base = name.split("(")[0]
    name = ALIASES.get(base, base) + name[len(base) :]
    return BARE.get(name, name)


def stored_type(data_type: str) -> str:
    """The type an Iceberg table stores a column declared `data_type` as, as Spark prints it (STORED_AS)."""
    name = normal_type(data_type)
    return STORED_AS.get(name.split("(")[0], name)


def stored_alike(data_type: str) -> list[str]:
    """The types a YAML may declare that Iceberg stores as `data_type` stores (a tinyint, smallint and int alike);
    a varchar(n) or char(n), one for each length, is left out (only the integers are declared without one)."""
    stored = stored_type(data_type)
    return sorted({stored, *(name for name, other in STORED_AS.items() if other == stored and name in INTEGER_DIGITS)})


def promoted_from(data_type: str) -> list[str]:
    """The types Iceberg promotes in place to `data_type`, as Spark prints them."""
    target = normal_type(data_type)
    decimal = DECIMAL.match(target)
    if decimal:
        precision, scale = int(decimal.group(1)), int(decimal.group(2))
        return [f"decimal({narrower},{scale})" for narrower in range(max(scale, 1), precision)]
    return [source for source, promoted in PROMOTIONS if promoted == target]


def spellings(data_type: str) -> list[str]:
    """How a YAML may write a type Spark prints as `data_type`: lower or upper case, by an alias, a decimal's
    scale after a space."""
    names = [data_type, *(alias for alias, name in ALIASES.items() if name == data_type), data_type.replace(",", ", ")]
    return sorted({spelling for name in names for spelling in (name, name.upper())})


def base_type(data_type: str) -> str:
    """`decimal(10,2)` -> `decimal`, `array<int>` -> `array`."""
    return data_type.lower().split("(")[0].split("<")[0].strip()


def family(data_type: str) -> str | None:
    """The type's family, or None when Spark has no such type (`decimall`)."""
    return FAMILIES.get(base_type(data_type))


# Spark 3.5's grammar of a data type (SqlBaseParser.g4, rule `dataType`) and the checks its AstBuilder adds
# (visitPrimitiveDataType, DecimalType): transcribed, because no library parses it as Spark does. sqlglot's Spark
# dialect accepts what Spark refuses (`array<int`, `int)`, `text`, `json`) and refuses `void`; pyspark's own parser
# runs in the JVM, which `dbt parse` does not start.
#   dataType := ARRAY '<' dataType '>' | MAP '<' dataType ',' dataType '>'
#             | STRUCT ('<' (field (',' field)*)? '>' | '<>')
#             | INTERVAL (YEAR | MONTH) (TO MONTH)? | INTERVAL (DAY | HOUR | MINUTE | SECOND) (TO (HOUR | MINUTE | SECOND))?
#             | identifier ('(' INTEGER (',' INTEGER)* ')')?
#   field    := identifier ':'? dataType (NOT NULL)? (COMMENT string)?
PRIMITIVES = {  # a primitive type's names -> how many integer parameters it takes
    **dict.fromkeys(["boolean", "tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long", "float",
                     "real", "double", "date", "timestamp", "timestamp_ntz", "timestamp_ltz", "string", "binary",
                     "void", "interval"], (0,)),
    **dict.fromkeys(["char", "character", "varchar"], (1,)),
    **dict.fromkeys(["decimal", "dec", "numeric"], (0, 1, 2)),
}  # fmt: skip
MAX_DECIMAL_PRECISION = 38
_TOKEN = re.compile(r"\s*(?:(<>|[<>(),:])|(`(?:[^`]|``)*`)|('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(\w+))")
_INTERVAL_UNITS = (("year", "month"), ("month",), ("day", "hour", "minute", "second"), ("hour", "minute", "second"))


class SparkTypeError(ValueError):
    """Text that is no Spark data type; the message says where and why."""


def type_problem(text: str) -> str | None:
    """Why Spark 3.5 would not parse `text` as a data type, or None when it would."""
    try:
        parse_data_type(text)
    except SparkTypeError as error:
        return str(error)
    return None


def parse_data_type(text: str) -> None:
    """Raises SparkTypeError unless Spark 3.5 parses `text` as a data type."""
    tokens, at = [], 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise SparkTypeError(f"`{text[at:].strip()[:20]}` is no part of a type")
        tokens.append(next(group for group in match.groups() if group is not None))
        at = match.end()
    position = _data_type(tokens, 0)
    if position < len(tokens):
        raise SparkTypeError(f"`{' '.join(tokens[position:])}` follows a complete type")


def _expect(tokens: list[str], position: int, wanted: str) -> int:
    found = tokens[position] if position < len(tokens) else None
    if found is None or found.lower() != wanted:
        raise SparkTypeError(f"`{wanted}` expected {'at the end' if found is None else f'before `{found}`'}")
    return position + 1


def _data_type(tokens: list[str], position: int) -> int:
    if position >= len(tokens):
        raise SparkTypeError("a type expected at the end")
    name = tokens[position].lower()
    following = tokens[position + 1] if position + 1 < len(tokens) else None
    if name == "array" and following == "<":
        return _expect(tokens, _data_type(tokens, position + 2), ">")
    if name == "map" and following == "<":
        return _expect(tokens, _data_type(tokens, _expect(tokens, _data_type(tokens, position + 2), ",")), ">")
    if name == "struct" and following == "<>":
        return position + 2
    if name == "struct" and following == "<":
        return _struct_fields(tokens, position + 2)
    if name == "interval" and following and following.lower() in _INTERVAL_UNITS[0] + _INTERVAL_UNITS[2]:
        return _interval(tokens, position + 1)
    return _primitive(tokens, position)


def _struct_fields(tokens: list[str], position: int) -> int:
    while position < len(tokens) and tokens[position] != ">":
        if not (tokens[position].startswith("`") or re.fullmatch(r"\w+", tokens[position])):
            raise SparkTypeError(f"a field name expected before `{tokens[position]}`")
        position += 2 if tokens[position + 1 : position + 2] == [":"] else 1
        position = _data_type(tokens, position)
        if [t.lower() for t in tokens[position : position + 2]] == ["not", "null"]:
            position += 2
        if position < len(tokens) and tokens[position].lower() == "comment":
            if position + 1 >= len(tokens) or tokens[position + 1][0] not in "'\"":
                raise SparkTypeError("a quoted comment expected after `comment`")
            position += 2
        if position >= len(tokens) or tokens[position] != ",":
            break
        position += 1
        if position < len(tokens) and tokens[position] == ">":
            raise SparkTypeError("a field expected after `,`")
    return _expect(tokens, position, ">")


def _interval(tokens: list[str], position: int) -> int:
    start = tokens[position].lower()
    ends = _INTERVAL_UNITS[1] if start in _INTERVAL_UNITS[0] else _INTERVAL_UNITS[3]
    if position + 1 < len(tokens) and tokens[position + 1].lower() == "to":
        if position + 2 >= len(tokens) or tokens[position + 2].lower() not in ends:
            raise SparkTypeError(f"`interval {start} to` takes one of {', '.join(ends)}")
        return position + 3
    return position + 1


def _primitive(tokens: list[str], position: int) -> int:
    name = tokens[position].lower()
    if name in ("array", "map", "struct"):
        raise SparkTypeError(f"`{name}` needs its element types in `<...>`")
    if name not in PRIMITIVES:
        close = difflib.get_close_matches(name, [*PRIMITIVES, "array", "map", "struct"], n=1, cutoff=0.75)
        raise SparkTypeError(f"`{tokens[position]}` is no Spark type" + (f"; did you mean {close[0]}?" if close else ""))
    position += 1
    parameters = []
    if position < len(tokens) and tokens[position] == "(":
        position += 1
        while True:
            if position >= len(tokens) or not tokens[position].isdigit():
                raise SparkTypeError(f"an integer expected in `{name}(...)`")
            parameters.append(int(tokens[position]))
            position += 1
            if position < len(tokens) and tokens[position] == ",":
                position += 1
                continue
            position = _expect(tokens, position, ")")
            break
    if len(parameters) not in PRIMITIVES[name]:
        counts = " or ".join(str(count) for count in PRIMITIVES[name])
        raise SparkTypeError(f"`{name}` takes {counts} parameter(s), not {len(parameters)}")
    if name in ("decimal", "dec", "numeric") and parameters:
        precision, scale = parameters[0], parameters[1] if len(parameters) == 2 else 0
        if precision > MAX_DECIMAL_PRECISION or scale > precision:
            raise SparkTypeError(f"`{name}({', '.join(map(str, parameters))})` needs a precision of at most "
                                 f"{MAX_DECIMAL_PRECISION} and a scale of at most the precision")  # fmt: skip
    return position

