"""What a cancel does to a model's statements (plugins/dbt_lakeplan/cancel.py); real dbt and Spark in
tests/integration/test_cancel.py."""

import threading
from types import SimpleNamespace

import pytest

from dbt_lakeplan.cancel import Cancellations, Cancelled

COMMIT = "-- lakeplan: commits the write of db.wide\ncall system.fast_forward('db.wide', 'main', 'lakeplan_write')"
WRITE = "-- write group 1 of 2 of `wide`: `adds`\nmerge into db.wide.branch_lakeplan_write ..."


def connection(name="model.lakeplan.wide"):
    return SimpleNamespace(name=name)


def test_no_statement_starts_after_a_cancel_before_the_commit():
    cancellations, conn = Cancellations(), connection()
    with cancellations.statement(conn, WRITE):
        pass
    assert cancellations.cancel(conn, stop_jobs=lambda: None) is False
    for sql in (WRITE, COMMIT):
        with pytest.raises(Cancelled, match=r"^`wide` was cancelled before its write committed: .* Fix: run it again\.$"):
            with cancellations.statement(conn, sql):
                pytest.fail("a statement ran after the cancel")


def test_after_the_commit_the_models_statements_run_and_it_is_not_cancelled():
    cancellations, conn = Cancellations(), connection()
    with cancellations.statement(conn, COMMIT):
        pass
    stopped = []
    assert cancellations.cancel(conn, stop_jobs=lambda: stopped.append(1)) is True
    assert stopped == []  # the jobs of what follows the commit (recording the state) are left alone
    with cancellations.statement(conn, "alter table db.wide drop branch if exists lakeplan_write"):
        pass
    # the next model on the same connection (dbt renames it) has not committed anything
    conn.name = "model.lakeplan.other"
    with pytest.raises(Cancelled):
        with cancellations.statement(conn, WRITE):
            pass


@pytest.mark.parametrize("succeeds", [True, False])
def test_a_cancel_during_the_commit_stops_its_jobs_until_it_ends_and_reports_what_happened(succeeds):
    cancellations, conn = Cancellations(), connection()
    started, stops = threading.Event(), []
    outcome = {}

    def stop_jobs():
        stops.append(1)
        if len(stops) == 3:  # the statement ends on the third stop: killed, or its commit already done
            finish.set()

    finish = threading.Event()

    def commit():
        try:
            with cancellations.statement(conn, COMMIT):
                started.set()
                finish.wait(5)
                if not succeeds:
                    raise RuntimeError("Job 7 cancelled")
        except RuntimeError:
            outcome["failed"] = True

    worker = threading.Thread(target=commit)
    worker.start()
    started.wait(5)
    assert cancellations.cancel(conn, stop_jobs, every=0.01) is succeeds
    worker.join(5)
    assert len(stops) >= 3 and outcome.get("failed", False) is not succeeds
