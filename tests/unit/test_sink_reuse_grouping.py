"""The reuse digest and the grouping, as pure functions (Flink SinkReuseTest situations)."""

from dbt_lakeplan.digest import Member, digest_id, digest_text
from dbt_lakeplan.grouping import group_members, ungrouped_reason
from dbt_lakeplan.partial_update import tombstone_sequence


def member(name, target="model.p.wide", **settings):
    return Member(unique_id=f"model.p.{name}", name=name, target=target, **settings)


def names(groups):
    return [[m.name for m in g.members] for g in groups]


def test_digest_lists_labelled_parts_and_only_present_optional_ones():
    assert digest_text(member("a")) == "target=model.p.wide, writeMode=merge, inputKind=insert_only"
    text = digest_text(member("a", write_options={"k": "v"}, parallelism=4, op_column="_op"))
    assert text == 'target=model.p.wide, writeMode=merge, options={"k":"v"}, parallelism=4, inputKind=changelog'


def test_digest_ignores_column_choices_and_sequence():
    assert digest_id(member("a")) == digest_id(member("b", sequence_by="version"))


def test_two_targets_with_two_members_each_give_two_writes():
    members = [member("a1", "model.p.t1"), member("a2", "model.p.t1"), member("b1", "model.p.t2"), member("b2", "model.p.t2")]
    assert names(group_members(members, reuse_enabled=True)) == [["a1", "a2"], ["b1", "b2"]]


def test_different_write_options_are_not_merged():
    members = [member("a"), member("b", write_options={"spark.sql.shuffle.partitions": "3"}), member("c")]
    groups = group_members(members, reuse_enabled=True)
    assert names(groups) == [["a", "c"], ["b"]]
    assert ungrouped_reason(members[1], members, True) == "digest differs from a: options differ; c: options differ"


def test_overwrite_groups_split_by_static_partition():
    members = [
        member("eu", write_mode="overwrite", static_partition={"region": "EU"}),
        member("us", write_mode="overwrite", static_partition={"region": "US"}),
        member("eu2", write_mode="overwrite", static_partition={"region": "EU"}),
    ]
    assert names(group_members(members, reuse_enabled=True)) == [["eu", "eu2"], ["us"]]


def test_insert_only_and_changelog_members_form_separate_groups_changelog_last():
    members = [member("z_insert"), member("a_changes", op_column="_op"), member("y_insert")]
    assert names(group_members(members, reuse_enabled=True)) == [["y_insert", "z_insert"], ["a_changes"]]


def test_reuse_disabled_gives_one_write_per_member_with_the_reason():
    members = [member("a"), member("b")]
    assert names(group_members(members, reuse_enabled=False)) == [["a"], ["b"]]
    assert ungrouped_reason(members[0], members, False) == "sink reuse is disabled (var reuse_sink_enabled: false)"


def test_a_group_of_one_works_and_says_why():
    only = member("only")
    assert names(group_members([only], reuse_enabled=True)) == [["only"]]
    assert ungrouped_reason(only, [only], True) == "the only member of `model.p.wide`"


def test_grouping_does_not_depend_on_input_order():
    members = [member(n, write_options={"o": n[0]}) for n in ["b1", "a1", "b2", "a2"]]
    assert names(group_members(members, True)) == names(group_members(list(reversed(members)), True))


def test_the_tombstones_hold_the_one_sequence_of_the_members_that_delete():
    seen, cdc = member("seen", sequence_by="last_seen_ts"), member("cdc", op_column="op", sequence_by="Seq")
    problems = []
    assert tombstone_sequence("wide", "remove_record", [seen, cdc, member("plain", op_column="op")], problems) == "seq"
    assert tombstone_sequence("wide", "ignore", [cdc], problems) is None  # no delete is remembered
    assert problems == []
    other = member("other", op_column="op", sequence_by="ts")
    assert tombstone_sequence("wide", "remove_record", [cdc, other], problems) is None
    assert problems and problems[0].startswith("Members `cdc` (sequence_by `Seq`), `other` (sequence_by `ts`) of "
                                               "partial-update target `wide` are changelogs")
