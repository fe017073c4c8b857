"""Spark's data types by family, declared once: the merge rules check a column's type against its rule with
them at parse time, and the plan hands them to the macros, which check members' real types at run time."""

from __future__ import annotations

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


def base_type(data_type: str) -> str:
    """`decimal(10,2)` -> `decimal`, `array<int>` -> `array`."""
    return data_type.lower().split("(")[0].split("<")[0].strip()


def family(data_type: str) -> str | None:
    """The type's family, or None when Spark has no such type (`decimall`)."""
    return FAMILIES.get(base_type(data_type))
