{#- A Spark identifier quoted for any name from YAML: spaces, mixed case, reserved words, backticks. -#}
{% macro lakeplan_quote(name) %}
    {{ return('`' ~ (name | string).replace('`', '``') ~ '`') }}
{% endmacro %}

{#- The quoted names joined by commas, for column lists and hint keys. -#}
{% macro lakeplan_quote_list(names) %}
    {% set quoted = [] %}
    {% for name in names %}{% do quoted.append(lakeplan.lakeplan_quote(name)) %}{% endfor %}
    {{ return(quoted | join(', ')) }}
{% endmacro %}

{#- The join condition of two relations on the key columns: `left.k = right.k and ...`, each name quoted. -#}
{% macro lakeplan_key_matches(left, right, keys) %}
    {%- set matches = [] -%}
    {%- for key in keys -%}
        {%- set name = lakeplan.lakeplan_quote(key) -%}
        {%- do matches.append(left ~ '.' ~ name ~ ' = ' ~ right ~ '.' ~ name) -%}
    {%- endfor -%}
    {{ return(matches | join(' and ')) }}
{% endmacro %}
