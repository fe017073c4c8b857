{#- The whole SQL of a partial-update target model: `{{ partial_update_target() }}`. It makes the model a
    `partial_update` materialization; lakeplan's plugin gives it its members. Compiled, it lists each
    member's rows (its members appear as CTEs); the write itself is built by the materialization. -#}
{% macro partial_update_target() %}
    {%- do config(materialized='partial_update') -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set branches = [] -%}
    {%- for group in lakeplan.lakeplan_plan().partial_update.groups -%}
        {%- for member in group.members -%}
            {%- do branches.append(
                'select ' ~ lakeplan.lakeplan_string_literal(member.name) ~ ' as lakeplan_member, count(*) as lakeplan_rows'
                ~ ' from ' ~ ref(member.name)) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(branches | join('\nunion all\n') or 'select null as lakeplan_member, 0 as lakeplan_rows where false') }}
{% endmacro %}

{#- In a member: the target table as it stands before this run, or none on its first run and under
    `--full-refresh`. For members that send only what the table has not seen yet, as a `sum` counter needs:
    `{% set seen = partial_update_target_relation() %}` ... `{% if seen %} where x > (...) {% endif %}`.
    (A `ref` to the target would make a cycle: the target is built from its members.) -#}
{% macro partial_update_target_relation() %}
    {%- set target = lakeplan.lakeplan_plan().member_of if execute else none -%}
    {%- if not execute or target is none or flags.FULL_REFRESH -%}{{ return(none) }}{%- endif -%}
    {#- a target in change_mode delta: its merged rows, as ref() reads it (its table holds delta rows beside them);
        before its first delta write there is no such view, and the table holds no delta rows -#}
    {%- set node = (graph.get('nodes') or {}).get('model.' ~ model.package_name ~ '.' ~ target.target) -%}
    {%- if node and lakeplan.lakeplan_plan(node).change_mode.mode == 'delta' -%}
        {%- set merged = adapter.get_relation(database=none, schema=target.schema,
            identifier=target.identifier ~ '__lakeplan_merged') -%}
        {%- if merged is not none -%}{{ return(merged) }}{%- endif -%}
    {%- endif -%}
    {{ return(adapter.get_relation(database=none, schema=target.schema, identifier=target.identifier)) }}
{% endmacro %}
