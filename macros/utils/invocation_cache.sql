{#- A dict kept for this dbt invocation under `name`: in dbt's `graph`, the one object every node's context in an
    invocation shares, under the invocation's id, so that a manifest reused by a later invocation starts empty. For
    what a run reads or decides once and several of its steps ask for (on-run-start, a write's compile, its record). -#}
{% macro lakeplan_invocation_cache(name) %}
    {%- set kept = graph.get(name) -%}
    {%- if kept is none or kept.invocation != invocation_id -%}
        {%- set kept = {'invocation': invocation_id, 'entries': {}} -%}
        {%- do graph.update({name: kept}) -%}
    {%- endif -%}
    {{ return(kept.entries) }}
{% endmacro %}
