"""The suite's durations record, `target/test_durations.json` (`make test`; `make test-team`'s stage writes its own,
`target/test_durations_team.json`, `record_path`): each test's time (setup, call and teardown), each dbt
invocation's time, how many full dbt parses each project needed (and dbt's reason for each beyond a project's
first), and how many JVMs the tests started. Under
pytest-xdist every worker counts its own dbt work and hands it to the controller, which writes the record.

`python -m tests.durations [--since <epoch seconds>]` prints the summary of the record the last run wrote (what
`make test` and `make test-team` end with)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

RECORD = Path(__file__).resolve().parents[1] / "target" / "test_durations.json"
# a stage that runs apart (a marker expression, pytest's -m) writes a record of its own, so that neither stage's
# record overwrites the other's: `make test-team`'s (-m team_catalog) beside `make test`'s (-m "not team_catalog")
STAGE_RECORDS = {"team_catalog": RECORD.with_name("test_durations_team.json")}
# each test's last measured seconds, from every run that ran it: what the scheduler orders by (a run of a few tests
# rewrites RECORD, and must not make every other unit look new)
LAST_KNOWN = RECORD.with_name("test_durations_last_known.json")
# a full run's times, committed: a fresh clone (CI's) has no LAST_KNOWN, and collection order would start long units
# last. `python -m tests.durations --commit` refreshes it from both stages' records after a full `make check` that
# changed the suite's shape.
COMMITTED = Path(__file__).with_name("test_durations_committed.json")
TOP = 20
WORKER_OUTPUT = "lakeplan_durations"


def current_test() -> str:
    """The test running now (pytest's own variable: `<node id> (<phase>)`)."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]


def record_path(markexpr: str) -> Path:
    """The record a run with pytest's `-m markexpr` writes."""
    return STAGE_RECORDS.get(markexpr.strip(), RECORD)


def latest_record() -> Path:
    """The record the last run wrote, whichever stage it was."""
    return max((path for path in (RECORD, *STAGE_RECORDS.values()) if path.exists()), key=lambda p: p.stat().st_mtime)


class DbtWork:
    """What one test process asked of dbt and Java: invocations with their times, full parses, JVM starts."""

    def __init__(self):
        self.invocations: list[dict] = []
        self.full_parses: Counter = Counter()
        self.reparses: Counter = Counter()  # dbt's reason for a project's second and later full parses
        self.jvm_starts = 0
        self.dbt_processes = 0

    def watch(self) -> None:
        """Times every in-process dbt invocation (the tests', dbt's adapter suites' and the benchmarks'), counts full
        parses (dbt's manifest loader neither skipped nor partially parsed), in-process JVM starts (Py4J gateway
        launches) and the dbt processes the tests start (`dbt`, test_cancel's `dbt_worker.py`: a JVM each)."""
        from dbt.cli.main import dbtRunner
        from dbt.parser.manifest import ManifestLoader
        import pyspark.context

        invoke, load, launch = dbtRunner.invoke, ManifestLoader.load, pyspark.context.launch_gateway
        parsable = ManifestLoader.is_partial_parsable
        popen_init = subprocess.Popen.__init__

        @functools.wraps(invoke)
        def timed_invoke(runner, args, **kwargs):
            started = time.perf_counter()
            try:
                return invoke(runner, args, **kwargs)
            finally:
                project = args[args.index("--project-dir") + 1] if "--project-dir" in args else os.getcwd()
                self.invocations.append({"test": current_test(), "project": str(project), "args": " ".join(args),
                                         "seconds": round(time.perf_counter() - started, 2)})

        @functools.wraps(load)
        def counted_load(loader):
            manifest = load(loader)
            if not loader.skip_parsing and not loader.partially_parsing:
                self.full_parses[loader.root_project.project_root] += 1
                if self.full_parses[loader.root_project.project_root] > 1:
                    self.reparses[reparse_reason(loader)] += 1
            return manifest

        @functools.wraps(parsable)
        def reasoned(loader, saved):
            valid, reason = parsable(loader, saved)
            loader.lakeplan_reparse_reason = None if valid else str(reason)  # e.g. 03_vars_changed
            return valid, reason

        @functools.wraps(launch)
        def counted_launch(*args, **kwargs):
            self.jvm_starts += 1
            return launch(*args, **kwargs)

        @functools.wraps(popen_init)
        def counted_popen(process, args, *rest, **kwargs):
            command = [Path(str(part)).name for part in (args if isinstance(args, (list, tuple)) else [args])]
            self.dbt_processes += command[0] == "dbt" or "dbt_worker.py" in command
            popen_init(process, args, *rest, **kwargs)

        dbtRunner.invoke, ManifestLoader.load, subprocess.Popen.__init__ = timed_invoke, counted_load, counted_popen
        ManifestLoader.is_partial_parsable = reasoned
        pyspark.context.launch_gateway = counted_launch

    def as_dict(self) -> dict:
        return {"invocations": self.invocations, "full_parses": dict(self.full_parses), "reparses": dict(self.reparses),
                "jvm_starts": self.jvm_starts, "dbt_processes": self.dbt_processes}


def reparse_reason(loader) -> str:
    """Why dbt parsed a project it had parsed before in full: its saved parse did not fit (dbt's own reason: the
    vars, the profile or target changed, ...), partial parsing was off, or no saved parse was at the target path."""
    from dbt.flags import get_flags

    reason = getattr(loader, "lakeplan_reparse_reason", None)
    if reason:
        return reason.split("_", 1)[-1]  # dbt's ReparseReason without its number
    return "no_saved_parse_at_the_target_path" if get_flags().PARTIAL_PARSE else "partial_parse_off"


def merged(works: list[dict]) -> dict:
    """One process's counts from several (the workers')."""
    parses, reparses = Counter(), Counter()
    for work in works:
        parses.update(work["full_parses"])
        reparses.update(work.get("reparses", {}))
    return {"invocations": [i for work in works for i in work["invocations"]], "full_parses": dict(parses),
            "reparses": dict(reparses),
            "jvm_starts": sum(work["jvm_starts"] for work in works),
            "dbt_processes": sum(work["dbt_processes"] for work in works)}


class DurationsRecord:
    """The pytest plugin: times tests where reports arrive (the controller under xdist) and writes the record."""

    def __init__(self, config, work: DbtWork):
        self.config, self.work = config, work
        self.record = record_path(config.option.markexpr)
        self.started = time.time()
        self.tests: dict[str, float] = defaultdict(float)
        self.outcomes: Counter = Counter()
        self.workers: dict[str, str] = {}
        self.worker_work: list[dict] = []

    def pytest_runtest_logreport(self, report):
        self.tests[report.nodeid] += report.duration
        if report.when == "call" or report.outcome != "passed":
            self.outcomes[report.outcome] += 1
        node = getattr(report, "node", None)  # the xdist worker that ran it
        if node is not None:
            self.workers[report.nodeid] = node.gateway.id

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        if WORKER_OUTPUT in getattr(node, "workeroutput", {}):
            self.worker_work.append(node.workeroutput[WORKER_OUTPUT])

    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workeroutput"):  # an xdist worker: the controller writes the record
            self.config.workeroutput[WORKER_OUTPUT] = self.work.as_dict()
            return
        if not self.tests:
            return
        work = merged([self.work.as_dict(), *self.worker_work])
        record = {
            "command": ["pytest", *self.config.invocation_params.args],
            "workers": len(set(self.workers.values())) or 1,
            "wall_seconds": round(time.time() - self.started, 1),
            "test_count": len(self.tests),
            "outcomes": dict(self.outcomes),
            "full_parse_total": sum(work["full_parses"].values()),
            "dbt_invocation_total": len(work["invocations"]),
            "dbt_seconds": round(sum(i["seconds"] for i in work["invocations"]), 1),
            "tests": {nodeid: round(seconds, 2) for nodeid, seconds in sorted(self.tests.items(), key=lambda t: -t[1])},
            "test_workers": self.workers,
            **work,
        }
        self.record.parent.mkdir(exist_ok=True)
        self.record.write_text(json.dumps(record, indent=1) + "\n")
        LAST_KNOWN.write_text(json.dumps(last_known() | record["tests"], indent=1) + "\n")

    def pytest_terminal_summary(self, terminalreporter):
        if self.record.exists() and not hasattr(self.config, "workeroutput"):
            terminalreporter.write_line(f"durations record: {self.record.relative_to(RECORD.parents[1])}")


def last_known() -> dict[str, float]:
    """Each test's seconds in the last run that ran it here, else in the committed full run."""
    return {**read_times(COMMITTED), **read_times(LAST_KNOWN)}


def read_times(path: Path) -> dict[str, float]:
    return json.loads(path.read_text()) if path.exists() else {}


def summary(record: dict, since: float | None = None) -> str:
    """The record's totals and its slowest tests."""
    minutes = lambda seconds: f"{int(seconds // 60)}:{int(seconds % 60):02d}"  # noqa: E731
    lines = []
    if since is not None:
        lines.append(f"in all: {minutes(time.time() - since)}")
    lines += [
        f"pytest: {minutes(record['wall_seconds'])} for {record['test_count']} tests on {record['workers']} worker(s); "
        f"{record['dbt_invocation_total']} dbt invocations ({minutes(record['dbt_seconds'])}), "
        f"{record['full_parse_total']} full parses in {len(record['full_parses'])} projects{beyond(record)}, "
        f"{record['jvm_starts']} in-process JVM starts, {record['dbt_processes']} dbt processes",
        f"slowest {TOP} tests (seconds, setup and teardown included):",
    ]
    lines += [f"{seconds:8.1f}  {nodeid}" for nodeid, seconds in list(record["tests"].items())[:TOP]]
    return "\n".join(lines)


def beyond(record: dict) -> str:
    """The full parses beyond one per project, by dbt's reason (` (3 beyond one per project: vars_changed 2, ...)`)."""
    reparses = record.get("reparses") or {}
    if not reparses:
        return ""
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(reparses.items(), key=lambda r: -r[1]))
    return f" ({sum(reparses.values())} beyond one per project: {reasons})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", type=float, help="when `make` started (epoch seconds): prints its total")
    parser.add_argument("--commit", action="store_true",
                        help=f"writes the test times of `make test`'s record and `make test-team`'s (a full run's "
                             f"each) to tests/{COMMITTED.name}")
    args = parser.parse_args(argv)
    if args.commit:  # both stages schedule by it
        times = {}
        for path in (RECORD, *STAGE_RECORDS.values()):
            times |= json.loads(path.read_text())["tests"]
        COMMITTED.write_text(json.dumps(dict(sorted(times.items())), indent=1) + "\n")
    record = json.loads((RECORD if args.commit else latest_record()).read_text())  # the suite's order: its record
    print(summary(record, args.since))


if __name__ == "__main__":
    main()
