{#- A Spark SQL string literal for any text: backslashes and quotes escaped, never pasted raw. -#}
{% macro lakeplan_string_literal(text) %}
    {{ return("'" ~ (text | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
{% endmacro %}
