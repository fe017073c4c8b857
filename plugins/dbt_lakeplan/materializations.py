"""The materializations lakeplan knows, each declared once with what it is; the planner, fingerprints, the state
check, explain and compile read them here, and the macros read a model's `kind` from its plan (node_kind).

A new materialization is one row of MATERIALIZATIONS; one lakeplan does not know (a package's own) is none of
these things: a model lakeplan neither lays out, merges nor state-checks.
"""

from __future__ import annotations

from dbt_lakeplan.node_plan import Kind, described

UPSERT = "upsert"  # lakeplan's: applies a changelog to a table by key (macros/materializations/upsert/)
TARGET = "partial_update"  # lakeplan's: a partial-update target, written by its members' rows


class Materialization(Kind):
    """A materialization: what its models are (Kind's fields, which their plans carry) and two things only Python
    asks. Never a member: a member is one by its config, whatever its materialization."""

    name: str
    keeps_rows: bool = described("its table keeps rows between runs: a member (written only through its target) "
                                 "cannot be one", False)  # fmt: skip
    no_table: bool = described("its relation is no table (a view, or none): it has no snapshots `new_rows` could read",
                               False)  # fmt: skip


MATERIALIZATIONS = {m.name: m for m in (
    Materialization(name="table", table=True),  # rebuilt by every run
    Materialization(name="view", no_table=True),  # holds no rows
    Materialization(name="ephemeral", inlined=True, no_table=True),  # a CTE of its consumers
    Materialization(name="incremental", keeps_rows=True, stateful=True, table=True),  # dbt-spark's, appends or merges
    Materialization(name="snapshot", keeps_rows=True),  # dbt's history table, not a model lakeplan state-checks
    Materialization(name=UPSERT, keeps_rows=True, stateful=True, table=True, merged=True, changelog=True),
    Materialization(name=TARGET, keeps_rows=True, stateful=True, table=True, merged=True, target=True),
)}  # fmt: skip


def materialization(name: str | None) -> Materialization:
    """The declared materialization; one lakeplan does not know is none of the kinds."""
    return MATERIALIZATIONS.get(name or "", Materialization(name=name or ""))


def is_stateful(name: str | None) -> bool:
    return materialization(name).stateful


def is_target(name: str | None) -> bool:
    return materialization(name).target


def is_inlined(name: str | None) -> bool:
    return materialization(name).inlined


def node_kind(name: str | None, member: bool) -> Kind:
    """A model's `kind` in its plan: a partial-update member (config `partial_update_target`) is a member and
    nothing else, as it becomes an ephemeral input of its target; any other model is what its materialization is."""
    if member:
        return Kind(member=True, inlined=True)
    return Kind(**materialization(name).model_dump(include=set(Kind.model_fields)))
