"""The materializations lakeplan knows, each declared once with what it is; the planner, fingerprints, the state
check, explain and compile read them here, and the macros read a model's `kind` from its plan (node_kind).

A new materialization is one row of MATERIALIZATIONS; one lakeplan does not know (a package's own) is none of
these things: a model lakeplan neither lays out, merges nor state-checks.
"""

from __future__ import annotations

from dataclasses import dataclass

UPSERT = "upsert"  # lakeplan's: applies a changelog to a table by key (macros/materializations/upsert/)
TARGET = "partial_update"  # lakeplan's: a partial-update target, written by its members' rows


@dataclass(frozen=True)
class Materialization:
    name: str
    # its table keeps rows between runs: a member (written only through its target) cannot be one
    keeps_rows: bool = False
    # lakeplan fingerprints the logic its kept rows were built by and checks it before a write (the state check)
    stateful: bool = False
    # it writes a table of its own: a keyed layout and a write parallelism apply
    table: bool = False
    # lakeplan's own materialization writes it by MERGE, then records its state and maintains it after that write
    merged: bool = False
    # it applies a changelog by key (op_column, sequence_by, tombstones) and records what its write consumed
    changelog: bool = False
    # it is written by its members (partial_update_target), one statement per write group
    target: bool = False
    # dbt inlines it into its consumers as a CTE: it has no relation, and its consumers carry its logic
    inlined: bool = False


MATERIALIZATIONS = {m.name: m for m in (
    Materialization("table", table=True),  # rebuilt by every run
    Materialization("view"),  # holds no rows
    Materialization("ephemeral", inlined=True),  # a CTE of its consumers
    Materialization("incremental", keeps_rows=True, stateful=True, table=True),  # dbt-spark's, appends or merges
    Materialization("snapshot", keeps_rows=True),  # dbt's history table, not a model lakeplan state-checks
    Materialization(UPSERT, keeps_rows=True, stateful=True, table=True, merged=True, changelog=True),
    Materialization(TARGET, keeps_rows=True, stateful=True, table=True, merged=True, target=True),
)}  # fmt: skip

# what a model's plan carries as `kind`, for the macros; `member` besides (a member's own materialization is moot)
KIND_FIELDS = ("stateful", "table", "merged", "changelog", "target")


def materialization(name: str | None) -> Materialization:
    """The declared materialization; one lakeplan does not know is none of the kinds."""
    return MATERIALIZATIONS.get(name or "", Materialization(name or ""))


def is_stateful(name: str | None) -> bool:
    return materialization(name).stateful


def is_target(name: str | None) -> bool:
    return materialization(name).target


def is_inlined(name: str | None) -> bool:
    return materialization(name).inlined


def node_kind(name: str | None, member: bool) -> dict[str, bool]:
    """A model's `kind` in its plan: a partial-update member (config `partial_update_target`) is a member and
    nothing else, as it becomes an ephemeral input of its target; any other model is what its materialization is."""
    declared = Materialization("") if member else materialization(name)
    return {"member": member, **{field: getattr(declared, field) for field in KIND_FIELDS}}

