{#- dbt's `ref`, except that a partial-update target in `change_mode: delta` is read merged with its delta
    (`<target>__lakeplan_merged`, delta.sql). dbt takes a `ref` macro from the root project only, so a project that
    has lakeplan as a package holds this file too (README). -#}
{% macro ref() %}
    {%- set relation = builtins.ref(*varargs, **kwargs) -%}
    {%- if not execute or relation is none -%}{{ return(relation) }}{%- endif -%}
    {%- set package = varargs[0] if varargs | length > 1 else project_name -%}
    {#- a unit test's context has a `graph` without nodes: its refs are its fixtures -#}
    {%- set node = (graph.get('nodes') or {}).get('model.' ~ package ~ '.' ~ varargs | last) -%}
    {%- set change_mode = lakeplan.lakeplan_plan(node).change_mode if node else none -%}
    {%- if change_mode and change_mode.mode == 'delta' -%}
        {{ return(lakeplan.lakeplan_merged_relation(relation)) }}
    {%- endif -%}
    {{ return(relation) }}
{% endmacro %}
