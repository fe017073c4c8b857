"""What a statement that lost to another run's commit leaves behind and tells (plugins/dbt_lakeplan/concurrency.py)."""

import json
import re

import pytest

from dbt_lakeplan.concurrency import (after_failure, metadata_commit, own_pending, remove_run_copies, run_copies,
                                      run_line, written_table)

RUN = "lakeplan_write_0a1b2c3d4e5f"
GROUP = f"-- write group 1 of 2 of `wide`: `a`\nmerge into s.wide.branch_{RUN} as lakeplan_table using v on true"
FAST_FORWARD = f"-- lakeplan: commits the write of s.wide\ncall system.fast_forward('s.wide', 'main', '{RUN}')"
STAGING = "create or replace table s.wide__lakeplan_staging_0a1b2c3d4e5f using iceberg as select 1"
CONFLICT = "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can contain records"


def stays(sentence: str) -> None:
    """What a clean-up tells of a copy that stays: none of these tests' copies does."""
    pytest.fail(f"a copy was told to stay: {sentence}")


def test_the_written_table_is_the_target_not_this_runs_copy():
    assert [written_table(sql) for sql in (GROUP, FAST_FORWARD, STAGING, "select 1")] == ["s.wide"] * 3 + [None]
    assert written_table("insert into table s.events\nselect * from v") == "s.events"  # dbt-spark's append


def test_a_failed_statement_removes_the_branch_or_staging_table_of_this_run_only():
    assert run_copies(GROUP) == run_copies(FAST_FORWARD) == [f"alter table s.wide drop branch if exists {RUN}"]
    assert run_copies(STAGING) == ["drop table if exists s.wide__lakeplan_staging_0a1b2c3d4e5f purge"]
    assert run_copies("merge into s.wide as t using v on true") == []


def test_only_this_runs_own_pending_record_is_removed():
    mine = {"lakeplan.consumed.pending": json.dumps({"base": 1, "inputs": {}, "run": "me"})}
    assert own_pending("s.wide", mine, "me") == ["alter table s.wide unset tblproperties if exists "
                                                 "('lakeplan.consumed.pending')"]
    assert own_pending("s.wide", mine, "another") == own_pending("s.wide", {}, "me") == []


def test_a_write_another_run_beat_is_one_sentence_naming_the_table_and_that_run():
    sent = []

    def query(statement):
        sent.append(statement)
        if statement.startswith("show tblproperties"):
            return [("lakeplan.consumed.pending", json.dumps({"base": 1, "inputs": {}, "run": "me"}))]
        if statement == "set spark.app.id":
            return [("spark.app.id", "local-41")]
        return [(7, "2026-01-01 00:00:00", "local-42")] if "snapshots" in statement else []

    sentence = after_failure(query, GROUP, CONFLICT, "me", stays)
    assert sentence.startswith("s.wide was changed by the run of Spark application local-42 (snapshot 7, committed ")
    assert "while this run (Spark application local-41) wrote it" in sentence  # which of a user's runs stopped
    cluster = lambda statement: [("spark.app.id", "local-42")] if statement == "set spark.app.id" else query(statement)
    assert after_failure(cluster, GROUP, CONFLICT, "me", stays).startswith(  # the Thrift server's sessions share it
        "s.wide was changed by another session of Spark application local-42 (snapshot 7, ")
    assert sent[0] == f"alter table s.wide drop branch if exists {RUN}"
    assert "alter table s.wide unset tblproperties if exists ('lakeplan.consumed.pending')" in sent
    assert after_failure(query, GROUP, "[DIVIDE_BY_ZERO] Division by zero.", "me", stays) is None
    moved = "[USER_RAISED_EXCEPTION] lakeplan: s.wide changed after this run read its inputs (at snapshot 6)"
    assert after_failure(query, GROUP, moved, "me", stays).startswith("s.wide was changed by the run of Spark "
                                                                           "application")
    # the other run is the one at main's head: this run's own branch may hold a later snapshot (seen in a trial)
    assert "where snapshot_id = (select snapshot_id from s.wide.refs where name = 'main')" in sent[-1]


def test_a_run_names_its_spark_application_as_the_beaten_runs_sentence_does():
    """The line every writing run logs once, so that a user maps the application a beaten run's sentence names to a
    dbt process (its invocation id, in its log); on the cluster target the application is the Thrift server's."""
    assert run_line("local-41", "0a1b-2c3d", server=False) == (
        "lakeplan: this run is Spark application local-41 (dbt invocation 0a1b-2c3d)")
    assert run_line("app-2026-0001", "0a1b-2c3d", server=True) == (
        "lakeplan: this run is a session of Spark application app-2026-0001, the Thrift server's "
        "(dbt invocation 0a1b-2c3d)")


def test_a_beaten_write_of_the_tombstones_side_table_names_the_target_and_the_run_that_wrote_the_side_table():
    sent = []

    def query(statement):
        sent.append(statement)
        return [(8, "2026-01-01 00:00:00", "local-43")] if "snapshots" in statement else []

    tombstones = "merge into s.current__lakeplan_tombstones as lakeplan_tombstone using (select 1) as d on true"
    assert written_table(tombstones) == "s.current" and written_table(tombstones, side_table=True) == "s.current__lakeplan_tombstones"
    sentence = after_failure(query, tombstones, CONFLICT, "me", stays)
    assert sentence.startswith("s.current was changed by the run of Spark application local-43 (snapshot 8, ")
    assert "this run's write was not committed and s.current is as that run left it" in sentence
    assert "from s.current__lakeplan_tombstones.snapshots" in sent[-1]
    assert "show tblproperties s.current" in sent  # its own pending record is looked for on the target


def test_a_lock_never_granted_names_the_table_and_how_it_clears():
    sent = []

    def query(statement):
        sent.append(statement)
        return [("lakeplan.consumed.pending", json.dumps({"run": "me"}))] if statement.startswith("show") else []

    sentence = after_failure(query, "merge into s.t as x using v on true",
                             "CommitFailedException: Timed out after 120000 ms waiting for lock on s.t", "me",
                             stays)
    assert sentence.startswith("s.t stayed locked by another process for 120 s, so this run wrote nothing to it.")
    # its own pending record goes; no run is named, so neither application is asked for (each a statement)
    assert sent == ["show tblproperties s.t", "alter table s.t unset tblproperties if exists ('lakeplan.consumed.pending')"]


class Commits:
    """A metadata commit that fails with each of `errors` in turn, then commits."""

    def __init__(self, *errors: str):
        self.errors, self.calls = list(errors), 0

    def __call__(self):
        self.calls += 1
        if self.errors:
            raise RuntimeError(self.errors.pop(0))


REFRESH = "org.apache.iceberg.exceptions.CommitFailedException: Table metadata refresh is required"


def test_a_metadata_commit_is_sent_again_while_other_commits_meet_it_and_no_more_than_its_attempts():
    met_twice = Commits(REFRESH, REFRESH)
    metadata_commit(met_twice, waits=(0, 0))
    assert met_twice.calls == 3
    always = Commits(*[REFRESH] * 5)
    with pytest.raises(RuntimeError, match="metadata refresh is required"):  # the last attempt's error
        metadata_commit(always, waits=(0, 0))
    assert always.calls == 3
    for error in ["[TABLE_OR_VIEW_NOT_FOUND] The table `t` cannot be found.",
                  "CommitFailedException: Timed out after 120000 ms waiting for lock on s.t"]:
        other = Commits(error, REFRESH)
        with pytest.raises(RuntimeError, match=re.escape(error)):  # no conflict, or one waited for long enough
            metadata_commit(other, waits=(0, 0))
        assert other.calls == 1


def test_a_fast_forward_met_by_a_metadata_commit_is_sent_again_and_one_beaten_is_not():
    """main's fast-forward that another run's commit met while it committed ('metadata refresh is required') keeps this
    run's branch and says nothing while it is sent again; once main has moved (or on its last attempt) it is told as
    a beaten write, and a moved main is never sent again."""
    sent = []

    def query(statement):
        sent.append(statement)
        return [(7, "2026-01-01 00:00:00", "local-42")] if "snapshots" in statement else []

    assert after_failure(query, FAST_FORWARD, REFRESH, "me", stays, again=True) is None and sent == []
    assert after_failure(query, FAST_FORWARD, REFRESH, "me", stays).startswith("s.wide was changed by the run of Spark")
    assert sent[0] == f"alter table s.wide drop branch if exists {RUN}"
    moved = f"Cannot fast-forward: main is not an ancestor of {RUN}"
    assert after_failure(query, FAST_FORWARD, moved, "me", stays, again=True).startswith(
        "s.wide was changed by the run")
    beaten = Commits(moved)
    with pytest.raises(RuntimeError, match="Cannot fast-forward"):
        metadata_commit(beaten, waits=(0, 0))
    assert beaten.calls == 1


def test_a_copy_whose_removal_another_run_meets_is_removed_again_and_one_that_stays_is_told_with_its_fix():
    """The winning run's clean-up and the losing run's met at one table ('metadata refresh is required'): the losing
    run's branch stayed, in silence (seen in a trial). It is removed again, as lakeplan's other metadata commits are;
    one that cannot be removed is told, with the statement that removes it."""
    met_once, said = Commits(REFRESH), []
    remove_run_copies(lambda statement: met_once(), GROUP, said.append)
    assert met_once.calls == 2 and said == []
    remove_run_copies(lambda statement: Commits("[Errno 111] Connection refused")(), GROUP, said.append)
    assert said == [f"lakeplan: this run's copy stays after `alter table s.wide drop branch if exists {RUN}` failed "
                    "([Errno 111] Connection refused); it holds no committed data and no other run uses its name. Fix: "
                    f"run `alter table s.wide drop branch if exists {RUN}` once no run of s.wide is under way."]
