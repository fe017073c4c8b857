"""How the suite is cut into units of work for pytest-xdist (tests/conftest.py): what shares the repository's files
or the cluster's ports is one unit, each bench smoke (or class of them) is a unit of its own, any other module is one,
and the units are handed out longest first."""

from tests.conftest import longest_first, work_unit

BENCH = "tests/integration/test_bench_smoke.py"
PIPELINE = "tests/integration/test_example_pipeline.py"
EXAMPLE_COPY = f"{BENCH}::TestOneBuildOfTheExample"


def test_what_shares_the_repository_is_one_unit_and_each_bench_smoke_its_own():
    assert work_unit("tests/integration/test_cluster.py::test_an_upsert_runs_again_on_the_cluster") == "repository"
    assert work_unit(f"{PIPELINE}::test_parse_prints_no_deprecation_warnings") == "repository"
    assert work_unit(f"{EXAMPLE_COPY}::test_explain_benchmark_smoke") == EXAMPLE_COPY  # it reads the TPC-H one's build
    assert work_unit(f"{BENCH}::test_sink_reuse_benchmark_smoke") == f"{BENCH}::test_sink_reuse_benchmark_smoke"
    assert work_unit(f"{EXAMPLE_COPY}::test_tpch_end_to_end_benchmark_smoke") == EXAMPLE_COPY != "repository"  # a copy
    assert work_unit("tests/integration/test_rerun.py::test_other_input_values_write_again[x]") == (
        "tests/integration/test_rerun.py")


def test_units_are_handed_out_longest_first_each_in_its_order():
    nodeids = ["tests/a.py::one", "tests/a.py::two", f"{BENCH}::test_small_updates_benchmark_smoke",
               f"{BENCH}::test_sink_reuse_benchmark_smoke", "tests/integration/test_cluster.py::c", "tests/b.py::b"]
    recorded = {"tests/a.py::one": 10.0, "tests/a.py::two": 300.0, f"{BENCH}::test_sink_reuse_benchmark_smoke": 277.0,
                "tests/integration/test_cluster.py::c": 200.0, f"{PIPELINE}::p": 209.0}
    assert longest_first(nodeids, recorded) == [
        "tests/integration/test_cluster.py::c",  # with the example pipeline's test: 409 s
        "tests/a.py::one", "tests/a.py::two",  # 310 s, in their order
        f"{BENCH}::test_sink_reuse_benchmark_smoke",
        f"{BENCH}::test_small_updates_benchmark_smoke", "tests/b.py::b",  # never recorded: last, in their order
    ]
    assert longest_first(nodeids, {})[0] == "tests/integration/test_cluster.py::c"  # no record: the repository's first
