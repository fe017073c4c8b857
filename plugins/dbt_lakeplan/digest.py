"""The reuse digest of a partial-update member: the one place that decides which writers may share a write.

Flink's SinkReuser (FLIP-506) merges INSERTs whose sinks have equal digests into one Union in front of one
sink. A member's digest is a list of labelled parts; two members share one unioned write exactly when their
digests are equal:

    target=<relation>        the table written
    writeMode=merge          merge (default) or overwrite ...
    staticPartition={...}    ... with the same static partition values, when overwriting some
    options={...}            the Spark settings in effect for the write (member config `write_options`)
    parallelism=N            the write's distribution (member config `parallelism`), when set
    inputKind=insert_only    insert_only, or changelog (the member has an `op_column`)

Column subsets, upstream column names and castable types are not parts: a member writes any subset of the
target's columns, and the unioned write pads the others with typed NULLs and casts what it writes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Member:
    """What the digest and the grouping need to know of one partial-update member model."""

    unique_id: str
    name: str
    target: str  # the target model's unique_id
    write_mode: str = "merge"
    static_partition: dict[str, Any] = field(default_factory=dict)
    write_options: dict[str, Any] = field(default_factory=dict)
    parallelism: int | None = None
    op_column: str | None = None
    sequence_by: str | None = None

    @property
    def input_kind(self) -> str:
        return "changelog" if self.op_column else "insert_only"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def digest_parts(member: Member) -> list[tuple[str, str]]:
    """The labelled parts of the member's reuse digest; optional parts only when present."""
    parts = [("target", member.target), ("writeMode", member.write_mode)]
    if member.static_partition:
        parts.append(("staticPartition", _canonical(member.static_partition)))
    if member.write_options:
        parts.append(("options", _canonical(member.write_options)))
    if member.parallelism is not None:
        parts.append(("parallelism", str(member.parallelism)))
    parts.append(("inputKind", member.input_kind))
    return parts


def digest_text(member: Member) -> str:
    """The digest as one readable line, e.g. `target=model.x.t, writeMode=merge, inputKind=insert_only`."""
    return ", ".join(f"{label}={value}" for label, value in digest_parts(member))


def digest_id(member: Member) -> str:
    """A short stable id of the digest (for table properties and group names)."""
    return hashlib.sha256(digest_text(member).encode()).hexdigest()[:16]
