"""The pure parts of `lakeplan explain`: statements, Exchange causes, write groups, how a change lands, change classes."""

import re

from dbt_lakeplan.explain import (NOTHING_SENT, after_upstream_writes, change_report, exchanges, moved_tables,
                                  state_report, statement, write_groups)
from dbt_lakeplan.explain_layout import spline_path
from dbt_lakeplan.explain_render import dag_svg, terminal_table
from dbt_lakeplan.explain_state import classify, compare_manifests

PLAN = """== Physical Plan ==
AdaptiveSparkPlan isFinalPlan=false
+- HashAggregate(keys=[account_id#1], functions=[count(1)])
   +- Exchange hashpartitioning(account_id#1, 8), ENSURE_REQUIREMENTS, [plan_id=20]
      +- HashAggregate(keys=[account_id#1], functions=[partial_count(1)])
         +- Exchange RoundRobinPartitioning(3), REPARTITION_BY_NUM, [plan_id=17]
            +- BatchScan spark_catalog.lakeplan_scan.events_seed[account_id#1] RuntimeFilters: []
"""
JOIN = """== Physical Plan ==
AdaptiveSparkPlan isFinalPlan=false
+- SortMergeJoin [k#1], [k#2], Inner
   :- Sort [k#1 ASC NULLS FIRST], false, 0
   :  +- Exchange hashpartitioning(k#1, 8), ENSURE_REQUIREMENTS, [plan_id=1]
   :     +- BatchScan spark_catalog.s.a[k#1]
   +- Sort [k#2 ASC NULLS FIRST], false, 0
      +- BatchScan spark_catalog.s.b[k#2]
"""


def test_each_exchange_gets_the_cause_above_it():
    assert [(x["partitioning"], x["cause"]) for x in exchanges(PLAN)] == [
        ("hashpartitioning", "aggregate"), ("RoundRobinPartitioning", "REPARTITION hint")]
    assert [x["cause"] for x in exchanges(JOIN)] == ["join"]
    assert moved_tables(JOIN, ["s.a", "s.b"]) == ["s.a"]


def test_a_models_own_parallelism_hint_over_everything_is_its_write_distribution():
    top = "== Physical Plan ==\nAdaptiveSparkPlan isFinalPlan=false\n+- Exchange hashpartitioning(k#1, 2), REPARTITION_BY_NUM, [plan_id=3]\n   +- Project [k#1]\n"
    assert exchanges(top, sink_parallelism=2)[0]["cause"] == "write distribution"
    assert exchanges(PLAN, sink_parallelism=2)[1]["cause"] == "REPARTITION hint"  # below an aggregation


MERGE_ON_READ = """== Physical Plan ==
WriteDelta org.apache.iceberg.spark.source.SparkPositionDeltaWrite@6d8d4d5f
+- AdaptiveSparkPlan isFinalPlan=false
   +- Exchange hashpartitioning(_spec_id#13, _partition#14, _file#11, 8), REBALANCE_PARTITIONS_BY_COL, 402653184, [plan_id=171]
      +- MergeRowsExec[__row_operation#12, k#1L]
         +- SortMergeJoin [k#1L], [k#2L], RightOuter
            :- Sort [k#1L ASC NULLS FIRST], false, 0
            :  +- Exchange hashpartitioning(k#1L, 8), ENSURE_REQUIREMENTS, [plan_id=165]
            :     +- BatchScan spark_catalog.s.t[k#1L]
            +- Sort [k#2L ASC NULLS FIRST], false, 0
               +- Exchange hashpartitioning(k#2L, 8), REPARTITION_BY_COL, [plan_id=166]
                  +- BatchScan spark_catalog.s.changes[k#2L]
"""


def test_the_rebalance_iceberg_asks_for_under_a_merge_is_the_write_distribution_not_a_hint():
    assert [x["cause"] for x in exchanges(MERGE_ON_READ)] == ["write distribution", "join", "REPARTITION hint"]


def test_statements_that_alter_a_table_are_never_sent():
    assert statement("alter table t create or replace branch lakeplan_write_0a1b2c3d4e5f").action == "skip"
    assert statement("call system.fast_forward('t', 'main', 'lakeplan_write_0a1b2c3d4e5f')").action == "skip"
    assert statement("create or replace temporary view v as select 1").action == "run"
    # a target whose members find nothing new: no write is sent, and explain says so rather than planning `select 0`
    nothing = statement("-- `dbt run` of `wide` would send these statements now, ...\n"
                        "-- s.wide: nothing new to write\nselect 0 as lakeplan_rows")
    assert nothing.action == "skip" and nothing.reason == NOTHING_SENT
    merge = statement('-- lakeplan session options: {"spark.sql.shuffle.partitions": 3}\n'
                      'merge into s.t.branch_lakeplan_write_0a1b2c3d4e5f as x using y on a')
    assert merge.action == "plan" and merge.sql.startswith("merge into s.t as x") and merge.options == {"spark.sql.shuffle.partitions": 3}


def test_write_groups_name_the_digest_part_that_split_them():
    groups = [{"digest": "target=m.t, writeMode=merge, inputKind=insert_only", "digest_id": "a", "members": [{"name": "x"}]},
              {"digest": "target=m.t, writeMode=merge, inputKind=changelog", "digest_id": "b", "members": [{"name": "y"}]}]
    report = write_groups(groups, {0: "select /* collapse packed: member `x` */ 1"})
    assert report[0]["split_from"] == {"y": ["inputKind"]} and report[0]["collapse"] == ["packed: member `x`"]
    assert report[1]["collapse"] == []


def node(fingerprint, logic="l", parts=None, configs=None, depends_on=(), materialized="incremental"):
    return {"name": "m", "resource_type": "model", "materialized": materialized, "checksum": "c", "depends_on": list(depends_on),
            "configs": configs or {}, "fingerprint": {"fingerprint": fingerprint, "logic": logic, "parts": parts}}


def test_changes_are_breaking_compatible_or_added():
    assert classify(None, node("a"))["class"] == "added"
    assert classify(node("a"), node("a")) is None
    assert classify(node("a", configs={"parallelism": 2}), node("a", configs={"parallelism": 4}))["class"] == "compatible"
    assert classify(node("a"), node("b", logic="other"))["class"] == "breaking"
    assert classify(node("a"), node("b")) is None  # only an input changed: reached, not changed
    old, new = {"settings": "s", "column:x": "1"}, {"settings": "s", "column:x": "1", "member:model.p.n": "2"}
    assert classify(node("a", parts=old), node("b", parts=new)) == {
        "class": "compatible", "reasons": ["member `n` added", "the table takes new parts"]}
    assert classify(node("a", parts=old), node("b", parts={**new, "column:x": "3"}))["reasons"] == ["column `x` changed"]


def test_a_change_reaches_every_model_downstream():
    previous = {"model.p.a": node("a", logic="1"), "model.p.b": node("b", depends_on=["model.p.a"])}
    current = {"model.p.a": node("a2", logic="2"), "model.p.b": node("b2", depends_on=["model.p.a"])}
    comparison = compare_manifests(previous, current, {"model.p.b"})
    assert [(c["unique_id"], c["class"], c["downstream"]) for c in comparison["changed"]] == [
        ("model.p.a", "breaking", ["model.p.b"])]
    assert comparison["reached"]["model.p.b"]["stateful"] is True


def test_how_a_change_lands_and_what_each_input_read_with_new_rows_gives():
    sql = ("select * from /* lakeplan new_rows: s.a at 7 after 5 */ (select 1) union all "
           "select * from /* lakeplan new_rows: s.b at 3 after 3 */ (select 2) union all "
           "select * from /* lakeplan new_rows: s.c at 9 after None */ (select 3)")
    report = change_report({"change_mode": {"mode": "auto", "merge_on_read_max_share": 0.1, "share": 0.1,
                                           "share_from": "merge_on_read_max_share"}, "maintenance": {}}, sql)
    assert report["lands"] == "auto (merge-on-read when the inputs hold at most 0.1 of the table's rows)"
    assert report["reads"] == {"s.a": "what is new: snapshots after 5 up to 7", "s.b": "nothing new",
                               "s.c": "everything: no write consumed it yet"}
    assert report["maintenance"] == {}
    whole = ("select * from /* lakeplan new_rows reads all of s.d (changed): snapshots since the last write of `t` "
             "changed or removed rows (overwrite 8) */ /* lakeplan new_rows: s.d at 9 after 5 */ (select 4) union all "
             "select * from /* lakeplan changed_keys reads all of s.e (expired): snapshot 4 of it, which the last write "
             "of `t` consumed, has expired */ /* lakeplan new_rows: s.e at 9 after 4 */ (select 5)")
    assert change_report({"change_mode": {"mode": "merge_on_read"}}, whole)["reads"] == {
        "s.d": "everything: snapshots since the last write of `t` changed or removed rows (overwrite 8)",
        "s.e": "everything: snapshot 4 of it, which the last write of `t` consumed, has expired"}
    compacting = {"mode": "auto", "merge_on_read_max_share": 0.6, "share": 0.05,
                  "share_from": "maintenance.deleted_share"}
    assert change_report({"change_mode": compacting}, sql)["lands"] == (
        "auto (merge-on-read when the inputs hold at most 0.05 of the table's rows)")
    assert change_report({"change_mode": {"mode": "copy_on_write", "merge_on_read_max_share": 0.1, "share": 0.1,
                                         "share_from": "merge_on_read_max_share"}}, "select 1") == {
        "change_mode": "copy_on_write", "lands": "copy_on_write", "reads": {}, "maintenance": None}
    assert change_report({}, sql) is None  # a model without a MERGE
    delta = {"mode": "delta", "merge_on_read_max_share": 0.6, "share": 0.6, "share_from": "merge_on_read_max_share",
             "delta_runs": 10}
    assert change_report({"change_mode": delta}, sql, delta={"rows": 40, "runs": 3})["lands"] == (
        "delta (appends the change: 40 delta rows from 3 runs, folded into the stored rows at 10 runs)")
    unkeyed = {"rows": 1, "runs": 1, "layout": "partitioned by day(at)", "keyed": False}
    assert change_report({"change_mode": delta}, sql, delta=unkeyed)["lands"] == (
        "delta (appends the change: 1 delta row from 1 run, folded into the stored rows at 10 runs); its table is "
        "not bucketed by its key (partitioned by day(at)), so each read of the merged rows shuffles the whole table "
        "by the key to join it with its delta rows. Fix: `partition_by: "
        "['bucket(N, <key>)']`, then one --full-refresh (docs/delta-mode.md)")
    # the trial's case: the YAML already buckets by the key, but the table was built before it
    declared = {**unkeyed, "partition_by": ["bucket(16, ID)"]}
    assert change_report({"change_mode": delta, "key": ["id"]}, sql, delta=declared)["lands"].endswith(
        "delta rows. Fix: one --full-refresh puts its declared `partition_by: ['bucket(16, ID)']` in effect "
        "(docs/delta-mode.md)")
    other = {**unkeyed, "partition_by": "bucket(16, other)"}  # bucketed, but not by the key
    assert change_report({"change_mode": delta, "key": ["id"]}, sql, delta=other)["lands"].endswith(
        "Fix: `partition_by: ['bucket(N, <key>)']`, then one --full-refresh (docs/delta-mode.md)")


def test_each_input_read_with_new_rows_is_named_as_the_user_writes_it_not_by_its_relation():
    sql = "select * from /* lakeplan new_rows: `shop_raw`.`orders` at 7 after 7 */ (select 1)"
    names = {"shop_raw.orders": "shop.orders"}  # source('shop', 'orders') reads the table shop_raw.orders
    report = change_report({"change_mode": {"mode": "copy_on_write"}}, sql, names)
    assert report["reads"] == {"shop.orders": "nothing new"}


def test_the_next_run_follows_the_state_verdict_and_whether_anything_is_new():
    def next_run(**verdict):
        return state_report({"action": "none", "stored": "f", "exists": True, **verdict}, {"fingerprint": "f"})["next_run"]

    assert next_run(stored=None, exists=False) == "create"
    assert next_run() == "run" and next_run(action="evolve") == "run"
    assert next_run(nothing_new=True) == "nothing new"  # every input read with new_rows gained nothing
    assert next_run(action="rebuild", nothing_new=True) == "rebuild"  # a rebuild reads everything


def test_a_model_that_would_find_nothing_new_runs_after_a_selected_model_it_reads_writes():
    def model(name, next_run, inputs=(), relation="s." + "x"):
        state = {"next_run": next_run, "changed": []} if next_run else None
        return {"unique_id": f"model.p.{name}", "name": name, "relation": relation, "inputs": list(inputs),
                "state": state}

    models = [model("orders", "run"), model("plain", None), model("idle", "nothing new"),
              model("wide", "nothing new", ["model.p.orders", "model.p.plain", "model.p.idle"]),
              model("narrow", "nothing new", ["model.p.idle", "source.p.raw.t"]),
              model("staged", None, relation=None), model("thin", "nothing new", ["model.p.staged"])]
    after_upstream_writes(models)
    assert {m["name"]: (m["state"] or {}).get("next_run") for m in models} == {
        "orders": "run", "plain": None, "idle": "nothing new", "wide": "run", "narrow": "nothing new",
        "staged": None, "thin": "nothing new"}
    assert models[3]["state"]["after"] == ["orders", "plain"]  # a table model (no state) writes at every run


def model_report(name, inputs=(), member_of=None, groups=()):
    return {"unique_id": f"model.p.{name}", "name": name, "sources": [], "inputs": list(inputs), "moved_inputs": [],
            "member_of": member_of, "write_groups": [{"members": list(g)} for g in groups], "state": None,
            "shuffles": 0, "error": None, "materialized": "table"}


def test_the_page_draws_each_member_into_its_target_and_every_write_group_in_its_own_colour():
    report = {"models": [model_report("a", groups=[["a_m"]]), model_report("b", groups=[["b_m"]]),
                         model_report("a_m", ["source.p.s.t"], member_of="a"),
                         model_report("b_m", ["source.p.s.t"], member_of="b")]}  # fmt: skip
    svg = dag_svg(report)
    assert 'data-from="model.p.a_m" data-to="model.p.a"' in svg and 'data-from="model.p.b_m" data-to="model.p.b"' in svg
    fills = dict(re.findall(r'data-id="model\.p\.(\w+)"[^>]*>\s*<rect [^>]*fill="([^"]+)"', svg))
    assert fills["a_m"] != fills["b_m"], fills


def test_every_input_of_a_selected_model_is_a_node_seeds_and_unselected_models_too():
    inputs = ["seed.p.tickets", "source.p.shop.orders", "model.p.outside"]
    report = {"models": [model_report("t", groups=[["m"]]), model_report("m", inputs, member_of="t")]}
    svg = dag_svg(report)
    for uid in ("seed.p.tickets", "source.p.shop.orders", "model.p.outside"):
        assert f'data-id="{uid}"' in svg and f'data-from="{uid}" data-to="model.p.m"' in svg


def test_a_dot_spline_becomes_an_svg_path_in_svg_coordinates():
    # dot's y axis points up: in a graph 100 high, y=90 is 10 from the top
    assert spline_path("e,50,10 0,90 10,80 20,70 30,60", 100) == "M0.0,10.0 C10.0,20.0 20.0,30.0 30.0,40.0 L50.0,90.0"


def test_an_input_a_selected_model_writes_first_is_read_after_that_write_not_nothing_new():
    def model(name, inputs, reads, next_run="nothing new"):
        return {"unique_id": f"model.p.{name}", "name": name, "relation": f"s.{name}", "inputs": inputs,
                "change": {"reads": reads}, "state": {"next_run": next_run, "changed": []},
                "statements": [{"action": "skip", "reason": NOTHING_SENT, "sql": "select 0 as lakeplan_rows"}]}

    orders = model("orders", [], {}, next_run="run")
    idle = model("idle", ["model.p.orders"], {"orders": "nothing new"})
    busy = model("busy", ["model.p.orders", "source.p.shop.t"],
                 {"orders": "what is new: snapshots after 1 up to 2", "shop.t": "nothing new"}, next_run="run")
    after_upstream_writes([orders, idle, busy])
    assert idle["change"]["reads"] == {"orders": "what orders writes first in this run (nothing new before)"}
    assert idle["state"]["next_run"] == "run" and idle["state"]["after"] == ["orders"]
    assert idle["statements"][0]["reason"].startswith("not planned: nothing is new yet; `dbt run` writes orders first")
    assert busy["change"]["reads"] == {
        "orders": "what is new: snapshots after 1 up to 2, and what orders writes first in this run",
        "shop.t": "nothing new"}


def test_width_widens_the_terminal_tables_cells():
    name = "a_model_whose_name_is_longer_than_twenty_characters"
    report = {"errors": [], "models": [{**model_report(name), "statements": [], "exchanges": []}]}
    assert f"{name[:17]}..." in terminal_table(report, width=20)
    assert name in terminal_table(report) and name in terminal_table(report, width=0)
    assert "a_model..." in terminal_table(report, width=10)
