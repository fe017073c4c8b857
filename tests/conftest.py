"""Shared test fixtures: dbt runs in-process (dbtRunner), so every integration test in the session
shares one SparkSession (one JVM start) and reads the same Iceberg catalog as dbt."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from dbt import deprecations
from dbt.cli.main import dbtRunner, dbtRunnerResult
from dbt_common.tests import enable_test_caching

from tests.durations import DbtWork, DurationsRecord, last_known

REPO = Path(__file__).resolve().parents[1]
JAVA_FRAME = re.compile(r"^\s+at [\w$.]+\(", re.MULTILINE)  # a line of a Java stack trace
REQUIRED_ENV = ("SPARK_CONF_DIR", "DBT_PROFILES_DIR", "LAKEPLAN_TPCH_DIR")

# dbt's own test fixtures (dbt.tests.fixtures.project, which dbt-tests-adapter runs on) switch this on: the Jinja parse of
# a text is kept for the session. A new project or a changed --vars makes dbt parse every macro again (lakeplan's are
# 200 KB); with it, each distinct macro text is parsed once per session. It cut test_tombstones.py from 223 s to 179 s.
# It stays on for the whole session: no module may switch it off for the ones after it.
enable_test_caching()
# Under pytest-xdist a unit of work runs on one worker, its tests in order (module-scoped fixtures are built once).
# A unit is a module, but: the tests that share the repository's own files (the example's target/ and logs/, its seeds
# and models, which some tests edit and restore) or fixed ports (the cluster's) are one unit, "repository", so they
# never run at once; and each test of UNIT_PER_TEST, or each class of its tests, is a unit of its own (each bench smoke
# works in its own project directory and schema, and each takes a minute: together they would be the longest pole; a
# class shares a class-scoped build between its tests).
REPOSITORY_MODULES = ("test_cluster.py", "test_example_pipeline.py", "test_explain_browser.py")
UNIT_PER_TEST = ("test_bench_smoke.py",)
REPOSITORY_FIXTURES = ("example", "built")
# The workers' JVMs (and the dbt processes they start) begin with a larger metaspace: its growth caused full GCs (5
# per worker module). Spark puts defaultJavaOptions before the template's extraJavaOptions. C1 alone
# (-XX:TieredStopAtLevel=1) was tried and is not here: it saved CPU in a short run but cost 11% in the whole suite,
# where a worker's JVM lives 20 minutes (docs/testing.md).
TEST_JVM_OPTIONS = "-XX:MetaspaceSize=256m"
# dbt's JSON artifacts (manifest.json, run_results.json, the graph and lakeplan's reports) cost about 0.17 s of CPU
# per dbt command: test_merge_rules.py in one process, by turns, took 31.6 s and 31.8 s of Python CPU with them and
# 26.5 s and 26.9 s without, for 29 commands. Of the run's ~670 commands a dozen read them: those ask for them
# (`--write-json`), and dbt's own adapter suites and the benchmarks run with dbt's default (`dbt_writes_json`).
# Everything else a command does (lakeplan's rewrite, its SQL cache, target/compiled and target/run) is the same.
WRITE_JSON = "DBT_WRITE_JSON"
TEST_RUN = "LAKEPLAN_TEST_RUN"  # the id (pid) of the process running the tests, the workers' parent under xdist


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to (see REPOSITORY_MODULES)."""
    module, _, test = nodeid.partition("::")
    name = Path(module).name
    if name in REPOSITORY_MODULES:
        return "repository"
    return f"{module}::{test.split('::')[0]}" if name in UNIT_PER_TEST else module


def pytest_configure(config):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ[TEST_RUN] = str(os.getpid())  # the workers inherit it
    own_home_per_worker()
    os.environ.setdefault(WRITE_JSON, "false")
    work = DbtWork()
    work.watch()
    config.pluginmanager.register(DurationsRecord(config, work), "lakeplan_durations")


def own_home_per_worker() -> None:
    """Under pytest-xdist each worker is a JVM of its own, and embedded Derby admits one JVM per metastore: a worker
    gets its own warehouse and metastore, `$LAKEPLAN_HOME/workers/<worker>`, set before any test starts Spark."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or not os.environ.get("LAKEPLAN_HOME"):
        return
    from dbt_lakeplan.spark_setup import write_spark_conf

    home = Path(os.environ["LAKEPLAN_HOME"]) / "workers" / worker
    conf = write_spark_conf(home)
    with (conf / "spark-defaults.conf").open("a") as settings:
        settings.write(f"\n# tests/conftest.py: TEST_JVM_OPTIONS\nspark.driver.defaultJavaOptions {TEST_JVM_OPTIONS}\n")
    os.environ["SPARK_CONF_DIR"] = str(conf)
    os.environ["LAKEPLAN_HOME"] = str(home)


def pytest_collection_modifyitems(items):
    """Under pytest-xdist the units of work are collected longest first, by the last durations record (the
    repository's first while there is none), so that no long unit starts last; a test that uses the example must be
    in the repository unit."""
    strays = {item.nodeid for item in items if set(REPOSITORY_FIXTURES) & set(item.fixturenames)}
    strays = {nodeid for nodeid in strays if work_unit(nodeid) != "repository"}
    if strays:
        raise pytest.UsageError(f"{', '.join(sorted(strays))} use the example: add them to REPOSITORY_MODULES")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        nodeids = longest_first([item.nodeid for item in items], last_known())
        order = {nodeid: place for place, nodeid in enumerate(nodeids)}
        items.sort(key=lambda item: order[item.nodeid])


def longest_first(nodeids: list[str], recorded: dict[str, float]) -> list[str]:
    """The tests, their units longest first by the seconds `recorded` for their tests (the repository's unit first
    among those without any), each unit's tests in their order."""
    seconds: Counter = Counter()
    for nodeid, taken in recorded.items():
        seconds[work_unit(nodeid)] += taken
    return sorted(nodeids, key=lambda nodeid: (-seconds[work_unit(nodeid)], work_unit(nodeid) != "repository"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Schedules `work_unit`s in the order they were collected. (xdist's own `loadgroup` cannot do this here: the
    group it appends to a node id does not reach pytest 9's node ids; its --loadscope-reorder would put the units
    with the most tests first, whatever their length.)"""
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False
    return Units(config, log)


def started_by_this_run() -> Path:
    """The file saying this test run's `shared_catalog` fixture started the shared catalog."""
    return REPO / ".lakeplan" / "catalog" / f"started-by-test-run-{os.environ[TEST_RUN]}"


def pytest_sessionfinish(session):
    """The shared catalog this test run started (the `shared_catalog` fixture) is stopped when the run ends, in the
    process that runs the workers: one left running would outlive `make test` and `.ci/run`. One started by anything
    else while the run worked (`make catalog-up`, another test run) is not this run's to stop."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and started_by_this_run().exists():
        catalog_script("down")
        started_by_this_run().unlink()


def catalog_script(command: str):
    """`scripts/catalog.sh <command>` (up, down, status), its output kept."""
    import subprocess

    return subprocess.run([str(REPO / "scripts" / "catalog.sh"), command], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="session", autouse=True)
def lakeplan_environment(request):
    """Integration tests need the activated venv's environment; unit tests run anywhere."""
    if not any("integration" in str(item.path) for item in request.session.items):
        return
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        pytest.exit(
            f"{', '.join(missing)} not set: run the tests in the activated venv (`source .venv/bin/activate`, "
            "after `make setup`) or with `make test` (select some with `make test PYTEST_ARGS='-k <name>'`).",
            returncode=2,
        )


VALUE_PREFIX = "LAKEPLAN_TEST_"


def env_value(name: str, default: object) -> str:
    """Jinja reading a value a test gives one dbt command (`DbtProject.run(..., name=value)`). --vars would do as
    well, but each new --vars makes dbt parse the whole project again; a changed env var re-parses only the files
    that read it (and lakeplan's fingerprints read `env_var` as a placeholder, so the state check is the same)."""
    return f"env_var('{VALUE_PREFIX}{name.upper()}', '{default}')"  # a default: every command parses it, given or not


def given(name: str, default: object) -> str:
    """The value of `env_value` in a model's SQL."""
    return "{{ " + env_value(name, default) + " }}"


@contextlib.contextmanager
def command_values(values: dict[str, object]):
    """Sets the environment `env_value` reads to `values` for one dbt command, and removes them after it."""
    names = {f"{VALUE_PREFIX}{name.upper()}": str(value) for name, value in values.items()}
    os.environ.update(names)
    try:
        yield
    finally:
        for name in names:
            os.environ.pop(name, None)


class DbtProject:
    """A dbt project on disk and a way to invoke dbt on it in this process; with `manifest`, every invocation is given
    that one parse, as a scheduler (Dagster, Airflow) or a long-running process calling dbtRunner does."""

    def __init__(self, path: Path, manifest=None):
        self.path, self.manifest = path, manifest

    def parsed_once(self) -> DbtProject:
        """This project with one parse that each of its invocations reuses."""
        return DbtProject(self.path, self.run("parse").result)

    def invoke(self, *args: str, **values: object) -> tuple[dbtRunnerResult, str]:
        """Runs `dbt <args>` with `values` for the models' `env_value`s; returns dbt's result and every message dbt
        logged, as one text. What a user sees (every message above debug level) is kept in `self.shown`."""
        events: list = []
        # dbt counts deprecations in a module-level dict that only a new process empties (and dbt's own test fixture):
        # one invocation's deprecation was summarised, as a WARNING, after every later invocation in this worker
        deprecations.reset_deprecations()
        with command_values(values):
            runner = dbtRunner(manifest=self.manifest, callbacks=[events.append])
            result = runner.invoke([*args, "--project-dir", str(self.path)])
        self.shown = "\n".join(event.info.msg for event in events if event.info.level != "debug")
        return result, "\n".join(event.info.msg for event in events)

    def run(self, *args: str, **values: object) -> dbtRunnerResult:
        """Runs `dbt <args>` and fails the test, showing dbt's log, when dbt does not succeed."""
        result, log = self.invoke(*args, **values)
        if not result.success:
            pytest.fail(f"`dbt {' '.join(args)}` failed in {self.path}:\n{log[-6000:]}")
        return result

    def fail(self, *args: str, **values: object) -> str:
        """Runs `dbt <args>`, which must fail; returns dbt's log for assertions on the message."""
        result, log = self.invoke(*args, **values)
        assert not result.success, f"`dbt {' '.join(args)}` succeeded but should have failed:\n{log[-3000:]}"
        assert "Traceback (most recent call last)" not in log, f"dbt crashed instead of reporting:\n{log}"
        assert not JAVA_FRAME.search(self.shown), f"the Java stack belongs in the debug log:\n{self.shown[-3000:]}"
        return log


@pytest.fixture(scope="session")
def example() -> DbtProject:
    """The repository's own example project (the one `make run` builds)."""
    return DbtProject(REPO)


@pytest.fixture(scope="session")
def built(example):
    """One `dbt build` of the example (what `make run` does): models, seeds and every test must pass."""
    return example.run("build")


def model_tables(build_result) -> list[str]:
    """The tables a build wrote (models and seeds that are not views or ephemeral)."""
    return sorted(
        f"{result.node.schema}.{result.node.alias}"
        for result in build_result.result.results
        if result.node.resource_type in ("model", "seed") and result.node.config.materialized not in ("view", "ephemeral")
    )


@pytest.fixture(scope="session")
def spark():
    """The SparkSession dbt uses (same process, same SPARK_CONF_DIR settings)."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.enableHiveSupport().getOrCreate()


@pytest.fixture(scope="session")
def shared_catalog() -> Path:
    """The shared catalog (`make catalog-up`: PostgreSQL metastore, Iceberg's Hive locks on), started if it is not;
    returns its Spark settings folder, for processes of their own (this one's Spark runs on the embedded one)."""
    running = catalog_script("status").returncode == 0
    started = catalog_script("up")
    assert started.returncode == 0, f"scripts/catalog.sh up failed:\n{started.stdout}{started.stderr}"
    if not running:
        started_by_this_run().touch()
    return REPO / ".lakeplan" / "catalog" / "spark-conf"



@pytest.fixture(scope="module")
def reader(shared_catalog, tmp_path_factory):
    """One Spark process of its own on the shared catalog (tests/concurrency/harness.SparkSql) for a module's setup
    and reads."""
    from tests.concurrency.harness import SparkSql

    sql = SparkSql(shared_catalog, tmp_path_factory.mktemp("reader") / "spark_sql.log")
    yield sql
    sql.close()

def snapshots(spark, table: str) -> int:
    """How many Iceberg snapshots a table has (0 while it does not exist)."""
    if not spark.catalog.tableExists(table):
        return 0
    return spark.sql(f"select * from {table}.snapshots").count()


def accepting(*models: str) -> dict:
    """dbt_project.yml settings that accept the changed logic of `models` (`--vars '{lakeplan_accept_state: [...]}'`)
    from the project's first command on: the var is read at parse, and a --vars on one later command would parse the
    project in full again."""
    return {"vars": {"lakeplan_accept_state": list(models)}}


@pytest.fixture(scope="module")
def dbt_writes_json():
    """dbt's default for a module that runs what a user runs unchanged (dbt's own suites, the benchmarks)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(WRITE_JSON, raising=False)
        yield


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(scope="session")
def make_project(tmp_path_factory, spark):
    """Builds a small lakeplan project: the repository's macros (a symlink) with the test's own models,
    sources and seeds, as a user of the template has. Each project writes to schema `lakeplan_<name>`,
    emptied first, or to an earlier project's `lakeplan_<schema>`, kept (a second project on its tables)."""

    def make(name: str, files: dict[str, str], project: dict | None = None, schema: str | None = None) -> DbtProject:
        root = tmp_path_factory.mktemp(name)
        config = {
            "name": "lakeplan",
            "version": "0.1.0",
            "config-version": 2,
            "profile": "lakeplan",
            **{kind: {"lakeplan": {"+schema": schema or name, "+file_format": "iceberg"}}
               for kind in ("models", "seeds", "snapshots")},
            **(project or {}),
        }
        (root / "macros").symlink_to(REPO / "macros")
        if schema is None:
            spark.sql(f"drop schema if exists lakeplan_{name} cascade")  # tables from an earlier session
        write_files(root, {"dbt_project.yml": yaml.safe_dump(config), **files})
        return DbtProject(root)

    yield make
    shutil.rmtree(tmp_path_factory.getbasetemp(), ignore_errors=True)
