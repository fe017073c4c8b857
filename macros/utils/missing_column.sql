{#- The first (setting, column) of `settings` (pairs of a setting and the column names it gives) whose column
    is not among `columns`, compared case-insensitively as Spark does; none when all are there. -#}
{% macro lakeplan_missing_column(settings, columns) %}
    {%- set known = columns | map('lower') | list -%}
    {%- for setting, names in settings -%}
        {%- for name in names if name | lower not in known -%}{{ return((setting, name)) }}{%- endfor -%}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
