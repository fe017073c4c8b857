"""A cancelled run is cancelled: no statement of a model starts after dbt cancels it, unless its write has
committed already, and a model whose write committed is reported as written, never as cancelled.

dbt cancels a run (Ctrl-C, `--fail-fast`) by calling the adapter's `cancel` for every open connection, printing
`CANCEL query <node>` for each, and then waiting for the threads running models to finish. dbt-spark's session
method cancels nothing, so a partial-update target went on through its later groups to its commit
(`call system.fast_forward`), and dbt reported it written after saying it cancelled it.

A write's statements, in the order a model sends them (lakeplan's statement handler calls `statement` around each):

    stage, tombstones, group 1 .. n   --  commit (marked)  --  drop the branch, record the state, docs, hooks
    |<- a cancel refuses what has not started, stops the  ->|<- past the point of no return: everything runs,
        Spark jobs of what is running: the table is as it was   the model is written, dbt prints no CANCEL line

The statement that commits a write carries the line `-- lakeplan: commits the write of <relation>` (macro
`lakeplan_commit_marker`). A cancel that finds a statement running stops its Spark jobs until it ends, and counts the
write committed only when the commit statement succeeded (an Iceberg write commits after its jobs, so a MERGE
stopped in its jobs changes nothing).
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

COMMIT_MARKER = re.compile(r"^[ \t]*-- lakeplan: commits the write of ([^\n]*?)[ \t]*$", re.MULTILINE)
STATE_ATTRIBUTE = "_lakeplan_cancellation"  # on dbt's Connection object, which a thread keeps from node to node


class Cancelled(Exception):
    """A statement of a model that dbt cancelled; the message is the sentence dbt shows."""


@dataclass
class ConnectionState:
    cancelled: bool = False
    running: int = 0  # statements under way
    committed: str | None = None  # the node whose write this connection committed


def node_name(unique_id: str | None) -> str:
    """`model.lakeplan.orders` is `orders` to a user (a versioned model keeps its version)."""
    return (unique_id or "this model").split(".", 2)[-1]


def cancelled_sentence(unique_id: str | None) -> str:
    name = node_name(unique_id)
    return (f"`{name}` was cancelled before its write committed: lakeplan starts no statement of a model after dbt "
            f"cancels it and stops the Spark jobs of the one running, so the table `{name}` writes is unchanged. "
            "Fix: run it again.")


class Cancellations:
    """The cancel state of each connection, read and changed under one lock: a cancel and the start of a commit
    cannot cross (the commit starts before the cancel, which then waits for it, or it does not start)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()

    @staticmethod
    def _state(connection: Any) -> ConnectionState:
        state = getattr(connection, STATE_ATTRIBUTE, None)
        if state is None:
            state = ConnectionState()
            setattr(connection, STATE_ATTRIBUTE, state)
        return state

    def past_commit(self, connection: Any) -> bool:
        """Whether the model this connection runs now has committed its write."""
        with self._changed:
            return self._state(connection).committed == connection.name

    @contextlib.contextmanager
    def statement(self, connection: Any, sql: str) -> Iterator[None]:
        """Around one statement of `connection`: refused (`Cancelled`) after a cancel, unless the model's write
        committed already; the model's write is committed once a statement marked as its commit succeeds."""
        commits = COMMIT_MARKER.search(sql) is not None
        with self._changed:
            state = self._state(connection)
            if state.cancelled and state.committed != connection.name:
                raise Cancelled(cancelled_sentence(connection.name))
            state.running += 1
        succeeded = False
        try:
            yield
            succeeded = True
        finally:
            with self._changed:
                state.running -= 1
                if commits and succeeded:
                    state.committed = connection.name
                self._changed.notify_all()

    def cancel(self, connection: Any, stop_jobs: Callable[[], None], every: float = 0.25) -> bool:
        """Marks `connection` cancelled and, unless its model's write has committed, stops the Spark jobs of its
        statement until that statement ends: Spark cancels only the jobs running at the call, and a statement still
        being planned starts its jobs later. Whether the model's write committed (then dbt reports it written)."""
        with self._changed:
            state = self._state(connection)
            state.cancelled = True
            while state.committed != connection.name:
                stop_jobs()
                if not state.running:
                    break
                self._changed.wait(every)
            return state.committed == connection.name

    def is_cancelled(self, connection: Any) -> bool:
        with self._changed:
            return self._state(connection).cancelled


CANCELLATIONS = Cancellations()
