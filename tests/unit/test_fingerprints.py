"""Fingerprints over synthetic graphs and SQL normalisation, without dbt."""

import random

import pytest

from dbt_lakeplan.fingerprint import NodeLogic, ancestors, fingerprints, rerun_logic, target_parts
from dbt_lakeplan.normalize import normalize_sql, render_stable


def graph(upstream_inlined_into=()):
    return {
        "source.s": NodeLogic("source.s", "raw"),
        "model.up": NodeLogic("model.up", "select from s", ("source.s",), tuple(upstream_inlined_into)),
        "model.down": NodeLogic("model.down", "aggregate up", ("model.up",)),
        "model.other": NodeLogic("model.other", "other", ("source.s",)),
    }


def test_v3_ignores_chaining_and_v2_does_not():
    view, ephemeral = graph(), graph(upstream_inlined_into=["model.down"])
    assert fingerprints(view, "v3") == fingerprints(ephemeral, "v3")
    v2_view, v2_ephemeral = fingerprints(view, "v2"), fingerprints(ephemeral, "v2")
    assert v2_view["model.down"] != v2_ephemeral["model.down"] and v2_view["model.up"] != v2_ephemeral["model.up"]
    assert v2_view["model.other"] == v2_ephemeral["model.other"]


def test_a_logic_change_reaches_downstream_and_nothing_else():
    before = fingerprints(graph(), "v3")
    changed = graph()
    changed["model.up"] = NodeLogic("model.up", "select differently", ("source.s",))
    after = fingerprints(changed, "v3")
    assert after["model.up"] != before["model.up"] and after["model.down"] != before["model.down"]
    assert after["model.other"] == before["model.other"] and after["source.s"] == before["source.s"]


def test_order_of_nodes_and_inputs_never_matters():
    nodes = graph()
    shuffled = list(nodes.items())
    random.Random(7).shuffle(shuffled)
    assert fingerprints(dict(shuffled), "v3") == fingerprints(nodes, "v3")
    two_inputs = {"a": NodeLogic("a", "x"), "b": NodeLogic("b", "y")}
    forward = fingerprints({**two_inputs, "c": NodeLogic("c", "z", ("a", "b"))}, "v3")
    backward = fingerprints({**two_inputs, "c": NodeLogic("c", "z", ("b", "a"))}, "v3")
    assert forward == backward


def test_a_long_chain_does_not_hit_the_recursion_limit():
    chain = {f"m{i}": NodeLogic(f"m{i}", "x", (f"m{i - 1}",) if i else ()) for i in range(5000)}
    assert len(fingerprints(chain, "v3")) == 5000


def test_unknown_version_is_refused():
    with pytest.raises(ValueError, match="'v4' is not one of v2, v3"):
        fingerprints(graph(), "v4")


def test_comments_whitespace_case_and_hints_do_not_count():
    assert normalize_sql("select /*+ REPARTITION(8, k) */ a,\n  b -- note\nFROM t") == normalize_sql("SELECT a, b from t")
    assert normalize_sql("select a from t") != normalize_sql("select b from t")


def render(sql, **overrides):
    settings = dict(
        resolve_ref=lambda *names, **_: "model.p." + names[-1], resolve_source=lambda s, t: f"source.p.{s}.{t}",
        project_vars={"days": 7}, config={}, this="model.p.me", incremental=False,
    )
    return render_stable(sql, **{**settings, **overrides})


def test_stable_rendering_ignores_run_values_and_materialization():
    sql = (
        "select *, '{{ run_started_at }}', '{{ invocation_id }}', '{{ env_var(\"HOME\") }}' "
        "from {{ scan_source('s', 't') }} join {{ ref('up') }} where d > {{ var('days') }}"
    )
    assert render(sql) == (
        "select *, 'run_started_at', 'invocation_id', 'env_var(HOME)' from `source.p.s.t` join `model.p.up` where d > 7"
    )
    assert "`this`" not in render("{% if is_incremental() %}select * from {{ this }}{% endif %}", incremental=True)


def test_a_cycle_ends_instead_of_looping():
    # dbt reports the cycle itself after parsing; the fingerprints must only not hang before it can
    cycle = {"a": NodeLogic("a", "x", ("b",)), "b": NodeLogic("b", "y", ("a",)), "c": NodeLogic("c", "z", ("c", "a"))}
    assert sorted(fingerprints(cycle, "v3")) == ["a", "b", "c"]


def test_ancestors_are_every_node_upstream_and_end_at_a_cycle():
    assert ancestors(graph(), "model.down") == ["model.up", "source.s"]
    assert ancestors(graph(), "source.s") == []
    cycle = {"a": NodeLogic("a", "x", ("b",)), "b": NodeLogic("b", "y", ("a", "gone"))}
    assert ancestors(cycle, "a") == ["b"]  # never itself; an input that is not a node is left out


def test_target_parts_keep_settings_columns_and_members_apart():
    parts = target_parts({"configs": {"unique_key": "id"}}, {"a": ["a", "int"]}, {"model.p.m": "f" * 32})
    assert sorted(parts) == ["column:a", "member:model.p.m", "settings"]
    assert parts["member:model.p.m"] == "f" * 12
    changed = target_parts({"configs": {"unique_key": "id"}}, {"a": ["a", "int", {"merge": "sum"}]}, {"model.p.m": "f" * 32})
    assert [label for label in parts if parts[label] != changed[label]] == ["column:a"]


@pytest.mark.parametrize(
    "sql",
    [
        "{{ config(materialized='view') }}\nselect k, v from {{ ref('up') }}\n",
        "select * from {{ source('s', 't') }} join {{ ref(\"pkg\", 'up') }} using (k)\n\n",
        "{{ config(partial_update_target='wide', write_options={'a.b': 1}) }}\nselect '(x)' as a from {{ scan_source('s', 't') }}",
        "select 1 as a -- {{ ref('up') }}",
        # not simple: Jinja renders these, the same way as always
        "{{ config(materialized=var('m', 'view')) }}\nselect 1",
        "{{ ref('up', version=2) }}",
        "{%- if true %}select {{ ref('up') }}{% endif %}",
        "select {{- ref('up') -}} as a",
    ],
)
def test_sql_without_jinja_logic_renders_as_jinja_renders_it(sql):
    """Most models' Jinja is a config() and refs: rendered without compiling a template, the same text."""
    from dbt_lakeplan.normalize import _ENVIRONMENT

    context = {"ref": lambda *names, **_: f"`model.p.{names[-1]}`", "source": lambda s, t: f"`source.p.{s}.{t}`",
               "scan_source": lambda s, t: f"`source.p.{s}.{t}`", "var": lambda name, default=None: default}
    with_config = {**context, "config": lambda *args, **kwargs: ""}
    assert render(sql) == _ENVIRONMENT.from_string(sql).render(with_config)


def test_a_rerun_is_told_apart_by_the_logic_the_state_check_compares_but_never_by_a_type():
    settings, ancestors_logic = {"sql": "x"}, {"model.p.m": "abc"}
    columns = {"id": ["id", "bigint"], "n": ["n", "int", {"merge": "sum"}]}
    same = rerun_logic(settings, columns, ancestors_logic)
    for data_type in ("INT", "integer", "bigint", "double"):  # respelled, widened; any other change the write refuses
        assert rerun_logic(settings, {**columns, "n": ["n", data_type, {"merge": "sum"}]}, ancestors_logic) == same
    assert rerun_logic(settings, {**columns, "n": ["n", "int", {"merge": "max"}]}, ancestors_logic) != same
    assert rerun_logic(settings, columns, {"model.p.m": "abd"}) != same
    assert rerun_logic({"sql": "y"}, columns, ancestors_logic) != same
