"""A package's YAML describes that package's own nodes: two fixes to dbt's schema parser, installed once per process by
lakeplan's plugin, so the template's example YAML never reaches a project that installs lakeplan as a package.

Patches: dbt (1.11, `NodePatchParser.parse_patch`) looks the node a YAML entry of models, seeds or snapshots
describes up in the YAML's own package and then in any package. Where lakeplan is a package its example models are
disabled, so the first lookup finds nothing and the second finds the adopting project's model of the same name
(`customer_360`, `dim_customer`, `stg_orders`: the names the docs use): that model took the template's description,
columns and configs (`unique_key`, `sequence_groups`, `enabled: false` of the seed) without a word, or, where it
has YAML of its own, dbt stopped with "found two schema.yml entries". A package's entry now looks only in its
own package (enabled nodes, then disabled ones, as dbt does there); the root project's entries keep dbt's lookup.

Generic tests: a test a package's YAML declares on a model reads it, and the models its arguments name, with
`ref('<name>')`, which dbt resolves in the root project first, so the template's `unique` on `dim_customer` tested the
adopter's `dim_customer`. Such a test now names its package in every ref: it follows the package's models, and is
disabled with them.
"""

from __future__ import annotations

import re
from typing import Any


class OwnPackageLookup:
    """dbt's lookup of refable nodes, where a search without a package searches `package` alone."""

    def __init__(self, lookup: Any, package: str):
        self._lookup, self._package = lookup, package

    def get_unique_id(self, name: str, package: str | None, version: Any) -> str | None:
        return self._lookup.get_unique_id(name, package or self._package, version)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lookup, name)


def _own_package_patches(parse_patch):
    def parse_patch_of_own_package(self, block, refs) -> None:
        package = block.target.package_name
        if package == self.schema_parser.root_project.project_name:
            return parse_patch(self, block, refs)
        manifest = self.manifest
        lookup = manifest.ref_lookup
        manifest._ref_lookup = OwnPackageLookup(lookup, package)  # dbt reads it through the `ref_lookup` property
        try:
            return parse_patch(self, block, refs)
        finally:
            manifest._ref_lookup = lookup

    parse_patch_of_own_package.lakeplan = True
    return parse_patch_of_own_package


# `ref('name')` or `ref("name", v=2)` in a test's argument: one name without a package
UNPINNED_REF = re.compile(r"""\bref\(\s*(['"])([^'"]+)\1\s*(?=\)|,\s*(?:v|version)\s*=)""")


def pinned_to_package(node: Any) -> None:
    """Every ref a package's generic test makes, `ref('<name>')`, as `ref('<package>', '<name>')` of its package: the
    node it tests and the ones its arguments name (a relationships test's `to: ref('stg_orders')`)."""
    from dbt.artifacts.resources import RefArgs

    package = node.package_name
    node.refs = [RefArgs(ref.name, package, ref.version) if ref.package is None else ref for ref in node.refs]
    kwargs = node.test_metadata.kwargs
    for name, value in kwargs.items():
        if isinstance(value, str):
            kwargs[name] = UNPINNED_REF.sub(lambda ref: f"ref({ref[1]}{package}{ref[1]}, {ref[1]}{ref[2]}{ref[1]}", value)


def _own_package_tests(parse_generic_test):
    def parse_generic_test_of_own_package(self, target, *args, **kwargs):
        from dbt.contracts.graph.unparsed import UnparsedNodeUpdate

        node = parse_generic_test(self, target, *args, **kwargs)
        # a model's, seed's or snapshot's test (UnparsedModelUpdate is one too), not a source's: that has no ref
        if isinstance(target, UnparsedNodeUpdate) and target.package_name != self.root_project.project_name:
            pinned_to_package(node)
        return node

    parse_generic_test_of_own_package.lakeplan = True
    return parse_generic_test_of_own_package


def install() -> None:
    """Wraps dbt's patch lookup of models, seeds and snapshots and its generic tests' refs, once per process."""
    from dbt.parser.schema_generic_tests import SchemaGenericTestParser
    from dbt.parser.schemas import NodePatchParser

    if getattr(NodePatchParser.parse_patch, "lakeplan", False):
        return
    NodePatchParser.parse_patch = _own_package_patches(NodePatchParser.parse_patch)
    SchemaGenericTestParser.parse_generic_test = _own_package_tests(SchemaGenericTestParser.parse_generic_test)
