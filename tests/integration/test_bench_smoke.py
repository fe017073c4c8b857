"""Every benchmark harness runs (tiny sizes) so none rots; their figures are recorded by `make bench`.
What is checked here is what the benchmarks compare, never how fast anything is. Each test is a unit of work of its
own under pytest-xdist (tests/conftest.py), or a class of them that shares a class-scoped build: its projects are in
this worker's own directory, its tables in this worker's catalog."""

import importlib
import os
import sys

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def bench(tmp_path_factory, dbt_writes_json):
    # read when bench/common.py is first imported in this process (this worker's own directory, for the session)
    os.environ.setdefault("LAKEPLAN_BENCH_WORK", str(tmp_path_factory.getbasetemp() / "bench_work"))
    sys.path.insert(0, str(REPO / "bench"))
    yield lambda name: importlib.import_module(name)
    sys.path.remove(str(REPO / "bench"))


@pytest.fixture(autouse=True)
def no_bench_schema(spark):
    """Each benchmark starts on a catalog without its schema, as on a fresh worker's: the units of work run in any
    order, so none may lean on one that ran before it on the same worker."""
    spark.sql("drop schema if exists lakeplan_bench cascade")


def test_sink_reuse_benchmark_smoke(bench, spark):
    result = bench("sink_reuse").main(["--smoke"], spark=spark)
    by_variant = {(r["variant"], r["phase"]): r for r in result["medians"]}
    assert by_variant[("lakeplan", "update")]["snapshots"] == 1
    assert by_variant[("rules", "update")]["snapshots"] == 1
    assert by_variant[("separate", "update")]["snapshots"] == 2
    assert by_variant[("handwritten", "update")]["snapshots"] == 1
    rows = {name: sorted(map(tuple, spark.sql(f"select * from lakeplan_bench.{name}").collect())) for name in ("wide", "wide_handwritten")}
    assert rows["wide"] == rows["wide_handwritten"]  # the same final contents (the last dbt variant is `separate`)
    same = {(r["variant"], r["phase"]): r["same_as_handwritten"] for r in result["runs"]}
    assert {v for v, _ in same} == {"lakeplan", "bare", "rules", "separate", "handwritten"}
    for variant in ("lakeplan", "bare", "separate"):  # equal contents after each phase, not only equal counts
        assert same[(variant, "initial")] is True and same[(variant, "update")] is True
    assert same[("rules", "initial")] is True and same[("rules", "update")] is None  # its update adds, keeps the least


def test_prekeyed_benchmark_smoke(bench, spark):
    by = {(r["query"], r["layout"]): r for r in bench("prekeyed").main(["--smoke"], spark=spark)["medians"]}
    assert by[("group_by", "keyed")]["exchanges"] == by[("join", "keyed")]["exchanges"] == 0
    assert by[("group_by", "keyed")]["shuffle_bytes"] == 0
    assert by[("group_by", "plain")]["exchanges"] >= 1 and by[("group_by", "plain")]["shuffle_bytes"] > 0


def test_changelog_distribution_benchmark_smoke(bench, spark):
    result = bench("changelog_distribution").main(["--smoke"], spark=spark)
    by = {(r["variant"], r["phase"]): r for r in result["medians"]}
    assert by[("lakeplan", "initial")]["exchanges"] == 1  # hashed on the key: the dedup reuses it
    assert by[("round_robin", "initial")]["exchanges"] == 2  # round-robin, then a hash shuffle for the dedup
    assert result["tables_differ_in_rows"] == 0


def test_plugin_overhead_benchmark_smoke(bench):
    by = {r["measure"]: r["seconds"] for r in bench("plugin_overhead").main(["--smoke"])["medians"]}
    assert set(by) == {"postprocess_cold", "postprocess_cached", "with_plugin_cold", "with_plugin", "without_plugin"}
    assert all(v > 0 for v in by.values())


# revision_ab's workloads in two parts (`--only`), each a unit of work of its own: every pair is still compared
REVISION_AB = {
    "sink_reuse": {
        ("sink_reuse 200 keys", "initial"), ("sink_reuse 200 keys", "update"),
        ("sink_reuse rules 200 keys", "initial"), ("sink_reuse rules 200 keys", "update"),
        ("sink_reuse changelog member 200 keys", "initial"), ("sink_reuse changelog member 200 keys", "update"),
    },
    "changelog 400 rows": {("changelog 400 rows", "initial"), ("changelog 400 rows", "again")},
}  # fmt: skip


@pytest.mark.parametrize("only", REVISION_AB)
def test_revision_ab_benchmark_smoke(bench, spark, only):
    result = bench("revision_ab").main(["--base", "HEAD", "--smoke", "--only", only], spark=spark)
    assert {(r["workload"], r["phase"]) for r in result["medians"]} == REVISION_AB[only]
    assert all(run["same_rows"] for run in result["runs"])  # both sides leave the same tables


def test_small_updates_benchmark_smoke(bench, spark):
    result = bench("small_updates").main(["--smoke"], spark=spark)
    by = {run["variant"]: run for run in result["runs"]}
    assert all(run["same_contents"] for run in result["runs"])  # every variant, the same rows
    assert (by["a"]["mode"], by["b"]["mode"], by["c"]["mode"], by["e"]["mode"]) == (
        "copy-on-write", "copy-on-write", "merge-on-read", "merge-on-read")
    assert by["d"]["mode"] == "merge-on-read"  # `auto` at 2% of the keys
    assert by["c"]["bytes_written"] < by["b"]["bytes_written"] / 5  # the change, not the table
    assert set(result["compacted"][2000]) == {"c", "d"}
    assert by["f"]["mode"] == "delta"  # its merged view read and compared above, its stored rows read alone
    # the change, not the table (at 2,000 keys a file's footer weighs: its delta rows carry a flag per column)
    assert by["f"]["bytes_written"] < by["b"]["bytes_written"] / 2 and by["f"]["base_scan_seconds"] > 0


def test_small_updates_growth_benchmark_smoke(bench, spark):
    """The cost follows the change: d and e alone, the same number of changed keys at two sizes."""
    grown = bench("small_updates").main(["--smoke", "--variants", "de", "--changed-keys", "40"], spark=spark)
    assert {(run["variant"], run["keys"]) for run in grown["runs"]} == {(v, k) for v in "de" for k in (2000, 4000)}
    assert all(run["same_contents"] for run in grown["runs"])
    assert "| variant | 2,000 keys | 4,000 keys | 4,000 / 2,000 |" in grown["summary"]


@pytest.fixture(scope="class")
def tpch_e2e(bench, spark):
    """The TPC-H benchmark's smoke run, which builds a copy of the example (what it measures)."""
    return bench("tpch_e2e").main(["--smoke"], spark=spark)


class TestOneBuildOfTheExample:
    """The explain benchmark explains the TPC-H benchmark's copy of the example: one unit of work (tests/conftest.py),
    the example built once."""

    def test_tpch_end_to_end_benchmark_smoke(self, tpch_e2e):
        result = tpch_e2e
        assert {r["variant"] for r in result["medians"]} == {"dbt build, no tests", "plain PySpark"}
        assert result["rows_only_in_dbt_tables"] == dict.fromkeys(result["rows_only_in_dbt_tables"], 0)
        assert len(result["rows_only_in_dbt_tables"]) == 5

    def test_explain_benchmark_smoke(self, bench, spark, tpch_e2e):
        copy = bench("tpch_e2e")
        result = bench("explain").main(["--smoke"], spark=spark, built_schema=copy.DBT_SCHEMA, project=copy.EXAMPLE)
        assert {r["variant"] for r in result["medians"]} == {"explain", "floor"}
        assert result["statements_planned"] == len(result["exchanges_floor"]) > 0  # the floor plans what explain did
        assert result["exchanges_floor"] == result["exchanges_explain"]  # the same plans, Exchange for Exchange
