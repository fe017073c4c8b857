{#- Raises when a setting names a column that is not among `columns` (compared case-insensitively, as Spark does).
    `settings`: pairs of a setting and the column names it gives. `problem` and `fix` are sentences in which
    `{setting}` and `{column}` stand for the first setting and column found missing; the error lists `columns`. -#}
{% macro lakeplan_check_named_columns(settings, columns, problem, fix) %}
    {%- set known = columns | map('lower') | list -%}
    {%- for setting, names in settings -%}
        {%- for name in names if name | lower not in known -%}
            {%- do exceptions.raise_compiler_error(problem | replace('{setting}', setting) | replace('{column}', name)
                ~ ' Its columns: ' ~ columns | join(', ') ~ '. Fix: ' ~ fix | replace('{setting}', setting)) -%}
        {%- endfor -%}
    {%- endfor -%}
{% endmacro %}
