{#- The whole SQL of a partial-update target model: `{{ partial_update_target() }}`. It makes the model a
    `partial_update` materialization; lakeplan's plugin gives it its members. Compiled, it lists each
    member's rows (its members appear as CTEs); the write itself is built by the materialization. -#}
{% macro partial_update_target() %}
    {%- do config(materialized='partial_update') -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set branches = [] -%}
    {%- for group in lakeplan.lakeplan_partial_update_groups() -%}
        {%- for member in group.members -%}
            {%- do branches.append(
                'select ' ~ lakeplan.lakeplan_string_literal(member.name) ~ ' as lakeplan_member, count(*) as lakeplan_rows'
                ~ ' from ' ~ ref(member.name)) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(branches | join('\nunion all\n') or 'select null as lakeplan_member, 0 as lakeplan_rows where false') }}
{% endmacro %}

{#- The write groups lakeplan's plugin attached to this target; raises when the plugin did not run. -#}
{% macro lakeplan_partial_update_groups() %}
    {%- set groups = config.get('lakeplan_write_groups') -%}
    {%- if groups is none -%}
        {%- set plugin_missing_msg -%}
Partial-update target `{{ model.name }}` has no write groups: lakeplan's dbt plugin did not process this project.
The plugin (plugins/dbt_lakeplan) groups the members that write this table into unioned writes.
Fix: install the plugin, distribution dbt-lakeplan (`make setup` does: `pip install -e .`), in dbt's Python.
        {%- endset -%}
        {%- do exceptions.raise_compiler_error(plugin_missing_msg) -%}
    {%- endif -%}
    {{ return(groups) }}
{% endmacro %}

{#- In a member: the target table as it stands before this run, or none on its first run and under
    `--full-refresh`. For members that send only what the table has not seen yet, as a `sum` counter needs:
    `{% set seen = partial_update_target_relation() %}` ... `{% if seen %} where x > (...) {% endif %}`.
    (A `ref` to the target would make a cycle: the target is built from its members.) -#}
{% macro partial_update_target_relation() %}
    {%- set target = config.get('lakeplan_target_relation') -%}
    {%- if not execute or target is none or flags.FULL_REFRESH -%}{{ return(none) }}{%- endif -%}
    {{ return(adapter.get_relation(database=none, schema=target.schema, identifier=target.identifier)) }}
{% endmacro %}
