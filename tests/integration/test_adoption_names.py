"""A project that adopts lakeplan as a package and names its own models, seeds, snapshot and singular tests exactly as
the template's example does (the names the docs use, which a user copies): the template's YAML never configures,
documents or tests them, whether the project's nodes have YAML of their own or not. Checked in the project's
target/manifest.json after `dbt parse` (dbt in this process, with the plugin this repository installs)."""

import json

import pytest
import yaml

from tests.conftest import REPO, DbtProject, write_files

PROJECT = "lakeplan_shop"  # a name that starts like the package's: lakeplan's fix compares names, not prefixes
MODELS = sorted(path.stem for path in (REPO / "models").rglob("*.sql"))
SEEDS = sorted(path.stem for path in (REPO / "seeds").glob("*.csv"))
SNAPSHOTS = sorted(path.stem for path in (REPO / "snapshots").glob("*.sql"))  # each file holds the snapshot it names
SINGULAR_TESTS = sorted(path.stem for path in (REPO / "tests" / "singular").glob("*.sql"))
# the example's sources, by the same names (each of lakeplan's is disabled where it is a package)
SOURCES = {"tpch": ["customer", "orders", "lineitem", "nation", "region"], "cdc": ["customer_order_status"]}
SNAPSHOT_SQL = """{{% snapshot {name} %}}
{{{{ config(unique_key='id', strategy='check', check_cols='all') }}}}
select 1 as id
{{% endsnapshot %}}
"""


def own_yaml() -> str:
    """The project's own YAML for each of its nodes: a description, one column with a test, a tag."""
    def entries(names):
        return [{"name": name, "description": "own", "config": {"tags": ["own"]},
                 "columns": [{"name": "id", "data_tests": ["not_null"]}]} for name in names]

    return yaml.safe_dump({"version": 2, "models": entries(MODELS), "seeds": entries(SEEDS),
                           "snapshots": entries(SNAPSHOTS)})


def adopting_project(root, with_yaml: bool) -> DbtProject:
    config = {
        "name": PROJECT, "version": "1.0", "config-version": 2, "profile": "lakeplan",
        "model-paths": ["models"], "seed-paths": ["seeds"], "snapshot-paths": ["snapshots"], "test-paths": ["tests"],
        "dispatch": [{"macro_namespace": "dbt", "search_order": [PROJECT, "lakeplan", "dbt"]}],
        "models": {PROJECT: {"+file_format": "iceberg"}, "lakeplan": {"+enabled": False}},  # README's adoption
        "seeds": {PROJECT: {"+file_format": "iceberg"}},
    }
    files = {
        "dbt_project.yml": yaml.safe_dump(config),
        "packages.yml": yaml.safe_dump({"packages": [{"local": str(REPO)}]}),
        **{f"models/{name}.sql": "select 1 as id" for name in MODELS},
        **{f"seeds/{name}.csv": "id\n1\n" for name in SEEDS},
        **{f"snapshots/{name}.sql": SNAPSHOT_SQL.format(name=name) for name in SNAPSHOTS},
        **{f"tests/{name}.sql": "select 1 as id where false" for name in SINGULAR_TESTS},
        "models/_sources.yml": yaml.safe_dump({"version": 2, "sources": [
            {"name": source, "schema": "raw",
             "tables": [{"name": table, "columns": [{"name": "id"}]} for table in tables]}
            for source, tables in SOURCES.items()]}),
    }
    if with_yaml:
        files["models/_own.yml"] = own_yaml()
    write_files(root, files)
    return DbtProject(root)


@pytest.mark.parametrize("with_yaml", [False, True], ids=["without_own_yaml", "with_own_yaml"])
def test_the_templates_yaml_never_reaches_an_adopting_projects_nodes_of_the_same_names(tmp_path, with_yaml):
    project = adopting_project(tmp_path / PROJECT, with_yaml)
    project.run("deps")
    project.run("parse", "--no-partial-parse", "--write-json")
    # the template's relationships test on stg_lineitem refs stg_orders: left unpinned, dbt resolved it to the
    # project's model and warned on every command (a new-user trial)
    assert "WARN" not in project.shown and "require_ref_prefers_node_package_to_root" not in project.shown
    manifest = json.loads((project.path / "target" / "manifest.json").read_text())

    own = {node["name"]: node for node in manifest["nodes"].values()
           if node["package_name"] == PROJECT and node["resource_type"] in ("model", "seed", "snapshot")}
    assert sorted(own) == sorted(MODELS + SEEDS + SNAPSHOTS)  # every one enabled (the template's seed YAML disabled it)
    for name, node in own.items():
        assert node["config"].get("unique_key") in (None, "id"), name
        assert not node["config"].get("sequence_groups") and not node["config"].get("partial_update_on_delete"), name
        if with_yaml:
            assert node["patch_path"] == f"{PROJECT}://models/_own.yml", name
            assert (node["description"], list(node["columns"]), node["config"]["tags"]) == ("own", ["id"], ["own"])
        else:
            assert (node["patch_path"], node["description"], node["columns"]) == (None, "", {}), name
    sources = {(node["source_name"], node["name"]): node for node in manifest["sources"].values()
               if node["package_name"] == PROJECT}
    assert sorted(sources) == sorted((source, table) for source, tables in SOURCES.items() for table in tables)
    assert all(list(node["columns"]) == ["id"] and node["config"]["enabled"] for node in sources.values())
    # the template's tests (generic, from its YAML, and singular) stay with its disabled example (dbt keeps a test
    # whose model is disabled among the nodes, disabled)
    tests = [node for node in manifest["nodes"].values()
             if node["resource_type"] == "test" and node["config"]["enabled"]]
    assert [node["unique_id"] for node in tests if node["package_name"] == "lakeplan"] == []
    template_tests = [node for node in [*manifest["nodes"].values(), *sum(manifest["disabled"].values(), [])]
                      if node["resource_type"] == "test" and node["package_name"] == "lakeplan" and node["refs"]
                      and node.get("test_metadata")]  # generic tests of models (a source's has no ref)
    assert template_tests and all(ref["package"] == "lakeplan" for node in template_tests for ref in node["refs"])
    tested = {node.get("attached_node") for node in tests} - {None}
    assert tested == ({node["unique_id"] for node in own.values()} if with_yaml else set())
