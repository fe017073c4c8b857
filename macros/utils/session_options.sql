{#- Sets Spark session options for the statements that follow; returns the previous values (none where
    unset) so the same macro restores them. Keys and values are checked, never pasted into SQL raw. -#}
{% macro lakeplan_set_session_options(options) %}
    {%- set previous = {} -%}
    {%- for key, value in (options or {}).items() -%}
        {%- set unsafe_value = value is not none and modules.re.search('[;\\n]', value | string) -%}
        {%- if not modules.re.match('^[A-Za-z0-9_.-]+$', key) or unsafe_value -%}
            {%- do exceptions.raise_compiler_error(
                'Invalid write option ' ~ key | tojson ~ ': ' ~ value | tojson ~ ' in model `' ~ model.name ~ '`.\n'
                ~ 'Write options are Spark settings: a dotted key, and a value without `;` or line breaks.') -%}
        {%- endif -%}
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
