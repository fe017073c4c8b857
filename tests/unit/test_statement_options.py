"""The header a macro puts on a statement whose Spark settings are for that statement alone
(macros/utils/session_options.sql writes it, plugins/dbt_lakeplan/statement_options.py reads it)."""

import threading
import time

from dbt_lakeplan.statement_options import SessionLock, header_of, options_of, spark_value

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
    assert header_of(DBT_COMMENT + header + "merge into t")[1] == "the write_options of `m`"
    assert options_of(DBT_COMMENT + header + "merge into t") == {"spark.sql.shuffle.partitions": 4}
    assert header_of(DBT_COMMENT + header.splitlines()[0] + "\nmerge into t")[1] == "this statement's settings"


def finishes(work, seconds=5.0) -> bool:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


def test_a_statement_inside_a_macros_hold_passes_a_waiting_writer():
    # dbt's execute_macro holds the lock around a macro whose statement then asks for it again, while another
    # thread waits to change the settings: neither may wait for the other
    lock, inside = SessionLock(), threading.Event()

    def macro():
        with lock.shared():
            inside.set()
            time.sleep(0.2)  # the writer is waiting now
            with lock.shared():
                pass
            with lock.exclusive():
                pass

    def writer():
        inside.wait()
        with lock.exclusive():
            pass

    other = threading.Thread(target=writer, daemon=True)
    other.start()
    assert finishes(macro)
    other.join(5)
    assert not other.is_alive()


def test_a_writer_waits_for_readers_and_readers_for_it():
    lock, order = SessionLock(), []

    def reader(name, hold):
        with lock.shared():
            order.append(f"{name} in")
            time.sleep(hold)
            order.append(f"{name} out")

    def writer():
        time.sleep(0.05)
        with lock.exclusive():
            order.append("writer")

    threads = [threading.Thread(target=reader, args=("r1", 0.3)), threading.Thread(target=writer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert order == ["r1 in", "r1 out", "writer"]
