{#- Sets Spark session options for the statements that follow; returns the previous values (none where
    unset) so the same macro restores them. The planner checked keys and values (no `;`, no line breaks). -#}
{% macro lakeplan_set_session_options(options) %}
    {%- set previous = {} -%}
    {%- for key, value in (options or {}).items() -%}
        {%- set current = run_query('set ' ~ key).columns[1].values()[0] -%}
        {%- do previous.update({key: none if current == '<undefined>' else current}) -%}
        {%- if value is none -%}
            {%- do lakeplan.lakeplan_execute('reset ' ~ key) -%}
        {%- else -%}
            {%- do run_query('set ' ~ key ~ '=' ~ value) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(previous) }}
{% endmacro %}
