{#- A node's plan: what lakeplan's plugin decided for it at parse time from its settings, already checked
    (plugins/dbt_lakeplan/planner.py; its shape is in docs/settings.md). The macros read lakeplan's settings
    only from here. `node`: a graph node or source (default: the model being run). -#}
{% macro lakeplan_plan(node=none) %}
    {%- set plan = (node.config if node is not none else config).get('lakeplan_plan') -%}
    {%- if plan is none -%}
        {%- set plugin_missing_msg -%}
lakeplan's dbt plugin did not plan `{{ (node or model).name }}`: the plugin checks every lakeplan setting and plans each model at parse time.
Fix: install the plugin, distribution dbt-lakeplan (`make setup` does: `pip install -e .`), in dbt's Python.
        {%- endset -%}
        {%- do exceptions.raise_compiler_error(plugin_missing_msg) -%}
    {%- endif -%}
    {{ return(plan) }}
{% endmacro %}
