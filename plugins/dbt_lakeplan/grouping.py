"""Grouping partial-update members into writes: members with equal reuse digests share one write.

    before (reuse off, or stock dbt):          after (reuse on):
      member_a --MERGE--> target                 member_a --+
      member_b --MERGE--> target                 member_b --+-- UNION ALL -> collapse -> MERGE --> target
      member_c --MERGE--> target                 member_c --+
"""

from __future__ import annotations

from dataclasses import dataclass

from dbt_lakeplan.digest import Member, digest_id, digest_parts, digest_text


@dataclass(frozen=True)
class WriteGroup:
    """Members that share one write: one statement and one table commit."""

    target: str
    digest: str
    members: tuple[Member, ...]

    @property
    def digest_id(self) -> str:
        return digest_id(self.members[0])


def group_members(members: list[Member], reuse_enabled: bool) -> list[WriteGroup]:
    """Groups in write order: per target, overwrites first (they replace rows; merges then update them), then
    insert-only groups before changelog groups (a delete is the run's latest event), then by first member name;
    members sorted by name in each group.
    With reuse disabled every member is a group of its own, as separate writers are."""
    groups: list[WriteGroup] = []
    # A write can carry another member exactly when that member's digest is the group's digest (which names
    # the target): the digest's group, by position.
    by_digest: dict[str, int] = {}
    for member in sorted(members, key=lambda m: (m.target, m.name)):
        digest = digest_text(member)
        if not reuse_enabled or digest not in by_digest:
            by_digest[digest] = len(groups)
            groups.append(WriteGroup(member.target, digest, (member,)))
        else:
            shared = groups[by_digest[digest]]
            groups[by_digest[digest]] = WriteGroup(shared.target, shared.digest, shared.members + (member,))

    def write_order(group: WriteGroup):
        first = group.members[0]
        return group.target, first.write_mode != "overwrite", first.input_kind == "changelog", first.name

    return sorted(groups, key=write_order)


def ungrouped_reason(member: Member, members: list[Member], reuse_enabled: bool) -> str:
    """Why a member writes alone: no other member of its target, reuse disabled, or the digest parts
    that differ from each other member of the target."""
    others = [m for m in members if m.target == member.target and m.unique_id != member.unique_id]
    if not others:
        return f"the only member of `{member.target}`"
    if not reuse_enabled:
        return "sink reuse is disabled (var reuse_sink_enabled: false)"
    mine = dict(digest_parts(member))
    differences = []
    for other in sorted(others, key=lambda m: m.name):
        theirs = dict(digest_parts(other))
        labels = sorted(label for label in mine.keys() | theirs.keys() if mine.get(label) != theirs.get(label))
        differences.append(f"{other.name}: {', '.join(labels)} differ")
    return "digest differs from " + "; ".join(differences)
