"""dbt's own published adapter tests (PyPI dbt-tests-adapter) against lakeplan's `local` profile, with
lakeplan's plugin installed: an outside check that lakeplan leaves dbt-spark's behaviour intact.

Each suite is dbt's base class unchanged except for the project config every lakeplan project has
(`+file_format: iceberg`, without which seeds become Hive tables that a second `dbt seed` cannot replace).
dbt runs in this process, so the suites share the one SparkSession (and Derby metastore) of the other tests.
"""

from __future__ import annotations

import os

import jinja2
import pytest
import yaml
from dbt.adapters.factory import reset_adapters

from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.fixtures.project import *  # noqa: F401,F403  dbt's `project` fixture and the ones it needs
from dbt.tests.fixtures.project import TestProcessingException

from tests.conftest import REPO

del TestProcessingException  # a dbt exception the star import brings, not a test class

ICEBERG = {"+file_format": "iceberg"}


def local_target() -> dict:
    """The `local` output of the repository's profiles/profiles.yml, rendered as dbt renders it."""
    text = (REPO / "profiles" / "profiles.yml").read_text()
    rendered = jinja2.Template(text).render(env_var=lambda name, default=None: os.environ.get(name, default))
    return yaml.safe_load(rendered)["lakeplan"]["outputs"]["local"]


@pytest.fixture(scope="class")
def dbt_profile_target():
    return local_target()


@pytest.fixture(scope="module", autouse=True)
def leave_dbt_as_found(dbt_writes_json):
    """dbt's `adapter` fixture takes whatever adapter an earlier dbt command in this process left registered (a
    Thrift one after the cluster test), and the suites leave theirs: start from no adapter and leave none. dbt's
    test-only template caches, which its `initialization` switches on, stay on: conftest.py keeps them on for the
    whole session (switching them off made every later module parse lakeplan's macros from scratch). dbt's
    `profiles_root` fixture deletes DBT_PROFILES_DIR when it ends: a later test's `dbt` subprocess then found no
    profile (test_metastore_in_use), so the activated environment's value is put back."""
    profiles_dir = os.environ.get("DBT_PROFILES_DIR")
    reset_adapters()
    yield
    reset_adapters()
    if profiles_dir is not None:
        os.environ["DBT_PROFILES_DIR"] = profiles_dir


def on_lakeplan(base: type, name: str) -> type:
    """dbt's suite `base` with the project config every lakeplan project has."""

    class Suite(base):
        @pytest.fixture(scope="class")
        def project_config_update(self):
            return {"name": name, "models": ICEBERG, "seeds": ICEBERG, "snapshots": ICEBERG}

    Suite.__name__ = Suite.__qualname__ = "Test" + base.__name__.removeprefix("Base")
    return Suite


TestSimpleMaterializations = on_lakeplan(BaseSimpleMaterializations, "base")
TestEmpty = on_lakeplan(BaseEmpty, "empty")
TestEphemeral = on_lakeplan(BaseEphemeral, "ephemeral")
TestIncremental = on_lakeplan(BaseIncremental, "incremental")
TestGenericTests = on_lakeplan(BaseGenericTests, "generic_tests")
TestSingularTests = on_lakeplan(BaseSingularTests, "singular_tests")
TestSingularTestsEphemeral = on_lakeplan(BaseSingularTestsEphemeral, "singular_tests_ephemeral")
TestSnapshotCheckCols = on_lakeplan(BaseSnapshotCheckCols, "snapshot_strategy_check_cols")
TestSnapshotTimestamp = on_lakeplan(BaseSnapshotTimestamp, "snapshot_strategy_timestamp")
