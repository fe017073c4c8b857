"""Each macro folder's `.yml` (dbt's `macros:` properties, read by `dbt docs`) matches the macros that exist, and
documents every macro the README and docs/ tell users to call."""

import re
from pathlib import Path

import pytest
import yaml
from dbt.parser.schemas import is_valid_type

from tests.conftest import REPO

MACROS = REPO / "macros"
MACRO = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\((.*?)\)\s*-?%\}", re.S)
# dbt names a materialization's macro materialization_<name>_<adapter>; it takes no arguments
MATERIALIZATION = re.compile(r"\{%-?\s*materialization\s+(\w+)\s*,\s*adapter\s*=\s*['\"](\w+)['\"][^%]*-?%\}")
# what the docs tell users to call: `lakeplan.<name>(`, `{{ <name>(` or `run-operation <name>`
CALLED = re.compile(r"lakeplan\.(\w+)\(|\{\{-?\s*(\w+)\(|run-operation (\w+)")


def argument_names(signature: str) -> list[str]:
    """The names of a Jinja macro's parameters, defaults dropped (a default may hold commas inside quotes or [])."""
    parts, depth, quote, current = [], 0, None, ""
    for char in signature:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    return [part.split("=")[0].strip() for part in parts if part.strip()]


def defined(folder: Path) -> dict[str, list[str]]:
    """Every macro the folder's .sql files define, with its argument names in order."""
    macros = {}
    for path in sorted(folder.glob("*.sql")):
        text = path.read_text()
        macros.update({name: argument_names(signature) for name, signature in MACRO.findall(text)})
        macros.update({f"materialization_{name}_{adapter}": [] for name, adapter in MATERIALIZATION.findall(text)})
    return macros


def documented(folder: Path) -> dict[str, dict]:
    [path] = folder.glob("*.y*ml")
    return {entry["name"]: entry for entry in yaml.safe_load(path.read_text())["macros"]}


FOLDERS = sorted({path.parent for path in MACROS.rglob("*.sql")})


def test_argument_names_drop_defaults():
    assert argument_names("keys, mode='a, b', keys=[], parallelism=none\n") == ["keys", "mode", "keys", "parallelism"]
    assert argument_names("") == []


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: str(folder.relative_to(MACROS)))
def test_each_macro_folder_documents_its_macros_as_they_are_defined(folder):
    ymls = sorted(path.name for path in folder.glob("*.y*ml"))
    assert len(ymls) == 1, f"{folder.relative_to(REPO)} needs exactly one .yml of macro properties, has {ymls}"
    macros = defined(folder)
    for name, entry in documented(folder).items():
        assert name in macros, f"{folder.relative_to(REPO)}: `{name}` is documented but not defined there"
        assert [argument["name"] for argument in entry.get("arguments", [])] == macros[name], name
        assert all(is_valid_type(argument["type"]) for argument in entry.get("arguments", [])), name
        assert entry["description"].strip(), name
        assert "{{" not in yaml.safe_dump(entry), f"{name}: dbt renders Jinja in properties; write the call as text"


def test_every_macro_the_docs_tell_users_to_call_is_documented():
    folder_of = {name: folder for folder in FOLDERS for name in defined(folder)}
    texts = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    called = {name for path in texts for match in CALLED.findall(path.read_text()) for name in match if name}
    public = called & set(folder_of)
    assert {"new_rows", "changed_keys", "partial_update_target", "lakeplan_maintain", "scan_source"} <= public
    undocumented = sorted(name for name in public if name not in documented(folder_of[name]))
    assert not undocumented, f"public macros without an entry in their folder's .yml: {undocumented}"



def test_no_two_macro_files_call_each_other_even_through_others():
    """A file's macros may call lakeplan macros of other files only downhill: the files' calls form no circle, so
    each file can be read knowing only the ones below it."""
    defining = {}
    for path in MACROS.rglob("*.sql"):
        defining.update({name: path for name, _ in MACRO.findall(path.read_text())})
    calls = {path: {defining[name] for name in re.findall(r"lakeplan\.(\w+)\(", path.read_text()) if name in defining}
             - {path} for path in MACROS.rglob("*.sql")}  # fmt: skip

    def reaches(start: Path, goal: Path, seen: set) -> bool:
        return any(step == goal or (step not in seen and not seen.add(step) and reaches(step, goal, seen))
                   for step in calls[start])  # fmt: skip

    circles = sorted(str(path.relative_to(MACROS)) for path in calls if reaches(path, path, set()))
    assert circles == [], f"macro files in a circle of calls: {circles}"
