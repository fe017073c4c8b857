{#- The whole SQL of a partial-update target model: `{{ partial_update_target() }}`. It makes the model a
    `partial_update` materialization; lakeplan's plugin gives it its members. Compiled, it lists each
    member's rows (its members appear as CTEs); the write itself is built by the materialization. -#}
{% macro partial_update_target() %}
    {%- do config(materialized='partial_update') -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set branches = [] -%}
    {%- for group in lakeplan_partial_update_groups() -%}
        {%- for member in group.members -%}
            {%- do branches.append(
                'select ' ~ lakeplan_string_literal(member.name) ~ ' as lakeplan_member, count(*) as lakeplan_rows'
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
Fix: run dbt from lakeplan's environment (`make dbt ARGS='...'`), where `import dbt_lakeplan` works.
        {%- endset -%}
        {%- do exceptions.raise_compiler_error(plugin_missing_msg) -%}
    {%- endif -%}
    {{ return(groups) }}
{% endmacro %}
