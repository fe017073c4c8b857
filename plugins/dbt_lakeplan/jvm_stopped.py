"""A Spark JVM that stopped under dbt: the session method (targets `local` and `team`) runs Spark in a JVM that the
dbt process started and talks to through Py4J. Killed (`kill -9`, the kernel's out-of-memory killer) or ended by an
OutOfMemoryError, it leaves Py4J's bare "Error while sending or receiving" (or "Answer from Java side is empty") for
the statement that was running and "An error occurred while trying to connect to the Java server" for every later one.
Told instead: which model, what happened, where to look, and what a rerun finds (an Iceberg commit is whole or
absent, so no table is half-written)."""

from __future__ import annotations

import re

# Py4J's words for a JVM that is gone: mid-call, and for every call after
GONE = re.compile(r"Error while sending or receiving|Answer from Java side is empty"
                  r"|error occurred while trying to connect to the Java server", re.IGNORECASE)


def stopped(error: BaseException | str) -> bool:
    """Whether `error` (an exception, with its causes, or an error's text) is Py4J's for a JVM that is gone."""
    seen = set()
    while isinstance(error, BaseException) and id(error) not in seen:
        seen.add(id(error))
        if type(error).__name__ == "Py4JNetworkError" or GONE.search(str(getattr(error, "msg", error))):
            return True
        error = error.__cause__ or error.__context__
    return isinstance(error, str) and GONE.search(error) is not None


def sentence(node: str, table: str | None, log: str) -> str:
    """One sentence for `node` (`current`, or the operation that ran) whose statement the stopped JVM failed; `table`:
    the table it was writing, if any; `log`: dbt's log file, which holds the whole error."""
    found = (f"finds {table} either as this run found it or with this run's write, never half of it, and writes what "
             "is missing" if table else "finds every table either as this run found it or with a write of it, never "
             "half of one")
    return (f"The Spark JVM of this dbt process stopped while {node} ran: it was killed (`kill -9`, or the kernel's "
            "out-of-memory killer: `dmesg` says) or ran out of memory (an OutOfMemoryError in this process's error "
            f"output; the whole error is in {log}), so no statement of this run can run any more. Fix: run again (with "
            "a larger `spark.driver.memory` if it ran out of memory); Iceberg commits a write whole or not at all, so "
            f"the rerun {found}.")


def explain_sentence(model: str) -> str:
    """One sentence for `lakeplan explain` whose JVM stopped while it planned `model`'s statements."""
    return (f"the Spark JVM of this process stopped while it planned `{model}`: it was killed (`kill -9`, or the "
            "kernel's out-of-memory killer: `dmesg` says) or ran out of memory (an OutOfMemoryError in this process's "
            "error output), so no plan could be made after it. Fix: run lakeplan explain again (with a larger "
            "`spark.driver.memory` if it ran out of memory); explain writes no table, so every table is as it was.")
