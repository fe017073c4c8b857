"""A dbt process that runs one dbt command per line of its standard input (the arguments as a JSON list) with dbt's
runner, all in one JVM, and prints `DBT_WORKER_DONE ok|failed` after each. test_cancel sends it real SIGINTs: dbt
handles a Ctrl-C during a command as its CLI does (cancels, reports) and the runner returns, so the next command
runs in the same process instead of a new one with a JVM of its own."""

import json
import sys

from dbt import deprecations
from dbt.cli.main import dbtRunner

DONE = "DBT_WORKER_DONE"


def main() -> None:
    for line in sys.stdin:
        deprecations.reset_deprecations()  # as a new process would start (tests/conftest.py's invoke says why)
        result = dbtRunner().invoke(json.loads(line))
        print(DONE, "ok" if result.success else "failed", flush=True)


if __name__ == "__main__":
    main()
