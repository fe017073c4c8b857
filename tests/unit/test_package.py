"""The plugin is the installed distribution `dbt-lakeplan`, found by dbt's own plugin discovery."""

import ast
import sys
from importlib.metadata import distribution, entry_points, packages_distributions, requires
from pathlib import Path

from dbt.plugins.manager import PluginManager
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


def imported_modules(package: Path) -> set[str]:
    """Every module the package's own modules import (absolute imports; inside functions too)."""
    modules = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module)
    return modules


def distribution_of(module: str) -> str:
    """The installed distribution whose files hold `module` (several share `dbt`: dbt-core, dbt-adapters, dbt-spark)."""
    stem = module.replace(".", "/")
    for name in packages_distributions().get(module.split(".")[0], []):
        if {f"{stem}.py", f"{stem}/__init__.py"} & {str(file) for file in distribution(name).files or []}:
            return name
    raise AssertionError(f"no installed distribution holds {module}")


def test_every_module_the_plugin_imports_comes_from_a_declared_dependency():
    # `lakeplan explain` imported tqdm, which only sqlfluff brought into the template's venv: in an adopting
    # project it failed with ModuleNotFoundError
    package = Path(dbt_lakeplan.__file__).parent
    third_party = {module for module in imported_modules(package)
                   if module.split(".")[0] not in (*sys.stdlib_module_names, "dbt_lakeplan")}
    needed = {canonicalize_name(distribution_of(module)): module for module in third_party}
    undeclared = {name: module for name, module in needed.items() if name not in map(canonicalize_name, declared())}
    assert undeclared == {}, "imported by the plugin, missing from pyproject.toml's dependencies"
