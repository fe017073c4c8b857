"""`lakeplan explain`'s glue: dbt in this process (parse, then compile of the selection), lakeplan's macro
`lakeplan_explain_node` in each compiled model's context (the statements to plan, the state verdict, keyed inputs'
real layouts, all read-only), and Spark's EXPLAIN in the session dbt-spark's session method started. Nothing is
written: a statement that would write is planned (EXPLAIN), one that would alter a table is never sent, and the
only statements run are the temporary views `dbt run` stages changes in. explain.py reads what this gathers.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from dbt_lakeplan import explain, jvm_stopped
from dbt_lakeplan.explain_state import compare_manifests, load_manifest, manifest_nodes
from dbt_lakeplan.manifest_fingerprints import CONFIG_KEY
from dbt_lakeplan.materializations import is_inlined, is_stateful
from dbt_lakeplan.node_plan import PLAN_KEY
from dbt_lakeplan.spark_adapter import WRITE_GROUP, condensed, jvm_gone

MACRO = "lakeplan_explain_node"


class ExplainError(Exception):
    """Nothing can be explained (the project does not parse): one sentence for the user."""


def target_dir() -> Path | None:
    """Where dbt wrote this explain's artifacts, as dbt resolved it (the flag, DBT_TARGET_PATH, dbt_project.yml's
    rendered target-path, target/), so explain's files go beside them; None when dbt could not load the project."""
    from dbt_lakeplan import plugin

    return Path(plugin.loaded_target_path) if plugin.loaded_target_path else None


@dataclass
class Options:
    select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    target: str | None = None
    vars: str | None = None
    project_dir: str | None = None
    target_path: str | None = None
    state: str | None = None
    progress: bool = True


def dbt_args(options: Options) -> list[str]:
    args = ["--log-level", "none"]
    for flag, value in (("--target", options.target), ("--vars", options.vars), ("--project-dir", options.project_dir),
                        ("--target-path", options.target_path)):
        if value:
            args += [flag, value]
    return args


@contextlib.contextmanager
def _collecting(live: dict[str, Any]) -> Iterator[None]:
    """While explain compiles: after each model compiles, `lakeplan_explain_node` in its context; its answer (or
    the error it raised, as a sentence) is kept by unique_id. The compile command's runner is restored after."""
    from dbt.context.providers import generate_runtime_model_context
    from dbt.task.compile import CompileRunner

    execute = CompileRunner.execute

    # wraps: keeps the compiled write's mark, so the plugin's install() at this compile's start does not wrap the
    # runner a second time (which built every partial-update target's write twice)
    @functools.wraps(execute)
    def explained_execute(self, compiled_node, manifest):
        result = execute(self, compiled_node, manifest)
        if compiled_node.resource_type == "model":
            try:
                context = generate_runtime_model_context(compiled_node, self.config, manifest)
                live[compiled_node.unique_id] = _plain(context["lakeplan"][MACRO]())
            except Exception as error:  # any failure of one model is that model's line in the report
                live[compiled_node.unique_id] = {"error": condensed(str(getattr(error, "msg", error)))}
        return result

    CompileRunner.execute = explained_execute
    try:
        yield
    finally:
        CompileRunner.execute = execute


def _plain(value: Any) -> Any:
    """Jinja's answer as plain data (relations become their names)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _compile(options: Options, manifest, live: dict[str, Any]) -> dict[str, Any]:
    """Compiles the selection. dbt's compile stops at the first model that fails; that model is kept with its
    error and the rest compiled again without it, so one model that does not compile never hides the others.
    unique_id -> (node, error or None)."""
    from dbt.cli.main import dbtRunner

    failed: dict[str, Any] = {}
    while True:
        excluded = [*options.exclude, *(manifest.nodes[uid].name for uid in failed)]
        selection = [*(["--select", *options.select] if options.select else []),
                     *(["--exclude", *excluded] if excluded else [])]  # fmt: skip
        with _collecting(live):
            result = dbtRunner(manifest=manifest).invoke(["compile", *selection, *dbt_args(options)])
        if result.result is not None:
            break
        uid = _failed_model(result.exception, manifest)
        if uid is None or uid in failed:
            raise ExplainError(_sentence(result.exception))
        for one in [uid, *_inlined_into(uid, manifest)]:  # an inlined model fails the models that inline it
            failed[one] = (manifest.nodes[one], _sentence(result.exception))
    if failed:
        # dbt leaves the thread pool of a compile it aborted to the garbage collector: collected at exit, when its
        # pipe is closed, it prints a traceback (OSError: Bad file descriptor); now it closes quietly
        gc.collect()
    compiled = dict(failed)
    for one in result.result.results:
        if one.node.resource_type == "model":
            compiled[one.node.unique_id] = (one.node, None if str(one.status) == "success" else _sentence(one.message))
    return compiled


def _inlined_into(uid: str, manifest) -> list[str]:
    """The models whose SQL carries `uid`'s, where it is inlined (an ephemeral model, a member): its consumers, and
    theirs where they are inlined too."""
    if not is_inlined(manifest.nodes[uid].config.materialized):
        return []
    consumers = [other for other, node in manifest.nodes.items() if uid in getattr(node.depends_on, "nodes", [])
                 and node.resource_type == "model"]  # fmt: skip
    return [c for consumer in consumers for c in [consumer, *_inlined_into(consumer, manifest)]]


def _failed_model(error: Any, manifest) -> str | None:
    """The model an aborted compile names last (`in model x (path)`, `called by model x (path)`)."""
    names = re.findall(r"\b(?:in|by) model (\w+) \(", str(getattr(error, "msg", error)))
    models = {n.name: uid for uid, n in manifest.nodes.items() if n.resource_type == "model"}
    return models.get(names[-1]) if names else None


def _sentence(error: Any) -> str:
    text = condensed(str(getattr(error, "msg", error) or "unknown error"))
    text = re.sub(r"^(Compilation|Runtime|Database) Error in model \S+ \([^)]*\)\s*", "", text)
    text = re.sub(r"\s*> in macro .*", "", text, flags=re.DOTALL)  # where in the macros: the sentence says what
    return " ".join(text.split())


def _spark() -> tuple[Any, str | None]:
    """The SparkSession dbt-spark's session method started in this process, or why there is none."""
    try:
        from pyspark.sql import SparkSession

        return SparkSession.builder.getOrCreate(), None
    except Exception as error:  # no Java, a JVM that cannot start: every plan is missing, the rest is reported
        return None, (f"Spark could not start in this process ({_sentence(error)[:200]}), so no physical plan is shown. "
                      "Fix: run lakeplan explain in the activated venv (`source .venv/bin/activate`) with Java 17 "
                      "on the PATH, as dbt runs.")  # fmt: skip


@contextlib.contextmanager
def _session_options(spark, options: dict[str, Any]) -> Iterator[None]:
    """The statement's own Spark settings while it is planned, the session's values back after."""
    saved = {key: spark.conf.get(key, None) for key in options}
    try:
        for key, value in options.items():
            spark.conf.set(key, str(value).lower() if isinstance(value, bool) else str(value))
        yield
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def _plan_statements(spark, statements: list[str], sink_parallelism: int | None,
                     model: str = "") -> list[dict[str, Any]]:
    """Each statement's plan or Spark's sentence for it; a JVM that stopped stops the explain (jvm_stopped.py): every
    later statement would fail the same way."""
    planned = []
    for sql in statements:
        one = explain.statement(sql)
        entry: dict[str, Any] = {"action": one.action, "sql": sql, "reason": one.reason}
        group = re.search(r"-- write group (\d+) of", sql)
        entry["write_group"] = int(group.group(1)) if group else None
        if one.action != "skip":
            try:
                with _session_options(spark, one.options):
                    if one.action == "run":
                        spark.sql(one.sql)
                    else:
                        plan = spark.sql("EXPLAIN " + one.sql).collect()[0][0]
                        if refused := REFUSED_PLAN.match(plan):  # EXPLAIN answers Spark's refusal as its plan
                            raise ValueError(refused[1])
                        entry["plan"] = plan
                        entry["exchanges"] = explain.exchanges(entry["plan"], sink_parallelism)
            except Exception as error:  # Spark's sentence for this statement; the others are still planned
                if jvm_stopped.stopped(error) or jvm_gone():
                    raise ExplainError(jvm_stopped.explain_sentence(model)) from error
                entry["error"] = _sentence(error)
        planned.append(entry)
    return planned


REFUSED_PLAN = re.compile(r"== Physical Plan ==\s*org\.apache\.spark\.sql\.\w*Exception: (.*)", re.DOTALL)
NOT_FOUND = re.compile(r"\[TABLE_OR_VIEW_NOT_FOUND\] The table or view `([^`]+)`\.`([^`]+)` cannot be found")


def _unbuilt_input(error: str | None, node, manifest) -> str | None:
    """The sentence for Spark's `error` where it is an input dbt builds that is not built yet, else None. Explain
    plans against the tables that exist, so before the first run a model's input may be missing, and Spark's sentence
    names neither the model nor the fix (a newcomer's explain before `make run`)."""
    found = NOT_FOUND.search(error or "")
    table = f"{found[1]}.{found[2]}".lower() if found else None
    built_by_dbt = [uid for uid in node.depends_on.nodes if uid in manifest.nodes and table
                    and (_table(uid, manifest) or "").lower() == table]  # fmt: skip
    if not built_by_dbt:
        return None
    return (f"it reads `{input_name(built_by_dbt[0], manifest)}` ({table}), which is not built yet, and explain plans "
            f"against the tables that exist. Fix: build it first (`dbt build --select +{node.name}`), then run "
            "explain again.")


def _before_delta_layout(error: str | None, node, live: dict[str, Any]) -> str | None:
    """The sentence for Spark's `error` where it names lakeplan's delta columns in a target switched to change_mode
    delta whose table is not laid out for it yet (its next run adds them first), else None."""
    delta = live.get("delta")
    if not error or delta is None or "layout" in delta or "lakeplan_" not in error:
        return None
    return (f"`{node.name}` is in change_mode delta, but its table is not laid out for it yet: its next run adds "
            "lakeplan's columns and views, then appends its change, and explain plans against the table as it is. "
            f"Fix: run it once (`dbt run -s {node.name}`), then run explain again to see its delta write.")


def _table(uid: str, manifest) -> str | None:
    if uid in manifest.sources:
        source = manifest.sources[uid]
        return f"{source.schema}.{source.identifier}"
    node = manifest.nodes.get(uid)
    return f"{node.schema}.{node.alias}" if node is not None and not is_inlined(node.config.materialized) else None


def input_name(uid: str, manifest) -> str:
    """The name the user writes for a node: `shop.orders` for source('shop', 'orders'), a model's or seed's name."""
    if uid in manifest.sources:
        return f"{manifest.sources[uid].source_name}.{manifest.sources[uid].name}"
    node = manifest.nodes.get(uid)
    return node.name if node is not None else uid.rsplit(".", 1)[-1]


def model_report(node, error: str | None, live: dict[str, Any], manifest, spark) -> dict[str, Any]:
    """One model's entry of the report (docs/explain.md)."""
    plan = node.config.get(PLAN_KEY) or {}
    member_of = (plan.get("member_of") or {}).get("target")
    error = error or live.get("error")
    error = _unbuilt_input(error, node, manifest) or error
    inputs = plan.get("reads", [])  # through the models it inlines
    entry: dict[str, Any] = {
        "unique_id": node.unique_id, "name": node.name, "relation": node.relation_name,
        "materialized": "partial_update_member" if member_of else node.config.materialized, "member_of": member_of,
        "depends_on": sorted(node.depends_on.nodes), "inputs": inputs, "error": error,
        "sources": [explain.source_report(uid, input_name(uid, manifest), source.config.get(PLAN_KEY))
                    for uid in inputs if (source := manifest.sources.get(uid))],
        "statements": [], "exchanges": [], "shuffles": None, "moved_inputs": [], "write_groups": None, "state": None,
        "change": None,
    }  # fmt: skip
    if error is None and spark is not None and not member_of:
        statements = live.get("statements") or explain.split_statements(node.compiled_code or "")
        entry["statements"] = _plan_statements(spark, statements, plan.get("distribution", {}).get("parallelism"),
                                               node.name)
        entry["exchanges"] = [x for s in entry["statements"] for x in s.get("exchanges", [])]
        planned = any("plan" in s for s in entry["statements"])  # none: nothing sent, or Spark refused each
        entry["shuffles"] = sum(1 for x in entry["exchanges"] if x["shuffle"]) if planned else None
        tables = {uid: _table(uid, manifest) for uid in inputs}
        plans = "\n".join(s.get("plan", "") for s in entry["statements"])
        moved = explain.moved_tables(plans, [t for t in tables.values() if t])
        entry["moved_inputs"] = sorted(uid for uid, table in tables.items() if table in moved)
        # an input not built yet, as Spark refused a statement: said once for the model, with its fix; a table its
        # next run lays out for delta mode is no error, the statement says why it has no plan
        unbuilt = [_unbuilt_input(s.get("error"), node, manifest) for s in entry["statements"]]
        for statement, sentence in zip(entry["statements"], unbuilt):
            sentence = sentence or _before_delta_layout(statement.get("error"), node, live)
            if sentence:
                statement["error"] = sentence
        entry["error"] = next(filter(None, unbuilt), None)
    entry["keyed"] = explain.keyed_report(live.get("keyed_inputs") or [], entry["shuffles"], error)
    if "partial_update" in plan:
        writes = {s["write_group"] - 1: s["sql"] for s in entry["statements"] if s.get("write_group")}
        entry["write_groups"] = explain.write_groups(plan["partial_update"]["groups"], writes)
    if not member_of:
        # new_rows' comments are in the SQL the model and its members compiled to (the write wraps members' SQL)
        compiled = [node.compiled_code or "", *(cte.sql or "" for cte in node.extra_ctes or [])]
        names = {explain.relation_key(table): input_name(uid, manifest)
                 for uid in inputs if (table := _table(uid, manifest))}  # fmt: skip
        entry["change"] = explain.change_report(plan, "\n".join(compiled), names, live.get("delta"))
    if is_stateful(node.config.materialized):
        entry["state"] = explain.state_report(live.get("state"), node.config.get(CONFIG_KEY))
    return entry


def explain_project(options: Options) -> dict[str, Any]:
    """The whole report: every selected model, the DAG's edges, errors, and with --state what a change rebuilds."""
    from dbt.cli.main import dbtRunner

    from dbt_lakeplan import plugin

    plugin.loaded_target_path = None  # an earlier project's, in this process
    parsed = dbtRunner().invoke(["parse", *dbt_args(options)])
    if not parsed.success:
        raise ExplainError(_sentence(parsed.exception or "dbt could not parse the project"))
    # after the parse, so that a wrong folder's error also removes the earlier answer where dbt put it
    previous = load_manifest(options.state) if options.state else None
    manifest, live = parsed.result, {}
    compiled = _compile(options, manifest, live)
    spark, no_spark = _spark() if any(error is None for _, error in compiled.values()) else (None, None)
    models = []
    progress = _progress(sorted(compiled), options.progress)
    for uid in progress:
        progress.set_postfix_str(manifest.nodes[uid].name)
        node, error = compiled[uid]
        models.append(model_report(node, error, live.get(uid, {}), manifest, spark))
    explain.after_upstream_writes(models)
    named = {uid for model in models for uid in [model["unique_id"], *model["inputs"]]}
    report = {"version": explain.SCHEMA_VERSION, "errors": [no_spark] if no_spark else [], "models": models,
              "names": {uid: input_name(uid, manifest) for uid in sorted(named)}}  # fmt: skip
    if previous is not None:
        report["state_comparison"] = compare_manifests(previous, manifest_nodes(manifest), set(compiled))
    return report


def _progress(items: list[str], show: bool):
    from tqdm import tqdm  # sqlfluff's dependency, already in the venv (docs/explain.md)

    return tqdm(items, desc="planning", unit="model", disable=not show, leave=False)
