"""`dbt compile` of a partial-update target shows the write `dbt run` would send: one statement per write group.

A target's own SQL only counts its members' rows: its write is built from the members' real columns, and dbt
renders a model's SQL before it compiles the ephemeral models it reads into it as CTEs, so the members' SQL
is not there yet. The compile command's runner (not `run`, which builds the write itself, nor `show`, which
runs a query) renders the write once the members are compiled in, as dbt's `show` renders its query: one
macro, `lakeplan_partial_update_compiled`, in the node's context. dbt prints it and writes it to
target/compiled/. While a member cannot be read yet (a table it reads is not built), the target's own SQL stays,
under a comment that says why; any other error (lakeplan's checks of the members, a refused setting) fails the
compile as it would fail the run.
"""

from __future__ import annotations

from dbt_lakeplan.materializations import is_target
from dbt_lakeplan.spark_adapter import NOT_BUILT

MACRO = "lakeplan_partial_update_compiled"


def _with_compiled_write(execute):
    def compiled_write_execute(self, compiled_node, manifest):
        from dbt.context.providers import generate_runtime_model_context
        from dbt.flags import get_flags
        from dbt_common.exceptions import CompilationError, DbtRuntimeError

        if is_target(compiled_node.config.materialized) and get_flags().INTROSPECT:
            context = generate_runtime_model_context(compiled_node, self.config, manifest)
            try:  # not through adapter.execute_macro: dbt-spark's handler there turns every error into a runtime one
                sql = context["lakeplan"][MACRO]()
            except DbtRuntimeError as error:
                if isinstance(error, CompilationError) or not NOT_BUILT.search(str(error.msg)):
                    raise
                sql = "-- lakeplan shows the write once every member can be read: {}\n{}".format(
                    " ".join(str(error.msg).split()), compiled_node.compiled_code)
            compiled_node.compiled_code = sql
            if compiled_node.compiled_path:
                compiled_node.write_node(self.config.project_root, compiled_node.compiled_path, sql)
        return execute(self, compiled_node, manifest)

    compiled_write_execute.lakeplan = True
    return compiled_write_execute


def install() -> None:
    """Wraps the compile command's runner, once per process."""
    from dbt.task.compile import CompileRunner

    if not getattr(CompileRunner.execute, "lakeplan", False):
        CompileRunner.execute = _with_compiled_write(CompileRunner.execute)
