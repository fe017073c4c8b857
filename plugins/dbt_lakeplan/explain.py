"""`lakeplan explain`: what a project's models would do on Spark, as pure functions over plain data.

explain_dbt.py gathers the data (dbt's compile, the live session's answers, Spark's EXPLAIN); this module reads it:

    compiled statements --> which to plan, which to run (a temp view), which never to send (they write)
    Spark's plan text   --> its Exchanges, each with its cause (join, aggregate, REPARTITION hint, write's distribution)
    a node's lakeplan plan, its sources' plans, the state verdict --> one model's report (docs/explain.md: the schema)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from dbt_lakeplan.statement_options import HEADER

SCHEMA_VERSION = 2  # 2: change.reads keyed by the input's name (not its relation), names, sources[].name
# dbt's query comment and comment lines in front of a statement
LEADING_COMMENTS = re.compile(r"\A(?:\s*/\*.*?\*/|\s*--[^\n]*(?:\n|\Z))*\s*", re.DOTALL)
PLANNED = re.compile(r"(merge\s+into|insert\s|create\s+(or\s+replace\s+)?table\s|replace\s+table\s|select\b|with\b|\()",
                     re.IGNORECASE)  # fmt: skip
TEMP_VIEW = re.compile(r"create\s+(or\s+replace\s+)?temporary\s+view\s", re.IGNORECASE)
BRANCH = re.compile(r"(merge\s+into\s+\S+?)\.`?branch_lakeplan_write_\w+`?(\s)", re.IGNORECASE)
# a partial-update target's write where its members find nothing new (macros/materializations/partial_update/plan.sql),
# after the comment lines of its compiled write
NOTHING_NEW = re.compile(r"^-- .*: nothing new to write\s*^select 0 as lakeplan_rows\s*\Z", re.MULTILINE)
NOTHING_SENT = ("nothing is sent: no input its members read with new_rows or changed_keys gained rows since the "
                "table's last write, so `dbt run` writes nothing")  # fmt: skip
EXCHANGE = re.compile(r"^(Exchange|BroadcastExchange) (\w+)\((.*?)\)(?:, (\w+))?")
HINT_ORIGINS = ("REPARTITION_BY_NUM", "REPARTITION_BY_COL", "REBALANCE_PARTITIONS_BY_NONE", "REBALANCE_PARTITIONS_BY_COL")
WRITES = ("ReplaceData", "WriteDelta", "AppendData", "OverwriteByExpression", "OverwritePartitionsDynamic",
          "AtomicCreateTableAsSelect", "AtomicReplaceTableAsSelect", "CreateTableAsSelect", "ReplaceTableAsSelect")  # fmt: skip
# nodes that keep their child's partitioning: an Exchange's cause is the first node above it that is not one of these
PASS_THROUGH = ("Sort", "Project", "Filter", "WholeStageCodegen", "InputAdapter", "AQEShuffleRead", "ColumnarToRow",
                "ShuffleQueryStage", "CollectLimit", "Coalesce", "SerializeFromObject", "MergeRowsExec", "MergeRows")  # fmt: skip
# what the next run does with a stateful model's table, by lakeplan's state verdict (macros/fingerprints/state.sql)
NEXT_RUN = {"none": "run", "evolve": "run", "accept": "accept", "refuse": "refuse", "rebuild": "rebuild", "ignore": "run"}


@dataclass(frozen=True)
class Statement:
    """One statement `dbt run` would send: `action` plan (EXPLAIN it), run (a temp view, harmless) or skip."""

    sql: str
    action: str
    options: dict[str, Any]
    reason: str | None = None


def split_statements(script: str) -> list[str]:
    """A compiled write's statements (lakeplan joins them with `;` and a blank line)."""
    return [part.strip() for part in re.split(r";\s*\n\s*\n", script) if part.strip() and _body(part)]


def _body(sql: str) -> str:
    return LEADING_COMMENTS.sub("", sql, count=1)


def statement(sql: str) -> Statement:
    """What explain may do with one statement: Spark plans what reads or writes rows, never sends what alters."""
    if NOTHING_NEW.search(sql):
        return Statement(sql, "skip", {}, NOTHING_SENT)
    header = HEADER.match(sql)
    options = json.loads(header.group(1)) if header else {}
    body = _body(sql)
    if TEMP_VIEW.match(body):
        return Statement(body, "run", options)
    if PLANNED.match(body):
        # the run writes a group into a branch it creates first: planned against the table the branch copies
        return Statement(BRANCH.sub(r"\1\2", body), "plan", options)
    return Statement(body, "skip", options, "it would change a table (" + " ".join(body.split()[:3]).lower() + " ...)")


@dataclass(frozen=True)
class PlanNode:
    depth: int
    name: str
    text: str
    parent: int | None


def plan_tree(plan: str) -> list[PlanNode]:
    """The physical plan's nodes in print order, each with its parent's index."""
    lines = plan.split("== Physical Plan ==", 1)[-1].strip("\n").splitlines()
    nodes: list[PlanNode] = []
    for line in lines:
        text = line.lstrip(" :+-")
        if not text or text.startswith("=="):
            continue
        depth = len(line) - len(text)
        parent = next((i for i in range(len(nodes) - 1, -1, -1) if nodes[i].depth < depth), None)
        name = re.sub(r"^\*\(\d+\)\s*", "", text).split(" ", 1)[0]
        nodes.append(PlanNode(depth, name, text, parent))
    return nodes


def _ancestors(nodes: list[PlanNode], index: int):
    parent = nodes[index].parent
    while parent is not None:
        yield nodes[parent]
        parent = nodes[parent].parent


def _kind(name: str) -> str | None:
    if "Join" in name or name == "CartesianProduct":
        return "join"
    if "Aggregate" in name:
        return "aggregate"
    if name.startswith("Window"):
        return "window"
    if name in WRITES:
        return "write distribution"
    return None


def exchanges(plan: str, sink_parallelism: int | None = None) -> list[dict[str, Any]]:
    """Every Exchange of a physical plan with its partitioning and cause: the operator above it that needs its
    rows together (join, aggregate, window, the write's distribution), or a REPARTITION hint; the model's own
    `parallelism` hint over the whole query, and a rebalance right under a write, are its write's distribution."""
    nodes = plan_tree(plan)
    found = []
    for index, node in enumerate(nodes):
        match = EXCHANGE.match(re.sub(r"^\*\(\d+\)\s*", "", node.text))
        if not match:
            continue
        operator, partitioning, arguments, origin = match.groups()
        above = list(_ancestors(nodes, index))
        consumer = next((n for n in above if n.name not in PASS_THROUGH and not n.name.startswith("AdaptiveSparkPlan")), None)
        if operator == "BroadcastExchange":
            cause = "broadcast join"
        elif origin in HINT_ORIGINS:
            last = not any(_kind(n.name) in ("join", "aggregate", "window") or n.name.endswith("Exchange") for n in above)
            # a rebalance right under a write is the table's own write distribution (Iceberg's, under a MERGE)
            table_distribution = origin.startswith("REBALANCE") and consumer is not None and consumer.name in WRITES
            cause = "write distribution" if last and (sink_parallelism is not None or table_distribution) else "REPARTITION hint"
        else:
            cause = (_kind(consumer.name) if consumer else None) or f"other ({consumer.name if consumer else 'the result'})"
        found.append({"partitioning": partitioning, "arguments": arguments, "cause": cause,
                      "shuffle": operator == "Exchange"})  # fmt: skip
    return found


def moved_tables(plan: str, tables: list[str]) -> list[str]:
    """Which of `tables` (schema.identifier) the plan shuffles: a shuffle Exchange above one of its scans."""
    nodes = plan_tree(plan)
    moved = []
    for table in tables:
        scans = [i for i, n in enumerate(nodes) if "Scan" in n.name and re.search(rf"\b{re.escape(table)}\b", n.text)]
        if any(any(a.name == "Exchange" for a in _ancestors(nodes, i)) for i in scans):
            moved.append(table)
    return moved


def source_report(unique_id: str, name: str, plan: dict[str, Any] | None) -> dict[str, Any]:
    """A source a model reads (`name`: as the user writes it, `shop.orders`): its declared scan_parallelism,
    distribution and partition count."""
    plan = plan or {}
    keyed, parallelism = plan.get("keyed"), plan.get("parallelism")
    if keyed:
        distribution, partitions = f"pre-keyed on {', '.join(keyed['keys'])}", keyed["key_groups"]
    elif parallelism is None:
        distribution, partitions = "none", None
    elif plan.get("datagen"):
        distribution, partitions = "generated", parallelism
    elif plan.get("changelog_mode", "insert_only") != "insert_only":
        distribution, partitions = f"hashed on {', '.join(plan.get('primary_key') or [])}", parallelism
    else:
        distribution, partitions = "round-robin", parallelism
    return {"unique_id": unique_id, "name": name, "scan_parallelism": parallelism,
            "changelog_mode": plan.get("changelog_mode"),
            "distribution": distribution, "partitions": partitions}  # fmt: skip


def keyed_report(inputs: list[dict[str, Any]], shuffles: int | None, error: str | None = None) -> dict[str, Any] | None:
    """Keyed work: whether the layouts let the model skip a shuffle, or why not (a layout that is not the declared
    one, different key_groups, or shuffles Spark adds anyway)."""
    if error and ("declares pre_keyed_by" in error or "declares keyed_by" in error):  # the layout check refused it
        return {"avoided_shuffle": False, "reason": error}
    if not inputs:
        return None
    reasons = []
    for one in inputs:
        layout = one.get("layout")
        declared = [key.lower() for key in one["keys"]]
        if layout is None:
            reasons.append(f"`{one['unique_id']}` has no table yet")
        elif [c.lower() for c in layout.get("bucketed_by") or []] != declared or layout.get("buckets") != one["key_groups"]:
            reasons.append(f"`{one['unique_id']}` declares {one['keys']} into {one['key_groups']} key groups, but its "
                           f"table is {layout.get('text')}")  # fmt: skip
    groups = sorted({one["key_groups"] for one in inputs})
    if len(groups) > 1:
        reasons.append(f"its keyed inputs have different key_groups ({', '.join(map(str, groups))}): Spark 3.5 joins "
                       "them bucket by bucket only when equal")  # fmt: skip
    if not reasons and shuffles:
        reasons.append(f"the layouts fit, but Spark still shuffles {shuffles} time(s): work not on the key")
    return {"avoided_shuffle": not reasons, "reason": "; ".join(reasons) or "every keyed input's layout fits: no shuffle"}


def digest_parts(digest: str) -> dict[str, str]:
    """A write group's digest (`label=value, ...`, digest.py) as its labelled parts."""
    return dict(part.split("=", 1) for part in digest.split(", "))


def write_groups(groups: list[dict[str, Any]], write_sql: list[str]) -> list[dict[str, Any]]:
    """A partial-update target's write groups: members, collapse strategy per column group (the `/* collapse ... */`
    comments of the group's write, in group order) and the digest parts that split each group from the others."""
    parts = [digest_parts(group["digest"]) for group in groups]
    report = []
    for index, group in enumerate(groups):
        split = {}
        for other_index, other in enumerate(parts):
            if other_index != index:
                labels = sorted(k for k in parts[index].keys() | other.keys() if parts[index].get(k) != other.get(k))
                split[groups[other_index]["members"][0]["name"]] = labels
        sql = write_sql[index] if index < len(write_sql) else ""
        report.append({
            "digest_id": group["digest_id"], "digest": group["digest"],
            "members": [member["name"] for member in group["members"]],
            "collapse": [" ".join(c.split()) for c in re.findall(r"/\* collapse (.*?) \*/", sql, re.DOTALL)],
            "split_from": split,
        })  # fmt: skip
    return report


NEW_ROWS = re.compile(r"/\* lakeplan new_rows: (\S+) at (\S+) after (\S+) \*/")  # macros/incremental_reads/new_rows.sql
# the same, where new_rows or changed_keys reads the input whole: the input, and why
READS_ALL = re.compile(r"/\* lakeplan (?:new_rows|changed_keys) reads all of (\S+) \(\w+\): (.*?) \*/")


def change_report(plan: dict[str, Any], sql: str, names: dict[str, str] | None = None,
                  delta: dict[str, int] | None = None) -> dict[str, Any] | None:
    """How an `upsert`'s or a target's MERGE lands (its change_mode; `auto` decides at each write; `delta`: the
    delta rows and runs its table holds now) and, per input read with new_rows / changed_keys, what this run would
    read of it (the comment those macros put in the SQL), under the input's name (`names`: `schema.table` -> the
    user's name, as relation_key gives it)."""
    change = plan.get("change_mode")
    if change is None:
        return None
    reads, whole = {}, dict(READS_ALL.findall(sql))
    for relation, current, consumed in NEW_ROWS.findall(sql):
        name = (names or {}).get(relation_key(relation), relation)
        reads[name] = ("everything: no write consumed it yet" if consumed == "None"
                       else f"everything: {whole[relation]}" if relation in whole
                       else "nothing new" if current in (consumed, "None")
                       else f"what is new: snapshots after {consumed} up to {current}")  # fmt: skip
    lands = change["mode"]
    if lands == "auto":
        lands += f" (merge-on-read when the inputs hold at most {change['share']:g} of the table's rows)"
    elif lands == "delta" and delta is not None:
        rows, runs = (f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((delta["rows"], "delta row"),
                                                                           (delta["runs"], "run")))
        lands += f" (appends the change: {rows} from {runs}, folded into the stored rows at {change['delta_runs']} runs)"
        if delta.get("keyed") is False:
            declared = buckets_by(delta.get("partition_by"), plan.get("key") or [])
            fix = (f"one --full-refresh puts its declared `partition_by: {declared}` in effect" if declared
                   else "`partition_by: ['bucket(N, <key>)']`, then one --full-refresh")
            lands += (f"; its table is not bucketed by its key ({delta['layout']}), so each read of the merged rows "
                      "shuffles the whole table by the key to join it with its delta rows. "
                      f"Fix: {fix} (docs/delta-mode.md)")
    return {"change_mode": change["mode"], "lands": lands, "reads": reads,
            "maintenance": plan.get("maintenance")}  # fmt: skip


def buckets_by(partition_by: str | list[str] | None, key: list[str]) -> list[str] | None:
    """A model's `partition_by` where it buckets by every column of `key` (a config its table does not have until
    a --full-refresh builds it); None where it does not."""
    fields = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    bucketed = {found.group(1).strip("`").lower() for found in map(BUCKET.fullmatch, fields) if found}
    return fields if key and bucketed >= {column.lower() for column in key} else None


BUCKET = re.compile(r"\s*bucket\(\s*\d+\s*,\s*(`?\w+`?)\s*\)\s*", re.IGNORECASE)


def relation_key(relation: str) -> str:
    """`schema.table` as a relation renders it, or as the manifest names it: one spelling, to look names up by."""
    return relation.replace("`", "").lower()


def after_upstream_writes(models: list[dict[str, Any]]) -> None:
    """`dbt run` of the selection writes a model before the models that read it: a model reads what a selected
    model it reads writes first (any with a table, unless that finds nothing new or is refused), so such an input
    read with new_rows is not `nothing new`. One that would find nothing new then runs (`after` names those models)
    and its write, compiled now over nothing new, is not what it will send."""
    writes = {m["unique_id"]: m["name"] for m in models if m.get("relation") and not m.get("member_of")
              and (m.get("state") or {}).get("next_run") not in ("nothing new", "refuse")}  # fmt: skip
    for model in models:
        first = sorted(writes[uid] for uid in model.get("inputs", []) if uid in writes)
        reads = (model.get("change") or {}).get("reads", {})
        for name in first:
            if reads.get(name) == "nothing new":
                reads[name] = f"what {name} writes first in this run (nothing new before)"
            elif reads.get(name, "everything").startswith("what is new"):
                reads[name] += f", and what {name} writes first in this run"
        state = model.get("state")
        if state and state["next_run"] == "nothing new" and first:
            state.update(next_run="run", after=first)
            for one in model.get("statements", []):
                if one["reason"] == NOTHING_SENT:
                    one["reason"] = (f"not planned: nothing is new yet; `dbt run` writes {', '.join(first)} first and "
                                     "then sends this model's write of what they wrote, which explain can plan once "
                                     "they have written")  # fmt: skip


def state_report(verdict: dict[str, Any] | None, current: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stateful model's fingerprint against the one its table records, and what the next run does about it."""
    if verdict is None or current is None:
        return None
    action = verdict.get("action", "none")
    stored = verdict.get("stored")
    next_run = "create" if stored is None and action == "none" and not verdict.get("exists") else NEXT_RUN[action]
    if next_run == "run" and verdict.get("nothing_new"):  # every input it reads with new_rows gained nothing
        next_run = "nothing new"
    return {"fingerprint": current.get("fingerprint"), "stored": stored, "verdict": action, "next_run": next_run,
            "changed": list(verdict.get("changes") or []), "message": verdict.get("message")}  # fmt: skip
