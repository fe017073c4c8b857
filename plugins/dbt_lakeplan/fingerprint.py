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


def fingerprints(nodes: dict[str, NodeLogic], version: str) -> dict[str, str]:
    """Every node's fingerprint; an input that is not a node (e.g. disabled) counts by its id."""
    if version not in VERSIONS:
        raise ValueError(f"fingerprint version {version!r} is not one of {', '.join(VERSIONS)}")
    done: dict[str, str] = {}
    for root in sorted(nodes):
        stack = [root]  # iterative, so a long chain of models cannot exhaust Python's recursion limit
        while stack:
            unique_id = stack[-1]
            node = nodes[unique_id]
            pending = sorted({i for i in node.inputs if i in nodes and i not in done})
            if unique_id in done or pending:
                stack.extend(pending) if unique_id not in done else stack.pop()
                continue
            inputs = [done.get(i, i) for i in sorted(set(node.inputs))]
            chained = sorted(set(node.inlined_into)) if version == "v2" else []
            done[unique_id] = digest({"logic": node.logic, "inputs": inputs, "chained_into": chained})
            stack.pop()
    return done
