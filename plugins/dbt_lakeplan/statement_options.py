"""Spark settings for one statement: set before it, and the session's own values back after it, whether it
succeeds or fails.

dbt runs every model of a project in one Spark session, and Jinja has no `finally`: a setting a macro set
before a statement that failed stayed set for every model after it. So a macro does not set anything; it heads
its statement with one comment line (macro `lakeplan_statement_options`), and lakeplan's statement handler
(spark_adapter.py), which wraps every statement dbt runs, sets and restores around that statement:

    -- lakeplan session options: {"spark.sql.shuffle.partitions": 4}
    merge into ...

The settings go to the statement's session as `SET key=value`, through cursors of the connection's own (not the
statement's), so they work with every dbt-spark method, and Spark checks each value as it would in SQL.

dbt-spark's session method applies the profile's `server_side_parameters` again before every statement, and it
adds `spark.sql.ansi.enabled: false` to them: a `SET` of such a key lasted until the statement it was meant for
began. For the statement's duration, its options take the place of those parameters too (`forced`).
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Iterator

# the statement's first line, after dbt's query comment: a line like it inside a model's own SQL sets nothing
HEADER = re.compile(
    r"\A\s*(?:/\*(?:(?!\*/).)*\*/\s*)?"  # dbt's query comment, if any
    r"-- lakeplan session options: (\{[^\n]*\})[ \t]*$",
    re.DOTALL | re.MULTILINE,
)


def options_of(sql: str) -> dict[str, Any]:
    """The settings a statement's header asks for (none without a header); a value None means unset."""
    match = HEADER.search(sql)
    return json.loads(match.group(1)) if match else {}


def spark_value(value: Any) -> str:
    """A setting's value as `SET` takes it: YAML's true is Spark's `true`."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@contextlib.contextmanager
def applied(
    new_cursor: Callable[[], Any],
    options: dict[str, Any],
    log=lambda message: None,
    forced: dict[str, str] | None = None,
) -> Iterator[None]:
    """Sets `options` for the block, through DB-API cursors of the statement's session (`new_cursor()`, one per
    statement: dbt-spark's session cursor keeps its first result), then puts back each value the session had,
    also when a setting or the block fails. `forced`: the settings the connection applies before each statement
    (dbt-spark session's `server_side_parameters`, shared by its cursors); an option overrides its key there
    for the block."""

    def execute(sql: str) -> Any:
        cursor = new_cursor()
        cursor.execute(sql)
        return cursor

    forced = {} if forced is None else forced
    overridden = {key: forced[key] for key in options if key in forced}
    previous: dict[str, str | None] = {}
    try:
        explicit = dict(execute("set").fetchall())  # the values set in this session, not the defaults
        for key, value in options.items():
            previous[key] = explicit.get(key)
            forced.pop(key, None)
            if key in overridden and value is not None:
                forced[key] = spark_value(value)
            change = f"reset {key}" if value is None else f"set {key}={spark_value(value)}"
            log(f"lakeplan: {change} for this statement")
            execute(change)
        yield
    finally:
        forced.update(overridden)
        for key, value in previous.items():
            execute(f"reset {key}" if value is None else f"set {key}={value}")
