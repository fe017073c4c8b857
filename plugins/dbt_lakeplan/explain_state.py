"""`lakeplan explain --state <dir>`: what a change would rebuild, as SQLMesh's plan shows, from two manifests.

Each node whose fingerprint (fingerprint.py) or written definition changed is classed by lakeplan's fingerprint rules:

    breaking     what it computes changed (its own SQL, columns or a setting that changes contents; a partial-update
                 target's changed or removed member, column or settings): a stateful table built by the old logic
                 no longer fits it, and every model downstream computes from changed rows
    compatible   nothing it computes changed: a setting that does not change contents (settings.py), a cosmetic
                 edit, or a partial-update target that only gains members or columns (its table takes them)
    added        a node the previous manifest did not have

and lists the models downstream that the change reaches. Pure functions over plain data (manifest nodes reduced to
`node_summary`), so the previous manifest is read as JSON and the current one from dbt's objects alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbt_lakeplan.manifest_fingerprints import CONFIG_KEY
from dbt_lakeplan.materializations import is_stateful
from dbt_lakeplan.node_plan import PLAN_KEY

RESOURCES = ("model", "seed", "snapshot")


def node_summary(name: str, resource_type: str, config: dict[str, Any], checksum: str, depends_on: list[str]) -> dict:
    return {
        "name": name, "resource_type": resource_type, "materialized": config.get("materialized"),
        "fingerprint": config.get(CONFIG_KEY), "checksum": checksum, "depends_on": sorted(depends_on),
        "configs": _set({k: v for k, v in config.items() if k not in (CONFIG_KEY, PLAN_KEY)}),
    }  # fmt: skip


def _set(value: Any) -> Any:
    """A config without its unset (None, empty) entries, at every level: manifest.json and dbt's objects differ there."""
    if isinstance(value, dict):
        kept = {k: _set(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, [], {})}
    return value


def load_manifest(state_dir: str) -> dict[str, dict]:
    """The previous manifest.json of `state_dir` (or the file itself), reduced to its nodes' summaries."""
    path = Path(state_dir)
    path = path / "manifest.json" if path.is_dir() else path
    try:
        nodes = json.loads(path.read_text())["nodes"]
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(f"--state {state_dir}: no readable dbt manifest.json there ({error}). Fix: point --state at "
                         "the target/ folder (or a copy of it) of an earlier dbt run, parse or compile.") from None  # fmt: skip
    return {
        uid: node_summary(n["name"], n["resource_type"], n.get("config", {}), n.get("checksum", {}).get("checksum", ""),
                          n.get("depends_on", {}).get("nodes", []))
        for uid, n in nodes.items() if n.get("resource_type") in RESOURCES
    }  # fmt: skip


def manifest_nodes(manifest) -> dict[str, dict]:
    """The live manifest's nodes, reduced as load_manifest reduces a file (JSON round trip: equal values compare
    equal whether read from a file or from dbt's objects)."""
    return json.loads(json.dumps({
        uid: node_summary(n.name, n.resource_type, n.config.to_dict(omit_none=True), n.checksum.checksum,
                          list(getattr(n.depends_on, "nodes", [])))  # a seed depends on macros only
        for uid, n in manifest.nodes.items() if n.resource_type in RESOURCES
    }, default=str))  # fmt: skip


def _part_label(part: str) -> str:
    kind, _, name = part.partition(":")
    return {"column": f"column `{name}`", "member": f"member `{name.split('.')[-1]}`"}.get(kind, "its settings")


def classify(old: dict | None, new: dict) -> dict[str, Any] | None:
    """A node's change: {class, reasons}, or None when it did not change itself (it may still be reached)."""
    if old is None:
        return {"class": "added", "reasons": ["new in this project"]}
    before, after = old.get("fingerprint") or {}, new.get("fingerprint") or {}
    if before.get("fingerprint") == after.get("fingerprint"):
        if old["checksum"] != new["checksum"] or old["configs"] != new["configs"]:
            settings = sorted(k for k in old["configs"].keys() | new["configs"].keys()
                              if old["configs"].get(k) != new["configs"].get(k))  # fmt: skip
            what = f"settings that do not change contents ({', '.join(settings)})" if settings else "a cosmetic edit"
            return {"class": "compatible", "reasons": [f"{what}: same fingerprint"]}
        return None
    stored_parts, parts = before.get("parts"), after.get("parts")
    if stored_parts and parts:
        changed = [f"{_part_label(p)} {'was removed' if p not in parts else 'changed'}"
                   for p in sorted(stored_parts) if parts.get(p) != stored_parts[p]]  # fmt: skip
        added = [f"{_part_label(p)} added" for p in sorted(parts) if p not in stored_parts]
        if changed:
            return {"class": "breaking", "reasons": changed}
        if added:
            return {"class": "compatible", "reasons": [*added, "the table takes new parts"]}
    if before.get("logic") != after.get("logic") or before.get("version") != after.get("version"):
        return {"class": "breaking", "reasons": ["its own SQL, columns or a setting that changes contents changed"]}
    return None  # only its inputs changed: reached from upstream


def _children(nodes: dict[str, dict]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for uid, node in nodes.items():
        for parent in node["depends_on"]:
            children.setdefault(parent, []).append(uid)
    return children


def downstream(nodes: dict[str, dict], root: str) -> list[str]:
    """Every node below `root`, sorted."""
    children, seen, stack = _children(nodes), set(), [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return sorted(seen)


def compare_manifests(previous: dict[str, dict], current: dict[str, dict], selected: set[str]) -> dict[str, Any]:
    """Each changed node (breaking, compatible, added) with the models it reaches, and each reached model with the
    breaking changes that reach it (a stateful one among them no longer fits its table)."""
    changed = []
    for uid in sorted(current):
        change = classify(previous.get(uid), current[uid])
        if change is not None:
            changed.append({"unique_id": uid, "name": current[uid]["name"], **change,
                            "downstream": downstream(current, uid)})  # fmt: skip
    reached: dict[str, dict] = {}
    for change in changed:
        for uid in change["downstream"]:
            entry = reached.setdefault(uid, {"name": current[uid]["name"], "by": [], "stateful": False,
                                             "selected": uid in selected})  # fmt: skip
            entry["by"].append(change["unique_id"])
            entry["stateful"] = is_stateful(current[uid]["materialized"])
    removed = sorted(uid for uid in previous if uid not in current)
    return {"changed": changed, "reached": reached, "removed": removed}
