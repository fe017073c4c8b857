"""lakeplan's JSON artifacts in dbt's target folder: byte-stable (sorted keys), so an unchanged project
writes the same bytes on every run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SINK_REUSE_FILE = "lakeplan_sink_reuse.json"
FINGERPRINTS_FILE = "lakeplan_fingerprints.json"


class JsonArtifact:
    """A plugin artifact as dbt's PluginManager writes it: `write(path)`."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def write(self, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(self.data, indent=2, sort_keys=True, default=str) + "\n")
