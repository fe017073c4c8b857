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

from tests.conftest import REPO

ICEBERG = {"+file_format": "iceberg"}


def local_target() -> dict:
    """The `local` output of the repository's profiles.yml, rendered as dbt renders it."""
    text = (REPO / "profiles.yml").read_text()
    rendered = jinja2.Template(text).render(env_var=lambda name, default=None: os.environ.get(name, default))
    return yaml.safe_load(rendered)["lakeplan"]["outputs"]["local"]


@pytest.fixture(scope="class")
def dbt_profile_target():
    return local_target()


def lakeplan_config(name: str) -> dict:
    return {"name": name, "models": ICEBERG, "seeds": ICEBERG, "snapshots": ICEBERG}


class TestSimpleMaterializations(BaseSimpleMaterializations):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("base")


class TestEmpty(BaseEmpty):
    pass


class TestEphemeral(BaseEphemeral):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("ephemeral")


class TestIncremental(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("incremental")


class TestGenericTests(BaseGenericTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("generic_tests")


class TestSingularTests(BaseSingularTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("singular_tests")


class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("singular_tests_ephemeral")


class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("snapshot_strategy_check_cols")


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return lakeplan_config("snapshot_strategy_timestamp")
