"""The header a macro puts on a statement whose Spark settings are for that statement alone
(macros/utils/session_options.sql writes it, plugins/dbt_lakeplan/statement_options.py reads it)."""

from dbt_lakeplan.statement_options import options_of, origin_of, spark_value

DBT_COMMENT = '/* {"app": "dbt", "node_id": "model.lakeplan.wide"} */\n'


def test_the_header_is_read_after_dbts_query_comment_and_indentation():
    sql = DBT_COMMENT + '  -- lakeplan session options: {"spark.sql.shuffle.partitions": 4, "a.b": null}\nmerge into t'
    assert options_of(sql) == {"spark.sql.shuffle.partitions": 4, "a.b": None}


def test_a_statement_without_the_header_sets_nothing():
    assert options_of(DBT_COMMENT + "-- lakeplan session options are described elsewhere\nselect 1") == {}
    assert options_of("select '-- lakeplan session options: {\"x\": 1}'") == {}


def test_a_header_line_after_the_first_sets_nothing():
    # a model's own SQL comes after lakeplan's first line: a header in it is a comment, not a setting
    header = '-- lakeplan session options: {"spark.sql.ansi.enabled": false}'
    assert options_of(DBT_COMMENT + "create table t as\n" + header + "\nselect 1") == {}
    assert options_of(DBT_COMMENT + "merge into t /* x */\n" + header + "\nselect 1") == {}


def test_values_are_written_as_spark_reads_them():
    assert [spark_value(v) for v in (True, False, 4, 1.5, "zstd")] == ["true", "false", "4", "1.5", "zstd"]


def test_the_header_names_whose_settings_it_carries():
    header = '-- lakeplan session options: {"spark.sql.shuffle.partitions": 4}\n  -- set by: the write_options of `m`\n'
    assert origin_of(DBT_COMMENT + header + "merge into t") == "the write_options of `m`"
    assert options_of(DBT_COMMENT + header + "merge into t") == {"spark.sql.shuffle.partitions": 4}
    assert origin_of(DBT_COMMENT + header.splitlines()[0] + "\nmerge into t") == "this statement's settings"
