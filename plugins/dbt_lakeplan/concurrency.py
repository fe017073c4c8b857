"""Overlapping runs of one table: what a write that lost to another run's commit tells the user, and which of this
run's own copies (its branch, its staging table: per run, named after dbt's invocation id) it removes.

Iceberg commits under the shared catalog's Hive lock: a commit whose base another run changed fails
(`CommitFailedException`) and Iceberg retries it on the new base where that is safe (appends; a MERGE whose conflict
check passes). Where it is not (`ValidationException: Found conflicting files`: both runs changed the same rows; a
fast-forward of main that another run moved), nothing of this run reached the table, and it stops with one sentence
naming the table and the run that committed first."""

from __future__ import annotations

import json
import re
import time
from typing import Callable

# Iceberg's and Spark's words for a commit that another writer's commit made impossible, or a lock never granted
CONFLICT = re.compile(r"Found conflicting files|CommitFailedException|Cannot commit\b|Cannot fast-forward"
                      r"|is not an ancestor of|waiting for lock on|metadata refresh is required"
                      r"|changed after this run read its inputs", re.IGNORECASE)
# of those, the ones a fresh statement meets again (this run's data lost to another's, or was read before it):
# never sent again
BEATEN = re.compile(r"Found conflicting files|Cannot fast-forward|is not an ancestor of"
                    r"|changed after this run read its inputs", re.IGNORECASE)
# main's fast-forward to this run's branch that another run's commit met while it committed: Iceberg's own retry
# fails at once (it keeps the metadata it was made on); a fresh statement meets a metadata-only commit (a tag, a
# property) no more, and a moved main as BEATEN
FAST_FORWARD_MET = re.compile(r"fast_forward\(.*?(CommitFailedException|metadata refresh is required)",
                              re.IGNORECASE | re.DOTALL)
LOCK_TIMEOUT = re.compile(r"Timed out after (\d+) ms waiting for lock on ([\w.`]+)")
# the table a statement writes: lakeplan's commit marker (utils/commit_marker.sql), else its MERGE, INSERT or CREATE
WRITTEN = re.compile(r"^-- lakeplan: commits the write of (\S+)$|merge\s+into\s+([^\s(]+)"
                     r"|insert\s+(?:into|overwrite)\s+(?:table\s+)?([^\s(]+)"
                     r"|create\s+(?:or\s+replace\s+)?table\s+([^\s(]+)", re.IGNORECASE | re.MULTILINE)
RUN_BRANCH = re.compile(r"(\S+?)\.`?branch_(lakeplan_write_\w+)`?"
                        r"|fast_forward\('([^']+)', 'main', '(lakeplan_write_\w+)'")
RUN_STAGING = re.compile(r"[\w.`]+__lakeplan_staging_\w+")


# the side table of an upsert's or a partial-update target's deletes (macros/tombstones/), written before the table
TOMBSTONES = re.compile(r"__lakeplan_tombstones(`?)$")


def written_table(sql: str, side_table: bool = False) -> str | None:
    """The table a statement writes (the target, not its branch or staging copy, nor the side table of its
    tombstones unless `side_table`: where a commit met another's), or None."""
    match = WRITTEN.search(sql)
    if match is None:
        return None
    table = next(group for group in match.groups() if group)
    table = RUN_STAGING.sub(lambda m: m.group(0).split("__lakeplan_staging_")[0], table.split(".branch_")[0])
    return table if side_table else TOMBSTONES.sub(r"\1", table)


def run_copies(sql: str) -> list[str]:
    """The statements that remove this run's branch and staging table that a failed statement names."""
    drops = []
    for match in RUN_BRANCH.finditer(sql):
        table, branch = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        drops.append(f"alter table {table} drop branch if exists {branch}")
    drops += [f"drop table if exists {staging} purge" for staging in sorted(set(RUN_STAGING.findall(sql)))]
    return list(dict.fromkeys(drops))


def conflict_sentence(table: str, raw: str, other_run: str | None, own_application: str | None = None) -> str | None:
    """One sentence for a write that lost to another run (None when `raw` is no such error); it names this run's own
    Spark application too, so a user with several runs under way tells which one stopped."""
    timeout = LOCK_TIMEOUT.search(raw)
    if timeout is not None:
        seconds = int(timeout.group(1)) // 1000
        return (f"{table} stayed locked by another process for {seconds} s, so this run wrote nothing to it. Fix: "
                f"if no other run writes {table}, the lock is a killed process's, which the shared catalog deletes "
                "60 s after its last heartbeat: run again (on another metastore, delete its row from the metastore's "
                "hive_locks table).")
    if not CONFLICT.search(raw):
        return None
    other = other_run or "another run"
    this_run = f"this run (Spark application {own_application})" if own_application else "this run"
    return (f"{table} was changed by {other} while {this_run} wrote it, so this run's write was not committed and "
            f"{table} is as that run left it. Fix: run again once the other run has finished; this run's changes "
            "are applied then, once.")


def run_line(application: str, invocation: str, server: bool) -> str:
    """What a run says once, so that the Spark application a beaten run's sentence names (conflict_sentence) maps to
    a dbt process and its log: through a server (the `cluster` target) the application is the server's."""
    whose = f"a session of Spark application {application}, the Thrift server's" if server \
        else f"Spark application {application}"
    return f"lakeplan: this run is {whose} (dbt invocation {invocation})"


# the waits between the attempts of a metadata commit (metadata_commit): 10 attempts in about 11 s, each a fresh
# statement that reads the table again
METADATA_COMMIT_WAITS = (0.1, 0.2, 0.4, 0.8, 1.5, 2, 2, 2, 2)


def metadata_commit(commit: Callable[[], object], waits: tuple = METADATA_COMMIT_WAITS) -> None:
    """Runs `commit`, one metadata commit of lakeplan's (a write's records after it landed: what it consumed or
    applied, its branch's removal; a branch or columns before it), again after each conflict with another run's
    commit, a bounded number of times; the last error, or one that is no conflict, is raised. Iceberg's own retry of
    a tag, branch or schema change fails at once ('Table metadata refresh is required': it keeps the metadata it was
    made on); a fresh statement reads the table again."""
    for wait in waits:
        try:
            commit()
            return
        except Exception as error:  # dbt's DbtRuntimeError, Spark's error as its cause
            said = f"{getattr(error, 'msg', error)} {error.__cause__ or ''}"
            if not CONFLICT.search(said) or LOCK_TIMEOUT.search(said) or BEATEN.search(said):
                raise  # a lock never granted waited long enough; a beaten write stays beaten
            time.sleep(wait)
    commit()


PENDING = "lakeplan.consumed.pending"  # what a write records before it commits (incremental_reads/new_rows.sql)


def own_pending(table: str, properties: dict, run: str) -> list[str]:
    """The statement removing `run`'s own pending record of what its write would consume, when the table holds one:
    the write did not commit, and its inputs stay unconsumed for the next run."""
    try:
        pending = json.loads(properties.get(PENDING) or "null")
    except ValueError:
        return []
    if not isinstance(pending, dict) or pending.get("run") != run:
        return []
    return [f"alter table {table} unset tblproperties if exists ('{PENDING}')"]


def remove_run_copies(query: Callable[[str], list], sql: str, say: Callable[[str], None]) -> None:
    """Removes this run's own branch and staging copy that `sql` (a statement that failed, or that a cancel stopped or
    refused) names, each a metadata commit sent again while another run's commit meets it (metadata_commit: the
    other run's own clean-up at the same moment). One that still fails stays, under a name no other run uses, and
    `say` tells the user how to remove it."""
    for statement in run_copies(sql):
        try:
            metadata_commit(lambda: query(statement))
        except Exception as error:  # a lost session, or a table another run keeps changing
            cause = str(getattr(error, "msg", error)).strip().splitlines() or ["no message"]
            say(f"lakeplan: this run's copy stays after `{statement}` failed ({cause[0][:200]}); it holds no "
                f"committed data and no other run uses its name. Fix: run `{statement}` once no run of "
                f"{written_table(sql) or 'the table'} is under way.")


def own_application(query: Callable[[str], list]) -> str | None:
    """This run's Spark application id (`set spark.app.id`), or None where Spark does not answer."""
    try:
        [(_, application)] = query("set spark.app.id")
        return application
    except Exception:  # the sentence stands without it; the cause is in the debug log
        return None


def after_failure(query: Callable[[str], list], sql: str, raw: str, run: str, say: Callable[[str], None],
                  again: bool = False) -> str | None:
    """After a failed statement (`raw`, Spark's whole error): this run's own branch or staging copy it names is
    removed; for a write another run's commit beat (or a lock never granted), also this run's pending record, and the
    sentence to show names the table (the target, also where its tombstones' side table was beaten) and the Spark
    application of the commit at the head of main of what the statement wrote. `query` runs one statement on a
    cursor of its own and returns its rows; a copy that stays is told through `say` (remove_run_copies), and a
    failure of the other clean-ups leaves the sentence as it is. A fast-forward
    of main that is sent `again` (FAST_FORWARD_MET) keeps all of them, for that attempt."""
    if again and FAST_FORWARD_MET.search(f"{sql}\n{raw}") and not BEATEN.search(raw):
        return None
    remove_run_copies(query, sql, say)
    table = written_table(sql)
    if table is None or not (CONFLICT.search(raw) or LOCK_TIMEOUT.search(raw)):
        return None
    beaten = not LOCK_TIMEOUT.search(raw)  # a lock never granted (a CommitFailedException too) names no run
    other, own = None, own_application(query) if beaten else None
    try:
        for statement in own_pending(table, dict(query(f"show tblproperties {table}")), run):
            query(statement)
        if beaten:
            written = written_table(sql, True)  # main's head: this run's own branch may hold a later snapshot
            [(snapshot, committed, application)] = query(
                f"select snapshot_id, committed_at, summary['spark.app.id'] from {written}.snapshots "
                f"where snapshot_id = (select snapshot_id from {written}.refs where name = 'main')")
            # the cluster target's sessions share the Thrift server's one application
            run_of = "another session of" if application == own else "the run of"
            other = f"{run_of} Spark application {application} (snapshot {snapshot}, committed {committed})"
    except Exception:  # the sentence stands without the runs' names; the cause is in the debug log
        pass
    return conflict_sentence(table, raw, other, own)
