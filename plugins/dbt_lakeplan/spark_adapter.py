"""Five fixes to dbt-spark's adapter and two additions, installed once per process by lakeplan's plugin.

Quoting: dbt-spark wraps a name in backticks without escaping a backtick inside it, so a column such as
`Seq`No` breaks every statement that names it (seeds first). Spark escapes a backtick by doubling it.

Table format: dbt-spark reads the format from the `Provider:` line of SHOW TABLE EXTENDED. Through the session catalog an
Iceberg table is a Hive metastore entry printed as `Provider: hive` with the table property
`table_type=ICEBERG`, so dbt-spark takes every Iceberg table for a Hive one: snapshots refuse it ("in another
format than 'delta' or 'iceberg' or 'hudi'") and insert_overwrite writes Hive syntax. The property decides.

Missing columns: dbt compares column names as they are written (`AcctName` is not `acctname`), Spark as it
resolves them, case-insensitively. A view in this catalog reports its columns in lower case (the Hive metastore's
schema), so a snapshot, whose new rows are staged in a view, took its target's `AcctName` for a missing column
and failed to add it again on its second run ([FIELDS_ALREADY_EXISTS]). Names compare as Spark compares them.

Query column types: dbt reads the types of a query's columns from the driver's cursor description. Over the Thrift
Server (the `cluster` target) PyHive names them `BIGINT_TYPE` and drops a decimal's precision and scale, so every
check of a query's types against its table's (an upsert's second run, its on_schema_change, a contract) compared
`bigint` with `BIGINT_TYPE`. Spark's own `describe query` gives the types as it prints them, on every target.

Errors: a statement that fails inside a Spark task (a row guard's `raise_error`, a value that does not fit)
reaches dbt as the task's whole Java stack, 100-150 lines around one sentence. dbt-spark already logs the full
error at debug level; the user is shown the sentence.

Statement options: the same handler sets the Spark settings a lakeplan statement's header asks for around that
statement alone (statement_options.py).

Metastore in use: the session method starts Spark at a connection's first statement; a second process on the embedded
catalog then waited 60-90 s for Hive's client to give up, naming neither the metastore nor the process. Opening the
connection first asks who holds it (metastore_lock.py) and says so at once.

Catalog down mid-run: while a node's statement runs on a shared catalog, a thread asks its database's address and
warns when it stops answering (until when Spark retries) and when it answers again; a statement that fails while it
does not answer is told as that, naming the model and the fix (catalog_watch.py).

Cancel: dbt-spark's session method cancels nothing. The handler refuses a cancelled model's next statement unless its
write has committed, and the Spark jobs of each connection carry a tag its cancel stops (cancel.py).

The run's application: a beaten run's sentence names the other run by its Spark application; each invocation that
writes says its own once, with dbt's invocation id, after its first statement (concurrency.run_line).

A stopped JVM: where the session method's JVM was killed or ran out of memory, every statement after it failed with
Py4J's bare "Error while sending or receiving" or the socket's "Connection refused"; it is told as what happened to
which model, where to look and what a rerun finds (jvm_stopped.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from pathlib import Path

from dbt_lakeplan import catalog_watch, concurrency, jvm_stopped, metastore_lock, statement_options
from dbt_lakeplan.cancel import CANCELLATIONS, cancelled_sentence, node_name
from dbt_lakeplan.fingerprint import earlier_parts
from dbt_lakeplan.spark_setup import CONF_DIR_SETTING

HIVE_LOCKS = "spark.hadoop.iceberg.engine.hive.lock-enabled"  # on where several sessions commit to one catalog
PROVIDER_LINE = re.compile(r"^Provider: .*$", re.MULTILINE)
JAVA_FRAME = re.compile(r"^\s*at [\w$.<>]+\(")
# Py4J's and Spark's wrapping around the failure's own message
ERROR_WRAPPING = re.compile(
    r"^(?:An error occurred while calling o\d+\.\w+\.\s*:?\s*)?"
    r"(?:[\w.$]+(?:Exception|Error): )?"
    r"(?:Job aborted due to stage failure: .*?most recent failure: Lost task .*?\): )?"
    r"(?:[\w.$]+(?:Exception|Error): )?"
    r"(?:\[USER_RAISED_EXCEPTION\] )?"
)
# the Thrift Server's wrapping around Spark's own error (the `cluster` target): its exception, then Spark's error class
# and exception once more before the sentence
THRIFT_WRAPPING = re.compile(r"^(?:org\.apache\.hive\.service\.cli\.HiveSQLException: )?Error running query: "
                             r"(?:\[[A-Z_.]+\] )?(?:[\w.$]+(?:Exception|Error): )?")
SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
# dbt's own heading, once for each dbt error the failure passed through on its way (a Database Error: dbt-spark's
# Thrift connection, whose error its handler wraps again)
DBT_HEADING = re.compile(r"^(?:\s*(?:Runtime|Database) Error[ \t]*\n)+")
# an analysis error's sentence, then the plan Spark appends to it (tens of lines)
ANALYSIS_PLAN = re.compile(r"^\s*(\[[A-Z_.]+\][^\n]*?);?\s*\n.*", re.DOTALL)
# the line naming a partial-update write's group and members, or the members whose deletes a statement records
# (macros/materializations/partial_update/plan.sql)
WRITE_GROUP = re.compile(r"^[ \t]*-- (?:write group \d+ of \d+|deletes) of (`[^`\n]*`): ([^\n]*)$", re.MULTILINE)
# the line naming the upsert a statement writes (macros/materializations/upsert/)
UPSERT_WRITE = re.compile(r"^[ \t]*-- upsert (`[^`\n]*`)$", re.MULTILINE)
# what a model's own SQL raises while its rows are computed: raise_error / assert_true (a task's bare
# RuntimeException in Spark 3.5, USER_RAISED_EXCEPTION later), and the errors of values under ANSI mode
DATA_ERROR = re.compile(r"Lost task [^\n]*?\): java\.lang\.RuntimeException: "
                        r"|\[(?:USER_RAISED_EXCEPTION|DIVIDE_BY_ZERO|CAST_INVALID_INPUT|CAST_OVERFLOW|ARITHMETIC_OVERFLOW)\]")
# the line naming the member whose query a partial-update write stages as a temp view (plan.sql)
STAGED_MEMBER = re.compile(r"^\s*-- stage member (`[^`\n]*`) of (`[^`\n]*`)$", re.MULTILINE)
# what dbt's handler wraps around an adapter macro (`execute_macro`): its statements, not a statement; a cancel waiting
# for it to end would hold dbt's connection lock, which those statements need to start
ADAPTER_MACRO = re.compile(r"\Amacro \w+\Z")
# the class that opens Spark's sentence for an error in a query (and for many others)
ERROR_CLASS = re.compile(r"\[[A-Z_.]+\]")
# what Spark says of a table or schema a query reads that does not exist (a member's input not built yet)
NOT_BUILT = re.compile(r"\[(?:TABLE_OR_VIEW|SCHEMA)_NOT_FOUND\]")
# the line naming the external source a statement registers (macros/sources/stage_external_sources.sql)
STAGED_SOURCE = re.compile(r"^\s*-- stage source (`[^`\n]*`) from ([^\n]*)$", re.MULTILINE)
# what Spark says of an external table's location without data files (removed by `make clean`, never generated)
NO_DATA_FILES = re.compile(r"\[(?:UNABLE_TO_INFER_SCHEMA|PATH_NOT_FOUND)\]")
# what Iceberg says of a table two of whose partition fields share a name: a REPLACE TABLE changed a bucket count or
# a truncate width (lakeplan_check_partition_widths refuses that rebuild; a table rebuilt so before keeps both)
SAME_PARTITION_NAME = re.compile(r"Invalid schema: multiple fields for name partition\.(\S+): \d+ and \d+")
METADATA_TABLE = re.compile(r"([\w`.]+)\.(?:(?:all_)?(?:data_|delete_)?files|partitions|entries|manifests)\b")


def with_table_format(information: str) -> str:
    """SHOW TABLE EXTENDED information with the Provider an Iceberg table really has."""
    if "table_type=ICEBERG" in information and "Provider: iceberg" not in information:
        return PROVIDER_LINE.sub("Provider: iceberg", information, count=1)
    return information


def condensed(message: str) -> str:
    """A Spark error as the sentence it carries: the text before the first Java frame, without the wrapping
    of Py4J or of the Thrift Server, of a failed stage and of `raise_error`, of dbt's headings, and of what follows the
    first line of a sentence that opens with Spark's error class (an analysis error's plan, the statement around
    a syntax error). Other text without a Java stack is returned as it is."""
    message = THRIFT_WRAPPING.sub("", DBT_HEADING.sub("", message).lstrip(), count=1)
    lines = message.splitlines()
    frame = next((index for index, line in enumerate(lines) if JAVA_FRAME.match(line)), None)
    if frame is None or ERROR_CLASS.match(message.lstrip()):  # the Thrift Server sends the stack after the plan
        return ANALYSIS_PLAN.sub(r"\1", "\n".join(lines[:frame])).strip()
    text = " ".join(line.strip() for line in lines[:frame] if line.strip())
    sentence = SQLSTATE.sub("", ERROR_WRAPPING.sub("", text, count=1)).strip()
    causes = [line.strip()[len("Caused by: "):] for line in lines if line.strip().startswith("Caused by: ")]
    if causes and (not sentence or sentence.endswith(":")):  # e.g. "Exception thrown in awaitResult:"
        sentence = SQLSTATE.sub("", ERROR_WRAPPING.sub("", causes[-1], count=1)).strip()
    return sentence or message


def about_the_statement(sentence: str, sql: str, raw: str = "") -> str:
    """Spark's sentence, and what it means for the statement lakeplan sent: a source it registers, or a write."""
    staged = STAGED_SOURCE.search(sql)
    if staged is not None and NO_DATA_FILES.match(sentence):
        source, location = staged.groups()
        return (f"Source {source} has no data files at {location} (its `external.location`), so it cannot be read. "
                "Fix: generate them (the template's example: `make data`) or correct that location. "
                f"(Spark: {sentence})")
    same_name = SAME_PARTITION_NAME.search(sentence)
    if same_name is not None:
        read = METADATA_TABLE.search(sql)
        table, drop = (read.group(1), f"`spark-sql -e 'drop table {read.group(1)}'` in the activated venv") if read \
            else ("a table this statement reads", "`drop table`")
        return (f"Iceberg cannot read the metadata of {table}: two of its partition fields are named "
                f"`{same_name.group(1)}`, as a rebuild that changed a bucket count or a truncate width (a "
                f"--full-refresh) leaves them. Fix: drop the table ({drop}) and build it again (`dbt run -s <its "
                f"model> --full-refresh`). (Iceberg: {sentence})")
    return about_the_write(sentence, sql, raw)


def about_the_write(sentence: str, sql: str, raw: str = "") -> str:
    """Spark's sentence, and what it means for a partial-update write, whose statements hold lakeplan's expressions
    around the members' queries: a member's query that Spark refuses when the write stages it (a table it reads
    is not built yet, a column it names does not exist) is named; so is a non-deterministic member query (rand(),
    uuid(), reflect()), which fails the write's MERGE, and a value error the members' own SQL raises (`raw`, the
    whole error, says which kind), as is one in an upsert's query."""
    staged = STAGED_MEMBER.search(sql)
    if staged is not None and ERROR_CLASS.match(sentence):  # Spark's analysis of the query, not e.g. a lost session
        member, target = staged.groups()
        if NOT_BUILT.search(sentence):
            return (f"Member {member} of {target} reads a table or schema that does not exist; {target} is unchanged. "
                    f"Fix: build what {member} reads first (`dbt run -s +{target.strip('`')}` builds {target} with "
                    f"everything upstream of it), or correct the name in {member}. (Spark: {sentence})")
        return (f"Member {member} of {target} has a query Spark cannot run; {target} is unchanged. Fix: correct the "
                f"query of {member}. (Spark: {sentence})")
    group, upsert = WRITE_GROUP.search(sql), UPSERT_WRITE.search(sql)
    if DATA_ERROR.search(raw) and (group or upsert):
        return raised_by_the_query(sentence, *(group.groups() if group else (upsert.group(1), None)))
    if group is None or not sentence.startswith("[INVALID_NON_DETERMINISTIC_EXPRESSIONS]"):
        return sentence
    target, members = group.groups()
    return (f"A member of {target} ({members}) computes a value that differs on every evaluation (such as rand(), "
            f"uuid() or reflect()), which a MERGE cannot take; {target} is unchanged. Fix: compute that value upstream, "
            f"in a table model the member reads. (Spark: {sentence})")


def raised_by_the_query(sentence: str, target: str, members: str | None) -> str:
    """A value error raised by the SQL of the members of `target` (`members`, as listed in the statement: one or
    several) or of the upsert `target` itself (`members` None); lakeplan's own checks name the target already."""
    if target in sentence:
        return sentence
    if members is None:
        whose, fix = f"The query of upsert {target}", f"the check or the data in {target}'s query, or in what it reads"
    elif "," not in members:
        whose, fix = f"Member {members} of {target}", f"the check or the data in {members}, or in what it reads"
    else:
        whose, fix = f"A member of {target} ({members})", "the check or the data in the member whose SQL raises it"
    return f"{whose} failed while {target} was written: {sentence.rstrip('.')}; {target} is unchanged. Fix: correct {fix}."


def missing_columns(source: list, target: list) -> list:
    """The columns of `source` that `target` lacks, names compared as Spark resolves them (case-insensitively)."""
    present = {column.name.lower() for column in target}
    return [column for column in source if column.name.lower() not in present]


def quote(identifier: object) -> str:
    """A Spark identifier for any name: backticks around it, a backtick inside doubled. Like dbt-spark's own
    quote, it takes any value (Spark's `database` is None, which dbt's adapter tests quote)."""
    return "`{}`".format(str(identifier).replace("`", "``"))


_LAST_STATEMENT = threading.local()  # per dbt thread: the statement whose rows are being fetched
_SENT_AGAIN = threading.local()  # per dbt thread: the statement running is sent again if another run's commit meets it


def _condense_errors(handler):
    @contextlib.contextmanager
    def exception_handler(self, sql: str):
        from dbt_common.exceptions import DbtRuntimeError

        options, origin = statement_options.header_of(sql)
        session = statement_options.SESSION
        lock = session.exclusive if options else session.shared
        connection = self.get_if_exists()  # before the statement: a cancel holds dbt's lock while a commit ends
        watch = _catalog_watch(connection)
        try:
            with lock(), handler(self, sql), _statement_options(connection, options, origin), \
                    _cancellable(connection, sql), watch or contextlib.nullcontext():
                yield
        except DbtRuntimeError as error:
            sentence = (_cancelled(connection, sql) or (watch and watch.lost()) or _catalog_full(connection, error)
                        or _jvm_stopped(connection, sql, error) or _lost_to_another_run(connection, sql, error.msg)
                        or about_the_statement(condensed(error.msg), sql, error.msg))
            if sentence == error.msg:
                raise
            raise DbtRuntimeError(sentence) from error
        except Exception as error:  # dbt-spark re-raises an error without args (a PySpark SET refused) as it is
            sentence = (_cancelled(connection, sql) or (watch and watch.lost()) or _catalog_full(connection, error)
                        or _jvm_stopped(connection, sql, error) or _lost_to_another_run(connection, sql, str(error))
                        or about_the_statement(condensed(str(error)), sql, str(error)))
            raise DbtRuntimeError(sentence) from error
        finally:
            _LAST_STATEMENT.sql = sql  # its rows are fetched after this handler (_condense_fetch_errors)
            _LAST_STATEMENT.connection = connection
        _name_the_application(connection, sql)

    exception_handler.lakeplan = True
    return exception_handler


_NAMED = {"invocation": None}  # the dbt invocation whose Spark application was said (_name_the_application)
_NAMED_LOCK = threading.Lock()
WRITING_COMMANDS = ("run", "build", "seed", "snapshot", "retry")  # the commands a beaten write can stop


def _name_the_application(connection, sql: str) -> None:
    """After the first statement of a dbt invocation that writes (its Spark runs by then), one INFO line naming its
    Spark application and dbt's invocation id, once whatever its threads: a beaten run's sentence names the other run
    by its application (concurrency.conflict_sentence), which this line maps to a dbt process and its log."""
    from dbt_common.invocation import get_invocation_id

    invocation = get_invocation_id()
    if _NAMED["invocation"] == invocation or getattr(connection, "state", None) != "open" or ADAPTER_MACRO.match(sql):
        return
    with _NAMED_LOCK:
        if _NAMED["invocation"] == invocation:
            return
        _NAMED["invocation"] = invocation
    from dbt.flags import get_flags
    from dbt_common.events.base_types import EventLevel
    from dbt_common.events.functions import fire_event
    from dbt_common.events.types import Note

    if getattr(get_flags(), "WHICH", None) not in WRITING_COMMANDS:
        return
    application = concurrency.own_application(lambda statement: _query(connection, statement))
    if application:
        server = getattr(connection.credentials, "method", None) != "session"
        fire_event(Note(msg=concurrency.run_line(application, invocation, server)), level=EventLevel.INFO)


def _jvm_stopped(connection, sql: str, error: BaseException) -> str | None:
    """The sentence for a statement that failed because this process's Spark JVM is gone (jvm_stopped.py), naming
    the node of `connection` (dbt's connection name) and the table `sql` writes; None for any other failure."""
    if not (jvm_stopped.stopped(error) or jvm_gone()):
        return None
    from dbt.flags import get_flags

    name = getattr(connection, "name", None) or ""
    node = f"`{node_name(name)}`" if NODE_CONNECTION.match(name) else f"dbt's `{name or 'command'}`"
    log = os.path.join(getattr(get_flags(), "LOG_PATH", None) or "logs", "dbt.log")
    return jvm_stopped.sentence(node, concurrency.written_table(sql), log)


def jvm_gone() -> bool:
    """Whether the Spark JVM this process started has ended (pyspark's gateway process is that JVM: spark-submit
    execs it). Py4J's own error does not always say so: a call after the JVM's end fails with the socket's
    `[Errno 111] Connection refused` alone."""
    import sys

    if "pyspark" not in sys.modules:
        return False
    from pyspark import SparkContext

    process = getattr(SparkContext._gateway, "proc", None)
    return process is not None and process.poll() is not None


def _query(connection, sql: str) -> list:
    """Rows of a statement sent on a cursor of its own, beside the failed one (the session and Thrift handles)."""
    cursor = connection.handle.handle.cursor()
    cursor.execute(sql)
    return cursor.fetchall()


def _lost_to_another_run(connection, sql: str, raw: str) -> str | None:
    """What a failed statement leaves of this run is removed, and a write another run beat is told as such
    (concurrency.after_failure)."""
    if connection is None:
        return None
    from dbt_common.invocation import get_invocation_id

    return concurrency.after_failure(lambda statement: _query(connection, statement), sql, raw, get_invocation_id(),
                                     _say, again=getattr(_SENT_AGAIN, "on", False))


def _statement_options(connection, options: dict, origin: str):
    """The settings a statement's header asks for, set through cursors of their own on the statement's session
    (dbt's connection wrapper keeps one cursor, the statement's)."""
    if not options:
        return contextlib.nullcontext()
    from dbt.adapters.events.logging import AdapterLogger

    session = connection.handle.handle
    forced = getattr(session, "server_side_parameters", None)  # the session method's; thrift sets them once
    return statement_options.applied(session.cursor, options, AdapterLogger("Spark").debug, forced, origin)


def _job_tag(connection) -> str:
    return f"lakeplan-connection-{id(connection)}"


def _spark_context(connection):
    """The session method's SparkContext, once a statement has started it; None for other methods."""
    if connection is None or getattr(connection.credentials, "method", None) != "session":
        return None
    from pyspark import SparkContext

    return SparkContext._active_spark_context


@contextlib.contextmanager
def _cancellable(connection, sql: str):
    """The statement under the connection's cancel state, its Spark jobs tagged with the connection (pyspark pins a
    thread to its JVM thread, whose jobs carry the tags it adds)."""
    if connection is None or ADAPTER_MACRO.match(sql):  # no node's; a macro's own statements come through here
        yield
        return
    context = _spark_context(connection)
    if context is not None:
        context.addJobTag(_job_tag(connection))
    with CANCELLATIONS.statement(connection, sql):
        yield


def _conf_dir(connection) -> str | None:
    """The Spark settings folder a session connection's Spark starts with: the target's (`team`), else the venv's."""
    parameters = getattr(connection.credentials, "server_side_parameters", None) or {}
    return parameters.get(CONF_DIR_SETTING) or os.environ.get("SPARK_CONF_DIR")


def _catalog_watch(connection) -> catalog_watch.Watch | None:
    """A watch on the shared catalog's database for a node's statement on the session method (catalog_watch.py)."""
    if connection is None or getattr(connection.credentials, "method", None) != "session" \
            or not NODE_CONNECTION.match(connection.name or ""):
        return None
    catalog = catalog_watch.shared_catalog(_conf_dir(connection))
    return catalog and catalog_watch.Watch(catalog, f"`{node_name(connection.name)}`", _say)


def _catalog_full(connection, error: BaseException) -> str | None:
    """The sentence for a statement refused because the shared catalog's database had no connection left
    (metastore_lock.py). PostgreSQL's reason is a cause of Hive's error, which only the Java stack of PySpark's
    exception (`stackTrace`, under dbt-spark's) holds."""
    if connection is None or getattr(connection.credentials, "method", None) != "session" \
            or catalog_watch.shared_catalog(conf_dir := _conf_dir(connection)) is None:
        return None  # the embedded catalog: its error's Java text is not read
    model = f"`{node_name(connection.name)}`" if NODE_CONNECTION.match(connection.name or "") else None
    return metastore_lock.catalog_full(conf_dir, _whole_error(error), model)


def _whole_error(error: BaseException | None) -> str:
    """An error's text with the Java stacks of the PySpark exceptions it was raised from, causes included (a
    PySpark exception's text is read from its JVM: where that has stopped, what is left is read)."""
    texts = []
    while error is not None and len(texts) < 10:
        with contextlib.suppress(Exception):
            texts.append(str(error))
        texts.append(str(getattr(error, "stackTrace", "") or ""))
        error = error.__cause__ or error.__context__
    return "\n".join(texts)


def _say(sentence: str) -> None:
    from dbt_common.events.base_types import EventLevel
    from dbt_common.events.functions import fire_event
    from dbt_common.events.types import Note

    fire_event(Note(msg=sentence), level=EventLevel.WARN)


def _cancelled(connection, sql: str) -> str | None:
    """The sentence for a statement that failed because its model was cancelled before its write committed; the
    run's own branch or staging copy it names is removed, so a cancelled write leaves nothing behind."""
    if connection is None or not CANCELLATIONS.is_cancelled(connection) or CANCELLATIONS.past_commit(connection):
        return None
    concurrency.remove_run_copies(lambda statement: _query(connection, statement), sql, _say)
    return cancelled_sentence(connection.name)


NODE_CONNECTION = re.compile(r"(model|snapshot|seed)\.")  # a node's connection, not dbt's own (`list_...`, `master`)


def _interrupt_stack_to_debug_log() -> None:
    """A Ctrl-C ends with dbt's "Exited because of keyboard interrupt" and lakeplan's sentence per cancelled model;
    dbt's postflight then printed "Encountered an error:" and the Python stack of the KeyboardInterrupt as errors
    (dbt-core#8338, visible again in 1.11). Both go to the debug log (dbt.log), as a Java stack does."""
    from dbt.cli import requires
    from dbt.events.types import MainEncounteredError, MainStackTrace
    from dbt_common.events.base_types import EventLevel

    fire = requires.fire_event  # once per process: install() calls this inside its own guard

    def fire_event(event, level=None, *args, **kwargs):
        if isinstance(event, (MainEncounteredError, MainStackTrace)) and sys.exc_info()[0] is KeyboardInterrupt:
            level = EventLevel.DEBUG
        fire(event, level, *args, **kwargs)

    requires.fire_event = fire_event


def _macro_stack_to_debug_log() -> None:
    """A sentence one of lakeplan's macros raises names the model, the setting, the value and the fix; dbt followed it
    on the console with the chain of macros that raised it (`> in macro lakeplan_... > called by ...`), which says
    nothing to a user (a new user's trial). That chain goes to the debug log; a user's own macro keeps it."""
    from dbt_common.events.base_types import EventLevel
    from dbt_common.events.functions import fire_event
    from dbt_common.events.types import Note
    from dbt_common.exceptions.base import DbtRuntimeError

    process_stack = DbtRuntimeError.process_stack

    def stack_unless_lakeplans(self) -> list[str]:
        lines = process_stack(self)
        if not str(getattr(self.stack[0] if self.stack else None, "name", "")).startswith("lakeplan_"):
            return lines
        if not getattr(self, "lakeplan_stack_logged", False):  # dbt renders one error several times (3 were logged)
            self.lakeplan_stack_logged = True
            fire_event(Note(msg="lakeplan: raised " + " ".join(line for line in lines if line)), level=EventLevel.DEBUG)
        return []

    DbtRuntimeError.process_stack = stack_unless_lakeplans


def _cancel_writes(cancel, cancel_open):
    """dbt's cancel of a connection marks it cancelled (cancel.py) and stops its Spark jobs; a model whose write
    committed is left out of what dbt reports cancelled."""

    def cancel_connection(self, connection) -> None:
        def stop_jobs() -> None:
            context = _spark_context(connection)
            if context is None:
                cancel(self, connection)  # the Thrift method cancels its operation
            else:
                context.cancelJobsWithTag(_job_tag(connection))

        CANCELLATIONS.cancel(connection, stop_jobs)

    def cancel_open_connections(self) -> list[str]:
        from dbt_common.events.base_types import EventLevel
        from dbt_common.events.functions import fire_event
        from dbt_common.events.types import Note

        names = cancel_open(self)
        with self.lock:
            written = {c.name for c in self.thread_connections.values() if CANCELLATIONS.past_commit(c)}
        cancelled = [name for name in names if name not in written]
        for name in cancelled:  # dbt prints `CANCEL query <node>`; the reason, on the console beside it
            if NODE_CONNECTION.match(name):
                fire_event(Note(msg=cancelled_sentence(name)), level=EventLevel.INFO)
        return cancelled

    cancel_connection.lakeplan = True
    return cancel_connection, cancel_open_connections


def _condense_fetch_errors(fetch):
    """dbt runs a query's statement inside dbt-spark's error handler but fetches its rows outside it; Spark runs a
    SELECT only when its rows are fetched, so a failure there (a cancelled job, a row guard) reached dbt as a
    Python traceback. It becomes the same one-sentence dbt error, the whole text in the debug log; the shared
    catalog's watch covers the fetch as it covers the statement (a SELECT waits for the catalog here)."""

    def get_result_from_cursor(cls, cursor, limit):
        from dbt.adapters.events.logging import AdapterLogger
        from dbt_common.exceptions import DbtRuntimeError

        connection, sql = getattr(_LAST_STATEMENT, "connection", None), getattr(_LAST_STATEMENT, "sql", "")
        watch = _catalog_watch(connection)  # a SELECT reads the catalog here, not in its statement
        try:
            with statement_options.SESSION.shared(), watch or contextlib.nullcontext():
                return fetch(cls, cursor, limit)
        except DbtRuntimeError:
            raise
        except Exception as error:
            AdapterLogger("Spark").debug(f"Error while fetching a result:\n{error}")
            stopped = ((watch and watch.lost()) or _catalog_full(connection, error)
                       or _jvm_stopped(connection, sql, error))
            raise DbtRuntimeError(stopped or about_the_statement(condensed(str(error)), sql, str(error))) from error

    get_result_from_cursor.lakeplan = True
    return classmethod(get_result_from_cursor)


def _refuse_a_held_metastore(open_connection):
    """A session connection opens only where no other process holds the embedded catalog's metastore and a shared
    catalog's database answers: asked while no JVM runs in this process (once one does, its session has the
    metastore)."""

    def open(cls, connection):
        from dbt_common.exceptions import DbtRuntimeError

        if getattr(connection.credentials, "method", None) == "session" and _spark_context(connection) is None:
            conf_dir = _conf_dir(connection)  # the target's (team)
            refused = (metastore_lock.metastore_in_use(conf_dir, Path.cwd(), os.getpid())
                       or metastore_lock.shared_catalog_down(conf_dir))
            if refused:
                raise DbtRuntimeError(refused)
        return open_connection(cls, connection)

    open.lakeplan = True
    return classmethod(open)


def query_columns(adapter, sql: str) -> list:
    """The columns `sql` gives, typed as Spark prints types (`describe query`: name, type, comment)."""
    _, described = adapter.connections.execute(f"describe query {sql}", fetch=True)
    return [adapter.Column.create(row[0], row[1]) for row in described.rows]


def attempt(adapter, sql: str) -> dict:
    """Runs `sql` for a caller that reports its failure itself: {'table': its result} or {'error': Spark's sentence}
    (the Java stack stays in the debug log). Maintenance after a committed write uses it (`adapter.lakeplan_attempt`),
    so that a failed procedure reads as that, not as a failed write."""
    from dbt_common.exceptions import DbtRuntimeError

    try:
        _, table = adapter.execute(sql, auto_begin=False, fetch=True)
    except DbtRuntimeError as error:
        return {"error": " ".join(str(error.msg).split())}
    return {"table": table}


def commit_metadata(adapter, sql: str, told: bool = False) -> str | None:
    """Runs a metadata commit of lakeplan's, again while other runs' commits meet it (concurrency.metadata_commit).
    Its last error is raised, or with `told` returned as Spark's sentence (a landed write's records, which the
    caller tells together)."""
    from dbt_common.exceptions import DbtRuntimeError

    try:
        concurrency.metadata_commit(lambda: adapter.execute(sql, auto_begin=False, fetch=False))
    except DbtRuntimeError as error:
        if not told:
            raise
        return " ".join(str(error.msg).split())
    return None


def checked_write(adapter, sql: str, check: str, guarded: str | None, bound_crossed: str) -> tuple:
    """A delta write whose change a `sum` could push past its column's type once folded (macros: delta.sql,
    lakeplan_delta_write). `guarded`, the write checking each row against a bound from the table's column metrics,
    goes first where there is one; where a row crosses it (`bound_crossed` in Spark's sentence), or there is none,
    `check` folds the change onto the stored rows (failing as the MERGE would, naming the key) before `sql`, the
    write itself. Its response and rows: dbt's `main` result."""
    from dbt_common.exceptions import DbtRuntimeError

    if guarded:
        try:
            return adapter.execute(guarded, auto_begin=False, fetch=True)
        except DbtRuntimeError as error:
            if bound_crossed not in str(error.msg):
                raise
    adapter.execute(check, auto_begin=False, fetch=True)
    return adapter.execute(sql, auto_begin=False, fetch=True)


def fast_forward(adapter, sql: str) -> tuple:
    """main's fast-forward to this run's branch (a write of several groups), sent again while another run's
    metadata-only commit (a tag, a property) meets it, as lakeplan's metadata commits are (concurrency.metadata_commit);
    a main that another run moved beats it at once. Its response and rows: dbt's `main` result."""
    results, attempts = [], iter(range(len(concurrency.METADATA_COMMIT_WAITS), -1, -1))

    def attempt():
        _SENT_AGAIN.on = next(attempts) > 0  # the last attempt's failure is told, and removes this run's branch
        try:
            results.append(adapter.execute(sql, auto_begin=False, fetch=True))
        finally:
            _SENT_AGAIN.on = False

    concurrency.metadata_commit(attempt)
    return results[-1]


def shared_catalog(adapter) -> bool:
    """Whether another session can commit to the tables this run writes: always through a server (the Thrift Server's
    sessions), and in this process's own Spark where Iceberg's Hive locks are on, which lakeplan's settings turn on
    exactly for a catalog several processes share (profiles/shared-catalog.conf; off on the embedded Derby one)."""
    if getattr(adapter.config.credentials, "method", None) != "session":
        return True
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    # Iceberg's default is on: only the embedded catalog's settings turn the locks off
    return context is not None and context.getConf().get(HIVE_LOCKS, "true").strip().lower() != "false"


def stop(adapter, sentence: str) -> None:
    """Stops the model with `sentence`, shown as a write's other failures are (a beaten write, Spark's own): a
    `Runtime Error`, not the `Compilation Error` of Jinja's raise_compiler_error, for what went wrong while it ran."""
    from dbt_common.exceptions import DbtRuntimeError

    raise DbtRuntimeError(sentence)


def install() -> None:
    """Replaces dbt-spark's quoting, missing-column comparison and query column types, adds `lakeplan_attempt`, wraps
    its relation listing, its error handler and its opening of a connection, once per process."""
    from dbt.adapters.spark.connections import SparkConnectionManager
    from dbt.adapters.spark.impl import SparkAdapter

    if not getattr(SparkConnectionManager.exception_handler, "lakeplan", False):
        SparkConnectionManager.exception_handler = _condense_errors(SparkConnectionManager.exception_handler)
        fetch = SparkConnectionManager.get_result_from_cursor.__func__
        SparkConnectionManager.get_result_from_cursor = _condense_fetch_errors(fetch)
        SparkConnectionManager.cancel, SparkConnectionManager.cancel_open = _cancel_writes(
            SparkConnectionManager.cancel, SparkConnectionManager.cancel_open)
        SparkConnectionManager.open = _refuse_a_held_metastore(SparkConnectionManager.open.__func__)
        _interrupt_stack_to_debug_log()
        _macro_stack_to_debug_log()

    build = SparkAdapter._build_spark_relation_list
    if getattr(build, "lakeplan", False):
        return
    SparkAdapter.quote = lambda self, identifier: quote(identifier)
    SparkAdapter.get_missing_columns = lambda self, source, target: missing_columns(
        self.get_columns_in_relation(source), self.get_columns_in_relation(target))
    SparkAdapter.get_column_schema_from_query = query_columns
    SparkAdapter.lakeplan_attempt = attempt
    SparkAdapter.lakeplan_commit_metadata = commit_metadata
    SparkAdapter.lakeplan_fast_forward = fast_forward
    SparkAdapter.lakeplan_checked_write = checked_write
    SparkAdapter.lakeplan_stop = stop
    SparkAdapter.lakeplan_shared_catalog = shared_catalog
    SparkAdapter.lakeplan_earlier_parts = lambda self, column: earlier_parts(list(column)) if column else {}
    # what Jinja's `adapter` may call
    SparkAdapter._available_ = SparkAdapter._available_ | {"lakeplan_attempt", "lakeplan_commit_metadata",
                                                           "lakeplan_fast_forward", "lakeplan_checked_write",
                                                           "lakeplan_stop",
                                                           "lakeplan_shared_catalog", "lakeplan_earlier_parts"}

    def build_spark_relation_list(self, row_list, relation_info_func):
        def information(row):
            schema, name, text = relation_info_func(row)
            return schema, name, with_table_format(text)

        return build(self, row_list, information)

    build_spark_relation_list.lakeplan = True
    SparkAdapter._build_spark_relation_list = build_spark_relation_list
