"""The plugin is the installed distribution `dbt-lakeplan`, found by dbt's own plugin discovery."""

from importlib.metadata import distribution, requires

from dbt.plugins.manager import PluginManager
from packaging.requirements import Requirement

import dbt_lakeplan
from tests.conftest import REPO


def test_dbt_discovers_the_installed_distribution():
    # dbt finds plugins with pkgutil.iter_modules: an editable install must be a path entry it sees.
    assert "dbt_lakeplan" in PluginManager.get_prefixed_modules()
    assert distribution("dbt-lakeplan").metadata["Name"] == "dbt-lakeplan"
    assert dbt_lakeplan.__file__ == str(REPO / "plugins" / "dbt_lakeplan" / "__init__.py")


def test_its_dependencies_are_declared():
    declared = {Requirement(requirement).name for requirement in requires("dbt-lakeplan")}
    assert {"dbt-core", "dbt-spark", "sqlglot", "Jinja2"} <= declared
