"""The plugin is the installed distribution `dbt-lakeplan`, found by dbt's own plugin discovery."""

from importlib.metadata import distribution, entry_points, requires

from dbt.plugins.manager import PluginManager
from packaging.requirements import Requirement

import dbt_lakeplan
from tests.conftest import REPO


def test_dbt_discovers_the_installed_distribution():
    # dbt finds plugins with pkgutil.iter_modules: an editable install must be a path entry it sees.
    assert "dbt_lakeplan" in PluginManager.get_prefixed_modules()
    # the package loads its dbt glue (plugin.py) only when dbt reads `plugins`
    discovered = PluginManager.get_prefixed_modules()["dbt_lakeplan"]
    assert [plugin.__name__ for plugin in discovered.plugins] == ["LakeplanPlugin"]
    assert distribution("dbt-lakeplan").metadata["Name"] == "dbt-lakeplan"
    assert dbt_lakeplan.__file__ == str(REPO / "plugins" / "dbt_lakeplan" / "__init__.py")


def declared() -> dict[str, Requirement]:
    """What `pip install dbt-lakeplan` installs (not its optional extras)."""
    requirements = (Requirement(text) for text in requires("dbt-lakeplan"))
    return {requirement.name: requirement for requirement in requirements if not requirement.marker}


def test_its_dependencies_are_declared_with_the_bounds_lakeplan_runs_on():
    needs = declared()
    assert {"pyspark", "dbt-core", "dbt-spark", "snowpark-connect-deps-iceberg", "sqlglot", "Jinja2"} <= set(needs)
    assert "session" in needs["dbt-spark"].extras  # Spark inside the dbt process
    # dbt-spark[session] alone accepts pyspark 4, which the Iceberg 3.5 runtime jar does not run on
    assert needs["pyspark"].specifier.contains("3.5.8") and not needs["pyspark"].specifier.contains("4.0.0")
    assert not needs["dbt-core"].specifier.contains("1.12.0")  # 1.12 does not build here (PLATFORM.md)


def test_the_tested_versions_meet_every_declared_bound():
    pins = {}
    for name in ("requirements.txt", "constraints.txt"):
        for line in (REPO / name).read_text().splitlines():
            if "==" in line and not line.startswith("#"):
                requirement = Requirement(line)
                pins[requirement.name.lower()] = next(iter(requirement.specifier)).version
    for name, requirement in declared().items():
        assert requirement.specifier.contains(pins[name.lower()]), f"{name} {pins[name.lower()]} is not {requirement}"


def test_the_setup_command_is_installed():
    [script] = [entry for entry in entry_points(group="console_scripts") if entry.name == "lakeplan"]
    assert script.value == "dbt_lakeplan.cli:main"
