"""The whole `make test` alone and beside a CPU-heavy job, side by side in one run (issue 45: under 20 minutes
alone, under 40 beside a second job, on this 2-core machine).

    python bench/suite_beside_cpu_job.py --jobs 0 2

For each count in --jobs, in order: starts that many busy processes (each keeps one core busy, as another build on
a CI machine would), runs `make test` in this clone beside them, and stops them. Records each run's whole time and
its durations record's summary (pytest's time, tests, dbt invocations, full parses: target/test_durations.json) in
bench/results/suite_beside_cpu_job.{json,md}. Run it in a clone where `make setup` is done and nothing else runs.
No smoke test runs it: it runs the suite itself."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import ROOT, markdown_table, record

BUSY_LOOP = "while True: pass"


def run_suite(jobs: int) -> dict:
    """`make test` beside `jobs` busy processes; its time, exit code and durations summary."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(jobs)]
    started = time.monotonic()
    try:
        code = subprocess.run(["make", "test"], cwd=ROOT).returncode
    finally:
        for process in busy:
            process.kill()
            process.wait()
    seconds = round(time.monotonic() - started)
    durations = json.loads((ROOT / "target" / "test_durations.json").read_text())
    keys = ("wall_seconds", "test_count", "outcomes", "dbt_invocation_total", "full_parse_total")
    return {"jobs": jobs, "exit_code": code, "make_test_seconds": seconds, "load_after": os.getloadavg(),
            "pytest": {key: durations[key] for key in keys}, "projects": len(durations["full_parses"])}


def summary(runs: list[dict], commit: str) -> str:
    rows = [[run["jobs"], f"{run['make_test_seconds'] / 60:.1f}", f"{run['pytest']['wall_seconds'] / 60:.1f}",
             ", ".join(f"{count} {outcome}" for outcome, count in run["pytest"]["outcomes"].items()),
             run["pytest"]["dbt_invocation_total"],
             f"{run['pytest']['full_parse_total']} in {run['projects']}", run["exit_code"]] for run in runs]
    header = ["busy processes beside", "make test (min)", "pytest (min)", "outcomes", "dbt invocations",
              "full parses in projects", "exit code"]
    return (f"# `make test` alone and beside a CPU-heavy job\n\nCommit {commit}, {os.cpu_count()} cores. Command: "
            f"`python bench/suite_beside_cpu_job.py --jobs {' '.join(str(run['jobs']) for run in runs)}`\n\n"
            + markdown_table(header, rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, nargs="+", default=[0, 2], help="busy processes beside each run")
    args = parser.parse_args(argv)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    commit = head.stdout.strip()
    runs = [run_suite(jobs) for jobs in args.jobs]
    record("suite_beside_cpu_job", {"commit": commit, "runs": runs}, summary(runs, commit))
    return max(run["exit_code"] for run in runs)


if __name__ == "__main__":
    sys.exit(main())
