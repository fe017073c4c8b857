"""lakeplan's JSON artifacts in dbt's target folder: byte-stable (sorted keys), so an unchanged project
writes the same bytes on every run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SINK_REUSE_FILE = "lakeplan_sink_reuse.json"
FINGERPRINTS_FILE = "lakeplan_fingerprints.json"
SQL_CACHE_FILE = "lakeplan_sql_cache.json"  # rendered, normalised SQL per node (manifest_fingerprints.py)


def read_cache(path: str) -> dict[str, Any]:
    """A cache file's entries; a missing or unreadable file is an empty cache (it is only ever a shortcut)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_cache(path: str, data: dict[str, Any]) -> None:
    """Replaces the cache file in one rename, so a concurrent dbt never reads half of it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    partial = Path(f"{path}.{os.getpid()}.partial")
    partial.write_text(json.dumps(data, sort_keys=True))
    os.replace(partial, path)


class JsonArtifact:
    """A plugin artifact as dbt's PluginManager writes it: `write(path)`."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def write(self, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(self.data, indent=2, sort_keys=True, default=str) + "\n")
