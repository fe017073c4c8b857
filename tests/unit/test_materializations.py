"""The registry of materializations (plugins/dbt_lakeplan/materializations.py): what each one is, the kind a
model's plan carries for the macros, and that the macros name no materialization to compare with."""

import re

import pytest

from pydantic import ValidationError

from dbt_lakeplan.materializations import (
    MATERIALIZATIONS, TARGET, UPSERT, Materialization, is_inlined, is_stateful, is_target, materialization, node_kind,
)  # fmt: skip
from tests.conftest import REPO


def named(kind: str) -> set[str]:
    return {name for name, declared in MATERIALIZATIONS.items() if getattr(declared, kind)}


def test_each_kind_is_the_materializations_that_have_it():
    assert named("stateful") == {"incremental", UPSERT, TARGET}
    assert named("keeps_rows") == {"incremental", "snapshot", UPSERT, TARGET}
    assert named("table") == {"table", "incremental", UPSERT, TARGET}
    assert named("merged") == {UPSERT, TARGET}
    assert named("changelog") == {UPSERT}
    assert named("target") == {TARGET}
    assert named("inlined") == {"ephemeral"}
    assert set(MATERIALIZATIONS) == {"table", "view", "ephemeral", "incremental", "snapshot", UPSERT, TARGET}


@pytest.mark.parametrize("name", ["materialized_view", "", None])
def test_a_materialization_lakeplan_does_not_know_is_none_of_the_kinds(name):
    assert not any(getattr(materialization(name), kind) for kind in Materialization.model_fields if kind != "name")
    assert not is_stateful(name) and not is_target(name) and not is_inlined(name)


def test_a_models_kind_is_its_materializations_and_a_member_is_only_a_member():
    assert node_kind("incremental", member=False).model_dump() == {
        "member": False, "stateful": True, "table": True, "merged": False, "changelog": False, "target": False,
        "inlined": False}
    assert node_kind(UPSERT, member=False).model_dump() == {
        "member": False, "stateful": True, "table": True, "merged": True, "changelog": True, "target": False,
        "inlined": False}
    assert node_kind("table", member=True).model_dump() == {
        "member": True, "stateful": False, "table": False, "merged": False, "changelog": False, "target": False,
        "inlined": True}
    assert node_kind("ephemeral", member=False).inlined and not node_kind("view", member=False).inlined


def test_the_registry_is_frozen():
    with pytest.raises(ValidationError):
        MATERIALIZATIONS["table"].stateful = True


# the name of a materialization that keeps rows, quoted in a macro: only where a macro declares itself one
# (`config(materialized=...)`); 'table' and 'view' are also relation types and keys, so they are left to COMPARED
QUOTED_NAME = re.compile(r"""['"](%s)['"]""" % "|".join(sorted(named("keeps_rows"))))
COMPARED = re.compile(r"""materialized\s*(==|!=|\bin\b|\bnot in\b)""")


def test_the_macros_compare_no_materialization_names():
    found = []
    for path in sorted((REPO / "macros").rglob("*.sql")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if COMPARED.search(line) or (QUOTED_NAME.search(line) and "config(materialized=" not in line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []
