"""The benchmark harness runs (tiny sizes) so it never rots; its figures are recorded by `make bench`."""

import importlib.util

from tests.conftest import REPO


def test_sink_reuse_benchmark_smoke(spark):
    spec = importlib.util.spec_from_file_location("sink_reuse", REPO / "bench" / "sink_reuse.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.main(["--smoke"], spark=spark)
    by_variant = {(r["variant"], r["phase"]): r for r in result["medians"]}
    assert by_variant[("lakeplan", "update")]["snapshots"] == 1
    assert by_variant[("separate", "update")]["snapshots"] == 2
    assert by_variant[("handwritten", "update")]["snapshots"] == 1
    rows = {name: sorted(map(tuple, spark.sql(f"select * from lakeplan_bench.{name}").collect())) for name in ("wide", "wide_handwritten")}
    assert rows["wide"] == rows["wide_handwritten"]  # the same final contents
