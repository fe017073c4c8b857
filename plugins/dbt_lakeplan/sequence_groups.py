"""A partial-update target's `sequence_groups` (Paimon's `fields.<seq>.sequence-group`), checked once at parse time.

Each name the setting lists is checked once, however many groups list it, so one mistake is one sentence (not one
per group). A sentence names the model, the setting as written, what is wrong and a fix, with the setting's value as
it would then read.
"""

from __future__ import annotations

from dbt_lakeplan.spark_types import base_type

UNORDERED = {"array", "map", "struct", "boolean", "binary"}


def _placements(declared: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each name listed (lower case) -> the groups listing it (their sequence column as written), in order."""
    where: dict[str, list[str]] = {}
    for sequence, columns in declared.items():
        for name in [sequence, *columns]:
            where.setdefault(str(name).lower(), []).append(str(sequence))
    return where


def _without(declared: dict[str, list[str]], name: str, keep: str | None = None) -> str:
    """The setting as it reads with `name` left out, but as a column of group `keep`; a group whose sequence it is,
    or that is left empty, goes too."""
    fixed = {}
    for sequence, columns in declared.items():
        if str(sequence).lower() == name and sequence != keep:
            continue
        kept = [c for c in columns if str(c).lower() != name or (sequence == keep and str(sequence).lower() != name)]
        if kept:
            fixed[sequence] = kept
    return f"e.g. `sequence_groups: {fixed}`" if fixed else "remove `sequence_groups`"


def _groups(names: list[str]) -> str:
    count = {2: "two", 3: "three"}.get(len(names), str(len(names)))
    return f"{count} sequence groups ({', '.join(names[:-1])} and {names[-1]})"


def _problem(setting: str, target: str, declared: dict, name: str, placed: list[str], sequence: bool,
             types: dict[str, str], keys: set[str]) -> str | None:
    """The one sentence for a name listed as a group's sequence column (`sequence`) or column, or None."""
    role = "sequence column" if sequence else "column"
    groups = list(dict.fromkeys(placed))
    if name not in types:
        return (f"{setting}, which names the {role} `{name}`, not a column of `{target}`. Fix: declare `{name}` with "
                f"its data_type under `columns:` of `{target}`, or leave it out: {_without(declared, name)}.")
    if name in keys:
        return (f"{setting}, which names the key column `{name}`; a key is never merged, it names the row. "
                f"Fix: leave it out: {_without(declared, name)}.")
    if len(groups) > 1:
        return (f"{setting}, which puts column `{name}` in {_groups(groups)}; one version must decide its value. "
                f"Fix: list `{name}` under one sequence column only, {_without(declared, name, groups[0])}.")
    if len(placed) > 1:
        return (f"{setting}, which lists the sequence column `{name}` among the columns it versions. "
                f"Fix: list it once, as the group's sequence: {_without(declared, name, groups[0])}.")
    return None


def check_sequence_groups(
    target: str, declared: dict[str, list[str]], types: dict[str, str], ruled: dict[str, str], keys: set[str],
    problems: list[str],
) -> list[dict]:
    """The target's groups ({sequence, columns}, lower case); every mistake goes to `problems`, once. `ruled`: the
    columns with a merge rule of their own (not the default), which a group's columns cannot have."""
    setting = f"Model `{target}` sets `sequence_groups: {declared}`"
    placements = _placements(declared)
    sequences = [str(sequence).lower() for sequence in declared]
    bad = set()
    for name, placed in placements.items():
        problem = _problem(setting, target, declared, name, placed, name in sequences, types, keys)
        if problem:
            problems.append(problem)
            bad.add(name)
        if name in types and name not in keys and name in ruled:  # a second mistake, of the column's meta
            groups = list(dict.fromkeys(placed))
            problems.append(
                f"Column `{name}` of `{target}` is in sequence group{'s' * (len(groups) > 1)} {' and '.join(groups)} "
                f"and has merge rule "
                f"{ruled[name]!r}; a group's columns take the accepted row's values. "
                f"Fix: remove `merge` from `{name}`, or take it out of the sequence group."
            )
            bad.add(name)
    for sequence in sequences:
        if sequence in types and base_type(types[sequence]) in UNORDERED:
            problems.append(
                f"Sequence column `{sequence}` of `{target}` is {types[sequence]}; a version must be ordered. "
                "Fix: use a numeric, date, timestamp or string column as the group's sequence."
            )
    owner = {name: placed[0].lower() for name, placed in placements.items() if name not in bad}
    return [{"sequence": sequence, "columns": [c for c in owner if owner[c] == sequence and c != sequence]}
            for sequence in sequences]
