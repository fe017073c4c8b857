"""bench/shared_catalog.py runs end to end at tiny sizes (its figures are recorded by `make bench`): both catalogs
build the example and make the small updates, each in a process of its own, as the benchmark compares them."""

import importlib
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.team_catalog  # a JVM per catalog, the shared catalog's among them: the team stage


def test_shared_catalog_benchmark_smoke(shared_catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEPLAN_BENCH_WORK", str(tmp_path))  # read when bench/common.py is first imported
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    for module in ("common", "shared_catalog"):  # imported afresh, so they read this test's work directory
        sys.modules.pop(module, None)
    bench = importlib.import_module("shared_catalog")
    assert bench.HOMES["embedded"].is_relative_to(tmp_path)  # its embedded catalog is this test's, not bench/work's
    result = bench.main(["--smoke"])
    assert sorted(run["catalog"] for run in result["runs"]) == ["embedded", "shared"]
    for run in result["runs"]:  # each catalog built the example and made its updates (timed, never checked)
        assert run["build"] > 0 and run["small_update"] > 0
