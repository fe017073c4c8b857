{#- dbt's `ref`, except that a partial-update target whose table is laid out for `change_mode: delta` is read merged
    with its delta (`<target>__lakeplan_merged`, delta.sql). The table's layout decides, not the config: a target
    switched to or from delta mode keeps its layout until its next run (a reader run alone before it reads the rows
    the table holds); with no table yet, a target in delta mode names the view its first run makes. dbt takes a `ref`
    macro from the root project only, so a project that has lakeplan as a package holds this file too (README). -#}
{% macro ref() %}
    {%- set relation = builtins.ref(*varargs, **kwargs) -%}
    {%- if not execute or relation is none -%}{{ return(relation) }}{%- endif -%}
    {%- set package = varargs[0] if varargs | length > 1 else project_name -%}
    {#- a unit test's context has a `graph` without nodes: its refs are its fixtures -#}
    {%- set node = (graph.get('nodes') or {}).get('model.' ~ package ~ '.' ~ varargs | last) -%}
    {%- set plan = lakeplan.lakeplan_plan(node) if node else none -%}
    {%- if not plan or not plan.kind.target -%}{{ return(relation) }}{%- endif -%}
    {%- set merged = lakeplan.lakeplan_merged_relation(relation) -%}
    {#- dbt's relation cache: what a target's run makes or drops, it says (partial_update.sql) -#}
    {%- if adapter.get_relation(merged.database, merged.schema, merged.identifier) is not none
        or plan.change_mode.mode == 'delta'
        and adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
        {{ return(merged) }}
    {%- endif -%}
    {{ return(relation) }}
{% endmacro %}
