"""Model fingerprints (Flink FLIP-411, StreamGraphHasherV3), as pure functions over plain data.

A node's fingerprint says whether the state it built (an incremental table) still fits its logic:

    v3 = hash(node-local logic, fingerprints of its inputs in a stable order)
    v2 = v3's parts + the nodes it is "chained" into: for an ephemeral model, the models that inline it

So turning an upstream model from ephemeral into a view changes v2 fingerprints downstream, never v3;
tuning knobs (parallelism, key groups, hints, materialization) are not node-local logic at all.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from dbt_lakeplan.spark_types import promoted_from, spellings, stored_alike, stored_type

VERSIONS = ("v2", "v3")


@dataclass(frozen=True)
class NodeLogic:
    unique_id: str
    logic: str  # a digest of the node-local logic
    inputs: tuple[str, ...] = ()
    inlined_into: tuple[str, ...] = field(default=())  # consumers that inline it (ephemeral only)


def digest(value: Any) -> str:
    """A stable digest of plain data (JSON with sorted keys)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def short(value: str) -> str:
    """A digest cut to what a table property needs to tell logic apart (kept small: one per ancestor)."""
    return value[:12]


def ancestors(nodes: dict[str, NodeLogic], unique_id: str) -> list[str]:
    """Every node upstream of one (its inputs, their inputs, ...), sorted; a cycle ends the walk."""
    seen: set[str] = set()
    stack = list(nodes[unique_id].inputs)
    while stack:
        upstream = stack.pop()
        if upstream not in seen and upstream != unique_id and upstream in nodes:
            seen.add(upstream)
            stack.extend(nodes[upstream].inputs)
    return sorted(seen)


def target_parts(settings: Any, columns: dict[str, Any], members: dict[str, str]) -> dict[str, str]:
    """A partial-update target's state in parts checked one by one (Flink keeps state per operator ID): its
    settings, each column (the type the table stores it as, merge rule, sequence group) and each member's
    fingerprint. A new part (a member, a column) fits the stored table; a removed or changed one does not, and is
    named. A column's type counts as stored: `integer` for `int`, a varchar's length or a tinyint for an int store
    the same values, so they change nothing."""
    parts = {"settings": short(digest(settings))}
    parts.update({f"column:{name}": short(digest(_stored_column(column))) for name, column in columns.items()})
    parts.update({f"member:{uid}": short(fingerprint) for uid, fingerprint in members.items()})
    return parts


def _stored_column(column: list) -> list:
    label, data_type, *settings = column
    return [label, stored_type(data_type) if data_type else data_type, *settings]


def earlier_parts(column: list) -> dict[str, str]:
    """A column part of `target_parts` (a column: [name, data_type, settings...]) as it was when the column was
    declared with a type Iceberg stores alike or widens in place into today's -> that type, in every spelling (a
    table recorded before its part counted the stored type holds the type as its YAML spelled it). The state check
    takes such a change for the same logic (the values mean what they meant), and the write widens the stored
    column. Asked only for a part that differs (adapter.lakeplan_earlier_parts): the spellings run to dozens of
    digests a column, too many to compute and carry in the manifest for every column of every target."""
    label, data_type, *settings = column
    stored = stored_type(data_type or "")
    earlier = {short(digest([label, spelling, *settings])): narrower
               for narrower in {*stored_alike(stored), *(alike for promoted in promoted_from(stored)
                                                         for alike in stored_alike(promoted))}
               for spelling in spellings(narrower)}  # fmt: skip
    earlier.pop(short(digest(_stored_column(column))), None)  # today's own part
    if data_type and stored != data_type:
        earlier[short(digest(column))] = data_type  # the same declaration, recorded as spelled
    return earlier


def rerun_logic(settings: Any, columns: dict[str, list], ancestor_logic: dict[str, str]) -> str:
    """What a partial-update target's rerun guard tells two writes of the same inputs apart by
    (macros/materializations/partial_update/applied.sql): its logic as the state check compares it, less the
    columns' types. The check takes a type spelled otherwise or widened in place for the same logic and refuses any
    other change of type (a target's write stores only its declared types), so a type never makes a rerun new."""
    untyped = {name: [label, *settings] for name, (label, _, *settings) in columns.items()}
    return short(digest({"settings": settings, "columns": untyped, "ancestors": ancestor_logic}))


def fingerprints(nodes: dict[str, NodeLogic], version: str) -> dict[str, str]:
    """Every node's fingerprint; an input that is not a node (e.g. disabled) counts by its id, and so does an
    input that closes a cycle: dbt refuses a cyclic graph right after parsing, so those values never serve."""
    if version not in VERSIONS:
        raise ValueError(f"fingerprint version {version!r} is not one of {', '.join(VERSIONS)}")
    done: dict[str, str] = {}
    for root in sorted(nodes):
        # iterative depth-first, so a long chain of models cannot exhaust Python's recursion limit; `path`
        # holds the nodes being computed, so a cycle ends the descent instead of looping forever
        stack, path = [root], set()
        while stack:
            unique_id = stack[-1]
            if unique_id in done:
                stack.pop()
                continue
            node = nodes[unique_id]
            pending = sorted(i for i in set(node.inputs) if i in nodes and i not in done and i not in path)
            if pending and unique_id not in path:
                path.add(unique_id)
                stack.extend(pending)
                continue
            inputs = [done.get(i, i) for i in sorted(set(node.inputs))]
            chained = sorted(set(node.inlined_into)) if version == "v2" else []
            done[unique_id] = digest({"logic": node.logic, "inputs": inputs, "chained_into": chained})
            path.discard(unique_id)
            stack.pop()
    return done
