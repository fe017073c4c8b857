{#- `relation`'s table properties as they are now: {key: value}. -#}
{% macro lakeplan_read_table_properties(relation) %}
    {%- set properties = {} -%}
    {%- for row in run_query('show tblproperties ' ~ relation).rows -%}
        {%- do properties.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {{ return(properties) }}
{% endmacro %}
