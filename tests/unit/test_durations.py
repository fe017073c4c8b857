"""The durations record's arithmetic: the workers' dbt counts add up, and the summary leads with the totals and
lists the slowest tests, slowest first; a clone without a record of its own schedules by the committed one; the
team stage (`make test-team`) keeps its own record."""

import json

from tests import durations
from tests.durations import TOP, merged, summary


def work(project: str, parses: int, seconds: float) -> dict:
    return {"invocations": [{"test": "t", "project": project, "args": "run", "seconds": seconds}],
            "full_parses": {project: parses}, "reparses": {"vars_changed": parses - 1} if parses > 1 else {},
            "jvm_starts": 1, "dbt_processes": 0}


def test_the_workers_counts_add_up():
    total = merged([work("/a", 1, 2.0), work("/a", 2, 3.0), work("/b", 1, 1.0)])
    assert total["full_parses"] == {"/a": 3, "/b": 1}
    assert total["reparses"] == {"vars_changed": 1}
    assert (len(total["invocations"]), total["jvm_starts"], total["dbt_processes"]) == (3, 3, 0)


def test_the_summary_gives_the_totals_and_the_slowest_tests_first():
    tests = {f"tests/test_x.py::test_{n}": float(n) for n in range(30, 0, -1)}
    record = {"wall_seconds": 754.0, "test_count": 30, "workers": 2, "dbt_invocation_total": 3, "dbt_seconds": 6.0,
              "full_parses": {"/a": 3}, "full_parse_total": 3, "jvm_starts": 2, "dbt_processes": 1, "tests": tests}
    lines = summary(record, since=None).splitlines()
    assert lines[0].startswith("pytest: 12:34 for 30 tests on 2 worker(s); 3 dbt invocations (0:06), 3 full parses")
    record["reparses"] = {"vars_changed": 2}  # why dbt parsed /a again, twice
    assert "3 full parses in 1 projects (2 beyond one per project: vars_changed 2), " in summary(
        record, since=None)
    listed = [line.split()[-1] for line in lines[2:]]
    assert listed == list(tests)[:TOP]


def test_a_clone_without_a_record_of_its_own_orders_by_the_committed_one(tmp_path, monkeypatch):
    monkeypatch.setattr(durations, "LAST_KNOWN", tmp_path / "none_yet.json")
    assert durations.last_known() == json.loads(durations.COMMITTED.read_text())
    assert max(durations.last_known(), key=durations.last_known().get).startswith("tests/integration/")
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"tests/unit/test_durations.py::test_the_workers_counts_add_up": 9999.0}))
    monkeypatch.setattr(durations, "LAST_KNOWN", own)
    assert durations.last_known()["tests/unit/test_durations.py::test_the_workers_counts_add_up"] == 9999.0


def test_the_team_stage_writes_a_record_of_its_own_and_every_other_run_the_suites():
    assert durations.record_path("team_catalog") == durations.RECORD.with_name("test_durations_team.json")
    assert durations.record_path("not team_catalog") == durations.record_path("") == durations.RECORD
