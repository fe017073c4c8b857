"""A manifest handed to dbt again (`dbtRunner(manifest=m).invoke(...)`, as a scheduler such as Dagster or Airflow, or
a long-running writer, reuses one parse) is compiled afresh by each invocation, as a fresh parse would be.

dbt 1.11 keeps a node's compilation on the manifest: an ephemeral model `compiled` and `extra_ctes_injected` in one
invocation is not rendered again by the next (`Compiler._recursively_prepend_ctes` reuses its SQL), and a model whose
CTEs were injected keeps them. A partial-update member that reads `new_rows` then sends the rows the first invocation
decided on, under that invocation's marker of what it consumed: every later run read its input whole and recorded the
old snapshot, counting the same events again in a `sum` (seen in the concurrency test: 42 events in the target for
25 in the input). So each invocation that is given a manifest starts from its nodes as the parse left them."""

from __future__ import annotations

import functools


def forget_compilation(manifest) -> None:
    """Every node of `manifest` as parsed, before any invocation compiled it. A seed is not a CompiledNode: its
    `extra_ctes_injected` is a read-only property (setting it stopped `lakeplan explain` of a project with a seed)."""
    from dbt.contracts.graph.nodes import CompiledNode

    for node in manifest.nodes.values():
        if isinstance(node, CompiledNode):
            node.compiled, node.compiled_code, node.compiled_path = False, None, None
            node.extra_ctes_injected, node.extra_ctes, node._pre_injected_sql = False, [], None


def _compiling_afresh(setup_manifest):
    @functools.wraps(setup_manifest)
    def setup_reused_manifest(ctx, *args, **kwargs):
        if ctx.obj.get("manifest") is not None:
            forget_compilation(ctx.obj["manifest"])
        return setup_manifest(ctx, *args, **kwargs)

    setup_reused_manifest.lakeplan = True
    return setup_reused_manifest


def install() -> None:
    """Wraps dbt's manifest set-up once per process: where the commands' decorator and `dbt show` call it."""
    from dbt.cli import main, requires

    for module in (requires, main):
        if not getattr(module.setup_manifest, "lakeplan", False):
            module.setup_manifest = _compiling_afresh(module.setup_manifest)
