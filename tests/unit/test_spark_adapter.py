"""lakeplan's fixes to dbt-spark's adapter: quoting, an existing table's format, missing columns, and errors without
the Java stack."""

from types import SimpleNamespace

import pytest

from dbt_lakeplan.spark_adapter import (
    about_the_statement, about_the_write, condensed, missing_columns, quote, with_table_format)

ICEBERG = "Type: EXTERNAL\nProvider: hive\nTable Properties: [current-snapshot-id=1, table_type=ICEBERG]\n"


def test_an_iceberg_table_in_the_session_catalog_is_iceberg():
    assert "Provider: iceberg\n" in with_table_format(ICEBERG)
    assert "Provider: hive" not in with_table_format(ICEBERG)


def test_other_tables_keep_their_provider():
    hive = "Type: MANAGED\nProvider: parquet\nTable Properties: [transient_lastDdlTime=1]\n"
    assert with_table_format(hive) == hive


def test_a_backtick_inside_a_name_is_doubled():
    assert quote("Seq`No") == "`Seq``No`" and quote("Order Key") == "`Order Key`"


STAGE_FAILURE = """An error occurred while calling o38.sql.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 18.0 failed 1 times, most recent failure: Lost task 0.0 in stage 18.0 (TID 16) (192.0.2.2 executor driver): java.lang.RuntimeException: lakeplan: member `bad` of `prices` sends in column `b` the value 12abc, which decimal(5,2) cannot hold; nothing was written.
\tat org.apache.spark.sql.catalyst.expressions.GeneratedClass$GeneratedIteratorForCodegenStage2.project_doConsume_0$(Unknown Source)
\tat org.apache.spark.sql.execution.WholeStageCodegenEvaluatorFactory$WholeStageCodegenPartitionEvaluator$$anon$1.hasNext(WholeStageCodegenEvaluatorFactory.scala:43)
Driver stacktrace:
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)
"""
USER_RAISED = """org.apache.spark.SparkRuntimeException: [USER_RAISED_EXCEPTION] Invalid changelog op 'X' in model `m` SQLSTATE: P0001
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.raiseError(QueryExecutionErrors.scala:2700)
"""


def test_a_failed_task_shows_its_sentence_without_the_java_stack():
    assert condensed(STAGE_FAILURE) == (
        "lakeplan: member `bad` of `prices` sends in column `b` the value 12abc, which decimal(5,2) cannot hold; "
        "nothing was written."
    )
    assert condensed(USER_RAISED) == "Invalid changelog op 'X' in model `m`"


def test_an_error_without_a_java_stack_is_kept_whole():
    analysis = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `x` cannot be found.; line 1 pos 14"
    assert condensed(analysis) == analysis


def test_an_analysis_error_shows_its_sentence_without_dbts_headings_and_the_plan():
    error = (
        "Runtime Error\n  Runtime Error\n  [INVALID_NON_DETERMINISTIC_EXPRESSIONS] The operator expects a "
        'deterministic expression, but the actual expression is "(k = k)", "exists(k)".; line 1 pos 0;\n'
        "'MergeIntoTable (k#1 = k#2), [updateaction(None)]\n:- SubqueryAlias lakeplan_table\n"
    )
    assert condensed(error) == (
        "[INVALID_NON_DETERMINISTIC_EXPRESSIONS] The operator expects a deterministic expression, but the actual "
        'expression is "(k = k)", "exists(k)".; line 1 pos 0'
    )


# what dbt-spark's Thrift connection (the `cluster` target) hands over: the server's errorMessage as a Database Error,
# wrapped in a Runtime Error by its handler
THRIFT_ANALYSIS = (
    "Database Error\n  org.apache.hive.service.cli.HiveSQLException: Error running query: [TABLE_OR_VIEW_NOT_FOUND] "
    "org.apache.spark.sql.AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`t` cannot be found.\n"
    "  If you did not qualify the name with a schema, verify the current_schema() output.; line 7 pos 18;\n"
    "  'CreateIcebergView select * from s.t, false, false, false\n  +- 'Project [*]\n  \n"
    "  \tat org.apache.spark.sql.hive.thriftserver.HiveThriftServerErrors$.runningQueryError(HiveThriftServerErrors.scala:1)"
)
THRIFT_TASK = (
    "Database Error\n  org.apache.hive.service.cli.HiveSQLException: Error running query: org.apache.spark.SparkException: "
    "Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times, most recent failure: Lost task 0.3 in stage "
    "0.0 (TID 3) (127.0.0.1 executor 1): java.lang.RuntimeException: NULL primary key (id) in model `m`\n"
    "  \tat org.apache.spark.sql.errors.QueryExecutionErrors$.raiseError(QueryExecutionErrors.scala:1)"
)


def test_an_error_through_the_thrift_server_shows_sparks_sentence_alone():
    assert condensed(THRIFT_ANALYSIS) == "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`t` cannot be found."
    assert condensed(THRIFT_TASK) == "NULL primary key (id) in model `m`"


def test_none_is_quoted_as_stock_dbt_spark_quotes_it():
    # Spark's `database` is None; dbt's adapter tests quote it (dbt-spark gives `None`, no error).
    assert quote(None) == "`None`"


CANCELLED = """An error occurred while calling o766.collectToPython.
: org.apache.spark.SparkException: Exception thrown in awaitResult: 
\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:56)
Caused by: java.util.concurrent.ExecutionException: org.apache.spark.SparkException: Job 75 cancelled as part of cancellation of all jobs
\tat java.base/java.util.concurrent.FutureTask.report(FutureTask.java:122)
Caused by: org.apache.spark.SparkException: Job 75 cancelled as part of cancellation of all jobs
\tat org.apache.spark.scheduler.DAGScheduler.handleJobCancellation(DAGScheduler.scala:2871)
"""


def test_a_wrapper_without_its_own_sentence_shows_the_deepest_cause():
    assert condensed(CANCELLED) == "Job 75 cancelled as part of cancellation of all jobs"


NON_DETERMINISTIC = ('[INVALID_NON_DETERMINISTIC_EXPRESSIONS] The operator expects a deterministic expression, but '
                     'the actual expression is "(id = id)", "exists(id)".; line 3 pos 0')


def test_a_non_deterministic_member_is_named_by_its_writes_group():
    sql = ('-- lakeplan session options: {"a": "1"}\n-- write group 2 of 3 of `wide`: `m_rand`, `m_b`\n'
           "merge into wide as lakeplan_table using (...)")
    message = about_the_write(NON_DETERMINISTIC, sql)
    assert message.startswith("A member of `wide` (`m_rand`, `m_b`) computes a value that differs on every evaluation")
    assert "Fix: compute that value upstream, in a table model the member reads." in message
    assert message.endswith(f"(Spark: {NON_DETERMINISTIC})")


def test_other_errors_and_other_statements_keep_sparks_sentence():
    assert about_the_write(NON_DETERMINISTIC, "merge into t using s on t.id = s.id") == NON_DETERMINISTIC
    sql = "-- write group 1 of 1 of `wide`: `m`\nmerge into wide"
    assert about_the_write("[CAST_INVALID_INPUT] The value 'x' ...", sql) == "[CAST_INVALID_INPUT] The value 'x' ..."


STAGE = ('-- lakeplan session options: {"a": "1"}\n            -- stage member `kept_a` of `kept`\n'
         "create or replace temporary view v as select 1")


def test_a_member_whose_input_is_not_built_is_named_with_the_fix():
    sentence = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `base` cannot be found."
    message = about_the_write(sentence, STAGE)
    assert message.startswith("Member `kept_a` of `kept` reads a table or schema that does not exist; "
                              "`kept` is unchanged.")
    assert "Fix: build what `kept_a` reads first (`dbt run -s +kept` builds `kept` with everything upstream" in message
    assert message.endswith(f"(Spark: {sentence})")
    schema = "[SCHEMA_NOT_FOUND] The schema `raw` cannot be found."
    assert about_the_write(schema, STAGE).startswith("Member `kept_a` of `kept` reads a table or schema")


def test_any_other_refusal_of_a_members_query_names_the_member():
    sentence = "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name `zz` cannot be resolved."
    message = about_the_write(sentence, STAGE)
    assert message == (f"Member `kept_a` of `kept` has a query Spark cannot run; `kept` is unchanged. Fix: correct the "
                       f"query of `kept_a`. (Spark: {sentence})")
    # a failure that is not Spark's answer to the query keeps its own sentence
    assert about_the_write("Connection reset by peer", STAGE) == "Connection reset by peer"


ASSERTED = ("An error occurred while calling o40.sql.\n: org.apache.spark.SparkException: Job aborted due to stage "
            "failure: Task 0 in stage 0.0 failed 1 times, most recent failure: Lost task 0.0 in stage 0.0 (TID 0) "
            "(192.0.2.2 executor driver): java.lang.RuntimeException: '(v#550 < 0)' is not true!\n\tat org.x(Y.java)")


@pytest.mark.parametrize("label, named", [
    ("-- write group 1 of 2 of `wide`: `m1`", "Member `m1` of `wide` failed while `wide` was written: "),
    ("-- write group 2 of 2 of `wide`: `m1`, `m2`", "A member of `wide` (`m1`, `m2`) failed while `wide` was written: "),
    ("    -- deletes of `wide`: `cdc`", "Member `cdc` of `wide` failed while `wide` was written: "),
    ("    -- upsert `current`", "The query of upsert `current` failed while `current` was written: "),
], ids=["one_member", "group", "deletes", "upsert"])  # fmt: skip
def test_a_check_in_the_models_own_sql_is_named_with_the_target_and_the_fix(label, named):
    sentence = "'(v#550 < 0)' is not true!"
    message = about_the_write(sentence, f"{label}\nmerge into t using s", ASSERTED)
    assert message.startswith(named + sentence + "; ") and " is unchanged. Fix: correct the check or the data in " in message


def test_lakeplans_own_checks_and_other_failures_keep_their_sentence():
    sql = "-- write group 1 of 1 of `wide`: `m`\nmerge into wide"
    guard = "NULL primary key (id) in member `m` of `wide`"  # names the target already
    assert about_the_write(guard, sql, f"[USER_RAISED_EXCEPTION] {guard}") == guard
    assert about_the_write("Connection reset", sql, "Connection reset") == "Connection reset"
    assert about_the_write("'x' is not true!", "select 1", ASSERTED) == "'x' is not true!"  # no model's statement
    raised = "[USER_RAISED_EXCEPTION] boom SQLSTATE: P0001"  # raise_error's form after Spark 3.5
    assert about_the_write("boom", sql, raised).startswith("Member `m` of `wide` failed while `wide` was written: boom;")


def test_a_column_is_missing_only_when_no_name_matches_it_case_insensitively():
    staged = [SimpleNamespace(name=name) for name in ("id", "acctname", "NewCol")]
    target = [SimpleNamespace(name=name) for name in ("id", "AcctName")]
    assert [column.name for column in missing_columns(staged, target)] == ["NewCol"]


def test_a_source_without_data_files_is_named_with_its_location_and_the_fix():
    sql = ("-- stage source `tpch.orders` from /data/orders.parquet\n"
           "create table tpch.orders using parquet location '/data/orders.parquet'")
    sentence = "[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for Parquet. It must be specified manually."
    told = about_the_statement(sentence, sql)
    assert told.startswith("Source `tpch.orders` has no data files at /data/orders.parquet") and "Fix: " in told
    assert about_the_statement(sentence, "create table t using parquet location '/x'") == sentence  # not a staged source
    assert about_the_statement("[TABLE_OR_VIEW_NOT_FOUND] x", sql) == "[TABLE_OR_VIEW_NOT_FOUND] x"


SAME_NAME = "Invalid schema: multiple fields for name partition.k_bucket: 1000 and 1001"


def test_a_table_with_two_partition_fields_of_one_name_is_named_with_the_fix():
    sql = ("with data_files as (select file_size_in_bytes from lakeplan_bench.wide_f.data_files)\n"
           "select count(*) from data_files")
    message = about_the_statement(SAME_NAME, sql)
    assert message.startswith("Iceberg cannot read the metadata of lakeplan_bench.wide_f: two of its partition "
                              "fields are named `k_bucket`")
    assert ("Fix: drop the table (`spark-sql -e 'drop table lakeplan_bench.wide_f'` in the activated venv) and build "
            "it again") in message
    assert message.endswith(f"(Iceberg: {SAME_NAME})")
    assert about_the_statement(SAME_NAME, "select 1").startswith(
        "Iceberg cannot read the metadata of a table this statement reads")
