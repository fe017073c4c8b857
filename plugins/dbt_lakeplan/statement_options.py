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

With dbt `threads` above 1, models run at the same time in the one Spark session: a statement with settings runs
alone (`SESSION.exclusive()`), others together (`SESSION.shared()`). Otherwise another model's statement ran under
its settings, and two statements with settings saved and restored each other's values, leaving one set.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import re
import threading
from typing import Any, Callable, Iterator

# the statement's first line, after dbt's query comment: a line like it inside a model's own SQL sets nothing
HEADER = re.compile(
    r"\A\s*(?:/\*(?:(?!\*/).)*\*/\s*)?"  # dbt's query comment, if any
    r"-- lakeplan session options: (\{[^\n]*\})[ \t]*$"
    r"(?:\n[ \t]*-- set by: ([^\n]*?)[ \t]*$)?",  # whose settings they are, for an error about one of them
    re.DOTALL | re.MULTILINE,
)
# Spark checks a SET's value but takes any key, and answers `SET key` with this for a key it does not define. Under
# `spark.sql.` such a key is a typo, except where a catalog or Iceberg keep settings of their own.
UNDEFINED = "<undefined>"
OWN_NAMESPACES = ("spark.sql.catalog.", "spark.sql.iceberg.")


class SessionLock:
    """A readers-writer lock over the Spark session's settings: any number of statements share the session, a
    statement that changes its settings has it alone. A waiting writer goes before new readers, so a steady
    stream of statements cannot hold it off. A thread that holds it already passes through: dbt runs a macro's
    statements inside the macro's own error handler (`execute_macro`), so a statement can come inside a hold;
    a hold of that kind covers no statement, so an exclusive request inside a shared hold gives the hold up
    meanwhile instead of waiting for itself."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0
        self._held = threading.local()  # this thread's mode: None, "shared" or "exclusive"

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        if getattr(self._held, "mode", None):
            yield
            return
        self._take_shared()
        self._held.mode = "shared"
        try:
            yield
        finally:
            self._held.mode = None
            self._give_back(shared=True)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        mode = getattr(self._held, "mode", None)
        if mode == "exclusive":
            yield
            return
        if mode == "shared":
            self._give_back(shared=True)
        with self._changed:
            self._writers_waiting += 1
            self._changed.wait_for(lambda: not self._writing and not self._readers)
            self._writers_waiting -= 1
            self._writing = True
        self._held.mode = "exclusive"
        try:
            yield
        finally:
            self._held.mode = mode
            self._give_back(shared=False)
            if mode == "shared":
                self._take_shared()

    def _take_shared(self) -> None:
        with self._changed:
            self._changed.wait_for(lambda: not self._writing and not self._writers_waiting)
            self._readers += 1

    def _give_back(self, shared: bool) -> None:
        with self._changed:
            if shared:
                self._readers -= 1
            else:
                self._writing = False
            self._changed.notify_all()


SESSION = SessionLock()


class Refused(Exception):
    """Spark refuses a setting of a statement's header; the message is the sentence dbt shows."""


def header_of(sql: str) -> tuple[dict[str, Any], str]:
    """The settings a statement's header asks for (none without a header; a value None means unset), and whose
    they are (its `-- set by:` line), for errors."""
    match = HEADER.search(sql)
    if not match:
        return {}, "this statement's settings"
    return json.loads(match.group(1)), match.group(2) or "this statement's settings"


def options_of(sql: str) -> dict[str, Any]:
    """The settings a statement's header asks for."""
    return header_of(sql)[0]


def spark_value(value: Any) -> str:
    """A setting's value as `SET` takes it: YAML's true is Spark's `true`."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@contextlib.contextmanager
def applied(
    new_cursor: Callable[[], Any],
    options: dict[str, Any],
    log=lambda message: None,
    forced: dict[str, str] | None = None,
    origin: str = "this statement's settings",
) -> Iterator[None]:
    """Sets `options` for the block, through DB-API cursors of the statement's session (`new_cursor()`, one per
    statement: dbt-spark's session cursor keeps its first result), then puts back each value the session had,
    also when a setting or the block fails. `forced`: the settings the connection applies before each statement
    (dbt-spark session's `server_side_parameters`, shared by its cursors); an option overrides its key there
    for the block. A key Spark does not define, or a value it refuses, stops the block before it runs
    (`Refused`, naming `origin` and every setting Spark refuses, numbered when there are several)."""

    def execute(sql: str) -> Any:
        cursor = new_cursor()
        cursor.execute(sql)
        return cursor

    @functools.cache  # once per block, however many keys it refuses
    def known() -> dict[str, str]:
        return {row[0].lower(): row[0] for row in execute("set -v").fetchall()}

    def change(key: str, value: Any) -> None:
        if not key.lower().startswith("spark."):  # SET takes it, and nothing reads it
            meant = [name for lowered, name in known().items() if lowered.endswith("." + key.lower())]
            hint = f"; did you mean `{meant[0]}`?" if meant else ""
            raise Refused(f"`{key}` is not a Spark setting (in {origin}): Spark's start with `spark.`{hint} "
                          "Fix: correct the key, or remove it.")
        if key.lower().startswith("spark.sql.") and not key.lower().startswith(OWN_NAMESPACES):
            if execute(f"set {key}").fetchall()[0][1] == UNDEFINED:  # keys are case-sensitive
                names = known()
                close = difflib.get_close_matches(key.lower(), names, n=1)
                hint = f"; did you mean `{names[close[0]]}`?" if close else ""
                raise Refused(f"Spark has no setting `{key}` (in {origin}){hint} Fix: correct the key, or remove it.")
        statement = f"reset {key}" if value is None else f"set {key}={spark_value(value)}"
        log(f"lakeplan: {statement} for this statement")
        try:
            execute(statement)
        except Exception as error:
            reason = _sentence(getattr(error, "msg", None) or str(error))
            fix = (  # a setting fixed when the session starts takes no value here
                "remove it, and set it where the Spark session starts (spark-defaults.conf, the cluster's settings)"
                if "Cannot modify the value of" in reason
                else "give it a value Spark accepts, or remove it"
            )
            raise Refused(f"Spark refuses `{key}: {spark_value(value)}` (in {origin}): {reason} Fix: {fix}.") from error

    forced = {} if forced is None else forced
    overridden = {key: forced[key] for key in options if key in forced}
    previous: dict[str, str | None] = {}
    try:
        explicit = dict(execute("set").fetchall())  # the values set in this session, not the defaults
        refused = []
        for key, value in options.items():
            try:
                change(key, value)
            except Refused as refusal:  # it changed nothing, so it has nothing to put back; the others are checked
                refused.append(str(refusal))
                continue
            previous[key] = explicit.get(key)
            if key in overridden:
                del forced[key]
                if value is not None:
                    forced[key] = spark_value(value)
        if refused:
            numbered = refused if len(refused) == 1 else [f"{n}. {r}" for n, r in enumerate(refused, 1)]
            raise Refused(" ".join(numbered) + " Nothing was written.")
        yield
    finally:
        forced.update(overridden)
        for key, value in previous.items():
            execute(f"reset {key}" if value is None else f"set {key}={value}")


def _sentence(message: str) -> str:
    """Spark's reason for refusing a setting as one sentence ending in a full stop."""
    from dbt_lakeplan.spark_adapter import condensed  # spark_adapter imports this module

    sentence = condensed(message).strip().splitlines()[0].strip() if message.strip() else "no reason given"
    return sentence if sentence.endswith(".") else sentence + "."
