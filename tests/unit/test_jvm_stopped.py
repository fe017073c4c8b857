"""A Spark JVM that stopped under dbt, told in one sentence (plugins/dbt_lakeplan/jvm_stopped.py); the integration
test that kills one: tests/integration/test_killed_jvm.py."""

from dbt_lakeplan.jvm_stopped import explain_sentence, sentence, stopped


class Py4JNetworkError(Exception):
    """Py4J's class of that name (py4j.protocol), told by its name: this module imports no Spark."""


def test_py4j_errors_of_a_gone_jvm_are_told_apart_from_spark_errors():
    assert stopped(Py4JNetworkError("Error while sending or receiving"))
    assert stopped("An error occurred while trying to connect to the Java server (127.0.0.1:41817)")
    assert stopped(Py4JNetworkError("Answer from Java side is empty"))
    wrapped = RuntimeError("Runtime Error")  # dbt's error raised while handling Py4J's
    wrapped.__context__ = Py4JNetworkError("")
    assert stopped(wrapped)
    assert not stopped(RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`t` cannot be found."))
    assert not stopped("Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times")


def test_the_sentence_names_the_model_the_log_and_what_a_rerun_finds():
    told = sentence("`current`", "s.current", "/p/logs/dbt.log")
    assert told.startswith("The Spark JVM of this dbt process stopped while `current` ran: it was killed")
    assert "the whole error is in /p/logs/dbt.log" in told and "Fix: run again" in told
    assert "the rerun finds s.current either as this run found it or with this run's write, never half" in told
    assert "finds every table either as this run found it" in sentence("dbt's `master`", None, "logs/dbt.log")
    assert explain_sentence("current").startswith("the Spark JVM of this process stopped while it planned `current`")
    assert "Fix: run lakeplan explain again" in explain_sentence("current")
