"""docs/errors.md names, for every misconfiguration, the test that triggers it: those tests must exist."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (\d+) \|.*\| (test_\w+\.py)::(test_\w+)(?:\[(\w+)\])? \|$", re.MULTILINE)


def test_every_catalogued_error_has_its_test():
    rows = ROW.findall((REPO / "docs" / "errors.md").read_text())
    assert len(rows) >= 20
    assert [int(number) for number, *_ in rows] == list(range(1, len(rows) + 1))
    for _, module, function, case in rows:
        source = (REPO / "tests" / "integration" / module).read_text()
        assert f"def {function}(" in source, f"{module}::{function} does not exist"
        if case:
            assert f'"{case}"' in source, f"{module}::{function} has no case {case!r}"
